#include "core/video/sequence_clip_reader.h"

#include <algorithm>
#include <filesystem>

#include "core/imageio/image_io.h"
#include "core/transport/uot_error.h"
#include "core/video/clip_paths.h"

namespace uot {

namespace {

// Every `step`-th pixel of each `step` x `step` block: enough for an analysis pass.
Image subsample(const Image& image, int maxWidth)
{
    if (maxWidth <= 0 || image.width <= maxWidth) return image;
    const int step = (image.width + maxWidth - 1) / maxWidth;
    Image small = Image::allocate(image.width / step, std::max(1, image.height / step), image.channels, image.depth);
    const std::size_t sample = image.bytesPerSample() * std::size_t(image.channels);
    for (int y = 0; y < small.height; ++y)
        for (int x = 0; x < small.width; ++x)
            std::copy_n(image.data.data() + (std::size_t(y) * step * image.width + std::size_t(x) * step) * sample, sample,
                        small.data.data() + (std::size_t(y) * small.width + x) * sample);
    return small;
}

}  // namespace

SequenceClipReader::SequenceClipReader(const std::string& pattern, const ClipReadOptions& options) : m_options(options)
{
    m_info.path = pattern;
    m_info.sequence = true;
    std::error_code ec;
    long long first = -1;
    for (long long n = 0; n <= 4 && first < 0; ++n)
        if (std::filesystem::is_regular_file(sequenceFramePath(pattern, n), ec)) first = n;
    if (first < 0)
        throw Error(ErrorCode::Io, pattern + ": no frame found (looked for the numbers 0 to 4, e.g. '" +
                                       sequenceFramePath(pattern, 1) + "')");
    m_info.firstNumber = first;
    long long count = 0;
    while (std::filesystem::is_regular_file(sequenceFramePath(pattern, first + count), ec)) ++count;
    m_info.frameCount = count;
    m_info.timeBaseNum = m_info.frameRateDen;
    m_info.timeBaseDen = m_info.frameRateNum;
    const std::string firstPath = sequenceFramePath(pattern, first);
    const Image firstFrame = readImage(firstPath);
    m_info.width = firstFrame.width;
    m_info.height = firstFrame.height;
}

bool SequenceClipReader::next(ClipItem& item)
{
    item.packet.reset();
    item.frame.reset();
    if (m_nextIndex >= m_info.frameCount) return false;
    ClipFrame frame;
    frame.index = m_nextIndex;
    frame.pts = m_nextIndex;
    const std::string path = sequenceFramePath(m_info.path, m_info.firstNumber + m_nextIndex);
    try {
        frame.image = subsample(readImage(path), m_options.maxWidth);
    } catch (const Error& e) {
        throw Error(ErrorCode::Io, m_info.path + ": frame " + std::to_string(m_nextIndex) + ": " + e.what() +
                                       "; nothing was written");
    }
    if (m_options.maxWidth <= 0 && (frame.image.width != m_info.width || frame.image.height != m_info.height))
        throw Error(ErrorCode::Io, m_info.path + ": frame " + std::to_string(m_nextIndex) + " (" + path + ") is " +
                                       std::to_string(frame.image.width) + "x" + std::to_string(frame.image.height) +
                                       ", frame 0 is " + std::to_string(m_info.width) + "x" +
                                       std::to_string(m_info.height) + "; nothing was written");
    ++m_nextIndex;
    item.frame = std::move(frame);
    return true;
}

bool SequenceClipReader::skipFrame()
{
    if (m_nextIndex >= m_info.frameCount) return false;
    ++m_nextIndex;
    return true;
}

}  // namespace uot
