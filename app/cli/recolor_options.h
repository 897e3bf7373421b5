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

// Masks and several references (docs/REGIONS.md): which mask option a command
// takes: --mask FILE (recolor), --mask-pattern TEXT (batch) or none (lut; it
// still takes --reference-weights).
enum class MaskOption { File, Pattern, None };

// Declares --mask and --region, or --mask-pattern; --mask-feather and --reference-weights.
void addRegionOptions(ArgParser& parser, MaskOption mask);

struct RegionSpec {
    std::string mask, reference;  // --region MASK=REFERENCE
};

struct RegionCliSettings {
    std::string mask;         // --mask FILE ("" = none)
    std::string maskPattern;  // --mask-pattern TEXT ("" = none)
    int maskFeather = 0;      // --mask-feather R (pixels, 0 = the mask as given)
    std::vector<double> referenceWeights;  // --reference-weights, one per reference (empty = equal)
    std::vector<RegionSpec> regions;       // --region (recolor), at most kMaxRegions
};

// Reads the options of addRegionOptions; `references` is the number of
// reference images given (--reference-weights must name one weight each).
// Throws UsageError.
RegionCliSettings readRegionOptions(const ArgParser& parser, MaskOption mask, std::size_t references);

// Sets the pipeline's reference: the image itself for one, else the pooled
// palette of all of them weighted by regions.referenceWeights (buildPooledPalette).
void setReferences(RecolorPipeline& pipeline, std::vector<Image> references, const RegionCliSettings& regions);

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
