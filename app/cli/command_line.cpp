#include "app/cli/command_line.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>

#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "core/io/pending_temporaries.h"
#include "core/transport/uot_error.h"

namespace uot::cli {

namespace {

std::string g_startedAs;  // argv[0] of this process (runCommandLine)

// This executable's path: /proc/self/exe; without /proc (a chroot, a sandbox),
// the path it was started with when that names a file (it has a '/'), else the
// first PATH entry holding an executable of that name, as execvp found it.
// Relative PATH entries ("", ".") are not searched: they name the current
// folder, which is not where this program lives. Empty when none is known.
std::filesystem::path startedExecutable()
{
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (!error && self.is_absolute()) return self;
    if (g_startedAs.empty()) return {};
    if (g_startedAs.find('/') != std::string::npos) return std::filesystem::absolute(g_startedAs, error);
    const char* path = std::getenv("PATH");
    std::string entries = path ? path : "";
    std::size_t start = 0;
    while (start <= entries.size()) {
        const std::size_t end = std::min(entries.find(':', start), entries.size());
        const std::filesystem::path dir = entries.substr(start, end - start);
        start = end + 1;
        if (!dir.is_absolute()) continue;
        const std::filesystem::path candidate = dir / g_startedAs;
        if (std::filesystem::is_regular_file(candidate, error) && ::access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return {};
}

// startedExecutable with symbolic links resolved (a `uot` on PATH may be a link to
// the build or install folder, where uot-image lives).
std::filesystem::path selfExecutable()
{
    const std::filesystem::path found = startedExecutable();
    if (found.empty()) return found;
    std::error_code error;
    const std::filesystem::path real = std::filesystem::canonical(found, error);
    return error ? found : real;
}

void printUsage(std::FILE* to, std::span<const Command> commands, const char* program)
{
    std::fprintf(to, "usage: %s COMMAND [options]   (%s COMMAND --help for its options)\n\ncommands:\n", program,
                 program);
    for (const Command& c : commands) std::fprintf(to, "  %-8s %s\n", c.name, c.summary);
}

}  // namespace

int runCommandLine(int argc, char** argv, std::span<const Command> commands, const char* program)
{
    g_startedAs = argc > 0 && argv[0] ? argv[0] : "";
    removeTemporariesOnSignals();  // a Ctrl-C mid-write leaves no temporary file
    if (argc < 2) {
        printUsage(stderr, commands, program);
        return kExitUsage;
    }
    const std::string name = argv[1];
    if (name == "--help" || name == "-h" || name == "help") {
        printUsage(stdout, commands, program);
        return kExitOk;
    }
    const std::vector<std::string> args(argv + 2, argv + argc);
    for (const Command& c : commands) {
        if (name != c.name) continue;
        try {
            return c.run(args);
        } catch (const UsageError& e) {
            std::fprintf(stderr, "%s %s: %s\n", program, c.name, e.what());
            return kExitUsage;
        } catch (const Error& e) {
            std::fprintf(stderr, "%s %s: %s\n", program, c.name, e.what());
            if (e.code() == ErrorCode::InvalidArgument) return kExitUsage;
            if (e.code() == ErrorCode::Unavailable) return kExitUnavailable;
            return kExitFailure;
        } catch (const std::bad_alloc&) {
            // Messages of the decoders name the file and its size; this is the
            // rest (palettes, solve, map, encode of a very large image or palette).
            std::fprintf(stderr,
                         "%s %s: not enough memory for this work: the images or the palette are too large for the "
                         "memory available (lower --palette-size or --max-pixels, or free memory)\n",
                         program, c.name);
            return kExitFailure;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s %s: %s\n", program, c.name, e.what());
            return kExitFailure;
        }
    }
    std::fprintf(stderr, "%s: unknown command '%s'\n", program, name.c_str());
    printUsage(stderr, commands, program);
    return kExitUsage;
}

int runImageCommand(const char* name, const std::vector<std::string>& args)
{
    const std::filesystem::path self = selfExecutable();
    if (self.empty()) {
        std::fprintf(stderr, "uot %s: cannot tell where this program is installed (no /proc/self/exe, and '%s' is "
                             "not found on PATH), so its sibling uot-image cannot be started safely; run uot by its "
                             "full path\n", name, g_startedAs.c_str());
        return kExitUnavailable;
    }
    const std::filesystem::path image = self.parent_path() / "uot-image";
    if (!std::filesystem::exists(image)) {
        std::fprintf(stderr, "uot %s: not built in (no %s: this build has no image I/O; configure with "
                             "-DUOT_WITH_OPENCV=ON)\n", name, image.string().c_str());
        return kExitUnavailable;
    }
    std::vector<std::string> owned{image.string(), name};
    owned.insert(owned.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& s : owned) argv.push_back(s.data());
    argv.push_back(nullptr);
    std::fflush(nullptr);
    execv(image.c_str(), argv.data());
    std::fprintf(stderr, "uot %s: could not start %s: %s\n", name, image.string().c_str(), std::strerror(errno));
    return kExitFailure;
}

}  // namespace uot::cli
