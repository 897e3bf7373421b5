#include "ui/parameter_tooltip.h"

#include <QObject>

namespace uot::ui {

QString parameterToolTip(const params::Parameter& p)
{
    QString text = QString::fromStdString(p.description);
    if (!text.isEmpty()) text[0] = text[0].toUpper();
    if (p.kind == params::Kind::Real || p.kind == params::Kind::Integer)
        text += "\n" + QObject::tr("Takes %1.").arg(QString::fromStdString(p.allowed()));
    return text;
}

}  // namespace uot::ui
