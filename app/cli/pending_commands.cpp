// SCAFFOLDING: commands whose real implementation is being written. Each one
// moves to its own file (solve_command.cpp, ...) and leaves this file; the file
// must be gone before the foundation lands.
#include <cstdio>

#include "app/cli/commands.h"

namespace uot::cli {
namespace {
int pending(const char* name)
{
    std::fprintf(stderr, "uot %s: not built yet\n", name);
    return kExitUnavailable;
}
}  // namespace
int runDevicesCommand(const std::vector<std::string>&) { return pending("devices"); }
}  // namespace uot::cli
