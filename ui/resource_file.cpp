#include "ui/resource_file.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>
#include <QStandardPaths>

namespace uot::ui {

QString diskPathFor(const QString& path, QString* error)
{
    if (!path.startsWith(QLatin1String(":/"))) return path;
    auto fail = [&](const QString& why) {
        if (error) *error = why;
        return QString();
    };
    QFile resource(path);
    if (!resource.open(QIODevice::ReadOnly)) return fail(QObject::tr("%1 is not in this build").arg(path));
    const QString folder = QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + QStringLiteral("/resources");
    if (!QDir().mkpath(folder)) return fail(QObject::tr("cannot create the folder %1").arg(folder));
    const QString target = folder + '/' + QFileInfo(path).fileName();
    if (QFileInfo(target).size() == resource.size()) return target;
    QSaveFile out(target);
    if (!out.open(QIODevice::WriteOnly) || out.write(resource.readAll()) != resource.size() || !out.commit())
        return fail(QObject::tr("cannot write %1: %2").arg(target, out.errorString()));
    return target;
}

}  // namespace uot::ui
