#pragma once
// Everything the user can set in the parameters dock, with defaults, limits
// and persistence (QSettings). The defaults of the colour transfer are the
// pipeline's (RecolorSettings in core/pipeline), the same as `uot recolor`'s. The pipeline settings are derived from this in
// studio_jobs.cpp, the only place that talks to the pipeline.

#include <QString>
#include <QStringList>

#include "core/pipeline/recolor_pipeline.h"

class QSettings;

namespace uot::ui {

struct StudioParameters {
    QString colorSpace = QStringLiteral("lab");  // working color space
    int paletteSize = RecolorSettings{}.palette.size;  // color points per image (M = N)
    double eps = TransportSettings{}.eps;              // entropic regularisation, relative to the cost scale
    // Adherence to the reference palette (tau on the reference side); "balanced" is the
    // pipeline's default, exact adherence (the source side is exact already).
    double tau = 1.0;
    bool balanced = TransportSettings{}.adherence == kInfinity;
    QString referenceMeasure = QStringLiteral("ones");
    // Solved to tolerance by default: the cap is a safety net no typical photo reaches
    // (the accelerated TI iteration converges in tens to a few hundred passes).
    int maxIterations = 5000;
    double tolerance = 1e-5;
    QString acceleration = QStringLiteral("auto");  // none | relax | auto (--accel)
    // eps-scaling (--eps-schedule): stages from epsScalingRatio x eps down to eps by
    // epsScalingFactor per stage, then eps to the tolerance. 0 = off (as `uot recolor`).
    int epsScalingRatio = 0;
    double epsScalingFactor = 0.5;
    QString solver = QStringLiteral("auto");
    QString device = QStringLiteral("cpu");  // "cpu" or "gpu:N"
    int threads = 0;                          // 0 = all
    QString precision = QStringLiteral("fp32");
    double strength = 1.0;                    // 0 = source unchanged, 1 = full transfer
    bool preserveLuminance = false;
    // The colourist's look controls (core/color/look_controls.h), as fractions:
    // luminance and colour intensity 0..2 (1 = the transfer's look), protections 0..1.
    // Saved as percent (luminanceIntensity=100 ...). A change re-maps without a new solve.
    double luminanceIntensity = LookControls{}.luminance;
    double colorIntensity = LookControls{}.colorIntensity;
    bool neutralize = LookControls{}.neutralize;
    double protectSkin = LookControls{}.protectSkin;
    double protectNeutrals = LookControls{}.protectNeutrals;
    // Structure smoothing of the color displacement as a multiple of the pipeline's
    // default radius (MappingSettings::smoothRadius): 1 = `uot recolor`'s default, 0 = off.
    double smoothing = 1.0;
    // Palette match: how far the result's colour distributions are moved to the
    // reference's through the smoothed field (MappingSettings::residualMatch, 0..1;
    // no effect with smoothing off).
    double paletteMatch = MappingSettings{}.residualMatch;
    bool autoRun = false;

    // Limits shared by the dock's validators and load() (which refuses values outside them).
    static constexpr int kMinPalette = 16, kMaxPalette = 16384;
    static constexpr double kMinEps = 1e-5, kMaxEps = 10.0;
    static constexpr double kMinTau = 1e-3, kMaxTau = 1e3;
    static constexpr int kMinIterations = 1, kMaxIterations = 100000;
    static constexpr double kMinTolerance = 0.0, kMaxTolerance = 1.0;
    static constexpr double kMaxSmoothing = 4.0;
    static constexpr int kMaxEpsScalingRatio = 10000;
    static constexpr double kMinEpsScalingFactor = 0.05, kMaxEpsScalingFactor = 0.95;
    static constexpr int kMaxGpuOrdinal = 63;
    // CPU threads the dock offers: 0 (all) to four per core of this machine.
    static int maxThreads();

    static QStringList colorSpaces();
    static QStringList referenceMeasures();
    static QStringList precisions();
    static QStringList accelerations();
    // "auto" and the CPU variants of the solver registry (the device picks a GPU form).
    static QStringList solverNames();
    // Why a solve cannot run on `device` ("cpu" or "gpu:N") here; empty when it can.
    static QString deviceUnavailableReason(const QString& device);

    // True when the two differ only in what a re-map can apply without a new
    // solve (strength, preserve luminance, smoothing, palette match, the look
    // controls, auto-run).
    bool sameSolveAs(const StudioParameters& other) const;
    // True when a recolor with either gives the same picture: everything but
    // auto-run, which only says when to run.
    bool sameLookAs(const StudioParameters& other) const;
    bool operator==(const StudioParameters& other) const = default;

    void save(QSettings& settings) const;
    // Reads what was saved (the group "parameters" of the current group). A
    // value that is not valid (NaN, inf, text where a number belongs, out of
    // range, an unknown name) is replaced by its default, never clamped, and
    // `problems` (when given) gets one message per such value, naming the key
    // and what it takes (ui/parameter_reader.h).
    static StudioParameters load(QSettings& settings, QStringList* problems = nullptr);
};

}  // namespace uot::ui
