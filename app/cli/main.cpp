// `uot`: the command-line front end. Each command lives in its own file.

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "app/cli/commands.h"
#include "core/transport/uot_error.h"

namespace {

struct Command {
    const char* name;
    const char* summary;
    int (*run)(const std::vector<std::string>&);
};

const Command kCommands[] = {
    {"solve", "solve a UOT problem given as .npy files and write the scalings", uot::cli::runSolveCommand},
    {"bench", "measure solver variants: time per iteration, bandwidth, memory", uot::cli::runBenchCommand},
    {"devices", "list GPUs and their bandwidth", uot::cli::runDevicesCommand},
    {"recolor", "transfer the palette of a reference image onto a source image", uot::cli::runRecolorCommand},
    {"batch", "recolor many images with one reference palette", uot::cli::runBatchCommand},
};

void printUsage(std::FILE* to)
{
    std::fprintf(to, "usage: uot COMMAND [options]   (uot COMMAND --help for its options)\n\ncommands:\n");
    for (const Command& c : kCommands) std::fprintf(to, "  %-8s %s\n", c.name, c.summary);
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        printUsage(stderr);
        return uot::cli::kExitUsage;
    }
    const std::string name = argv[1];
    if (name == "--help" || name == "-h" || name == "help") {
        printUsage(stdout);
        return uot::cli::kExitOk;
    }
    const std::vector<std::string> args(argv + 2, argv + argc);
    for (const Command& c : kCommands) {
        if (name != c.name) continue;
        try {
            return c.run(args);
        } catch (const uot::cli::UsageError& e) {
            std::fprintf(stderr, "uot %s: %s\n", c.name, e.what());
            return uot::cli::kExitUsage;
        } catch (const uot::Error& e) {
            std::fprintf(stderr, "uot %s: %s\n", c.name, e.what());
            if (e.code() == uot::ErrorCode::InvalidArgument) return uot::cli::kExitUsage;
            if (e.code() == uot::ErrorCode::Unavailable) return uot::cli::kExitUnavailable;
            return uot::cli::kExitFailure;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "uot %s: %s\n", c.name, e.what());
            return uot::cli::kExitFailure;
        }
    }
    std::fprintf(stderr, "uot: unknown command '%s'\n", name.c_str());
    printUsage(stderr);
    return uot::cli::kExitUsage;
}
