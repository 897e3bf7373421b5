#pragma once
// The image-sequence ClipReader (private to core/video; ClipReader::open makes it):
// each frame is one file read through core/imageio.

#include "core/video/clip_reader.h"

namespace uot {

class SequenceClipReader final : public ClipReader {
public:
    SequenceClipReader(const std::string& pattern, const ClipReadOptions& options);
    const ClipInfo& info() const override { return m_info; }
    bool next(ClipItem& item) override;
    bool skipFrame() override;

private:
    ClipReadOptions m_options;
    ClipInfo m_info;
    long long m_nextIndex = 0;
};

}  // namespace uot
