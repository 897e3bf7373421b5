#include "ui/lut_job.h"

#include <QElapsedTimer>
#include <QObject>

#include "core/color/cube_lut.h"
#include "core/pipeline/look_export.h"

namespace uot::ui {

QString cubeSizeText(int size) { return QString::number(size) + QChar(0x00b3); }

JobFunction makeLutJob(std::shared_ptr<PipelineSession> session, LoadedImage source, LoadedImage reference,
                       const StudioParameters& parameters, const LutRequest& request)
{
    return [session, source, reference, parameters, request](JobContext& context) {
        auto output = std::make_shared<JobOutput>();
        output->kind = JobOutput::Kind::Lut;
        useSessionImages(*session, source, reference);
        RecolorPipeline& pipeline = session->pipeline;
        pipeline.setSettings(recolorSettingsFor(parameters));
        PipelineControl control;
        control.cancel = context.cancelFlag();
        QElapsedTimer timer;
        timer.start();
        try {
            context.phase(QObject::tr("Baking the %1 LUT...").arg(cubeSizeText(request.size)));
            const CubeLut baked = bakePipelineLook(pipeline, request.size, request.title.toStdString(), control);
            // The numbers as the file holds them, so that the preview is what a
            // client reading the file renders.
            const std::string text = formatCube(baked);
            if (!request.path.isEmpty()) {
                AtomicWriteOptions options;
                for (const QString& p : request.protectedPaths)
                    if (!p.isEmpty() && !p.startsWith(":/")) options.protectedPaths.push_back(p.toStdString());
                writeFileAtomically(request.path.toStdString(), text.data(), text.size(), options);
                output->notice = QObject::tr("Wrote %1 (%2 LUT, global colour map only) in %3 s")
                                     .arg(request.path)
                                     .arg(cubeSizeText(request.size))
                                     .arg(timer.nsecsElapsed() * 1e-9, 0, 'f', 2);
            }
            if (request.preview) {
                const CubeLut lut = parseCube(text, "the exported LUT");
                Image shown = applyCubeToImage(lut, *source.image, CubeInterpolation::Tetrahedral,
                                               pipeline.settings().threads);
                output->image = toQImage(shown);
                output->pixels = std::make_shared<const Image>(std::move(shown));
            }
        } catch (const Cancelled&) {
            output->cancelled = true;
        }
        return output;
    };
}

}  // namespace uot::ui
