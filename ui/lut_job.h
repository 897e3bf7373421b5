#pragma once
// The LUT job of the studio (File > Export LUT, View > LUT Preview), on the
// SolveWorker with the main window's pipeline session: solves when the plan is
// not cached, bakes the global colour map into a .cube lattice
// (core/pipeline/look_export.h), writes it when asked, and renders the source
// through the LUT as a client would (the lattice as written to the file,
// tetrahedral interpolation like ffmpeg's lut3d default).

#include <QString>
#include <QStringList>

#include <functional>
#include <limits>
#include <memory>

#include "core/color/cube_lut.h"       // the sizes a LUT is offered in (isOfferedCubeSize)
#include "core/pipeline/look_export.h"  // what a LUT can hold, for the views' notes
#include "ui/pipeline_jobs.h"

namespace uot::ui {

struct LutRequest {
    int size = 33;              // nodes per axis: 17, 33 or 65
    QString path;               // .cube file to write; empty: preview only
    QString title;              // TITLE of the file
    QStringList protectedPaths; // never replaced (the source and reference files)
    bool preview = true;        // render the source through the LUT (JobOutput::image/pixels)
};

// "33³" (nodes per axis, cubed), for messages.
QString cubeSizeText(int size);

// What a LUT job hands back.
struct LutOutput final : JobOutput {
    QImage image;                         // the source as the LUT renders it (when asked)
    std::shared_ptr<const Image> pixels;  // the same at the source's depth
    QString notice;                       // what was written, or empty
    double psnr = std::numeric_limits<double>::quiet_NaN();  // dB, the LUT against the result it was fitted to
};

JobFunction makeLutJob(std::shared_ptr<PipelineSession> session, LoadedImage source, LoadedImage reference,
                       const StudioParameters& parameters, const LutRequest& request);

// The look's LUT of `nodes` per axis, made on the worker (a photo's by its pipeline, a clip's by core/video).
using LookMaker = std::function<LookLut(int nodes, const PipelineControl& control)>;

// The LUT job around any look: fits it at the request's size (a Hald CLUT: its level's),
// writes it when asked, and renders `shown` through the lattice as written.
JobFunction makeLookLutJob(LookMaker look, LoadedImage shown, int threads, const LutRequest& request);

}  // namespace uot::ui
