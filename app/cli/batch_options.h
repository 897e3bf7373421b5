#pragma once
// What `uot batch` and `uot-mpi batch` share: the options (declared and read),
// the progress lines on stderr, and the report (--json and the summary lines)
// with the exit code, so that a distributed batch reports exactly as a local one.

#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "app/cli/recolor_options.h"
#include "core/pipeline/batch_engine.h"

namespace uot::cli {

// What `uot batch` does, for --help (exit codes included).
std::string batchHelpSummary();

// Which inputs a batch command takes: images only (`uot-mpi batch`), or images
// and clips (`uot batch`, with the clip options of docs/VIDEO.md).
enum class BatchInputKinds { Images, ImagesAndClips };

// Declares the positionals and options of `uot batch`.
void addBatchOptions(ArgParser& parser, BatchInputKinds kinds = BatchInputKinds::Images);

struct BatchCliSettings {
    RecolorCliSettings cli;
    BatchSettings settings;  // references, weights and masks included
    std::string reference;   // the first REFERENCE (settings.extraReferences has the others)
    std::vector<std::string> inputPaths;  // as given on the command line (scanBatchInputs expands them)
};

// Reads the options of addBatchOptions (parse() done, no --help). Throws
// UsageError, and uot::Error(Unavailable) for --device gpu without a GPU.
BatchCliSettings readBatchOptions(const ArgParser& parser);

// What a batch works on: the images (BatchInputs: files, and the unreadable
// entries of folders) and the clips (video files and image sequences, given or
// found in the folders given; video_command.h: splitClipInputs). Throws what
// `uot batch` refuses before any work: clips in a build without FFmpeg's
// libraries (uot::Error(Unavailable)), clips with --mask-pattern and no input
// at all (UsageError).
struct BatchWork {
    BatchInputs images;
    std::vector<std::string> clips;
};
BatchWork scanBatchWork(const BatchCliSettings& batch);

// A BatchControl whose progress prints "[i/n] input -> output (s)" lines (and
// the stage progress) on stderr unless --quiet.
class BatchProgressPrinter {
public:
    explicit BatchProgressPrinter(const RecolorCliSettings& cli);
    void stage(std::size_t index, std::size_t total, const PipelineProgress& stage);
    void finished(std::size_t index, std::size_t total, const BatchItemResult& result);
    void finish() { m_progress.finish(); }
    BatchControl control();  // calls stage() and finished()

private:
    bool m_quiet;
    StderrProgress m_progress;
};

// Prints the report of a finished batch (the JSON document on stdout with
// --json; the summary and the failed and unreadable files on stderr) and
// returns the exit code: 0 all done or skipped, 1 nothing done, 3 some failed.
int reportBatch(const BatchSummary& summary, const RecolorCliSettings& cli);

}  // namespace uot::cli
