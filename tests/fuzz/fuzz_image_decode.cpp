// libFuzzer target: image decoding from memory (core/imageio decodeImage) with a
// small pixel limit, which runs the header peek and the pixel-limit checks before
// the decoders (libjpeg, libpng, libtiff, libwebp through OpenCV), then the
// embedded-profile conversion. A decoded image must be within the limit and have
// exactly its declared number of bytes; every refusal is a uot::Error.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "core/color/image.h"
#include "core/imageio/image_io.h"
#include "core/transport/uot_error.h"

namespace {

// Large enough for every seed, small enough that a hostile header is refused
// before the decoder allocates much.
constexpr std::uint64_t kMaxPixels = 1u << 20;

void check(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_image_decode: %s\n", what);
        std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::vector<std::uint8_t> bytes(data, data + size);
    uot::ReadOptions options;
    options.maxPixels = kMaxPixels;
    try {
        const uot::Image image = uot::decodeImage(bytes, "fuzz input", options);
        check(image.width > 0 && image.height > 0, "decoded an empty image");
        check(static_cast<std::uint64_t>(image.width) * static_cast<std::uint64_t>(image.height) <= kMaxPixels,
              "decoded an image above the pixel limit");
        check(image.channels == 1 || image.channels == 3 || image.channels == 4, "unexpected channel count");
        check(image.depth == 8 || image.depth == 16, "unexpected depth");
        check(image.data.size() == image.byteSize(), "pixel buffer size differs from width x height x channels");
    } catch (const uot::Error&) {
    }
    return 0;
}
