// ClipReader for video files, through libavformat / libavcodec / libswscale.
#include "core/video/libav_clip_reader.h"

#include <algorithm>
#include <cstdio>

#include "core/transport/uot_error.h"

namespace uot {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) { throw Error(ErrorCode::Io, path + ": " + what); }

bool isHdrTransfer(int transfer) { return transfer == AVCOL_TRC_SMPTE2084 || transfer == AVCOL_TRC_ARIB_STD_B67; }

// Video packets of the stream, read once (containers such as Matroska do not store the count),
// and the time where the last of them ends (seconds from the stream's start).
struct VideoPackets {
    long long count = -1;
    double endSeconds = 0;
};

VideoPackets countVideoPackets(const std::string& path, int stream)
{
    VideoPackets found;
    AVFormatContext* format = nullptr;
    if (avformat_open_input(&format, path.c_str(), nullptr, nullptr) < 0) return found;
    const AVStream* video = format->streams[stream];
    const long long start = video->start_time != AV_NOPTS_VALUE ? video->start_time : 0;
    found.count = 0;
    AVPacket* packet = av_packet_alloc();
    while (av_read_frame(format, packet) >= 0) {
        if (packet->stream_index == stream) {
            ++found.count;
            if (packet->pts != AV_NOPTS_VALUE)
                found.endSeconds = std::max(found.endSeconds, double(packet->pts + packet->duration - start) *
                                                                  av_q2d(video->time_base));
        }
        av_packet_unref(packet);
    }
    av_packet_free(&packet);
    avformat_close_input(&format);
    return found;
}

}  // namespace

LibavClipReader::LibavClipReader(const std::string& path, const ClipReadOptions& options) : m_options(options)
{
    try {
        open(path, options);
    } catch (...) {
        release();  // the destructor does not run for an object whose constructor throws
        throw;
    }
}

void LibavClipReader::open(const std::string& path, const ClipReadOptions& options)
{
    quietLibav();
    m_info.path = path;
    if (const int rc = avformat_open_input(&m_format, path.c_str(), nullptr, nullptr); rc < 0)
        fail(path, "cannot open the video (" + avErrorText(rc) + ")");
    if (const int rc = avformat_find_stream_info(m_format, nullptr); rc < 0)
        fail(path, "cannot read the video's streams (" + avErrorText(rc) + ")");
    m_stream = av_find_best_stream(m_format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    if (m_stream < 0) fail(path, "holds no video stream");
    AVStream* stream = m_format->streams[m_stream];
    const AVCodec* codec = avcodec_find_decoder(stream->codecpar->codec_id);
    if (!codec) fail(path, "no decoder for its video codec");
    m_decoder = avcodec_alloc_context3(codec);
    avcodec_parameters_to_context(m_decoder, stream->codecpar);
    m_decoder->thread_count = options.threads;
    // Slice threads only: frame threads report a damaged packet's error a few packets late, and the message
    // must name the damaged frame. The decoder has a thread of its own in the clip pipeline anyway.
    m_decoder->thread_type = FF_THREAD_SLICE;
    // A damaged frame stops the work (with its number) instead of being concealed.
    m_decoder->err_recognition = AV_EF_EXPLODE | AV_EF_CRCCHECK;
    m_decoder->pkt_timebase = stream->time_base;
    if (const int rc = avcodec_open2(m_decoder, codec, nullptr); rc < 0)
        fail(path, "cannot open the video decoder (" + avErrorText(rc) + ")");

    m_info.width = stream->codecpar->width;
    m_info.height = stream->codecpar->height;
    const AVRational rate = av_guess_frame_rate(m_format, stream, nullptr);
    if (rate.num > 0 && rate.den > 0) {
        m_info.frameRateNum = rate.num;
        m_info.frameRateDen = rate.den;
    }
    m_info.timeBaseNum = stream->time_base.num;
    m_info.timeBaseDen = stream->time_base.den;
    m_info.codec = codec->name;
    m_info.colour.primaries = stream->codecpar->color_primaries;
    m_info.colour.transfer = stream->codecpar->color_trc;
    m_info.colour.matrix = stream->codecpar->color_space;
    m_info.colour.range = stream->codecpar->color_range;
    const AVPixFmtDescriptor* pixel = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(stream->codecpar->format));
    const int bits = pixel ? pixel->comp[0].depth : 8;
    m_info.hdr = isHdrTransfer(m_info.colour.transfer) || bits > 8;
    if (m_info.hdr)
        m_info.notes.push_back(std::string("the input is ") + (isHdrTransfer(m_info.colour.transfer) ? "HDR (PQ/HLG)" : "") +
                               (bits > 8 ? (isHdrTransfer(m_info.colour.transfer) ? ", " : "") + std::to_string(bits) +
                                               "-bit" : "") +
                               ": it is read as 8-bit and the look treats it as SDR; the output is 8-bit and its HDR "
                               "description is not kept");
    m_info.frameCount = stream->nb_frames > 0 ? stream->nb_frames : -1;
    if (m_info.frameCount < 0 && options.countFrames) {
        const VideoPackets packets = countVideoPackets(path, m_stream);
        m_info.frameCount = packets.count;
        // A file cut short (a copy that stopped) still opens and reads to its end without an error:
        // its header's duration is the only sign. A second (or a tenth) of slack for other streams.
        const double declared = m_format->duration != AV_NOPTS_VALUE ? double(m_format->duration) / AV_TIME_BASE : 0;
        if (packets.count >= 0 && declared > 0 && packets.endSeconds < declared - std::max(1.0, 0.1 * declared)) {
            char text[200];
            std::snprintf(text, sizeof text,
                          "its video ends after %.2f s (%lld frames) although the file declares %.2f s: the file may "
                          "be truncated; only the frames present are used",
                          packets.endSeconds, packets.count, declared);
            m_info.notes.push_back(text);
        }
    }

    for (unsigned s = 0; s < m_format->nb_streams; ++s) {
        if (int(s) == m_stream) continue;
        const AVCodecParameters* p = m_format->streams[s]->codecpar;
        if (p->codec_type == AVMEDIA_TYPE_AUDIO && options.copyAudio) {
            ++m_info.copiedStreams;
            continue;
        }
        m_format->streams[s]->discard = AVDISCARD_ALL;
        if (p->codec_type == AVMEDIA_TYPE_AUDIO) continue;  // not asked for (an analysis pass)
        if (options.copyAudio)
            m_info.notes.push_back("stream " + std::to_string(s) + " (" + av_get_media_type_string(p->codec_type) +
                                   ", " + avcodec_get_name(p->codec_id) + ") is not copied: only audio streams are");
    }
    m_packet = av_packet_alloc();
    m_frame = av_frame_alloc();
}

LibavClipReader::~LibavClipReader() { release(); }

void LibavClipReader::release()
{
    sws_freeContext(m_scaler);
    m_scaler = nullptr;
    av_frame_free(&m_frame);
    av_packet_free(&m_packet);
    avcodec_free_context(&m_decoder);
    avformat_close_input(&m_format);
}

std::string LibavClipReader::frameError(const std::string& what) const
{
    return m_info.path + ": frame " + std::to_string(m_nextIndex) + ": " + what;
}

long long LibavClipReader::displayIndexOf(long long pts) const
{
    if (pts == AV_NOPTS_VALUE) return m_nextIndex;
    const AVStream* stream = m_format->streams[m_stream];
    const long long start = stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0;
    // The frame's place in display order at the clip's frame rate (exact for constant-rate clips).
    return av_rescale_q_rnd(pts - start, stream->time_base, AVRational{m_info.frameRateDen, m_info.frameRateNum},
                            AV_ROUND_NEAR_INF);
}

bool LibavClipReader::receiveFrame()
{
    while (true) {
        const int rc = avcodec_receive_frame(m_decoder, m_frame);
        if (rc == 0) {
            if ((m_frame->flags & AV_FRAME_FLAG_CORRUPT) || m_frame->decode_error_flags != 0)
                throw Error(ErrorCode::Io, frameError("the frame is damaged (decoding errors); nothing was written"));
            return true;
        }
        if (rc == AVERROR_EOF) return false;
        if (rc != AVERROR(EAGAIN))
            throw Error(ErrorCode::Io, frameError("cannot be decoded (" + avErrorText(rc) + "); nothing was written"));
        // The decoder wants input.
        if (m_flushed) return false;
        while (true) {
            const int read = av_read_frame(m_format, m_packet);
            if (read == AVERROR_EOF) {
                avcodec_send_packet(m_decoder, nullptr);
                m_flushed = true;
                break;
            }
            if (read < 0)
                throw Error(ErrorCode::Io, frameError("cannot be read (" + avErrorText(read) + "); nothing was written"));
            if (m_packet->stream_index == m_stream) {
                const long long frame = displayIndexOf(m_packet->pts);
                const int sent = avcodec_send_packet(m_decoder, m_packet);
                av_packet_unref(m_packet);
                if (sent < 0 && sent != AVERROR(EAGAIN))
                    throw Error(ErrorCode::Io, m_info.path + ": frame " + std::to_string(frame) + ": cannot be decoded (" +
                                                   avErrorText(sent) + "); nothing was written");
                break;
            }
            if (m_options.copyAudio && m_format->streams[m_packet->stream_index]->discard != AVDISCARD_ALL) {
                auto* copied = new CopiedPacket;
                copied->packet = av_packet_clone(m_packet);
                copied->inputStream = m_packet->stream_index;
                copied->timeBase = m_format->streams[m_packet->stream_index]->time_base;
                m_pendingPackets.emplace_back(copied);
            }
            av_packet_unref(m_packet);
        }
        if (!m_pendingPackets.empty()) return false;  // hand the packets on first
    }
}

bool LibavClipReader::advance(ClipItem* item)
{
    if (m_frameWaiting) {
        m_frameWaiting = false;
        return true;
    }
    while (true) {
        if (!m_pendingPackets.empty()) {
            if (item) {
                item->frame.reset();
                item->packet = std::move(m_pendingPackets.front());
                m_pendingPackets.pop_front();
                return true;
            }
            m_pendingPackets.clear();
        }
        if (receiveFrame()) return true;
        if (m_pendingPackets.empty()) return false;
    }
}

bool LibavClipReader::next(ClipItem& item)
{
    item.packet.reset();
    item.frame.reset();
    if (!advance(&item)) return false;
    if (item.packet) return true;
    ClipFrame frame;
    frame.index = m_nextIndex++;
    frame.pts = m_frame->best_effort_timestamp != AV_NOPTS_VALUE ? m_frame->best_effort_timestamp : m_frame->pts;
    if (frame.pts == AV_NOPTS_VALUE)
        frame.pts = av_rescale_q(frame.index, AVRational{m_info.frameRateDen, m_info.frameRateNum},
                                 AVRational{m_info.timeBaseNum, m_info.timeBaseDen});
    convert(frame.image);
    av_frame_unref(m_frame);
    item.frame = std::move(frame);
    return true;
}

bool LibavClipReader::skipFrame()
{
    if (!advance(nullptr)) return false;
    ++m_nextIndex;
    av_frame_unref(m_frame);
    return true;
}

bool LibavClipReader::seekBefore(long long pts)
{
    if (av_seek_frame(m_format, m_stream, pts, AVSEEK_FLAG_BACKWARD) < 0) return false;
    avcodec_flush_buffers(m_decoder);
    m_flushed = false;
    m_pendingPackets.clear();
    if (m_frameWaiting) av_frame_unref(m_frame);
    m_frameWaiting = false;
    return true;
}

bool LibavClipReader::seekForwardTo(long long index)
{
    if (index <= m_nextIndex || m_frameWaiting) return false;
    const AVStream* stream = m_format->streams[m_stream];
    const long long start = stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0;
    const AVRational frameTime{m_info.frameRateDen, m_info.frameRateNum};
    const long long target = start + av_rescale_q(index, frameTime, stream->time_base);
    // Worth it only when the key frame before the target lies beyond the frames decoded so far; a
    // container without an index (read so far) is sought when the target is two seconds or more ahead.
    const int entry = av_index_search_timestamp(const_cast<AVStream*>(stream), target, AVSEEK_FLAG_BACKWARD);
    if (entry >= 0) {
        const AVIndexEntry* key = avformat_index_get_entry(const_cast<AVStream*>(stream), entry);
        if (!key || displayIndexOf(key->timestamp) <= m_nextIndex) return false;
    } else if ((index - m_nextIndex) * m_info.frameRateDen < 2LL * m_info.frameRateNum) {
        return false;
    }
    if (!seekBefore(target)) return false;
    // Decode forward to the frame whose timestamp is the target's. A clip whose timestamps do not
    // number its frames one by one (a variable rate, a gap) cannot be sought this way: then read
    // it again from the start, skipping frames as without seeking.
    while (advance(nullptr)) {
        const long long pts = m_frame->best_effort_timestamp != AV_NOPTS_VALUE ? m_frame->best_effort_timestamp
                                                                               : m_frame->pts;
        const long long at = pts == AV_NOPTS_VALUE ? -1 : displayIndexOf(pts);
        if (at == index) {
            m_nextIndex = index;
            m_frameWaiting = true;
            return true;
        }
        av_frame_unref(m_frame);
        if (at < 0 || at > index) break;
    }
    if (!seekBefore(start)) throw Error(ErrorCode::Io, m_info.path + ": cannot go back to its first frame");
    m_nextIndex = 0;
    while (m_nextIndex < index)
        if (!skipFrame()) return true;  // the clip ends first; next() says so
    return true;
}

void LibavClipReader::convert(Image& out)
{
    int width = m_frame->width, height = m_frame->height;
    if (m_options.maxWidth > 0 && width > m_options.maxWidth) {
        height = std::max(1, int(double(height) * m_options.maxWidth / width + 0.5));
        width = m_options.maxWidth;
    }
    const auto format = static_cast<AVPixelFormat>(m_frame->format);
    m_scaler = sws_getCachedContext(m_scaler, m_frame->width, m_frame->height, format, width, height, AV_PIX_FMT_RGB24,
                                    SWS_BICUBIC, nullptr, nullptr, nullptr);
    if (!m_scaler) throw Error(ErrorCode::Io, frameError("cannot convert its pixel format to RGB"));
    const int matrix = m_frame->colorspace != AVCOL_SPC_UNSPECIFIED ? m_frame->colorspace : m_info.colour.matrix;
    const AVColorRange range = m_frame->color_range != AVCOL_RANGE_UNSPECIFIED
                                   ? m_frame->color_range
                                   : static_cast<AVColorRange>(m_info.colour.range);
    const bool fullRange = range == AVCOL_RANGE_JPEG || format == AV_PIX_FMT_YUVJ420P || format == AV_PIX_FMT_YUVJ422P ||
                           format == AV_PIX_FMT_YUVJ444P;
    const int* coefficients = swsCoefficientsFor(matrix);
    sws_setColorspaceDetails(m_scaler, coefficients, fullRange ? 1 : 0, coefficients, 1, 0, 1 << 16, 1 << 16);
    out = Image::allocate(width, height, 3, 8);
    uint8_t* destination[4] = {out.samples8(), nullptr, nullptr, nullptr};
    int strides[4] = {width * 3, 0, 0, 0};
    sws_scale(m_scaler, m_frame->data, m_frame->linesize, 0, m_frame->height, destination, strides);
}

const AVFormatContext* libavInputOf(const ClipReader& reader)
{
    const auto* libav = dynamic_cast<const LibavClipReader*>(&reader);
    return libav ? libav->formatContext() : nullptr;
}

int libavVideoStreamOf(const ClipReader& reader)
{
    const auto* libav = dynamic_cast<const LibavClipReader*>(&reader);
    return libav ? libav->videoStream() : -1;
}

}  // namespace uot
