#include "ui/wheel_guard.h"

#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QEvent>
#include <QObject>
#include <QWidget>

namespace uot::ui {

namespace {

class WheelGuard final : public QObject {
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() != QEvent::Wheel) return false;
        auto* widget = qobject_cast<QWidget*>(watched);
        if (!widget || widget->hasFocus()) return false;
        // Not for this field: leave the event unaccepted so that it travels on
        // to the enclosing scroll area.
        event->ignore();
        return true;
    }
};

}  // namespace

void installWheelGuard(QWidget* root)
{
    static const QString kName = QStringLiteral("uotWheelGuard");
    QObject* guard = root->findChild<QObject*>(kName, Qt::FindDirectChildrenOnly);
    if (!guard) {
        guard = new WheelGuard(root);
        guard->setObjectName(kName);
    }
    auto guardOne = [guard](QWidget* field) {
        field->setFocusPolicy(Qt::StrongFocus);  // a wheel turn alone never gives focus
        field->removeEventFilter(guard);
        field->installEventFilter(guard);
    };
    for (auto* w : root->findChildren<QAbstractSpinBox*>()) guardOne(w);
    for (auto* w : root->findChildren<QComboBox*>()) guardOne(w);
    for (auto* w : root->findChildren<QAbstractSlider*>()) {
        if (qobject_cast<QWidget*>(w->parent()) && w->parent()->inherits("QAbstractScrollArea")) continue;  // scroll bars
        guardOne(w);
    }
}

}  // namespace uot::ui
