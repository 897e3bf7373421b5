// StudioSession: the solver registry's answers in Qt types, for the views
// (the parameters panel's solver and device lists, the comparison's variants,
// the statistics' and the roofline's GPU or host). Static: they need no session.
#include "ui/studio_session.h"

#include "core/registry/device_registry.h"
#include "core/registry/solver_registry.h"

namespace uot::ui {

QVector<SolverChoice> StudioSession::solverChoices()
{
    QVector<SolverChoice> choices;
    for (const SolverInfo& info : listSolvers()) {
        const QString name = QString::fromStdString(info.name);
        choices.push_back({name, runLabel(name), QString::fromStdString(info.description),
                           info.caps.device == DeviceKind::Gpu, info.available});
    }
    return choices;
}

QVector<GpuChoice> StudioSession::gpuChoices()
{
    QVector<GpuChoice> choices;
    if (const DeviceBackend* gpu = findDeviceBackend(DeviceKind::Gpu))
        for (const DeviceDescription& device : gpu->listDevices())
            choices.push_back({device.ordinal, QString::fromStdString(device.name)});
    return choices;
}

bool StudioSession::gpuCompiledIn()
{
    const DeviceBackend* gpu = findDeviceBackend(DeviceKind::Gpu);
    return gpu && gpu->compiledIn();
}

QString StudioSession::gpuUnavailableReason() { return QString::fromStdString(uot::gpuUnavailableReason()); }

QString StudioSession::defaultVariant(bool gpu)
{
    return QString::fromStdString(defaultSolver(gpu ? DeviceKind::Gpu : DeviceKind::Cpu));
}

bool StudioSession::runsOnGpu(const QString& variant) { return uot::runsOnGpu(variant.toStdString()); }

}  // namespace uot::ui
