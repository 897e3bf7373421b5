// Built instead of recolor_command.cpp and batch_command.cpp when OpenCV is
// not available (UOT_WITH_OPENCV=OFF): the image commands say so.
#include <cstdio>

#include "app/cli/commands.h"

namespace uot::cli {
namespace {
int unavailable(const char* name)
{
    std::fprintf(stderr, "uot %s: not built in (this build has no image I/O: configure with -DUOT_WITH_OPENCV=ON)\n", name);
    return kExitUnavailable;
}
}  // namespace
int runRecolorCommand(const std::vector<std::string>&) { return unavailable("recolor"); }
int runBatchCommand(const std::vector<std::string>&) { return unavailable("batch"); }
}  // namespace uot::cli
