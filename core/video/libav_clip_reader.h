#pragma once
// The libav ClipReader (private to core/video; ClipReader::open makes it).

#include <deque>

#include "core/video/clip_reader.h"
#include "core/video/libav_support.h"

namespace uot {

class LibavClipReader final : public ClipReader {
public:
    LibavClipReader(const std::string& path, const ClipReadOptions& options);
    ~LibavClipReader() override;
    const ClipInfo& info() const override { return m_info; }
    bool next(ClipItem& item) override;
    bool skipFrame() override;
    bool seekForwardTo(long long index) override;
    const AVFormatContext* formatContext() const { return m_format; }
    int videoStream() const { return m_stream; }

private:
    // The constructor's work; on a throw the constructor releases what it had opened.
    void open(const std::string& path, const ClipReadOptions& options);
    // Frees the libav* objects (each may be null).
    void release();
    // Decodes into m_frame (true), or stops with copied packets waiting or at the end (false).
    bool receiveFrame();
    // The next frame into m_frame (true, item's packet empty), a waiting packet into item (true), or the end.
    bool advance(ClipItem* item);
    void convert(Image& out);
    std::string frameError(const std::string& what) const;
    // A packet's frame number in display order, from its timestamp.
    long long displayIndexOf(long long pts) const;
    // Seeks to the key frame at or before `pts` (the stream's time base) and
    // empties the decoder; false when the demuxer cannot.
    bool seekBefore(long long pts);

    ClipReadOptions m_options;
    ClipInfo m_info;
    AVFormatContext* m_format = nullptr;
    AVCodecContext* m_decoder = nullptr;
    SwsContext* m_scaler = nullptr;
    AVPacket* m_packet = nullptr;
    AVFrame* m_frame = nullptr;
    int m_stream = -1;
    bool m_flushed = false;
    long long m_nextIndex = 0;
    bool m_frameWaiting = false;  // m_frame holds frame m_nextIndex, decoded by seekForwardTo
    std::deque<CopiedPacketPtr> m_pendingPackets;
};

}  // namespace uot
