// ClipWriter for video files, through libavformat / libavcodec / libswscale.
#include "core/video/libav_clip_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>

#include "core/transport/uot_error.h"

namespace uot {

namespace {

constexpr int kIoBufferBytes = 1 << 16;

// FFmpeg 7 (libavformat 61) passes the bytes as const.
#if LIBAVFORMAT_VERSION_MAJOR >= 61
using WrittenBytes = const uint8_t*;
#else
using WrittenBytes = uint8_t*;
#endif

int writeToDescriptor(void* opaque, WrittenBytes data, int size)
{
    const int fd = *static_cast<int*>(opaque);
    int left = size;
    while (left > 0) {
        const ssize_t n = ::write(fd, data, std::size_t(left));
        if (n < 0) {
            if (errno == EINTR) continue;
            return AVERROR(errno);
        }
        data += n;
        left -= int(n);
    }
    return size;
}

int64_t seekDescriptor(void* opaque, int64_t offset, int whence)
{
    const int fd = *static_cast<int*>(opaque);
    if (whence & AVSEEK_SIZE) {
        struct stat st{};
        return ::fstat(fd, &st) == 0 ? int64_t(st.st_size) : AVERROR(errno);
    }
    const off_t at = ::lseek(fd, off_t(offset), whence & ~AVSEEK_FORCE);
    return at < 0 ? AVERROR(errno) : int64_t(at);
}

// The preset's position in encoderPresets() (fastest first), -1 when unknown.
int presetPosition(const std::string& preset)
{
    const std::vector<std::string>& presets = encoderPresets();
    const auto it = std::find(presets.begin(), presets.end(), preset);
    return it == presets.end() ? -1 : int(it - presets.begin());
}

}  // namespace

LibavClipWriter::LibavClipWriter(const std::string& output, const ClipReader& input, const ClipWriteOptions& options)
    : m_path(output), m_file(output, AtomicWriteOptions{options.overwrite, options.protectedPaths, "choose another output"}),
      m_descriptor(m_file.descriptor()), m_options(options)
{
    quietLibav();
    const AVOutputFormat* format = av_guess_format(nullptr, output.c_str(), nullptr);
    if (!format) fail("no container for this extension");
    if (avformat_alloc_output_context2(&m_format, format, nullptr, nullptr) < 0 || !m_format)
        fail("cannot set up the container");
    auto* buffer = static_cast<unsigned char*>(av_malloc(kIoBufferBytes));
    m_format->pb = avio_alloc_context(buffer, kIoBufferBytes, 1, &m_descriptor, nullptr,
                                      writeToDescriptor, seekDescriptor);
    if (!m_format->pb) fail("cannot set up the output");
    m_format->flags |= AVFMT_FLAG_CUSTOM_IO;

    openEncoder(input.info());
    copyAudioStreams(input);
    if (const int rc = avformat_write_header(m_format, nullptr); rc < 0)
        fail("cannot write the container's header (" + avErrorText(rc) + ")");
    m_headerWritten = true;
    m_frame = av_frame_alloc();
    m_frame->format = m_encoder->pix_fmt;
    m_frame->width = m_encoder->width;
    m_frame->height = m_encoder->height;
    if (av_frame_get_buffer(m_frame, 0) < 0) fail("out of memory");
    m_packet = av_packet_alloc();
}

LibavClipWriter::~LibavClipWriter()
{
    sws_freeContext(m_scaler);
    av_frame_free(&m_frame);
    av_packet_free(&m_packet);
    avcodec_free_context(&m_encoder);
    if (m_format) {
        if (m_format->pb) {
            av_freep(&m_format->pb->buffer);
            avio_context_free(&m_format->pb);
        }
        avformat_free_context(m_format);
    }
    // m_file removes the temporary file unless finish() moved it into place
}

void LibavClipWriter::fail(const std::string& what) const { throw Error(ErrorCode::Io, m_path + ": " + what); }

void LibavClipWriter::openEncoder(const ClipInfo& in)
{
    const std::string extension = std::filesystem::path(m_path).extension().string();
    const bool webm = extension == ".webm" || extension == ".WEBM";
    const char* encoderName = webm ? "libvpx-vp9" : "libx264";
    const AVCodec* codec = avcodec_find_encoder_by_name(encoderName);
    if (!codec) fail(std::string("the encoder ") + encoderName + " is not in this FFmpeg");
    const int position = presetPosition(m_options.preset);
    if (position < 0) fail("unknown encoder preset '" + m_options.preset + "' (ultrafast ... veryslow)");
    m_encoder = avcodec_alloc_context3(codec);
    m_encoder->width = in.width;
    m_encoder->height = in.height;
    // 4:2:0 needs even sizes; an odd-sized clip keeps full chroma instead.
    m_encoder->pix_fmt = (in.width % 2 == 0 && in.height % 2 == 0) ? AV_PIX_FMT_YUV420P : AV_PIX_FMT_YUV444P;
    m_encoder->time_base = AVRational{in.timeBaseNum, in.timeBaseDen};
    m_encoder->framerate = AVRational{in.frameRateNum, in.frameRateDen};
    m_encoder->thread_count = m_options.threads;
    m_colour = in.colour;
    if (in.hdr || in.sequence) {
        // 8-bit SDR out: HDR descriptions no longer hold; a sequence's sRGB frames become BT.709 video.
        m_colour = ClipColourTags{AVCOL_PRI_BT709, AVCOL_TRC_BT709, AVCOL_SPC_BT709, AVCOL_RANGE_MPEG};
        if (in.hdr) m_notes.push_back("the output is tagged BT.709 SDR (the HDR input's description is not kept)");
    }
    if (m_colour.matrix == AVCOL_SPC_RGB) {
        // An RGB input (e.g. FFV1 of RGB frames): the output stores YUV, which needs a YUV matrix.
        m_colour.matrix = AVCOL_SPC_BT709;
        m_colour.range = AVCOL_RANGE_MPEG;
        m_notes.push_back("the input stores RGB; the output is YUV with the BT.709 matrix (limited range)");
    }
    if (m_colour.range == AVCOL_RANGE_UNSPECIFIED) m_colour.range = AVCOL_RANGE_MPEG;
    m_encoder->color_primaries = static_cast<AVColorPrimaries>(m_colour.primaries);
    m_encoder->color_trc = static_cast<AVColorTransferCharacteristic>(m_colour.transfer);
    m_encoder->colorspace = static_cast<AVColorSpace>(m_colour.matrix);
    m_encoder->color_range = static_cast<AVColorRange>(m_colour.range);
    if (m_format->oformat->flags & AVFMT_GLOBALHEADER) m_encoder->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    AVDictionary* settings = nullptr;
    if (webm) {
        av_dict_set(&settings, "deadline", position <= 2 ? "realtime" : "good", 0);
        av_dict_set_int(&settings, "cpu-used", std::max(0, 8 - position), 0);
        av_dict_set_int(&settings, "crf", m_options.crf + 13, 0);  // vp9's scale: x264's 18 looks like about 31
        av_dict_set_int(&settings, "row-mt", 1, 0);
        m_encoder->bit_rate = 0;
    } else {
        av_dict_set(&settings, "preset", m_options.preset.c_str(), 0);
        av_dict_set_int(&settings, "crf", m_options.crf, 0);
    }
    const int rc = avcodec_open2(m_encoder, codec, &settings);
    av_dict_free(&settings);
    if (rc < 0) fail(std::string("cannot open the encoder ") + encoderName + " (" + avErrorText(rc) + ")");
    m_stream = avformat_new_stream(m_format, nullptr);
    avcodec_parameters_from_context(m_stream->codecpar, m_encoder);
    m_stream->time_base = m_encoder->time_base;
    m_stream->avg_frame_rate = m_encoder->framerate;
}

void LibavClipWriter::copyAudioStreams(const ClipReader& input)
{
    const AVFormatContext* in = libavInputOf(input);
    if (!in) return;
    for (unsigned s = 0; s < in->nb_streams; ++s) {
        const AVStream* source = in->streams[s];
        if (source->codecpar->codec_type != AVMEDIA_TYPE_AUDIO || source->discard == AVDISCARD_ALL) continue;
        if (avformat_query_codec(m_format->oformat, source->codecpar->codec_id, FF_COMPLIANCE_NORMAL) != 1) {
            m_notes.push_back("audio stream " + std::to_string(s) + " (" + avcodec_get_name(source->codecpar->codec_id) +
                              ") cannot go into this container and is left out (choose .mkv to keep it)");
            continue;
        }
        AVStream* copy = avformat_new_stream(m_format, nullptr);
        avcodec_parameters_copy(copy->codecpar, source->codecpar);
        copy->codecpar->codec_tag = 0;
        copy->time_base = source->time_base;
        av_dict_copy(&copy->metadata, source->metadata, 0);
        copy->disposition = source->disposition;
        m_copiedStreams[int(s)] = copy->index;
    }
}

void LibavClipWriter::encode(const AVFrame* frame)
{
    if (const int rc = avcodec_send_frame(m_encoder, frame); rc < 0) fail("encoding failed (" + avErrorText(rc) + ")");
    while (true) {
        const int rc = avcodec_receive_packet(m_encoder, m_packet);
        if (rc == AVERROR(EAGAIN) || rc == AVERROR_EOF) return;
        if (rc < 0) fail("encoding failed (" + avErrorText(rc) + ")");
        av_packet_rescale_ts(m_packet, m_encoder->time_base, m_stream->time_base);
        m_packet->stream_index = m_stream->index;
        if (const int w = av_interleaved_write_frame(m_format, m_packet); w < 0)
            fail("writing failed (" + avErrorText(w) + ")");
    }
}

void LibavClipWriter::write(ClipItem& item)
{
    if (item.packet) {
        const auto found = m_copiedStreams.find(item.packet->inputStream);
        if (found == m_copiedStreams.end()) return;
        AVPacket* packet = item.packet->packet;
        av_packet_rescale_ts(packet, item.packet->timeBase, m_format->streams[found->second]->time_base);
        packet->stream_index = found->second;
        packet->pos = -1;
        if (const int w = av_interleaved_write_frame(m_format, packet); w < 0)
            fail("writing failed (" + avErrorText(w) + ")");
        return;
    }
    if (!item.frame) return;
    const Image& image = item.frame->image;
    if (image.width != m_encoder->width || image.height != m_encoder->height)
        fail("frame " + std::to_string(item.frame->index) + " is not of the clip's size");
    // Sequences may hold gray, RGBA or 16-bit frames: swscale reads each layout (alpha is dropped).
    const bool deep = image.depth == 16;
    const AVPixelFormat source = image.channels == 1   ? (deep ? AV_PIX_FMT_GRAY16 : AV_PIX_FMT_GRAY8)
                                 : image.channels == 4 ? (deep ? AV_PIX_FMT_RGBA64 : AV_PIX_FMT_RGBA)
                                                       : (deep ? AV_PIX_FMT_RGB48 : AV_PIX_FMT_RGB24);
    m_scaler = sws_getCachedContext(m_scaler, image.width, image.height, source, m_encoder->width, m_encoder->height,
                                    m_encoder->pix_fmt, SWS_BICUBIC, nullptr, nullptr, nullptr);
    if (!m_scaler) fail("cannot convert RGB to the encoder's format");
    const int* coefficients = swsCoefficientsFor(m_colour.matrix);
    sws_setColorspaceDetails(m_scaler, coefficients, 1, coefficients, m_colour.range == AVCOL_RANGE_JPEG ? 1 : 0, 0,
                             1 << 16, 1 << 16);
    if (av_frame_make_writable(m_frame) < 0) fail("out of memory");
    const uint8_t* planes[4] = {image.samples8(), nullptr, nullptr, nullptr};
    const int strides[4] = {image.width * image.channels * int(image.bytesPerSample()), 0, 0, 0};
    sws_scale(m_scaler, planes, strides, 0, image.height, m_frame->data, m_frame->linesize);
    m_frame->pts = item.frame->pts;
    m_frame->color_primaries = m_encoder->color_primaries;
    m_frame->color_trc = m_encoder->color_trc;
    m_frame->colorspace = m_encoder->colorspace;
    m_frame->color_range = m_encoder->color_range;
    encode(m_frame);
}

void LibavClipWriter::finish()
{
    if (m_finished) return;
    encode(nullptr);
    if (const int rc = av_write_trailer(m_format); rc < 0) fail("cannot finish the file (" + avErrorText(rc) + ")");
    avio_flush(m_format->pb);
    if (m_format->pb->error < 0) fail("writing failed (" + avErrorText(m_format->pb->error) + ")");
    m_file.commit();
    m_finished = true;
}

}  // namespace uot
