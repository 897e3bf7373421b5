// `uot`: the command-line front end. Each command lives in its own file. The
// image commands run in the sibling executable uot-image (command_line.h says why).

#include "app/cli/command_line.h"
#include "app/cli/commands.h"

namespace {

int recolor(const std::vector<std::string>& args) { return uot::cli::runImageCommand("recolor", args); }
int batch(const std::vector<std::string>& args) { return uot::cli::runImageCommand("batch", args); }
int lut(const std::vector<std::string>& args) { return uot::cli::runImageCommand("lut", args); }

const uot::cli::Command kCommands[] = {
    {"solve", "solve a UOT problem given as .npy files and write the scalings", uot::cli::runSolveCommand},
    {"bench", "measure solver variants: time per iteration, bandwidth, memory", uot::cli::runBenchCommand},
    {"devices", "list GPUs and their bandwidth", uot::cli::runDevicesCommand},
    {"recolor", "transfer the palette of a reference image onto a source image", recolor},
    {"batch", "recolor many images with one reference palette", batch},
    {"lut", "export the color transfer as a 3-D LUT (.cube) or a Hald CLUT (.png) fitted to the result", lut},
};

}  // namespace

int main(int argc, char** argv) { return uot::cli::runCommandLine(argc, argv, kCommands); }
