#pragma once
// The options recolor and batch share: pipeline settings (palette, colour space,
// mapping), the solver flags (solver_flags.h), image reading/writing, and the
// progress printer for stderr.

#include <chrono>
#include <string>
#include <vector>

#include "app/cli/arg_parser.h"
#include "core/imageio/image_io.h"
#include "core/pipeline/recolor_pipeline.h"

namespace uot::cli {

// Which options a command takes: every one (recolor, batch), or only those that
// shape the global colour map (`uot lut`: no smoothing, no output image options).
// Full: `uot recolor`, `uot batch`; Look: `uot lut` (the rendering options of
// Full, without the output-file ones).
enum class RecolorOptionSet { Full, Look };

// Declares the pipeline, solver and image options of `set` on the parser.
void addRecolorOptions(ArgParser& parser, RecolorOptionSet set = RecolorOptionSet::Full);

struct RecolorCliSettings {
    RecolorSettings recolor;
    ReadOptions read;
    WriteOptions write;
    bool json = false;
    bool quiet = false;
    bool deviceAuto = false;  // --device auto
    std::string deviceNote;   // --device auto fell back to the CPU: why
};

// Reads the options declared by addRecolorOptions. Throws UsageError, and
// uot::Error(Unavailable) for --device gpu without a usable GPU (exit 4).
RecolorCliSettings readRecolorOptions(const ArgParser& parser, RecolorOptionSet set = RecolorOptionSet::Full);

// Checks before any work that `output` may be written: an image extension this
// program writes (else UsageError), not the reference (never) nor the source
// (unless overwriteSource), not a folder, its folder exists and is writable, not
// an existing file without overwrite. Throws uot::Error(Io) naming the file.
void checkImageOutput(const std::string& output, const std::string& source, const std::string& reference,
                      bool overwrite, bool overwriteSource);

// Replaces "-o X" by "--output X" (ArgParser knows long options only).
std::vector<std::string> expandShortOutput(const std::vector<std::string>& args);

// Prints throttled progress lines on stderr once the work has lasted a second.
class StderrProgress {
public:
    explicit StderrProgress(bool enabled);
    ~StderrProgress();
    void update(const std::string& label, const PipelineProgress& progress);
    void finish();

private:
    bool m_enabled;
    bool m_printed = false;
    std::chrono::steady_clock::time_point m_start, m_last;
};

// JSON of the phase timings (jsonString / jsonNumber: app/cli/json_text.h).
std::string timingsJson(const PhaseTimings& t);

// Where the work ran, as JSON members for --json:
// "device": "cpu"|"gpu", "device_note": "..." (why the GPU was not used; "" when
// it was or was not asked for). The note combines --device auto's choice and
// the pipeline's own fallback (stats.gpuNote).
std::string deviceJson(const RecolorCliSettings& cli, const PipelineStats& stats);

// The same note for people ("" when there is nothing to say).
std::string deviceNote(const RecolorCliSettings& cli, const PipelineStats& stats);

}  // namespace uot::cli
