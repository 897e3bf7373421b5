#include "ui/settings_library.h"

#include <QFile>
#include <QRegularExpression>
#include <QSettings>
#include <QTemporaryFile>

namespace uot::ui::settings_library {

namespace {

const QString kPresets = QStringLiteral("presets");
const QString kReferences = QStringLiteral("references");

// QSettings reads a value written @Variant(...), @ByteArray(...), @Rect(...) and
// the like by deserializing it, and a crafted one makes it allocate gigabytes
// before any check can look at it (a 94-byte pasted text took 2.2 GB). No studio
// setting is stored that way (QSettings writes a text that starts with @ as @@,
// and none of ours starts with an escape), so such lines are taken out of a
// pasted text unread, each with a message. A value that starts with a quote or a
// backslash escape (\x40 is @), or continues on the next line, is looked at
// the way QSettings would read it: continued lines are joined first, and a
// leading escape is refused as well.
QString withoutSerializedValues(const QString& text, QStringList& problems)
{
    QString joined = text;
    joined.replace(QRegularExpression(QStringLiteral("\\\\(\r\n|\n|\r)")), QString());
    QStringList kept;
    for (const QString& line : joined.split(QRegularExpression(QStringLiteral("[\r\n]")))) {
        const qsizetype eq = line.indexOf(QLatin1Char('='));
        QString value = eq < 0 ? QString() : line.mid(eq + 1).trimmed();
        while (value.startsWith(QLatin1Char('"'))) value = value.mid(1).trimmed();
        const bool serializedValue = value.startsWith(QLatin1Char('@')) && !value.startsWith(QStringLiteral("@@"));
        if (serializedValue || value.startsWith(QLatin1Char('\\'))) {
            QString shown = value.left(24);
            for (QChar& c : shown)
                if (!c.isPrint()) c = QLatin1Char('?');
            problems << QObject::tr("%1 = \"%2...\" is not valid: a setting is a number, a word or yes/no, not a "
                                    "serialized Qt value or an escape")
                            .arg(line.left(eq).trimmed(), shown);
            continue;
        }
        kept << line;
    }
    return kept.join(QLatin1Char('\n'));
}

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
    QStringList serialized;
    const QString readable = withoutSerializedValues(text, serialized);
    QTemporaryFile file;
    if (!file.open()) return std::nullopt;
    file.write(readable.toUtf8());
    file.close();
    QSettings settings(file.fileName(), QSettings::IniFormat);
    if (settings.status() != QSettings::NoError) return std::nullopt;
    settings.beginGroup(QStringLiteral("parameters"));
    const bool any = !settings.childKeys().isEmpty();
    settings.endGroup();
    if (!any && serialized.isEmpty()) return std::nullopt;
    QStringList found = serialized;
    const StudioParameters p = StudioParameters::load(settings, &found);
    if (problems) *problems << found;
    if (!found.isEmpty()) return std::nullopt;
    return p;
}

}  // namespace uot::ui::settings_library
