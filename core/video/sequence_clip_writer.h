#pragma once
// The image-sequence ClipWriter (private to core/video; ClipWriter::open makes it).

#include <memory>

#include "core/io/pending_temporaries.h"
#include "core/video/clip_writer.h"

namespace uot {

class SequenceClipWriter final : public ClipWriter {
public:
    SequenceClipWriter(const std::string& pattern, const ClipReader& input, const ClipWriteOptions& options);
    ~SequenceClipWriter() override;
    void write(ClipItem& item) override;
    void finish() override;
    const std::vector<std::string>& notes() const override { return m_notes; }

private:
    std::string m_pattern;
    std::string m_folder;  // the temporary folder beside the output
    std::unique_ptr<PendingTemporary> m_pendingFolder;  // removed with its frames on a signal
    long long m_firstNumber = 1;
    long long m_written = 0;
    ClipWriteOptions m_options;
    std::vector<std::string> m_notes;
    bool m_finished = false;
};

}  // namespace uot
