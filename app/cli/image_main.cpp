// `uot-image`: the image commands of `uot` (recolor, batch, lut), which link OpenCV.
// `uot recolor ...`, `uot batch ...` and `uot lut ...` run this executable; it can also be run directly.

#include "app/cli/command_line.h"
#include "app/cli/commands.h"

namespace {

const uot::cli::Command kCommands[] = {
    {"recolor", "transfer the palette of a reference image onto a source image", uot::cli::runRecolorCommand},
    {"batch", "recolor many images with one reference palette", uot::cli::runBatchCommand},
    {"lut", "export the color transfer as a 3-D LUT (.cube; global color map only)", uot::cli::runLutCommand},
};

}  // namespace

int main(int argc, char** argv) { return uot::cli::runCommandLine(argc, argv, kCommands); }
