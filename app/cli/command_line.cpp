#include "app/cli/command_line.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>

#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "core/transport/uot_error.h"

namespace uot::cli {

namespace {

void printUsage(std::FILE* to, std::span<const Command> commands, const char* program)
{
    std::fprintf(to, "usage: %s COMMAND [options]   (%s COMMAND --help for its options)\n\ncommands:\n", program,
                 program);
    for (const Command& c : commands) std::fprintf(to, "  %-8s %s\n", c.name, c.summary);
}

}  // namespace

int runCommandLine(int argc, char** argv, std::span<const Command> commands, const char* program)
{
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
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    const std::filesystem::path image = error ? std::filesystem::path("uot-image") : self.parent_path() / "uot-image";
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
