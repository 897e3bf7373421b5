#pragma once
// The flags of the parameter table (core/params) on an ArgParser: declared with
// each entry's value name, description, range and default, and read back
// checked against the entry, with the table's one message for a bad value:
//   option '--eps': eps takes a number from 1e-05 to 10, got '20'
// (the words the studio uses for the same value in a settings file).

#include <string>

#include "app/cli/arg_parser.h"
#include "core/params/parameter_schema.h"

namespace uot::cli {

// How a command declares one entry: the table's value name and default unless given here.
struct ParameterFlagStyle {
    std::string valueName;     // "" = the entry's
    std::string defaultValue;  // "" = the entry's (none when the entry's default comes from other flags)
    std::string helpSuffix;    // appended to the entry's help
};

// Declares the flag of `p` (and the former spelling it still takes).
void addParameterOption(ArgParser& parser, const params::Parameter& p, const ParameterFlagStyle& style = {});

// Declares the flags of every entry of `group`, for `problems`.
void addParameterOptions(ArgParser& parser, params::CliGroup group,
                         params::Problems problems = params::Problems::Colors);

// "option '--FLAG': <the entry's problem>, got 'TEXT'".
UsageError refusedValue(const std::string& flag, const params::Parameter& p, const std::string& text);

// Throws refusedValue when `text` is not a value of `p` (one item of a list, or the whole value).
void checkParameterValue(const params::Parameter& p, const std::string& text, const std::string& flag = {});

// The value of p's flag as given (or its former spelling; both given must
// agree), else its default; checked against the entry.
std::string parameterText(const ArgParser& parser, const params::Parameter& p);
// The same as a number in the core's units (Real, Integer; Flag: 1 when the setting is on).
double parameterNumber(const ArgParser& parser, const params::Parameter& p);

// Reads every flag of `group` that the pipeline's settings hold into `s`.
void readParameterOptions(const ArgParser& parser, params::CliGroup group, RecolorSettings& s);

}  // namespace uot::cli
