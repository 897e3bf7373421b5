#include "core/video/clip_writer.h"

#include "core/io/atomic_file.h"
#include "core/transport/uot_error.h"
#include "core/video/clip_paths.h"
#include "core/video/libav_clip_writer.h"
#include "core/video/sequence_clip_writer.h"

namespace uot {

std::unique_ptr<ClipWriter> ClipWriter::open(const std::string& output, const ClipReader& input,
                                             const ClipWriteOptions& options)
{
    if (isImageSequencePattern(output)) return std::make_unique<SequenceClipWriter>(output, input, options);
    if (isVideoFile(output)) return std::make_unique<LibavClipWriter>(output, input, options);
    throw Error(ErrorCode::InvalidArgument,
                output + ": not a clip output (a .mp4, .mov, .mkv or .webm file, or a pattern such as frame_%05d.png)");
}

void checkClipOutput(const std::string& output, const ClipWriteOptions& options)
{
    AtomicWriteOptions destination{options.overwrite, options.protectedPaths, "choose another output"};
    checkWritableDestination(isImageSequencePattern(output) ? sequenceFramePath(output, 1) : output, destination);
    if (isImageSequencePattern(output)) checkWritableDestination(sequenceFramePath(output, 0), destination);
}

}  // namespace uot
