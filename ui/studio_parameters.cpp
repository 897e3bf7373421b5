#include "ui/studio_parameters.h"

#include <QSettings>

#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>
#include <variant>

#include "core/registry/device_registry.h"
#include "ui/parameter_reader.h"

namespace uot::ui {

namespace {

// The members of StudioParameters, each bound to the table entry it holds.
using Member = std::variant<QString StudioParameters::*, double StudioParameters::*, int StudioParameters::*,
                            bool StudioParameters::*, WorkingSpace StudioParameters::*,
                            ReferenceMeasure StudioParameters::*, Precision StudioParameters::*,
                            Acceleration StudioParameters::*>;
struct Binding {
    const char* name;  // the entry of core/params
    Member member;
};

const std::vector<Binding>& bindings()
{
    using P = StudioParameters;
    static const std::vector<Binding> all = {
        {"space", &P::colorSpace},
        {"palette-size", &P::paletteSize},
        {"eps", &P::eps},
        {"adherence", &P::tau},
        {"balanced", &P::balanced},
        {"reference-measure", &P::referenceMeasure},
        {"max-iter", &P::maxIterations},
        {"tol", &P::tolerance},
        {"solver", &P::solver},
        {"device", &P::device},
        {"threads", &P::threads},
        {"precision", &P::precision},
        {"acceleration", &P::acceleration},
        {"eps-scaling", &P::epsScalingRatio},
        {"eps-scaling-factor", &P::epsScalingFactor},
        {"fade", &P::strength},
        {"preserve-luminance", &P::preserveLuminance},
        {"luminance", &P::luminanceIntensity},
        {"color-intensity", &P::colorIntensity},
        {"neutralize", &P::neutralize},
        {"protect-skin", &P::protectSkin},
        {"protect-neutrals", &P::protectNeutrals},
        {"smoothing", &P::smoothing},
        {"residual-match", &P::paletteMatch},
        {"lightness-transfer", &P::lightnessTransfer},
        {"color-range", &P::colorRange},
        {"color-edges", &P::colorEdges},
        {"auto-run", &P::autoRun},
    };
    return all;
}

const Binding* bindingOf(const QString& name)
{
    for (const Binding& b : bindings())
        if (name == QLatin1String(b.name)) return &b;
    return nullptr;
}

// The member's value in the core's units (numbers) or as text (choices, device).
double numberOf(const StudioParameters& p, const Member& m)
{
    if (auto d = std::get_if<double StudioParameters::*>(&m)) return p.**d;
    if (auto i = std::get_if<int StudioParameters::*>(&m)) return p.**i;
    if (auto b = std::get_if<bool StudioParameters::*>(&m)) return p.**b ? 1.0 : 0.0;
    return 0;
}

void setNumber(StudioParameters& p, const Member& m, double v)
{
    if (auto d = std::get_if<double StudioParameters::*>(&m)) p.**d = v;
    else if (auto i = std::get_if<int StudioParameters::*>(&m)) p.**i = int(std::lround(v));
    else if (auto b = std::get_if<bool StudioParameters::*>(&m)) p.**b = v != 0;
}

// The core's parser of each enum's spellings (the table's choices of its entry).
void parseSpelling(const std::string& text, WorkingSpace& v) { v = parseWorkingSpace(text); }
void parseSpelling(const std::string& text, ReferenceMeasure& v) { v = parseReferenceMeasure(text); }
void parseSpelling(const std::string& text, Precision& v) { v = parsePrecision(text); }
void parseSpelling(const std::string& text, Acceleration& v) { v = parseAcceleration(text); }

// The value of a text member (a string, or an enum as its spelling); nullopt for numbers.
std::optional<QString> textOf(const StudioParameters& p, const Member& m)
{
    return std::visit(
        [&p](auto member) -> std::optional<QString> {
            using T = std::remove_cvref_t<decltype(p.*member)>;
            if constexpr (std::is_same_v<T, QString>) return p.*member;
            else if constexpr (std::is_enum_v<T>) return QString::fromStdString(toString(p.*member));
            else return std::nullopt;
        },
        m);
}

// Sets a text member from a spelling the entry accepts.
void setTextOf(StudioParameters& p, const Member& m, const QString& text)
{
    std::visit(
        [&p, &text](auto member) {
            using T = std::remove_cvref_t<decltype(p.*member)>;
            if constexpr (std::is_same_v<T, QString>) p.*member = text;
            else if constexpr (std::is_enum_v<T>) parseSpelling(text.toStdString(), p.*member);
        },
        m);
}

bool sameMember(const StudioParameters& a, const StudioParameters& b, const Member& m)
{
    return std::visit([&](auto member) { return a.*member == b.*member; }, m);
}

}  // namespace

namespace parameter_defaults {
template <typename Enum>
Enum choice(const char* name)
{
    Enum value{};
    parseSpelling(params::parameter(name).defaultText, value);
    return value;
}
template WorkingSpace choice<WorkingSpace>(const char*);
template ReferenceMeasure choice<ReferenceMeasure>(const char*);
template Precision choice<Precision>(const char*);
template Acceleration choice<Acceleration>(const char*);
}  // namespace parameter_defaults

QString StudioParameters::valueProblem(const char* name, const QString& text)
{
    params::Parameter p = params::parameter(name);
    p.cliSpellings.clear();  // the studio takes only the settings' spellings (cpu, gpu:N)
    return params::accepts(p, text.toStdString()) ? QString() : QString::fromStdString(p.problem());
}

QString StudioParameters::deviceUnavailableReason(const QString& device)
{
    if (device == "cpu") return {};
    if (!device.startsWith("gpu:")) return QStringLiteral("'%1' is neither cpu nor gpu:N").arg(device);
    const std::string reason = gpuUnavailableReason();
    if (!reason.empty()) return QStringLiteral("no GPU device: %1").arg(QString::fromStdString(reason));
    bool isNumber = false;
    const int ordinal = device.mid(4).toInt(&isNumber);
    const DeviceBackend* gpu = findDeviceBackend(DeviceKind::Gpu);
    const int count = gpu ? int(gpu->listDevices().size()) : 0;
    if (!isNumber || ordinal < 0 || ordinal >= count)
        return QStringLiteral("no GPU device %1 (this machine has %2: gpu:0 to gpu:%3)").arg(device.mid(4)).arg(count).arg(std::max(0, count - 1));
    return {};
}

QStringList StudioParameters::boundNames()
{
    QStringList names;
    for (const params::Parameter& entry : params::parameters())
        if (bindingOf(QString::fromStdString(entry.name))) names << QString::fromStdString(entry.name);
    return names;
}

QString StudioParameters::shownValue(const QString& name) const
{
    const Binding* b = bindingOf(name);
    if (!b) return {};
    if (const std::optional<QString> text = textOf(*this, b->member)) return *text;
    const params::Parameter& entry = params::parameter(b->name);
    return QString::fromStdString(params::shownNumber(entry, numberOf(*this, b->member)));
}

bool StudioParameters::setShownValue(const QString& name, const QString& shown)
{
    const Binding* b = bindingOf(name);
    if (!b) return false;
    const params::Parameter& entry = params::parameter(b->name);
    if (textOf(*this, b->member)) {
        if (!params::isValidText(entry, shown.toStdString())) return false;
        setTextOf(*this, b->member, shown);
        return true;
    }
    const std::optional<double> value = params::parseNumber(entry, shown.toLower().toStdString());
    if (!value) return false;
    setNumber(*this, b->member, *value);
    return true;
}

RecolorSettings StudioParameters::recolorSettings() const
{
    return params::settingsFrom([this](const params::Parameter& entry) -> std::optional<params::Value> {
        const Binding* b = bindingOf(QString::fromStdString(entry.name));
        if (!b) return std::nullopt;
        if (const std::optional<QString> text = textOf(*this, b->member)) return params::Value{0, text->toStdString()};
        return params::Value{numberOf(*this, b->member), {}};
    });
}

bool StudioParameters::sameSolveAs(const StudioParameters& o) const
{
    for (const Binding& b : bindings()) {
        const params::Stage stage = params::parameter(b.name).stage;
        if ((stage == params::Stage::Palette || stage == params::Stage::Solve) && !sameMember(*this, o, b.member))
            return false;
    }
    return true;
}

bool StudioParameters::sameLookAs(const StudioParameters& o) const
{
    StudioParameters a = *this;
    a.autoRun = o.autoRun;
    return a == o;
}

void StudioParameters::save(QSettings& s) const
{
    s.beginGroup(QStringLiteral("parameters"));
    for (const Binding& b : bindings()) {
        const params::Parameter& entry = params::parameter(b.name);
        const QString key = QString::fromStdString(entry.settingsKey);
        if (const std::optional<QString> text = textOf(*this, b.member)) s.setValue(key, *text);
        else if (auto d = std::get_if<double StudioParameters::*>(&b.member)) s.setValue(key, this->**d * entry.scale());
        else if (auto i = std::get_if<int StudioParameters::*>(&b.member)) s.setValue(key, this->**i);
        else if (auto f = std::get_if<bool StudioParameters::*>(&b.member)) s.setValue(key, this->**f);
    }
    s.endGroup();
}

StudioParameters StudioParameters::load(QSettings& s, QStringList* problems)
{
    StudioParameters p;
    ParameterReader::readGroup(s, QStringLiteral("parameters"), problems, [&p](ParameterReader& r) {
        for (const Binding& b : bindings()) {
            const params::Parameter& entry = params::parameter(b.name);
            if (textOf(p, b.member)) {
                if (const std::optional<QString> t = r.text(entry)) setTextOf(p, b.member, *t);
            } else if (const std::optional<double> v = r.number(entry)) {
                setNumber(p, b.member, *v);
            }
        }
    });
    return p;
}

}  // namespace uot::ui
