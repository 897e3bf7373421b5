#include "ui/studio_result.h"

#include <QFileInfo>
#include <QObject>

namespace uot::ui {

QStringList ResultInputs::differencesFrom(const ResultInputs& current) const
{
    QStringList changed;
    if (source.id != current.source.id || bool(source.image) != bool(current.source.image))
        changed << QObject::tr("the source");
    if (reference.id != current.reference.id || bool(reference.image) != bool(current.reference.image))
        changed << QObject::tr("the reference");
    if (!parameters.sameLookAs(current.parameters)) changed << QObject::tr("the settings");
    return changed;
}

QString ResultInputs::inWords(const QStringList& differences)
{
    if (differences.size() < 2) return differences.join(QString());
    return QObject::tr("%1 and %2").arg(differences.mid(0, differences.size() - 1).join(QStringLiteral(", ")),
                                        differences.last());
}

QString StudioResult::metadataSource() const
{
    const QString& path = inputs.source.path;
    return path.isEmpty() || path.startsWith(QStringLiteral(":/")) ? QString() : path;
}

QString StudioResult::baseName() const
{
    const QString& path = inputs.source.path;
    return path.isEmpty() ? QStringLiteral("result") : QFileInfo(path).completeBaseName();
}

}  // namespace uot::ui
