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
};

// Reads the options declared by addRecolorOptions. Throws UsageError.
RecolorCliSettings readRecolorOptions(const ArgParser& parser, RecolorOptionSet set = RecolorOptionSet::Full);

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

}  // namespace uot::cli
