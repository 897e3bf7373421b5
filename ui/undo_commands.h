#pragma once
// The steps of the studio's undo history (QUndoStack): parameter changes and
// image loads or swaps. The commands hold the states before and after and a
// function that puts a state back; they never reach into the window.

#include <QElapsedTimer>
#include <QUndoCommand>

#include <functional>

#include "ui/studio_parameters.h"

namespace uot::ui {

// A parameter change. Consecutive edits of the same settings within a short
// time (a slider drag, spin box steps) merge into one step; a change made at
// once (a preset, a paste, a reset) is `whole` and never merges.
class ParametersCommand final : public QUndoCommand {
public:
    using Apply = std::function<void(const StudioParameters&)>;
    ParametersCommand(const StudioParameters& before, const StudioParameters& after, Apply apply, bool whole);

    void undo() override { m_apply(m_before); }
    void redo() override;
    int id() const override { return 1; }
    bool mergeWith(const QUndoCommand* other) override;

    // Names of the settings that differ ("strength", "eps"...).
    static QStringList changedSettings(const StudioParameters& a, const StudioParameters& b);

private:
    StudioParameters m_before, m_after;
    Apply m_apply;
    QStringList m_changed;
    QElapsedTimer m_sinceLast;
    bool m_whole;
    bool m_applied = true;  // the change has already happened when the command is pushed
};

// Any step given as two functions (image loads, swaps).
class FunctionCommand final : public QUndoCommand {
public:
    FunctionCommand(const QString& text, std::function<void()> redo, std::function<void()> undo, bool alreadyDone);
    void undo() override { m_undo(); }
    void redo() override;

private:
    std::function<void()> m_redo, m_undo;
    bool m_skipFirstRedo;
};

}  // namespace uot::ui
