#pragma once
// Everything the user can set in the parameters dock, with defaults, limits
// and persistence (QSettings). The pipeline settings are derived from this in
// studio_jobs.cpp, the only place that talks to the pipeline.

#include <QString>
#include <QStringList>

class QSettings;

namespace uot::ui {

struct StudioParameters {
    QString colorSpace = QStringLiteral("lab");  // working color space
    int paletteSize = 4096;                       // color points per image (M = N); `uot recolor`'s default
    double eps = 0.01;                            // entropic regularisation, relative to the cost scale
    double tau = 1.0;                             // adherence to the reference palette
    bool balanced = false;                        // tau = infinity on both sides
    QString referenceMeasure = QStringLiteral("ones");
    int maxIterations = 100;
    double tolerance = 1e-4;
    QString solver = QStringLiteral("auto");
    QString device = QStringLiteral("cpu");  // "cpu" or "gpu:N"
    int threads = 0;                          // 0 = all
    QString precision = QStringLiteral("fp32");
    double strength = 1.0;                    // 0 = source unchanged, 1 = full transfer
    bool preserveLuminance = false;
    double smoothing = 0.5;                   // structure smoothing of the color displacement, 0 = off
    bool autoRun = false;

    // Limits shared by the dock's validators and load() (which clamps).
    static constexpr int kMinPalette = 16, kMaxPalette = 16384;
    static constexpr double kMinEps = 1e-5, kMaxEps = 10.0;
    static constexpr double kMinTau = 1e-3, kMaxTau = 1e3;
    static constexpr int kMinIterations = 1, kMaxIterations = 100000;
    static constexpr double kMinTolerance = 0.0, kMaxTolerance = 1.0;
    static constexpr double kMaxSmoothing = 1.0;

    static QStringList colorSpaces();
    static QStringList referenceMeasures();
    static QStringList precisions();
    // Why a solve cannot run on `device` ("cpu" or "gpu:N") here; empty when it can.
    static QString deviceUnavailableReason(const QString& device);

    // True when the two differ only in what a re-map can apply without a new
    // solve (strength, preserve luminance, smoothing, auto-run).
    bool sameSolveAs(const StudioParameters& other) const;
    bool operator==(const StudioParameters& other) const = default;

    void save(QSettings& settings) const;
    // Reads what was saved, clamping out-of-range values to the limits and
    // replacing unknown names by the defaults.
    static StudioParameters load(QSettings& settings);
};

}  // namespace uot::ui
