#include "ui/default_reset.h"

#include <QAbstractSlider>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QLineEdit>
#include <QObject>
#include <QSpinBox>
#include <QVariant>

namespace uot::ui {

namespace {

constexpr const char* kDefault = "uotDefaultValue";

class DefaultReset final : public QObject {
public:
    using QObject::QObject;

protected:
    bool eventFilter(QObject* watched, QEvent* event) override
    {
        if (event->type() != QEvent::MouseButtonDblClick) return false;
        // A spin box's double-click lands on its line edit.
        QObject* field = qobject_cast<QLineEdit*>(watched) ? watched->parent() : watched;
        const QVariant value = field ? field->property(kDefault) : QVariant();
        if (!value.isValid()) return false;
        if (auto* slider = qobject_cast<QAbstractSlider*>(field)) slider->setValue(value.toInt());
        else if (auto* box = qobject_cast<QSpinBox*>(field)) box->setValue(value.toInt());
        else if (auto* box = qobject_cast<QDoubleSpinBox*>(field)) box->setValue(value.toDouble());
        else return false;
        return true;
    }
};

}  // namespace

void installDefaultReset(QWidget* root)
{
    auto* filter = new DefaultReset(root);
    auto watch = [filter](QWidget* field, const QVariant& value, const QString& tip) {
        field->setProperty(kDefault, value);
        field->installEventFilter(filter);
        if (auto* edit = field->findChild<QLineEdit*>()) edit->installEventFilter(filter);
        field->setToolTip(field->toolTip() + (field->toolTip().isEmpty() ? "" : "\n") + tip);
    };
    const QString tip = QObject::tr("Double-click: back to the default (%1).");
    for (auto* slider : root->findChildren<QAbstractSlider*>()) {
        if (qobject_cast<QWidget*>(slider->parent()) && slider->parent()->inherits("QAbstractScrollArea")) continue;
        watch(slider, slider->value(), tip.arg(slider->value()));
    }
    for (auto* box : root->findChildren<QSpinBox*>()) watch(box, box->value(), tip.arg(box->text()));
    for (auto* box : root->findChildren<QDoubleSpinBox*>()) watch(box, box->value(), tip.arg(box->text()));
}

}  // namespace uot::ui
