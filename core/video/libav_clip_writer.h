#pragma once
// The libav ClipWriter (private to core/video; ClipWriter::open makes it).

#include <map>

#include "core/io/atomic_file.h"
#include "core/video/clip_writer.h"
#include "core/video/libav_support.h"

namespace uot {

class LibavClipWriter final : public ClipWriter {
public:
    LibavClipWriter(const std::string& output, const ClipReader& input, const ClipWriteOptions& options);
    ~LibavClipWriter() override;
    void write(ClipItem& item) override;
    void finish() override;
    const std::vector<std::string>& notes() const override { return m_notes; }

private:
    void openEncoder(const ClipInfo& in);
    void copyAudioStreams(const ClipReader& input);
    void encode(const AVFrame* frame);  // null flushes
    [[noreturn]] void fail(const std::string& what) const;

    std::string m_path;
    StreamedAtomicFile m_file;
    int m_descriptor = -1;  // m_file's, for the output's I/O callbacks
    AVFormatContext* m_format = nullptr;
    AVCodecContext* m_encoder = nullptr;
    AVStream* m_stream = nullptr;
    SwsContext* m_scaler = nullptr;
    AVFrame* m_frame = nullptr;
    AVPacket* m_packet = nullptr;
    std::map<int, int> m_copiedStreams;  // input stream -> output stream
    ClipColourTags m_colour;
    ClipWriteOptions m_options;
    std::vector<std::string> m_notes;
    bool m_headerWritten = false;
    bool m_finished = false;
};

}  // namespace uot
