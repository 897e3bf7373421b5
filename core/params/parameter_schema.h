#pragma once
// The parameter table: every setting that the `uot` commands (recolor, batch,
// lut; the solver flags of solve, bench and uot-mpi; the output file's options;
// the files of solve; uot-mpi's own flags; the clip flags) and the studio offer, declared once with its type, default, range, unit,
// description, command-line flag, studio settings key and the pipeline stage a
// change re-runs. From it come the CLI flags and their --help
// (app/cli/parameter_flags.cpp), the checks of a value with one message per bad
// value (the same text in the CLI and the studio), the studio's persistence,
// presets and Copy/Paste Settings (ui/studio_parameters.cpp) and its widgets'
// ranges, defaults and tooltips (ui/parameters_panel.cpp).
//
// Defaults are the core's own (RecolorSettings, SolveOptions, UotProblem): the
// table reads them, so a default lives in one place. Adding a parameter: one
// entry in parameter_schema.cpp, in the group of the commands that take it
// (with get/set when the pipeline holds it); the commands declare and check its
// flag by themselves, and the studio saves it once it has a member bound to its
// key (ui/studio_parameters.cpp).

#include <functional>
#include <optional>
#include <utility>
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
    Device,   // "cpu" or "gpu:N", N from 0 to max (and `cliSpellings` on the command line)
    Text      // free text checked where it is read (a file name, a list of GPUs)
};

// Which commands declare an entry's flag.
enum class CliGroup {
    Recolor,  // the colour-transfer commands: recolor, batch, lut (app/cli/recolor_options.cpp)
    Solver,   // every command that solves: solve, bench, uot-mpi and the three above (app/cli/solver_flags.cpp)
    Output,   // the commands that write an image: recolor, batch
    SolveIo,  // the files of `uot solve` and `uot-mpi solve` (app/cli/solve_report.cpp: addSolveIoOptions)
    Mpi,      // uot-mpi's own (app/mpi: its problem generator, waiting and timeouts)
    Clip,     // clips in recolor, lut and batch (app/cli/video_options.cpp)
    Input     // how images are read: recolor, lut, batch (app/cli/recolor_options.cpp) and uot-studio
};

// Which problems the values are for: colour transfer (the pipeline, the studio:
// costs are normalised colour distances) or raw problems (`uot solve`, `uot
// bench`, `uot-mpi`: costs in their own units), where a few entries take
// another default or range (eps, tau-a, tau-b, max-iter, tol).
enum class Problems { Colors, Raw };

// The first pipeline stage a change re-runs (the later ones re-run with it);
// None: nothing is recomputed (when to run, how many threads to list...).
enum class Stage { Palette, Solve, Map, None };
std::string toString(Stage stage);

struct Parameter {
    std::string name;         // identifier; the CLI flag's name when it has one
    Kind kind = Kind::Real;
    std::string label;        // what messages call it ("colour intensity")
    std::string description;  // --help text and the studio's tooltip
    std::string title;        // the studio's label of its widget; "" = label, capitalised
    std::string unit;         // "%": shown, typed and saved as percent; the core holds fractions
    double defaultValue = 0;  // Real, Integer, Flag (0 or 1), in the core's units
    std::string defaultText;  // Choice, Device
    std::vector<std::string> choices;
    // Choices known only at run time (the solver registry's names), read when used.
    std::function<std::vector<std::string>()> listChoices;
    double min = 0, max = 0;  // Real, Integer (core units); Device: the largest ordinal
    bool minExclusive = false, maxExclusive = false;  // Real: the bound itself is refused
    std::string noneText;     // Real: a spelling for "none" (held as -infinity), "" = no such value
    std::string infinityText; // Real: a spelling for +infinity ("inf"), accepted above max
    std::string cliFlag;      // "" = not on the command line
    CliGroup cliGroup = CliGroup::Recolor;
    std::string cliAlias;     // a former spelling of the flag, same meaning ("strength" for "fade")
    bool cliNegated = false;  // the flag turns the setting off ("no-smooth" for smooth)
    // The command line's default is chosen from other flags (--accel: by --solver); the
    // flag is declared without one. defaultText is then the pipeline's and the studio's.
    bool cliDefaultFromContext = false;
    std::vector<std::string> cliSpellings;  // Device: words the command line also takes ("gpu", "auto")
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
    // The studio's label of the entry's widget ("Smoothness (eps)", "Palette size").
    std::string studioTitle() const;
    // The default as typed on the command line and in a settings file.
    std::string defaultShown() const;
    // The one message for a value this parameter refuses, without the value
    // ("eps takes a number from 1e-05 to 10").
    std::string problem() const;
    // What the parameter takes, in words ("a number from 1e-05 to 10").
    std::string allowed() const;
};

// The table, in the order of --help, with the defaults and ranges of `problems`.
const std::vector<Parameter>& parameters(Problems problems = Problems::Colors);
// The entry named `name`; throws std::out_of_range naming it.
const Parameter& parameter(const std::string& name, Problems problems = Problems::Colors);
// The entry saved under `key`, or null.
const Parameter* parameterWithKey(const std::string& key);

// Reads a value as shown (percent for "%" entries; "true"/"false"/"1"/"0" for
// flags) into the core's units. nullopt when the text is not a valid value.
std::optional<double> parseNumber(const Parameter& p, const std::string& shown);
// Whether `text` is one of the choices (Choice) or cpu / gpu:N within range (Device;
// with `commandLine`, also one of cliSpellings). Text: always.
bool isValidText(const Parameter& p, const std::string& text, bool commandLine = false);
// Whether `text` is a valid value of `p`, whatever its kind.
bool accepts(const Parameter& p, const std::string& text, bool commandLine = false);
// Formats a number of the core's units as shown ("0.003", "100").
std::string shownNumber(const Parameter& p, double value);

// A value of an entry: a number in the core's units (Real, Integer, Flag as 0/1)
// or a text (Choice, Device).
struct Value {
    double number = 0;
    std::string text;
};
// The pipeline's settings from a value for each entry `valueOf` gives one (the
// entry's default for the others), written in the table's order through each
// entry's set/setText: the studio's conversion of its parameters. Throws
// uot::Error for a text that is not one of the entry's spellings.
RecolorSettings settingsFrom(const std::function<std::optional<Value>(const Parameter&)>& valueOf);

// eps-scaling as the table holds it (entries eps-scaling and eps-scaling-factor):
// the first stage's eps as a multiple `ratio` of the target eps, and the factor
// from one stage to the next. The solver's schedule for target `eps`: off when
// ratio <= 1 (the target is the only stage).
EpsSchedule epsScheduleFor(double ratio, double factor, double eps);
// The former "START,FACTOR" spelling (--eps-schedule) as the table's ratio for
// target `eps` (0 for "none"); the factor is START,FACTOR's. Throws
// Error(InvalidArgument) for a text that is not START,FACTOR or none.
std::pair<double, double> epsScalingFromSchedule(const std::string& text, double eps);

}  // namespace uot::params
