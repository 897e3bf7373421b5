#pragma once
// Keeps the mouse wheel from changing numeric fields, lists and sliders that
// the user has not clicked into: while scrolling a panel, the wheel scrolls
// the panel. A field takes wheel steps only once it has keyboard focus.

#include <QtGlobal>

QT_BEGIN_NAMESPACE
class QWidget;
QT_END_NAMESPACE

namespace uot::ui {

// Guards every spin box, combo box and slider under `root` (existing children;
// call again after adding more). The guard is parented to `root`.
void installWheelGuard(QWidget* root);

}  // namespace uot::ui
