#include "ui/settings_library.h"

#include <QFile>
#include <QSettings>
#include <QTemporaryFile>

namespace uot::ui::settings_library {

namespace {

const QString kPresets = QStringLiteral("presets");
const QString kReferences = QStringLiteral("references");

// Names become QSettings groups: keep them one level deep and free of separators.
QString keyOf(const QString& name)
{
    QString key = name.trimmed();
    key.replace('/', '_').replace('\\', '_');
    return key;
}

QStringList sortedGroups(const QString& group)
{
    QSettings settings;
    settings.beginGroup(group);
    QStringList names = settings.childGroups();
    names.sort(Qt::CaseInsensitive);
    return names;
}

StudioParameters withoutAutoRun(StudioParameters p)
{
    p.autoRun = StudioParameters{}.autoRun;
    return p;
}

}  // namespace

QStringList presetNames() { return sortedGroups(kPresets); }

void savePreset(const QString& name, const StudioParameters& parameters)
{
    QSettings settings;
    settings.beginGroup(kPresets + "/" + keyOf(name));
    withoutAutoRun(parameters).save(settings);
}

std::optional<StudioParameters> preset(const QString& name, QStringList* problems)
{
    if (!presetNames().contains(keyOf(name))) return std::nullopt;
    QSettings settings;
    settings.beginGroup(kPresets + "/" + keyOf(name));
    return StudioParameters::load(settings, problems);
}

void removePreset(const QString& name) { QSettings().remove(kPresets + "/" + keyOf(name)); }

QStringList referenceNames() { return sortedGroups(kReferences); }

void saveReference(const NamedReference& reference)
{
    QSettings settings;
    settings.beginGroup(kReferences + "/" + keyOf(reference.name));
    settings.setValue("image", reference.imagePath);
    withoutAutoRun(reference.parameters).save(settings);
}

std::optional<NamedReference> reference(const QString& name, QStringList* problems)
{
    if (!referenceNames().contains(keyOf(name))) return std::nullopt;
    QSettings settings;
    settings.beginGroup(kReferences + "/" + keyOf(name));
    NamedReference r;
    r.name = keyOf(name);
    r.imagePath = settings.value("image").toString();
    r.parameters = StudioParameters::load(settings, problems);
    return r;
}

void removeReference(const QString& name) { QSettings().remove(kReferences + "/" + keyOf(name)); }

// The text form is the INI form StudioParameters::save writes, through a temporary file.
QString toText(const StudioParameters& parameters)
{
    QTemporaryFile file;
    if (!file.open()) return {};
    file.close();
    {
        QSettings settings(file.fileName(), QSettings::IniFormat);
        withoutAutoRun(parameters).save(settings);
    }
    QFile read(file.fileName());
    if (!read.open(QIODevice::ReadOnly)) return {};
    return QString::fromUtf8(read.readAll());
}

std::optional<StudioParameters> fromText(const QString& text, QStringList* problems)
{
    if (!text.contains(QStringLiteral("[parameters]"))) return std::nullopt;
    QTemporaryFile file;
    if (!file.open()) return std::nullopt;
    file.write(text.toUtf8());
    file.close();
    QSettings settings(file.fileName(), QSettings::IniFormat);
    if (settings.status() != QSettings::NoError) return std::nullopt;
    settings.beginGroup(QStringLiteral("parameters"));
    const bool any = !settings.childKeys().isEmpty();
    settings.endGroup();
    if (!any) return std::nullopt;
    QStringList found;
    const StudioParameters p = StudioParameters::load(settings, &found);
    if (problems) *problems << found;
    if (!found.isEmpty()) return std::nullopt;
    return p;
}

}  // namespace uot::ui::settings_library
