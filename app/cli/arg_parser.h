#pragma once
// Command-line parsing shared by every `uot` command: declared options with
// help text, "--name value" and "--name=value", repeatable options, flags and
// positionals. Errors are UsageError with a message that says what to type.
//
// Why our own parser and not CLI11 (Debian libcli11-dev 2.1.2, evaluated
// 2026-11-24 with the same options declared in both):
// - `uot` and `uot-mpi` must build on the GPU machine, which has a compiler,
//   CMake and CUDA only; CLI11 is not there, and carrying it would be one more
//   bundle for every device session.
// - Its messages are worse for our users: `--eps abc` and `--eps -1` both read
//   "Value ... not in range 0.000000 to 1797693...(309 digits)"; ours say
//   "needs a number, got 'abc'" and "must be a finite number > 0, got '-1'",
//   and name the related option to use (e.g. --fixed-iterations for --tol 0).
// - Each translation unit including CLI/CLI.hpp took 8.8 s to compile here
//   (ours: under 1 s), on a 2-core CI machine.
// The validations CLI11 adds (ranges, existing files) are done where the value
// is read (solver_flags.cpp, npy_io), with the domain's own wording.

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace uot::cli {

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class ArgParser {
public:
    ArgParser(std::string usage, std::string summary);

    // An option that takes a value. An empty defaultValue means "no default". A name
    // declared again keeps its first declaration (a command declares the options of
    // the parameter table before the shared solver flags; core/params).
    void addOption(const std::string& name, const std::string& valueName, const std::string& help,
                   const std::string& defaultValue = {}, bool repeatable = false);
    void addFlag(const std::string& name, const std::string& help);
    bool declares(const std::string& name) const { return m_specs.count(name) != 0; }
    // Positionals are described for help only; they are collected in order.
    void addPositional(const std::string& name, const std::string& help);

    // Parses args (without the program and command names). Throws UsageError.
    void parse(const std::vector<std::string>& args);

    bool helpRequested() const { return m_help; }
    std::string helpText() const;

    bool has(const std::string& name) const;            // given on the command line
    std::string value(const std::string& name) const;   // given value, else default
    std::vector<std::string> values(const std::string& name) const;  // every value of a repeatable option
    bool flag(const std::string& name) const;
    const std::vector<std::string>& positionals() const { return m_positionals; }

    // Typed accessors; throw UsageError naming the option when the text is not a valid value.
    double number(const std::string& name) const;
    int integer(const std::string& name) const;

private:
    struct Spec {
        std::string valueName, help, defaultValue;
        bool isFlag = false;
        bool repeatable = false;
    };
    std::string m_usage, m_summary;
    std::vector<std::string> m_order;
    std::map<std::string, Spec> m_specs;
    std::vector<std::pair<std::string, std::string>> m_positionalHelp;
    std::map<std::string, std::vector<std::string>> m_values;
    std::vector<std::string> m_positionals;
    bool m_help = false;
};

// Splits "a,b,c" into its items (empty items dropped).
std::vector<std::string> splitList(const std::string& text, char separator = ',');

}  // namespace uot::cli
