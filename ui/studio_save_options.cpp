#include "ui/studio_save_options.h"

#include <QSettings>

#include "core/params/parameter_schema.h"
#include "ui/parameter_reader.h"

namespace uot::ui {

namespace {

using Text = QString StudioSaveOptions::*;

// The text members, each bound to its entry; jpeg-quality is the one number.
struct Binding {
    const char* name;
    Text member;
};
const Binding kTexts[] = {
    {"depth", &StudioSaveOptions::depth},
    {"output-color", &StudioSaveOptions::color},
    {"output-profile", &StudioSaveOptions::profile},
};
const char* const kQuality = "jpeg-quality";

const Binding* textBinding(const QString& name)
{
    for (const Binding& b : kTexts)
        if (name == QLatin1String(b.name)) return &b;
    return nullptr;
}

const params::Parameter& entry(const char* name) { return params::parameter(name); }
QString keyOf(const char* name) { return QString::fromStdString(entry(name).settingsKey); }

}  // namespace

StudioSaveOptions::StudioSaveOptions()
{
    for (const Binding& b : kTexts) this->*b.member = QString::fromStdString(entry(b.name).defaultText);
    quality = int(entry(kQuality).defaultValue);
}

QStringList StudioSaveOptions::boundNames()
{
    QStringList names;
    for (const params::Parameter& p : params::parameters()) {
        const QString name = QString::fromStdString(p.name);
        if (textBinding(name) || name == QLatin1String(kQuality)) names << name;
    }
    return names;
}

QString StudioSaveOptions::shownValue(const QString& name) const
{
    if (const Binding* b = textBinding(name)) return this->*b->member;
    if (name == QLatin1String(kQuality)) return QString::fromStdString(params::shownNumber(entry(kQuality), quality));
    return {};
}

bool StudioSaveOptions::setShownValue(const QString& name, const QString& shown)
{
    if (const Binding* b = textBinding(name)) {
        if (!params::isValidText(entry(b->name), shown.toStdString())) return false;
        this->*b->member = shown;
        return true;
    }
    if (name != QLatin1String(kQuality)) return false;
    const std::optional<double> value = params::parseNumber(entry(kQuality), shown.toStdString());
    if (value) quality = int(*value);
    return value.has_value();
}

WriteOptions StudioSaveOptions::writeOptions() const
{
    WriteOptions options;
    setOutputChoices(options, depth.toStdString(), color.toStdString(), profile.toStdString(), quality);
    return options;
}

void StudioSaveOptions::save(QSettings& settings) const
{
    settings.beginGroup(QStringLiteral("save"));
    for (const Binding& b : kTexts) settings.setValue(keyOf(b.name), this->*b.member);
    settings.setValue(keyOf(kQuality), quality);
    settings.endGroup();
}

StudioSaveOptions StudioSaveOptions::load(QSettings& settings, QStringList* problems)
{
    StudioSaveOptions o;
    ParameterReader::readGroup(settings, QStringLiteral("save"), problems, [&o](ParameterReader& reader) {
        for (const Binding& b : kTexts)
            if (const std::optional<QString> t = reader.text(entry(b.name))) o.*b.member = *t;
        if (const std::optional<double> v = reader.number(entry(kQuality))) o.quality = int(*v);
    });
    return o;
}

}  // namespace uot::ui
