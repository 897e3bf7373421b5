#pragma once
// The parameter table: every setting of a colour transfer that the `uot`
// commands (recolor, batch, lut) and the studio offer, declared once with its
// type, default, range, unit, description, command-line flag, studio settings
// key and the pipeline stage a change re-runs. From it come the CLI flags and
// their --help (app/cli/recolor_options.cpp), the checks of a value with one
// message per bad value (the same text in the CLI and the studio), the studio's
// persistence, presets and Copy/Paste Settings (ui/studio_parameters.cpp) and its
// widgets' ranges and defaults (ui/parameters_panel.cpp).
//
// Defaults are the core's own (RecolorSettings, SolveOptions): the table reads
// them, so a default lives in one place. Adding a parameter: one entry in
// parameter_schema.cpp (with get/set when the pipeline holds it); the CLI
// declares and reads it by itself, and the studio saves it once it has a
// member bound to its key (ui/studio_parameters.cpp).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/pipeline/recolor_pipeline.h"

namespace uot::params {

// The largest thread count any command and the studio accept (docs/SAFETY.md, --help):
// more are refused before any OpenMP region starts (a huge count crashes the OpenMP
// runtime; thousands only thrash the machine).
inline constexpr int kMaxThreads = 1024;

enum class Kind {
    Real,     // a number in [min, max]
    Integer,  // a whole number in [min, max]
    Flag,     // on or off (true/false in settings; a flag without a value on the command line)
    Choice,   // one of `choices` (the spellings of a core enum, or the solver registry's names)
    Device    // "cpu" or "gpu:N", N from 0 to max
};

// The first pipeline stage a change re-runs (the later ones re-run with it);
// None: nothing is recomputed (when to run, how many threads to list...).
enum class Stage { Palette, Solve, Map, None };
std::string toString(Stage stage);

struct Parameter {
    std::string name;         // identifier; the CLI flag's name when it has one
    Kind kind = Kind::Real;
    std::string label;        // what messages call it ("colour intensity")
    std::string description;  // --help text and the studio's tooltip
    std::string unit;         // "%": shown, typed and saved as percent; the core holds fractions
    double defaultValue = 0;  // Real, Integer, Flag (0 or 1), in the core's units
    std::string defaultText;  // Choice, Device
    std::vector<std::string> choices;
    // Choices known only at run time (the solver registry's names), read when used.
    std::function<std::vector<std::string>()> listChoices;
    double min = 0, max = 0;  // Real, Integer (inclusive, core units); Device: the largest ordinal
    std::string noneText;     // Real: a spelling for "none" (held as -infinity), "" = no such value
    std::string cliFlag;      // "" = not on the command line
    std::string cliAlias;     // a former spelling of the flag, same meaning ("strength" for "fade")
    bool cliNegated = false;  // the flag turns the setting off ("no-smooth" for smooth)
    std::string valueName;    // "X", "N", "PERCENT" (Choice: the choices joined by |)
    std::string settingsKey;  // the studio's QSettings key; "" = not saved by the studio
    Stage stage = Stage::None;
    // Where the pipeline holds the value (empty for the studio's own entries):
    // numbers (Real, Integer, Flag as 0/1) or the spelling of a Choice.
    std::function<double(const RecolorSettings&)> get;
    std::function<void(RecolorSettings&, double)> set;
    std::function<std::string(const RecolorSettings&)> getText;
    std::function<void(RecolorSettings&, const std::string&)> setText;

    // The spellings a Choice accepts.
    std::vector<std::string> choiceList() const { return listChoices ? listChoices() : choices; }
    // Shown = stored x scale() (100 for percent).
    double scale() const { return unit == "%" ? 100.0 : 1.0; }
    // The default as typed on the command line and in a settings file.
    std::string defaultShown() const;
    // The one message for a value this parameter refuses, without the value
    // ("eps takes a number from 1e-05 to 10").
    std::string problem() const;
    // What the parameter takes, in words ("a number from 1e-05 to 10").
    std::string allowed() const;
};

// The table, in the order of --help.
const std::vector<Parameter>& parameters();
// The entry named `name`; throws std::out_of_range naming it.
const Parameter& parameter(const std::string& name);
// The entry saved under `key`, or null.
const Parameter* parameterWithKey(const std::string& key);

// Reads a value as shown (percent for "%" entries; "true"/"false"/"1"/"0" for
// flags) into the core's units. nullopt when the text is not a valid value.
std::optional<double> parseNumber(const Parameter& p, const std::string& shown);
// Whether `text` is one of the choices (Choice) or cpu / gpu:N within range (Device).
bool isValidText(const Parameter& p, const std::string& text);
// Formats a number of the core's units as shown ("0.003", "100").
std::string shownNumber(const Parameter& p, double value);

}  // namespace uot::params
