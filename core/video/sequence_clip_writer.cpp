#include "core/video/sequence_clip_writer.h"

#include <stdlib.h>

#include <filesystem>

#include "core/imageio/image_io.h"
#include "core/io/atomic_file.h"
#include "core/transport/uot_error.h"
#include "core/video/clip_paths.h"

namespace uot {

namespace fs = std::filesystem;

SequenceClipWriter::SequenceClipWriter(const std::string& pattern, const ClipReader& input,
                                       const ClipWriteOptions& options)
    : m_pattern(pattern), m_options(options)
{
    checkClipOutput(pattern, options);
    // Numbered as the input sequence's files, or from 1 (as ffmpeg numbers them) for a video.
    m_firstNumber = input.info().sequence ? input.info().firstNumber : 1;
    const fs::path parent = fs::path(pattern).parent_path();
    std::string folder = ((parent.empty() ? fs::path(".") : parent) / (std::string(kTemporaryPrefix) + "XXXXXX")).string();
    if (!::mkdtemp(folder.data()))
        throw Error(ErrorCode::Io, pattern + ": cannot create a temporary folder beside the frames");
    m_folder = folder;
    std::error_code absoluteError;
    m_pendingFolder = std::make_unique<PendingTemporary>(fs::absolute(folder, absoluteError).string(),
                                                         PendingKind::FolderOfFiles);
    if (input.info().hdr) m_notes.push_back("frames are written as 8-bit sRGB images (the HDR input's description is not kept)");
    if (!input.info().sequence && input.info().copiedStreams > 0)
        m_notes.push_back("an image sequence holds no audio: the audio is left out");
}

SequenceClipWriter::~SequenceClipWriter()
{
    std::error_code ec;
    fs::remove_all(m_folder, ec);  // unfinished: nothing of it stays
}

void SequenceClipWriter::write(ClipItem& item)
{
    if (!item.frame) return;  // packets: a sequence has no other streams
    const std::string name = fs::path(sequenceFramePath(m_pattern, m_firstNumber + item.frame->index)).filename().string();
    WriteOptions write;
    write.overwrite = false;
    writeImage((fs::path(m_folder) / name).string(), item.frame->image, write);
    ++m_written;
}

void SequenceClipWriter::finish()
{
    if (m_finished) return;
    AtomicWriteOptions destination{m_options.overwrite, m_options.protectedPaths, "choose another output"};
    for (long long i = 0; i < m_written; ++i)  // every name is checked before the first is moved
        checkWritableDestination(sequenceFramePath(m_pattern, m_firstNumber + i), destination);
    for (long long i = 0; i < m_written; ++i) {
        const std::string target = sequenceFramePath(m_pattern, m_firstNumber + i);
        std::error_code ec;
        fs::rename(fs::path(m_folder) / fs::path(target).filename(), target, ec);
        if (ec) throw Error(ErrorCode::Io, target + ": cannot move the finished frame into place (" + ec.message() + ")");
    }
    m_finished = true;
}

}  // namespace uot
