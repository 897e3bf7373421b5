#include "core/imageio/jpeg_check.h"

#include <csetjmp>
#include <cstdio>

#include <jpeglib.h>

#include "core/transport/uot_error.h"

namespace uot {

namespace {

// libjpeg's error manager, extended with where to jump on the first warning or
// error and the text of that message.
struct StrictErrors {
    jpeg_error_mgr base;
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

[[noreturn]] void stopOnError(j_common_ptr info)
{
    auto* errors = reinterpret_cast<StrictErrors*>(info->err);
    (*info->err->format_message)(info, errors->message);
    std::longjmp(errors->jump, 1);
}

void stopOnWarning(j_common_ptr info, int level)
{
    if (level < 0) stopOnError(info);  // a warning: the data is damaged
}                                      // levels >= 0 are trace messages: ignored

// C-style on purpose: no object with a destructor lives across setjmp/longjmp.
// Returns false with `message` filled when libjpeg warned or failed, or the
// file is too small for its frame.
bool scanJpeg(const unsigned char* data, unsigned long size, char* message, std::size_t messageSize)
{
    jpeg_decompress_struct info;
    StrictErrors errors;
    info.err = jpeg_std_error(&errors.base);
    errors.base.error_exit = stopOnError;
    errors.base.emit_message = stopOnWarning;
    errors.message[0] = '\0';
    if (setjmp(errors.jump)) {
        std::snprintf(message, messageSize, "%s", errors.message);
        jpeg_destroy_decompress(&info);
        return false;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, size);
    jpeg_read_header(&info, TRUE);
    // Huffman coding spends at least one bit per 8x8 block of every component,
    // and a component has at least width * height / (64 * 16) blocks: a file
    // smaller than that cannot hold its frame (a forged header), and is refused
    // before libjpeg allocates anything for the frame (a progressive decode
    // allocates all coefficients at once). Arithmetic coding has no such bound.
    const double minimumBytes = static_cast<double>(info.image_width) * info.image_height / (64.0 * 16.0 * 8.0);
    if (!info.arith_code && static_cast<double>(size) < minimumBytes) {
        std::snprintf(message, messageSize, "a %u x %u frame needs at least %.0f bytes of coded data, the file has %lu",
                      info.image_width, info.image_height, minimumBytes, size);
        jpeg_destroy_decompress(&info);
        return false;
    }
    info.scale_num = 1;
    info.scale_denom = 8;
    info.dct_method = JDCT_IFAST;
    info.do_fancy_upsampling = FALSE;
    jpeg_start_decompress(&info);
    JSAMPARRAY row = (*info.mem->alloc_sarray)(reinterpret_cast<j_common_ptr>(&info), JPOOL_IMAGE,
                                               info.output_width * static_cast<JDIMENSION>(info.output_components), 1);
    while (info.output_scanline < info.output_height) jpeg_read_scanlines(&info, row, 1);
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    return true;
}

}  // namespace

void checkJpegIntegrity(const std::vector<std::uint8_t>& bytes, const std::string& nameForMessages)
{
    char message[JMSG_LENGTH_MAX + 1] = {};
    if (!scanJpeg(bytes.data(), static_cast<unsigned long>(bytes.size()), message, sizeof message))
        throw Error(ErrorCode::Io, nameForMessages + ": the JPEG data is corrupt or incomplete (" + message +
                                       "); the file is damaged");
}

}  // namespace uot
