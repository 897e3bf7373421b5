#include "ui/undo_commands.h"

#include <QObject>

namespace uot::ui {

namespace {

constexpr qint64 kMergeWindowMs = 1500;

template <typename T>
std::function<bool(const StudioParameters&, const StudioParameters&)> differs(T StudioParameters::*member)
{
    return [member](const StudioParameters& a, const StudioParameters& b) { return a.*member != b.*member; };
}

}  // namespace

QStringList ParametersCommand::changedSettings(const StudioParameters& a, const StudioParameters& b)
{
    using P = StudioParameters;
    static const std::vector<std::pair<QString, std::function<bool(const P&, const P&)>>> fields = {
        {QObject::tr("working space"), differs(&P::colorSpace)},
        {QObject::tr("palette size"), differs(&P::paletteSize)},
        {QObject::tr("smoothness"), differs(&P::eps)},
        {QObject::tr("adherence"), differs(&P::tau)},
        {QObject::tr("balanced"), differs(&P::balanced)},
        {QObject::tr("reference measure"), differs(&P::referenceMeasure)},
        {QObject::tr("max iterations"), differs(&P::maxIterations)},
        {QObject::tr("tolerance"), differs(&P::tolerance)},
        {QObject::tr("solver"), differs(&P::solver)},
        {QObject::tr("device"), differs(&P::device)},
        {QObject::tr("CPU threads"), differs(&P::threads)},
        {QObject::tr("precision"), differs(&P::precision)},
        {QObject::tr("fade (strength)"), differs(&P::strength)},
        {QObject::tr("preserve luminance"), differs(&P::preserveLuminance)},
        {QObject::tr("structure smoothing"), differs(&P::smoothing)},
        {QObject::tr("palette match"), differs(&P::paletteMatch)},
        {QObject::tr("lightness transfer"), differs(&P::lightnessTransfer)},
        {QObject::tr("luminance intensity"), differs(&P::luminanceIntensity)},
        {QObject::tr("color intensity"), differs(&P::colorIntensity)},
        {QObject::tr("neutralize"), differs(&P::neutralize)},
        {QObject::tr("protect skin tones"), differs(&P::protectSkin)},
        {QObject::tr("protect neutrals"), differs(&P::protectNeutrals)},
        {QObject::tr("color range"), differs(&P::colorRange)},
        {QObject::tr("color edges"), differs(&P::colorEdges)},
        {QObject::tr("auto-run"), differs(&P::autoRun)},
    };
    QStringList names;
    for (const auto& [name, differ] : fields)
        if (differ(a, b)) names << name;
    return names;
}

ParametersCommand::ParametersCommand(const StudioParameters& before, const StudioParameters& after, Apply apply,
                                     bool whole)
    : m_before(before), m_after(after), m_apply(std::move(apply)), m_changed(changedSettings(before, after)), m_whole(whole)
{
    setText(m_changed.size() <= 2 ? QObject::tr("change %1").arg(m_changed.join(QObject::tr(" and ")))
                                  : QObject::tr("change %n settings", nullptr, int(m_changed.size())));
    m_sinceLast.start();
}

void ParametersCommand::redo()
{
    if (m_applied) {
        m_applied = false;  // pushed after the fact: nothing to do the first time
        return;
    }
    m_apply(m_after);
}

bool ParametersCommand::mergeWith(const QUndoCommand* other)
{
    const auto* next = static_cast<const ParametersCommand*>(other);
    if (m_whole || next->m_whole || next->m_changed != m_changed || m_sinceLast.elapsed() > kMergeWindowMs) return false;
    m_after = next->m_after;
    m_sinceLast.restart();
    if (changedSettings(m_before, m_after).isEmpty()) setObsolete(true);  // back where it started
    return true;
}

FunctionCommand::FunctionCommand(const QString& text, std::function<void()> redo, std::function<void()> undo,
                                 bool alreadyDone)
    : m_redo(std::move(redo)), m_undo(std::move(undo)), m_skipFirstRedo(alreadyDone)
{
    setText(text);
}

void FunctionCommand::redo()
{
    if (m_skipFirstRedo) {
        m_skipFirstRedo = false;
        return;
    }
    m_redo();
}

}  // namespace uot::ui
