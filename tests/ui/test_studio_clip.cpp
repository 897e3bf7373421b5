// A clip as the studio's source (ui/clip_model.h, ui/studio_session_clip.cpp),
// driven through StudioSession with QSignalSpy, on small clips the test makes:
// a video of ffmpeg's testsrc2, and an image sequence of two bundled photos
// (a shot of each, panning). The references are independent of the studio:
// ffmpeg's own decode of the video, the sequence's files as Qt reads them, and
// the output of `uot recolor CLIP` (the command line) for the same settings.

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QAction>
#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QMap>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <cmath>
#include <limits>

#include "tests/ui/studio_test_options.h"
#include "ui/clip_scrubber.h"
#include "ui/main_window.h"
#include "ui/studio_session.h"

using namespace uot::ui;

namespace {

const QString kUot = QStringLiteral(UOT_CLI_EXECUTABLE);
const QString kSamples = QStringLiteral(UOT_SAMPLES_DIR);
const QString kStudio = QStringLiteral(UOT_STUDIO_EXECUTABLE);

bool runTool(const QString& program, const QStringList& arguments, QByteArray* output = nullptr)
{
    QProcess p;
    p.start(program, arguments);
    if (!p.waitForFinished(300000)) return false;
    if (output) *output = p.readAllStandardOutput();
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
        qWarning("%s %s: %s", qPrintable(program), qPrintable(arguments.join(' ')), p.readAllStandardError().constData());
        return false;
    }
    return true;
}

// The image's samples as 8-bit RGB rows (uot::Image from the session).
QImage asQImage(const uot::Image& image) { return toQImage(image).convertToFormat(QImage::Format_RGB888); }

// Mean absolute difference of two images of one size, per sample (0..255); infinite for different sizes.
double meanDifference(const QImage& a, const QImage& b)
{
    const QImage x = a.convertToFormat(QImage::Format_RGB888), y = b.convertToFormat(QImage::Format_RGB888);
    if (x.size() != y.size() || x.isNull()) return std::numeric_limits<double>::infinity();
    double sum = 0;
    for (int r = 0; r < x.height(); ++r) {
        const uchar* p = x.constScanLine(r);
        const uchar* q = y.constScanLine(r);
        for (int i = 0; i < 3 * x.width(); ++i) sum += std::abs(int(p[i]) - int(q[i]));
    }
    return sum / (3.0 * x.width() * x.height());
}

// The files of a sequence written into `folder` whose names start with `prefix`, in order.
QStringList sequenceFiles(const QString& folder, const QString& prefix)
{
    QStringList files;
    for (const QString& name : QDir(folder).entryList({prefix + "*.png"}, QDir::Files, QDir::Name))
        files << QDir(folder).filePath(name);
    return files;
}

}  // namespace

class TestStudioClip : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_folder;
    QString m_video;     // testsrc2, 160x120, 40 frames at 25 frames/s
    QString m_sequence;  // photos_%03d.png: 10 frames of fruits.jpg then 10 of butterfly.jpg
    QString m_reference;
    long long m_videoFrames = 40;

    // Default settings (those of `uot recolor`) with 64-colour palettes, no auto-run.
    static StudioParameters clipParameters()
    {
        StudioParameters p;
        p.autoRun = false;
        p.paletteSize = 64;
        return p;
    }
    static QStringList cliFlags() { return {"--palette-size", "64", "--quiet"}; }

    bool openClip(StudioSession& session, const QString& clip)
    {
        QSignalSpy shown(&session, &StudioSession::clipFrameShown);
        session.openSource(clip);
        session.openReference(m_reference);
        return QTest::qWaitFor([&] {
            return session.hasClip() && !shown.isEmpty() && !session.isLoading() && session.hasReference();
        }, 30000);
    }

    bool showFrame(StudioSession& session, long long index)
    {
        QSignalSpy shown(&session, &StudioSession::clipFrameShown);
        session.showClipFrame(index);
        return QTest::qWaitFor([&] { return !shown.isEmpty() && shown.last().at(0).toLongLong() == index; }, 30000);
    }

    bool runToResult(StudioSession& session)
    {
        QSignalSpy finished(&session, &StudioSession::finished);
        QSignalSpy failed(&session, &StudioSession::runFailed);
        session.run();
        return QTest::qWaitFor([&] { return (finished.count() == 1 && !session.isBusy()) || !failed.isEmpty(); }, 120000) &&
               failed.isEmpty() && session.validity() == ResultValidity::Current;
    }

    // Runs `uot recolor CLIP REFERENCE -o folder/prefix_%05d.png` with the test's settings.
    QStringList cliFrames(const QString& clip, const QString& prefix, const QStringList& extra = {})
    {
        QStringList args{"recolor", clip, m_reference, "-o", m_folder.filePath(prefix + "_%05d.png")};
        args << cliFlags() << extra;
        if (!runTool(kUot, args)) return {};
        return sequenceFiles(m_folder.path(), prefix + "_");
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_folder.isValid());
        useIsolatedSettings(m_folder.filePath("settings"), "test_studio_clip");
        if (!ClipModel::supported()) QSKIP("this build reads no clips (UOT_VIDEO off)");
        if (!runTool("ffmpeg", {"-version"})) QSKIP("ffmpeg is not installed");
        m_reference = kSamples + "/starry_night.jpg";
        m_video = m_folder.filePath("testsrc.mp4");
        QVERIFY(runTool("ffmpeg", {"-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-frames:v",
                                   QString::number(m_videoFrames), "-pix_fmt", "yuv420p", "-c:v", "libx264", m_video}));
        // The sequence: a slow pan over each photo, 10 frames each (a cut between them).
        int n = 0;
        for (const char* photo : {"fruits.jpg", "butterfly.jpg"}) {
            const QImage image = QImage(kSamples + "/" + photo).convertToFormat(QImage::Format_RGB888);
            QVERIFY(!image.isNull());
            for (int k = 0; k < 10; ++k, ++n)
                QVERIFY(image.copy(4 * k, 2 * k, 160, 120).save(m_folder.filePath(QString::asprintf("photos_%03d.png", n))));
        }
        m_sequence = m_folder.filePath("photos_%03d.png");
    }

    // Open, then scrub: the frame shown is frame N as decoded independently (ffmpeg
    // for the video, Qt for the sequence's files); the last frame asked for wins.
    void scrubShowsTheFrameAskedFor()
    {
        StudioSession session;
        session.setParameters(clipParameters());
        QVERIFY(openClip(session, m_video));
        QCOMPARE(session.clip()->description().frames, m_videoFrames);
        QCOMPARE(session.clip()->description().width, 160);
        QCOMPARE(session.source().image->width, 160);
        // ffmpeg's own decode of every frame (numbered from 1).
        QVERIFY(runTool("ffmpeg", {"-v", "error", "-y", "-i", m_video, m_folder.filePath("ffmpeg_%03d.png")}));
        const QStringList decoded = sequenceFiles(m_folder.path(), "ffmpeg_");
        QCOMPARE((long long)decoded.size(), m_videoFrames);
        // Scrubbing: three requests in a row, the last (frame 23) is the one shown in the end.
        QSignalSpy shown(&session, &StudioSession::clipFrameShown);
        for (long long index : {5LL, 31LL, 23LL}) session.showClipFrame(index);
        QVERIFY(QTest::qWaitFor([&] { return !shown.isEmpty() && shown.last().at(0).toLongLong() == 23; }, 30000));
        QTest::qWait(200);
        QCOMPARE(shown.last().at(0).toLongLong(), 23LL);
        QVERIFY(shown.count() <= 3);
        for (long long index : {23LL, 7LL, 0LL, 39LL}) {
            QVERIFY(showFrame(session, index));
            const QImage frame = asQImage(*session.source().image);
            // Equal to ffmpeg's frame N up to the YUV conversion's rounding, and closer to
            // it than to any other frame (testsrc2 changes every frame).
            double best = std::numeric_limits<double>::infinity();
            int bestIndex = -1;
            for (int k = 0; k < decoded.size(); ++k) {
                const double d = meanDifference(frame, QImage(decoded[k]));
                if (d < best) {
                    best = d;
                    bestIndex = k;
                }
            }
            QCOMPARE(bestIndex, int(index));
            QVERIFY2(best < 2.0, qPrintable(QString("frame %1: %2 levels from ffmpeg's").arg(index).arg(best)));
        }
        // The sequence: its files exactly.
        QVERIFY(openClip(session, m_sequence));
        QCOMPARE(session.clip()->description().frames, 20LL);
        for (long long index : {13LL, 2LL}) {
            QVERIFY(showFrame(session, index));
            const QImage file(m_folder.filePath(QString::asprintf("photos_%03d.png", int(index))));
            QCOMPARE(meanDifference(asQImage(*session.source().image), file), 0.0);
        }
    }

    // The look frame: from frame 3 (fruits) the look differs from frame 15's (butterfly);
    // each equals the command line's `--look-frame N`; choosing it makes the result out of date.
    void lookFrameChoiceChangesTheLook()
    {
        StudioSession session;
        session.setParameters(clipParameters());
        QVERIFY(openClip(session, m_sequence));
        QVERIFY(runToResult(session));
        QCOMPARE(session.clip()->lookFrame(), -1LL);
        QVERIFY(showFrame(session, 0));
        const QImage pooled = session.result().image.convertToFormat(QImage::Format_RGB888);
        QMap<long long, QImage> looks;
        for (long long lookFrame : {3LL, 15LL}) {
            session.setClipLookFrame(lookFrame);
            QCOMPARE(session.validity(), ResultValidity::OutOfDate);
            QVERIFY(session.staleInputs().contains("the look frame"));
            QVERIFY(runToResult(session));
            QVERIFY(showFrame(session, 0));
            QCOMPARE(session.validity(), ResultValidity::Current);
            looks[lookFrame] = session.result().image.convertToFormat(QImage::Format_RGB888);
            const QStringList cli = cliFrames(m_sequence, QString("look%1").arg(lookFrame), {"--look-frame", QString::number(lookFrame)});
            QCOMPARE(cli.size(), 20);
            const double d = meanDifference(looks[lookFrame], QImage(cli.first()));
            QVERIFY2(d < 0.01, qPrintable(QString("look frame %1: %2 levels from the CLI's").arg(lookFrame).arg(d)));
        }
        QVERIFY2(meanDifference(looks[3], looks[15]) > 5.0, "the two look frames gave the same look");
        QVERIFY(meanDifference(looks[3], pooled) > 1.0);
        // A setting changed: out of date, and a run gives another look (Fade 40 %).
        StudioParameters faded = session.parameters();
        faded.strength = 0.4;
        session.setParameters(faded);
        QVERIFY(session.staleInputs().contains("the settings"));
        QVERIFY(runToResult(session));
        QVERIFY(meanDifference(session.result().image, looks[15]) > 2.0);
        // Back to pooled: out of date again until a run.
        session.setClipLookFrame(-1);
        QVERIFY(session.staleInputs().contains("the look frame"));
    }

    // The export: as many frames as the source, of its size, and the frames the
    // command line writes with the same settings; the video keeps count and size too.
    void exportMatchesTheCommandLine()
    {
        StudioSession session;
        session.setParameters(clipParameters());
        QVERIFY(openClip(session, m_video));
        QVERIFY(runToResult(session));
        QSignalSpy done(session.clip(), &ClipModel::exportFinished);
        QSignalSpy progress(session.clip(), &ClipModel::exportProgress);
        QVERIFY(session.exportClip(m_folder.filePath("studio_%05d.png")));
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 120000));
        QVERIFY(!progress.isEmpty());
        QCOMPARE(progress.last().at(0).value<ClipExportProgress>().frame, m_videoFrames);
        const QStringList studio = sequenceFiles(m_folder.path(), "studio_");
        const QStringList cli = cliFrames(m_video, "cli");
        QCOMPARE((long long)studio.size(), m_videoFrames);
        QCOMPARE((long long)cli.size(), m_videoFrames);
        for (int k = 0; k < studio.size(); ++k) {
            const QImage a(studio[k]), b(cli[k]);
            QCOMPARE(a.size(), QSize(160, 120));
            QVERIFY2(meanDifference(a, b) == 0.0, qPrintable(QString("frame %1 differs from the CLI's").arg(k)));
        }
        // A video: frame count and size as the source's (ffprobe).
        const QString video = m_folder.filePath("studio.mp4");
        done.clear();
        QVERIFY(session.exportClip(video));
        QVERIFY(QTest::qWaitFor([&] { return !done.isEmpty(); }, 120000));
        QByteArray probe;
        QVERIFY(runTool("ffprobe", {"-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                    "stream=width,height,nb_read_frames", "-of", "csv=p=0", video}, &probe));
        QCOMPARE(QString::fromLatin1(probe).trimmed(), QString("160,120,%1").arg(m_videoFrames));
        // The clip itself is never the output.
        QVERIFY(!session.exportClip(m_video, true));
    }

    // The clip bar in the window: the slider asks for the frame, the time is frame / rate.
    void clipBarScrubs()
    {
        MainWindow window(testOptions());
        window.setParameters(clipParameters());
        window.resize(1280, 720);
        window.show();
        QVERIFY(openClip(*window.session(), m_video));
        auto* bar = window.findChild<ClipScrubber*>("clipScrubber");
        QVERIFY(bar && bar->isVisible());
        QCOMPARE(bar->slider()->maximum(), int(m_videoFrames - 1));
        QSignalSpy shown(window.session(), &StudioSession::clipFrameShown);
        bar->slider()->setValue(7);
        QVERIFY(QTest::qWaitFor([&] { return !shown.isEmpty() && shown.last().at(0).toLongLong() == 7; }, 30000));
        QCOMPARE(bar->frameBox()->value(), 7);
        QCOMPARE(bar->timeLabel()->text(), QString("0:00.28 / 0:01.60"));  // 7 / 25 s of 40 / 25 s
        QVERIFY(!window.action("exportClipAction")->isEnabled());         // no look yet
        bar->useFrameButton()->click();
        QCOMPARE(window.session()->clip()->lookFrame(), 7LL);
        QCOMPARE(bar->lookLabel()->text(), QString("Look: frame 7"));
        QVERIFY(runToResult(*window.session()));
        QVERIFY(window.action("exportClipAction")->isEnabled());
        bar->pooledButton()->click();
        QCOMPARE(window.session()->clip()->lookFrame(), -1LL);
        QVERIFY(!window.action("exportClipAction")->isEnabled());  // out of date again
    }

    // A photo opened, an undo back to the photo before the clip, or a swap: the clip closes.
    void photoReplacesTheClip()
    {
        StudioSession session;
        session.setParameters(clipParameters());
        const QString photo = kSamples + "/fruits.jpg";
        session.openReference(m_reference);
        QVERIFY(QTest::qWaitFor([&] { return !session.isLoading() && session.hasReference(); }, 30000));
        session.openSource(photo);
        QVERIFY(QTest::qWaitFor([&] { return !session.isLoading() && session.source().path == photo; }, 30000));
        const int steps = session.undoStack()->count();
        QSignalSpy shown(&session, &StudioSession::clipFrameShown);
        session.openSource(m_video);
        QVERIFY(QTest::qWaitFor([&] { return session.hasClip() && !shown.isEmpty(); }, 30000));
        QCOMPARE(session.undoStack()->count(), steps);  // opening a clip is no step of its own
        session.undoStack()->undo();  // the step of the photo's load: back to no source
        QVERIFY(!session.hasClip());
        session.undoStack()->redo();  // the photo again
        QCOMPARE(session.source().path, photo);
        QVERIFY(!session.hasClip());
        QVERIFY(openClip(session, m_video));
        session.swapImages();
        QVERIFY(!session.hasClip());
        QCOMPARE(session.source().path, m_reference);
    }

    // Save Result on a clip writes the frame shown, graded, as an image.
    void saveWritesTheGradedFrame()
    {
        StudioSession session;
        session.setParameters(clipParameters());
        QVERIFY(openClip(session, m_video));
        QVERIFY(runToResult(session));
        QVERIFY(showFrame(session, 9));
        QCOMPARE(session.validity(), ResultValidity::Current);
        const QString path = m_folder.filePath("frame9.png");
        QSignalSpy saved(&session, &StudioSession::saved);
        QSignalSpy failed(&session, &StudioSession::saveFailed);
        session.saveResultTo(path);
        QVERIFY(QTest::qWaitFor([&] { return !saved.isEmpty() || !failed.isEmpty(); }, 30000));
        QVERIFY2(failed.isEmpty(), qPrintable(session.lastError()));
        // The frame the command line writes for frame 9 (its sequence starts at 1).
        const QStringList cli = cliFrames(m_video, "save");
        QCOMPARE((long long)cli.size(), m_videoFrames);
        QCOMPARE(meanDifference(QImage(path), QImage(cli[9])), 0.0);
    }

    // Export LUT on a clip writes the clip's look: the file `uot lut CLIP` writes, byte
    // for byte, at the size of the look shown (33) and at another (17, computed again).
    void lutExportWritesTheClipsLook()
    {
        StudioSession session;
        session.setParameters(clipParameters());
        QVERIFY(openClip(session, m_sequence));
        session.setClipLookFrame(12);
        QVERIFY(runToResult(session));
        for (int size : {33, 17}) {
            LutRequest request;
            request.size = size;
            request.path = m_folder.filePath(QString("studio_%1.cube").arg(size));
            QSignalSpy finished(session.worker(), &SolveWorker::jobFinished);
            session.worker()->submit("lut", session.lutJob(request));
            QVERIFY(QTest::qWaitFor([&] { return !finished.isEmpty(); }, 120000));
            const QString cli = m_folder.filePath(QString("cli_%1.cube").arg(size));
            QVERIFY(runTool(kUot, QStringList{"lut", m_sequence, m_reference, "-o", cli, "--size", QString::number(size),
                                              "--look-frame", "12"} + cliFlags()));
            QFile a(request.path), b(cli);
            QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
            const QByteArray studio = a.readAll();
            QVERIFY(studio.size() > 1000);
            QVERIFY2(studio == b.readAll(), qPrintable(QString("the %1-node LUT differs from uot lut's").arg(size)));
        }
    }

    // uot-studio's switches for a clip: --frame, --look-frame and --export-clip write the
    // command line's frames for that look frame; a bad frame number is a usage error (2).
    void scriptedExport()
    {
        const QString out = m_folder.filePath("scripted_%05d.png");
        QProcess studio;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        env.insert("XDG_CONFIG_HOME", m_folder.filePath("scripted-config"));
        studio.setProcessEnvironment(env);
        studio.start(kStudio, {"--source", m_sequence, "--reference", m_reference, "--frame", "14", "--look-frame", "14",
                               "--run", "--export-clip", out, "--quit"});
        QVERIFY(studio.waitForFinished(300000));
        QCOMPARE(studio.exitCode(), 0);
        QVERIFY(studio.readAllStandardOutput().contains("uot-studio: exported"));
        // The studio's own defaults there: the command line's with no option but the look frame.
        QVERIFY(runTool(kUot, {"recolor", m_sequence, m_reference, "-o", m_folder.filePath("scriptcli_%05d.png"),
                               "--look-frame", "14", "--quiet"}));
        const QStringList scripted = sequenceFiles(m_folder.path(), "scripted_");
        const QStringList cli = sequenceFiles(m_folder.path(), "scriptcli_");
        QCOMPARE(scripted.size(), 20);
        QCOMPARE(cli.size(), 20);
        for (int k = 0; k < 20; ++k) QCOMPARE(meanDifference(QImage(scripted[k]), QImage(cli[k])), 0.0);
        for (const char* bad : {"-1", "x"}) {
            studio.start(kStudio, {"--source", m_sequence, "--frame", bad, "--quit"});
            QVERIFY(studio.waitForFinished(60000));
            QCOMPARE(studio.exitCode(), 2);
        }
    }

    // Cancel in the middle of an export: exportCancelled, and no file under the
    // output's name nor a temporary one beside it.
    void cancelMidExportLeavesNoFile()
    {
        const QString longClip = m_folder.filePath("long.mkv");
        QVERIFY(runTool("ffmpeg", {"-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25", "-frames:v",
                                   "600", "-pix_fmt", "yuv420p", "-c:v", "libx264", "-preset", "ultrafast", longClip}));
        StudioSession session;
        session.setParameters(clipParameters());
        QVERIFY(openClip(session, longClip));
        QVERIFY(runToResult(session));
        QDir out(m_folder.filePath("cancelled"));
        QVERIFY(QDir().mkpath(out.path()));
        const QString output = out.filePath("graded.mp4");
        QSignalSpy progress(session.clip(), &ClipModel::exportProgress);
        QSignalSpy cancelled(session.clip(), &ClipModel::exportCancelled);
        QSignalSpy finished(session.clip(), &ClipModel::exportFinished);
        QVERIFY(session.exportClip(output));
        QVERIFY(session.clip()->isExporting());
        QVERIFY(QTest::qWaitFor([&] { return !progress.isEmpty() || !finished.isEmpty(); }, 60000));
        QVERIFY2(finished.isEmpty(), "the export ended before it could be cancelled");
        session.clip()->cancelExport();
        QVERIFY(QTest::qWaitFor([&] { return !cancelled.isEmpty() || !finished.isEmpty(); }, 60000));
        QCOMPARE(cancelled.count(), 1);
        QCOMPARE(finished.count(), 0);
        QVERIFY(!session.clip()->isExporting());
        QVERIFY(!QFileInfo::exists(output));
        QCOMPARE(out.entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot), QStringList());
    }
};

QTEST_MAIN(TestStudioClip)
#include "test_studio_clip.moc"
