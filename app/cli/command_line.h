#pragma once
// The dispatch every `uot` executable shares: a table of commands, usage text,
// and the translation of exceptions into exit codes (commands.h).

#include <span>
#include <string>
#include <vector>

namespace uot::cli {

struct Command {
    const char* name;
    const char* summary;
    int (*run)(const std::vector<std::string>&);
};

// Runs argv[1] from `commands` with the rest of argv; prints usage for none or --help.
// Messages start with `program` ("uot", "uot-mpi").
int runCommandLine(int argc, char** argv, std::span<const Command> commands, const char* program = "uot");

// `uot recolor` / `uot batch` live in the sibling executable uot-image (it links
// OpenCV, which `uot` itself does not load, so that solve, bench and devices start
// fast). Replaces this process with `<dir of this executable>/uot-image NAME ARGS`;
// returns kExitUnavailable with a message when that executable is not there.
// This executable is found from /proc/self/exe, or without /proc from the path
// it was started with (argv[0], as runCommandLine saw it: a path, or a name
// searched on the absolute PATH entries); never from the current folder.
int runImageCommand(const char* name, const std::vector<std::string>& args);

}  // namespace uot::cli
