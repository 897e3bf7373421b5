#include "core/video/libav_support.h"

#include <mutex>

namespace uot {

void CopiedPacketDeleter::operator()(CopiedPacket* packet) const
{
    if (!packet) return;
    av_packet_free(&packet->packet);
    delete packet;
}

void quietLibav()
{
    static std::once_flag once;
    std::call_once(once, [] { av_log_set_level(AV_LOG_FATAL); });
}

std::string avErrorText(int code)
{
    char text[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(code, text, sizeof text);
    return text;
}

namespace {
std::string nameOr(const char* name) { return name ? name : "unknown"; }
}  // namespace

std::string colourPrimariesName(int code) { return nameOr(av_color_primaries_name(static_cast<AVColorPrimaries>(code))); }
std::string colourTransferName(int code)
{
    return nameOr(av_color_transfer_name(static_cast<AVColorTransferCharacteristic>(code)));
}
std::string colourMatrixName(int code) { return nameOr(av_color_space_name(static_cast<AVColorSpace>(code))); }
std::string colourRangeName(int code) { return nameOr(av_color_range_name(static_cast<AVColorRange>(code))); }

const int* swsCoefficientsFor(int matrix)
{
    switch (matrix) {
    case AVCOL_SPC_BT709: return sws_getCoefficients(SWS_CS_ITU709);
    case AVCOL_SPC_FCC: return sws_getCoefficients(SWS_CS_FCC);
    case AVCOL_SPC_SMPTE240M: return sws_getCoefficients(SWS_CS_SMPTE240M);
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return sws_getCoefficients(SWS_CS_BT2020);
    default: return sws_getCoefficients(SWS_CS_DEFAULT);  // BT.601 (470BG, SMPTE 170M, unspecified)
    }
}

}  // namespace uot
