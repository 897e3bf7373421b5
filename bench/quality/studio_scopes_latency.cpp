// The studio's scopes after a render at 12 MP: the time from the session's new
// result to its scopes being ready (StudioSession::scopesLatencyMs, computed on
// a worker thread), for the first render (source, reference and result) and
// for re-maps (the result only: the source's and the reference's are kept).
//   uot_studio_scopes_latency [--repeat N] [--width W --height H]
// Prints each latency, their median and the machine's load average (docs/REGIONS.md).

#include <QApplication>
#include <QEventLoop>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/quality/bench_machine.h"
#include "ui/studio_session.h"

namespace {

// Waits in the event loop until `done` holds (or 10 minutes).
template <class Done>
bool waitFor(Done done)
{
    QEventLoop loop;
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &loop, [&] {
        if (done()) loop.quit();
    });
    poll.start(1);
    QTimer::singleShot(600000, &loop, &QEventLoop::quit);
    loop.exec();
    return done();
}

}  // namespace

int main(int argc, char** argv)
{
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    int repeat = 5, width = 4000, height = 3000;
    const QStringList args = app.arguments();
    for (int i = 1; i + 1 < args.size(); i += 2) {
        if (args[i] == "--repeat") repeat = args[i + 1].toInt();
        else if (args[i] == "--width") width = args[i + 1].toInt();
        else if (args[i] == "--height") height = args[i + 1].toInt();
    }
    QTemporaryDir folder;
    const QString source = folder.filePath("source.bmp");
    // The sample photo upscaled to width x height (smooth), written as BMP (fast to write and read).
    if (!QImage(QStringLiteral(UOT_SAMPLES_DIR "/home.jpg")).convertToFormat(QImage::Format_RGB888)
             .scaled(width, height, Qt::IgnoreAspectRatio, Qt::SmoothTransformation)
             .save(source)) {
        std::fprintf(stderr, "could not write %s\n", qPrintable(source));
        return 1;
    }
    uot::ui::StudioSession session;
    uot::ui::StudioParameters p = session.parameters();
    p.autoRun = false;
    session.setParameters(p);
    session.openSource(source);
    session.openReference(QStringLiteral(UOT_SAMPLES_DIR "/starry_night.jpg"));
    if (!waitFor([&] { return !session.isLoading() && session.hasSource() && session.hasReference(); })) return 1;
    std::printf("source %dx%d, load average before: %s\n", session.source().image->width, session.source().image->height,
                uot::bench::loadAverage().c_str());
    std::vector<double> remaps;
    for (int k = 0; k <= repeat; ++k) {
        QSignalSpy ready(&session, &uot::ui::StudioSession::scopesReady);
        if (k > 0) {
            p.strength = k % 2 ? 0.8 : 1.0;  // a re-map: a new result, the same source and reference
            session.setParameters(p);
        }
        session.run();
        if (!waitFor([&] { return ready.count() == 1; })) return 1;
        const double ms = session.scopesLatencyMs();
        std::printf("%s: scopes %.1f ms after the new result\n", k == 0 ? "first render (source, reference, result)"
                                                                        : "re-map (result only)", ms);
        if (k > 0) remaps.push_back(ms);
    }
    std::sort(remaps.begin(), remaps.end());
    if (!remaps.empty())
        std::printf("median of %zu re-maps: %.1f ms (min %.1f, max %.1f); load average after: %s\n", remaps.size(),
                    remaps[remaps.size() / 2], remaps.front(), remaps.back(), uot::bench::loadAverage().c_str());
    return 0;
}
