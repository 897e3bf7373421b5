#include "ui/lut_job.h"

#include <QElapsedTimer>
#include <QObject>

#include <cmath>

#include "core/color/hald_clut.h"
#include "core/pipeline/lut_file.h"

namespace uot::ui {

QString cubeSizeText(int size) { return QString::number(size) + QChar(0x00b3); }

JobFunction makeLookLutJob(LookMaker look, LoadedImage shown, int threads, const LutRequest& request)
{
    return [look = std::move(look), shown, threads, request](JobContext& context) {
        auto output = std::make_shared<LutOutput>();
        PipelineControl control;
        control.cancel = context.cancelFlag();
        QElapsedTimer timer;
        timer.start();
        try {
            context.phase(QObject::tr("Fitting the %1 LUT to the result...").arg(cubeSizeText(request.size)));
            const LutFileFormat format = lutFileFormat(request.path.toStdString());
            const bool hald = format == LutFileFormat::Hald;
            const LookLut lut = look(hald ? haldCubeSize(kDefaultHaldLevel) : request.size, control);
            // Encoded once: written, and read back for the preview, so that the
            // preview shows the numbers the file holds (what a client renders).
            const EncodedLut encoded = encodeLut(lut.lut, format);
            if (!request.path.isEmpty()) {
                AtomicWriteOptions options;
                for (const QString& p : request.protectedPaths)
                    if (!p.isEmpty() && !p.startsWith(":/")) options.protectedPaths.push_back(p.toStdString());
                writeEncodedLut(encoded, request.path.toStdString(), options);
                // A clip's look has no global map of its own to compare with (NaN).
                const QString globalMap = std::isnan(lut.globalMapPsnr)
                                              ? QString()
                                              : QObject::tr(" (the global map alone: %1 dB)").arg(lut.globalMapPsnr, 0, 'f', 1);
                output->notice = QObject::tr("Wrote %1 (%2 LUT) in %3 s: %4 dB PSNR against the result shown%5")
                                     .arg(request.path)
                                     .arg(hald ? QObject::tr("Hald level %1").arg(kDefaultHaldLevel)
                                               : cubeSizeText(request.size))
                                     .arg(timer.nsecsElapsed() * 1e-9, 0, 'f', 2)
                                     .arg(lut.psnr, 0, 'f', 1)
                                     .arg(globalMap);
            }
            output->psnr = lut.psnr;
            if (request.preview) {
                Image rendered = applyCubeToImage(encoded.decoded(), *shown.image, CubeInterpolation::Tetrahedral, threads);
                output->image = toQImage(rendered);
                output->pixels = std::make_shared<const Image>(std::move(rendered));
            }
        } catch (const Cancelled&) {
            output->cancelled = true;
        }
        return output;
    };
}

JobFunction makeLutJob(std::shared_ptr<PipelineSession> session, LoadedImage source, LoadedImage reference,
                       const StudioParameters& parameters, const LutRequest& request)
{
    const RecolorSettings settings = recolorSettingsFor(parameters);
    LookMaker look = [session, source, reference, settings, title = request.title.toStdString()](
                         int nodes, const PipelineControl& control) {
        useSessionImages(*session, source, reference);
        session->pipeline.setSettings(settings);
        return exportPipelineLook(session->pipeline, nodes, title, LookLutSource::Rendered, control);
    };
    return makeLookLutJob(std::move(look), source, settings.threads, request);
}

}  // namespace uot::ui
