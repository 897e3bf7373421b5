#include "ui/lut_job.h"

#include <QElapsedTimer>
#include <QObject>

#include "core/color/hald_clut.h"
#include "core/pipeline/lut_file.h"

namespace uot::ui {

QString cubeSizeText(int size) { return QString::number(size) + QChar(0x00b3); }

JobFunction makeLutJob(std::shared_ptr<PipelineSession> session, LoadedImage source, LoadedImage reference,
                       const StudioParameters& parameters, const LutRequest& request)
{
    return [session, source, reference, parameters, request](JobContext& context) {
        auto output = std::make_shared<LutOutput>();
        useSessionImages(*session, source, reference);
        RecolorPipeline& pipeline = session->pipeline;
        pipeline.setSettings(recolorSettingsFor(parameters));
        PipelineControl control;
        control.cancel = context.cancelFlag();
        QElapsedTimer timer;
        timer.start();
        try {
            context.phase(QObject::tr("Fitting the %1 LUT to the result...").arg(cubeSizeText(request.size)));
            const LutFileFormat format = lutFileFormat(request.path.toStdString());
            const bool hald = format == LutFileFormat::Hald;
            const int nodes = hald ? haldCubeSize(kDefaultHaldLevel) : request.size;
            const LookLut look =
                exportPipelineLook(pipeline, nodes, request.title.toStdString(), LookLutSource::Rendered, control);
            // Encoded once: written, and read back for the preview, so that the
            // preview shows the numbers the file holds (what a client renders).
            const EncodedLut encoded = encodeLut(look.lut, format);
            if (!request.path.isEmpty()) {
                AtomicWriteOptions options;
                for (const QString& p : request.protectedPaths)
                    if (!p.isEmpty() && !p.startsWith(":/")) options.protectedPaths.push_back(p.toStdString());
                writeEncodedLut(encoded, request.path.toStdString(), options);
                output->notice = QObject::tr("Wrote %1 (%2 LUT) in %3 s: %4 dB PSNR against the result shown "
                                             "(the global map alone: %5 dB)")
                                     .arg(request.path)
                                     .arg(hald ? QObject::tr("Hald level %1").arg(kDefaultHaldLevel)
                                               : cubeSizeText(request.size))
                                     .arg(timer.nsecsElapsed() * 1e-9, 0, 'f', 2)
                                     .arg(look.psnr, 0, 'f', 1)
                                     .arg(look.globalMapPsnr, 0, 'f', 1);
            }
            output->psnr = look.psnr;
            if (request.preview) {
                Image shown = applyCubeToImage(encoded.decoded(), *source.image, CubeInterpolation::Tetrahedral,
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
