#pragma once
// A mask file read for a source (needs OpenCV: part of uot_batch): the command
// line's --mask and the batch's --mask-pattern read masks through it.

#include <string>

#include "core/color/mask.h"
#include "core/imageio/image_io.h"

namespace uot {

// The mask in file `path` ready for `source` (prepareMask: resized, feathered by
// featherRadius pixels along the source's colour edges in `space`). Read with
// `read`'s limits and orientation but without colour conversion (mask values,
// not colours). Throws uot::Error(Io) for an unreadable file, and
// uot::Error(InvalidArgument) naming the file for a mask whose aspect ratio is
// more than 2% from the source's (a mask made for another image) or that is
// black everywhere (nothing would be recolored).
Mask readMaskFor(const std::string& path, const Image& source, int featherRadius, WorkingSpace space,
                 const ReadOptions& read = {}, int threads = 0);

}  // namespace uot
