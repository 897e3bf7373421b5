#include "app/cli/parameter_flags.h"

namespace uot::cli {

using params::Kind;

void addParameterOption(ArgParser& parser, const params::Parameter& p, const ParameterFlagStyle& style)
{
    if (p.kind == Kind::Flag) {
        parser.addFlag(p.cliFlag, p.description + style.helpSuffix);
        return;
    }
    const bool ranged = p.kind == Kind::Real || p.kind == Kind::Integer;
    const std::string valueName = style.valueName.empty() ? p.valueName : style.valueName;
    std::string defaultValue = style.defaultValue;
    if (defaultValue.empty() && !p.cliDefaultFromContext) defaultValue = p.defaultShown();
    parser.addOption(p.cliFlag, valueName,
                     p.description + (ranged ? "; " + p.allowed() : std::string()) + style.helpSuffix, defaultValue);
    if (!p.cliAlias.empty()) parser.addOption(p.cliAlias, valueName, "the same as --" + p.cliFlag + " (its former name)");
}

void addParameterOptions(ArgParser& parser, params::CliGroup group, params::Problems problems)
{
    for (const params::Parameter& p : params::parameters(problems))
        if (!p.cliFlag.empty() && p.cliGroup == group) addParameterOption(parser, p);
}

UsageError refusedValue(const std::string& flag, const params::Parameter& p, const std::string& text)
{
    return UsageError("option '--" + flag + "': " + p.problem() + ", got '" + text + "'");
}

void checkParameterValue(const params::Parameter& p, const std::string& text, const std::string& flag)
{
    if (!params::accepts(p, text, true)) throw refusedValue(flag.empty() ? p.cliFlag : flag, p, text);
}

std::string parameterText(const ArgParser& parser, const params::Parameter& p)
{
    std::string text = parser.value(p.cliFlag);
    std::string flag = p.cliFlag;
    if (!p.cliAlias.empty() && parser.has(p.cliAlias)) {
        const std::string alias = parser.value(p.cliAlias);
        if (parser.has(p.cliFlag) && params::parseNumber(p, alias) != params::parseNumber(p, text))
            throw UsageError("options '--" + p.cliFlag + "' and '--" + p.cliAlias + "' (the same setting) disagree");
        if (!parser.has(p.cliFlag)) {
            text = alias;
            flag = p.cliAlias;
        }
    }
    if (text.empty() && p.cliDefaultFromContext && !parser.has(flag)) return text;  // chosen by the command
    checkParameterValue(p, text, flag);
    return text;
}

double parameterNumber(const ArgParser& parser, const params::Parameter& p)
{
    if (p.kind == Kind::Flag) return parser.flag(p.cliFlag) != p.cliNegated ? 1.0 : 0.0;
    return *params::parseNumber(p, parameterText(parser, p));
}

void readParameterOptions(const ArgParser& parser, params::CliGroup group, RecolorSettings& s)
{
    for (const params::Parameter& p : params::parameters()) {
        if (p.cliFlag.empty() || p.cliGroup != group) continue;
        if (p.kind == Kind::Choice || p.kind == Kind::Device) {
            const std::string text = parameterText(parser, p);
            if (p.setText) p.setText(s, text);
        } else if (p.kind != Kind::Text) {
            const double value = parameterNumber(parser, p);
            if (p.set) p.set(s, value);
        }
    }
}

}  // namespace uot::cli
