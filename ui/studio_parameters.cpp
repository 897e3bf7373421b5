#include "ui/studio_parameters.h"

#include <QSettings>
#include <QThread>

#include <algorithm>

#include "core/registry/device_registry.h"
#include "core/registry/solver_registry.h"
#include "ui/parameter_reader.h"

namespace uot::ui {

QStringList StudioParameters::colorSpaces() { return {"lab", "linear-rgb", "oklab"}; }
QStringList StudioParameters::referenceMeasures() { return {"ones", "product"}; }
QStringList StudioParameters::precisions() { return {"fp32", "fp64"}; }
QStringList StudioParameters::accelerations() { return {"none", "relax", "auto"}; }

QStringList StudioParameters::solverNames()
{
    QStringList names{QStringLiteral("auto")};
    for (const SolverInfo& info : listSolvers())
        if (info.caps.device != DeviceKind::Gpu) names << QString::fromStdString(info.name);
    return names;
}

int StudioParameters::maxThreads() { return std::max(1, QThread::idealThreadCount()) * 4; }

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

bool StudioParameters::sameLookAs(const StudioParameters& o) const
{
    StudioParameters a = *this;
    a.autoRun = o.autoRun;
    return a == o;
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
    s.setValue("luminanceIntensity", luminanceIntensity * 100);  // percent, as `uot recolor --luminance`
    s.setValue("colorIntensity", colorIntensity * 100);
    s.setValue("neutralize", neutralize);
    s.setValue("protectSkin", protectSkin * 100);
    s.setValue("protectNeutrals", protectNeutrals * 100);
    s.setValue("smoothingScale", smoothing);  // "smoothing" was a fraction of 0.02 before
    s.setValue("paletteMatch", paletteMatch);
    s.setValue("autoRun", autoRun);
    s.endGroup();
}

StudioParameters StudioParameters::load(QSettings& s, QStringList* problems)
{
    const StudioParameters d;
    StudioParameters p;
    QStringList found;
    s.beginGroup(QStringLiteral("parameters"));
    ParameterReader r(s, found);
    p.colorSpace = r.choice("colorSpace", d.colorSpace, colorSpaces());
    p.paletteSize = r.integer("paletteSize", d.paletteSize, kMinPalette, kMaxPalette);
    p.eps = r.real("eps", d.eps, kMinEps, kMaxEps);
    p.tau = r.real("tau", d.tau, kMinTau, kMaxTau);
    p.balanced = r.flag("balanced", d.balanced);
    p.referenceMeasure = r.choice("referenceMeasure", d.referenceMeasure, referenceMeasures());
    p.maxIterations = r.integer("maxIterations", d.maxIterations, kMinIterations, kMaxIterations);
    p.tolerance = r.real("tolerance", d.tolerance, kMinTolerance, kMaxTolerance);
    p.solver = r.choice("solver", d.solver, solverNames());
    p.device = r.device("device", d.device, kMaxGpuOrdinal);
    p.threads = r.integer("threads", d.threads, 0, maxThreads());
    p.precision = r.choice("precision", d.precision, precisions());
    p.acceleration = r.choice("acceleration", d.acceleration, accelerations());
    p.epsScalingRatio = r.integer("epsScalingRatio", d.epsScalingRatio, 0, kMaxEpsScalingRatio);
    p.epsScalingFactor = r.real("epsScalingFactor", d.epsScalingFactor, kMinEpsScalingFactor, kMaxEpsScalingFactor);
    p.strength = r.real("strength", d.strength, 0.0, 1.0);
    p.preserveLuminance = r.flag("preserveLuminance", d.preserveLuminance);
    p.luminanceIntensity = r.lookControl("luminanceIntensity", "luminance", d.luminanceIntensity);
    p.colorIntensity = r.lookControl("colorIntensity", "color-intensity", d.colorIntensity);
    p.neutralize = r.flag("neutralize", d.neutralize);
    p.protectSkin = r.lookControl("protectSkin", "protect-skin", d.protectSkin);
    p.protectNeutrals = r.lookControl("protectNeutrals", "protect-neutrals", d.protectNeutrals);
    p.smoothing = r.real("smoothingScale", d.smoothing, 0.0, kMaxSmoothing);
    p.paletteMatch = r.real("paletteMatch", d.paletteMatch, 0.0, 1.0);
    p.autoRun = r.flag("autoRun", d.autoRun);
    s.endGroup();
    if (problems) *problems << found;
    return p;
}

}  // namespace uot::ui
