#include "app/cli/arg_parser.h"

#include <cmath>
#include <cstdlib>
#include <sstream>

namespace uot::cli {

ArgParser::ArgParser(std::string usage, std::string summary) : m_usage(std::move(usage)), m_summary(std::move(summary))
{
}

void ArgParser::addOption(const std::string& name, const std::string& valueName, const std::string& help,
                          const std::string& defaultValue, bool repeatable)
{
    if (declares(name)) return;
    m_order.push_back(name);
    m_specs[name] = Spec{valueName, help, defaultValue, false, repeatable};
}

void ArgParser::addFlag(const std::string& name, const std::string& help)
{
    if (declares(name)) return;
    m_order.push_back(name);
    m_specs[name] = Spec{{}, help, {}, true, false};
}

void ArgParser::addPositional(const std::string& name, const std::string& help)
{
    m_positionalHelp.emplace_back(name, help);
}

void ArgParser::parse(const std::vector<std::string>& args)
{
    for (std::size_t k = 0; k < args.size(); ++k) {
        const std::string& arg = args[k];
        if (arg == "--help" || arg == "-h") {
            m_help = true;
            continue;
        }
        if (arg.size() < 2 || arg.rfind("--", 0) != 0 || arg == "--") {
            if (arg.size() > 1 && arg[0] == '-' && !(arg[1] >= '0' && arg[1] <= '9'))
                throw UsageError("unknown option '" + arg + "' (see --help)");
            m_positionals.push_back(arg);
            continue;
        }
        std::string name = arg.substr(2);
        std::optional<std::string> inlineValue;
        if (const auto eq = name.find('='); eq != std::string::npos) {
            inlineValue = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        const auto spec = m_specs.find(name);
        if (spec == m_specs.end()) throw UsageError("unknown option '--" + name + "' (see --help)");
        if (spec->second.isFlag) {
            if (inlineValue) throw UsageError("option '--" + name + "' takes no value");
            m_values[name] = {"1"};
            continue;
        }
        std::string value;
        if (inlineValue) {
            value = *inlineValue;
        } else {
            if (k + 1 >= args.size()) throw UsageError("option '--" + name + "' needs a value: " + spec->second.valueName);
            value = args[++k];
        }
        auto& slot = m_values[name];
        if (!spec->second.repeatable) slot.clear();
        slot.push_back(value);
    }
}

std::string ArgParser::helpText() const
{
    std::ostringstream out;
    out << "usage: " << m_usage << "\n\n" << m_summary << "\n";
    if (!m_positionalHelp.empty()) {
        out << "\narguments:\n";
        for (const auto& [name, help] : m_positionalHelp) out << "  " << name << "\n      " << help << "\n";
    }
    out << "\noptions:\n";
    for (const std::string& name : m_order) {
        const Spec& s = m_specs.at(name);
        out << "  --" << name;
        if (!s.isFlag) out << " " << s.valueName;
        out << "\n      " << s.help;
        if (!s.defaultValue.empty()) out << " (default: " << s.defaultValue << ")";
        if (s.repeatable) out << " (repeatable)";
        out << "\n";
    }
    out << "  --help\n      show this text\n";
    return out.str();
}

bool ArgParser::has(const std::string& name) const { return m_values.count(name) != 0; }

std::string ArgParser::value(const std::string& name) const
{
    const auto it = m_values.find(name);
    if (it != m_values.end() && !it->second.empty()) return it->second.back();
    return m_specs.at(name).defaultValue;
}

std::vector<std::string> ArgParser::values(const std::string& name) const
{
    const auto it = m_values.find(name);
    if (it != m_values.end()) return it->second;
    const std::string& fallback = m_specs.at(name).defaultValue;
    return fallback.empty() ? std::vector<std::string>{} : std::vector<std::string>{fallback};
}

bool ArgParser::flag(const std::string& name) const { return has(name); }

double ArgParser::number(const std::string& name) const
{
    const std::string text = value(name);
    char* end = nullptr;
    const double parsed = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || std::isnan(parsed))
        throw UsageError("option '--" + name + "' needs a number, got '" + text + "'");
    return parsed;
}

int ArgParser::integer(const std::string& name) const
{
    const std::string text = value(name);
    char* end = nullptr;
    const long parsed = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || end != text.c_str() + text.size() || parsed < -2147483647L || parsed > 2147483647L)
        throw UsageError("option '--" + name + "' needs a whole number, got '" + text + "'");
    return static_cast<int>(parsed);
}

std::vector<std::string> splitList(const std::string& text, char separator)
{
    std::vector<std::string> items;
    std::string item;
    std::istringstream in(text);
    while (std::getline(in, item, separator))
        if (!item.empty()) items.push_back(item);
    return items;
}

}  // namespace uot::cli
