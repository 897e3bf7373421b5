#include "app/mpi/clip_work.h"

#include <exception>

#ifdef UOT_HAVE_VIDEO
#include "core/video/clip_reader.h"
#endif

namespace uot::mpi {

std::uint64_t headerClipWork(const std::string& path)
{
#ifdef UOT_HAVE_VIDEO
    try {
        ClipReadOptions options;
        options.countFrames = false;  // the header's count only: no pass over the packets
        const ClipInfo info = ClipReader::open(path, options)->info();
        if (info.frameCount <= 0 || info.width <= 0 || info.height <= 0) return 0;
        return static_cast<std::uint64_t>(info.frameCount) * static_cast<std::uint64_t>(info.width) *
               static_cast<std::uint64_t>(info.height);
    } catch (const std::exception&) {
        return 0;
    }
#else
    (void)path;
    return 0;
#endif
}

}  // namespace uot::mpi
