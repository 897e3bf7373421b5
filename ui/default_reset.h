#pragma once
// Double-click resets a field to its default: every slider and numeric spin
// box under a root widget remembers the value it holds when the reset is
// installed (its default) and goes back to it on a double-click. The change
// goes through the widget's own setValue, so it signals, and is undone, like
// any other edit.

#include <QtGlobal>

QT_BEGIN_NAMESPACE
class QWidget;
QT_END_NAMESPACE

namespace uot::ui {

// Takes the current values of the sliders and spin boxes under `root` as their
// defaults and resets them on double-click. The filter is parented to `root`.
void installDefaultReset(QWidget* root);

}  // namespace uot::ui
