#include "ui/studio_parameters.h"

#include <QSettings>

#include <algorithm>

#include "core/registry/device_registry.h"

namespace uot::ui {

QStringList StudioParameters::colorSpaces() { return {"lab", "linear-rgb", "oklab"}; }
QStringList StudioParameters::referenceMeasures() { return {"ones", "product"}; }
QStringList StudioParameters::precisions() { return {"fp32", "fp64"}; }
QStringList StudioParameters::accelerations() { return {"none", "relax", "auto"}; }

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

bool StudioParameters::sameSolveAs(const StudioParameters& o) const
{
    return colorSpace == o.colorSpace && paletteSize == o.paletteSize && eps == o.eps && tau == o.tau &&
           balanced == o.balanced && referenceMeasure == o.referenceMeasure && maxIterations == o.maxIterations &&
           tolerance == o.tolerance && solver == o.solver && device == o.device && threads == o.threads &&
           precision == o.precision && acceleration == o.acceleration && epsScalingRatio == o.epsScalingRatio &&
           epsScalingFactor == o.epsScalingFactor;
}

void StudioParameters::save(QSettings& s) const
{
    s.beginGroup(QStringLiteral("parameters"));
    s.setValue("colorSpace", colorSpace);
    s.setValue("paletteSize", paletteSize);
    s.setValue("eps", eps);
    s.setValue("tau", tau);
    s.setValue("balanced", balanced);
    s.setValue("referenceMeasure", referenceMeasure);
    s.setValue("maxIterations", maxIterations);
    s.setValue("tolerance", tolerance);
    s.setValue("solver", solver);
    s.setValue("device", device);
    s.setValue("threads", threads);
    s.setValue("precision", precision);
    s.setValue("acceleration", acceleration);
    s.setValue("epsScalingRatio", epsScalingRatio);
    s.setValue("epsScalingFactor", epsScalingFactor);
    s.setValue("strength", strength);
    s.setValue("preserveLuminance", preserveLuminance);
    s.setValue("smoothingScale", smoothing);  // "smoothing" was a fraction of 0.02 before
    s.setValue("paletteMatch", paletteMatch);
    s.setValue("autoRun", autoRun);
    s.endGroup();
}

namespace {
QString oneOf(const QVariant& v, const QStringList& allowed, const QString& fallback)
{
    const QString text = v.toString();
    return allowed.contains(text) ? text : fallback;
}
}  // namespace

StudioParameters StudioParameters::load(QSettings& s)
{
    const StudioParameters d;
    StudioParameters p;
    s.beginGroup(QStringLiteral("parameters"));
    p.colorSpace = oneOf(s.value("colorSpace", d.colorSpace), colorSpaces(), d.colorSpace);
    p.paletteSize = std::clamp(s.value("paletteSize", d.paletteSize).toInt(), kMinPalette, kMaxPalette);
    p.eps = std::clamp(s.value("eps", d.eps).toDouble(), kMinEps, kMaxEps);
    p.tau = std::clamp(s.value("tau", d.tau).toDouble(), kMinTau, kMaxTau);
    p.balanced = s.value("balanced", d.balanced).toBool();
    p.referenceMeasure = oneOf(s.value("referenceMeasure", d.referenceMeasure), referenceMeasures(), d.referenceMeasure);
    p.maxIterations = std::clamp(s.value("maxIterations", d.maxIterations).toInt(), kMinIterations, kMaxIterations);
    p.tolerance = std::clamp(s.value("tolerance", d.tolerance).toDouble(), kMinTolerance, kMaxTolerance);
    p.solver = s.value("solver", d.solver).toString();
    if (p.solver.isEmpty()) p.solver = d.solver;
    p.device = s.value("device", d.device).toString();
    if (p.device != "cpu" && !p.device.startsWith("gpu:")) p.device = d.device;
    p.threads = std::max(0, s.value("threads", d.threads).toInt());
    p.precision = oneOf(s.value("precision", d.precision), precisions(), d.precision);
    p.acceleration = oneOf(s.value("acceleration", d.acceleration), accelerations(), d.acceleration);
    p.epsScalingRatio = std::clamp(s.value("epsScalingRatio", d.epsScalingRatio).toInt(), 0, kMaxEpsScalingRatio);
    p.epsScalingFactor =
        std::clamp(s.value("epsScalingFactor", d.epsScalingFactor).toDouble(), kMinEpsScalingFactor, kMaxEpsScalingFactor);
    p.strength = std::clamp(s.value("strength", d.strength).toDouble(), 0.0, 1.0);
    p.preserveLuminance = s.value("preserveLuminance", d.preserveLuminance).toBool();
    p.smoothing = std::clamp(s.value("smoothingScale", d.smoothing).toDouble(), 0.0, kMaxSmoothing);
    p.paletteMatch = std::clamp(s.value("paletteMatch", d.paletteMatch).toDouble(), 0.0, 1.0);
    p.autoRun = s.value("autoRun", d.autoRun).toBool();
    s.endGroup();
    return p;
}

}  // namespace uot::ui
