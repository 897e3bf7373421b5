#pragma once
// Everything the user can set in the parameters dock, as a plain value. Each
// member is bound to an entry of the parameter table (core/params), which gives
// its default, range, settings key, message for a bad value and the pipeline
// stage it invalidates: the defaults are `uot recolor`'s, the persistence and
// the checks are the table's, and so is the conversion to the pipeline's
// settings (recolorSettings, through each entry's setter).

#include <QString>
#include <QStringList>

#include "core/params/parameter_schema.h"

class QSettings;

namespace uot::ui {

namespace parameter_defaults {
// The table's default of entry `name`: a number in the core's units, or a text.
inline double number(const char* name) { return params::parameter(name).defaultValue; }
inline QString text(const char* name) { return QString::fromStdString(params::parameter(name).defaultText); }
// The table's default of a choice of the core enum `Enum` (WorkingSpace, ReferenceMeasure,
// Precision, Acceleration), whose spellings are the entry's choices.
template <typename Enum>
Enum choice(const char* name);
}  // namespace parameter_defaults

// Each member names its entry of the parameter table (core/params/parameter_schema.cpp).
struct StudioParameters {
    WorkingSpace colorSpace = parameter_defaults::choice<WorkingSpace>("space");  // space
    int paletteSize = int(parameter_defaults::number("palette-size"));         // palette-size (M = N)
    double eps = parameter_defaults::number("eps");                            // eps, relative to the cost scale
    // Adherence to the reference palette (tau on the reference side) when not
    // balanced; balanced (the default) is exact adherence.
    double tau = parameter_defaults::number("adherence");                      // adherence (--tau-b when not balanced)
    bool balanced = parameter_defaults::number("balanced") != 0;               // balanced
    ReferenceMeasure referenceMeasure = parameter_defaults::choice<ReferenceMeasure>("reference-measure");
    int maxIterations = int(parameter_defaults::number("max-iter"));           // max-iter
    double tolerance = parameter_defaults::number("tol");                      // tol
    Acceleration acceleration = parameter_defaults::choice<Acceleration>("acceleration");  // --accel
    // eps-scaling (--eps-scaling, --eps-scaling-factor): stages from epsScalingRatio x eps
    // down to eps by epsScalingFactor per stage, then eps to the tolerance. Up to 1 = off.
    int epsScalingRatio = int(parameter_defaults::number("eps-scaling"));        // eps-scaling
    double epsScalingFactor = parameter_defaults::number("eps-scaling-factor");  // eps-scaling-factor
    QString solver = parameter_defaults::text("solver");                         // solver
    QString device = parameter_defaults::text("device");                         // device: "cpu" or "gpu:N"
    int threads = int(parameter_defaults::number("threads"));                    // threads, 0 = all
    Precision precision = parameter_defaults::choice<Precision>("precision");    // precision
    double strength = parameter_defaults::number("fade");                        // fade: 0 = source unchanged
    bool preserveLuminance = parameter_defaults::number("preserve-luminance") != 0;  // preserve-luminance
    // The colourist's look controls (core/color/look_controls.h), as fractions;
    // saved as percent. A change re-maps without a new solve.
    double luminanceIntensity = parameter_defaults::number("luminance");         // luminance
    double colorIntensity = parameter_defaults::number("color-intensity");       // color-intensity
    bool neutralize = parameter_defaults::number("neutralize") != 0;             // neutralize
    double protectSkin = parameter_defaults::number("protect-skin");             // protect-skin
    double protectNeutrals = parameter_defaults::number("protect-neutrals");     // protect-neutrals
    // Structure smoothing as a multiple of the pipeline's default radius: 1 = `uot recolor`'s, 0 = off.
    double smoothing = parameter_defaults::number("smoothing");                  // smoothing
    // Palette match (MappingSettings::residualMatch; no effect with smoothing off).
    double paletteMatch = parameter_defaults::number("residual-match");          // residual-match
    // Lightness transfer (MapBounds::lightnessTransfer: how far the lightness curve moves toward
    // the reference's lightness distribution; no effect in linear RGB, which has no lightness axis).
    double lightnessTransfer = parameter_defaults::number("lightness-transfer");  // lightness-transfer
    // Color range along lightness (MapBounds::chromaLightnessRange, Lab units; inf = no bound).
    double colorRange = parameter_defaults::number("color-range");               // color-range
    // Share of the picture (per cent) where a lightness edge may still become a color edge
    // beyond the range (MapBounds::chromaRangeExempt).
    double colorEdges = parameter_defaults::number("color-edges");               // color-edges
    bool autoRun = parameter_defaults::number("auto-run") != 0;                  // auto-run

    // The value of the member bound to the table entry `name` as a settings file
    // holds it ("0.003", "lab", "true"; percent for % entries), and back (false,
    // leaving the member as it was, when the text is not a valid value). Empty /
    // false for a name no member is bound to.
    QString shownValue(const QString& name) const;
    bool setShownValue(const QString& name, const QString& shown);
    // The table's names of the entries a member is bound to, in the table's order.
    static QStringList boundNames();

    // The pipeline's settings, written entry by entry by the parameter table
    // (params::settingsFrom): the device's form of the solver, eps-scaling's
    // schedule, the smoothing radius and balanced adherence included.
    RecolorSettings recolorSettings() const;

    // Why a solve cannot run on `device` ("cpu" or "gpu:N") here; empty when it can.
    static QString deviceUnavailableReason(const QString& device);

    // The parameter table's verdict on a value given to uot-studio for the entry
    // `name`: empty when valid (the device as the studio takes it: cpu or gpu:N),
    // else the table's message, the one the command line gives for it.
    static QString valueProblem(const char* name, const QString& text);

    // True when the two differ only in what a re-map can apply without a new
    // solve: every member whose table entry invalidates the palettes or the
    // solve is equal.
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
