// The studio's masks, regions, several references, scopes and linked zoom
// (issue 28), through StudioSession's typed signals (QSignalSpy) and, for the
// linked zoom, the main window. The expectations are worked out by hand (the
// brush's disc and fall-off, the ranges on a 6-pixel image) or come from an
// independent path: the core's masked recolor on a fresh pipeline, and a
// reference made of the pooled references side by side in one image. The
// comparison dock, the statistics panel and the mask and regions kept between
// sessions are checked against the same core paths and the saved files.

#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <cmath>

#include "core/pipeline/region_recolor.h"
#include "tests/support/region_composite.h"
#include "tests/ui/studio_test_options.h"
#include "ui/comparison_view.h"
#include "ui/image_view.h"
#include "ui/lut_job.h"
#include "ui/main_window.h"
#include "ui/statistics_panel.h"
#include "ui/studio_session.h"

using namespace uot::ui;

namespace {

float maskAt(const StudioSession& session, int x, int y)
{
    const uot::Mask& m = *session.mask();
    return m.values[std::size_t(y) * m.width + x];
}

// The largest difference of two 8-bit RGB images' samples (-1 when their shapes differ).
int largestDifference(const uot::Image& a, const uot::Image& b)
{
    if (a.width != b.width || a.height != b.height || a.channels != b.channels || a.depth != b.depth) return -1;
    int worst = 0;
    for (std::size_t k = 0; k < a.data.size(); ++k) worst = std::max(worst, std::abs(int(a.data[k]) - int(b.data[k])));
    return worst;
}

// The largest difference of two images' R, G and B (-1 when their sizes differ).
int largestDifference(const QImage& a, const QImage& b)
{
    if (a.size() != b.size()) return -1;
    int worst = 0;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) {
            const QRgb p = a.pixel(x, y), q = b.pixel(x, y);
            worst = std::max({worst, std::abs(qRed(p) - qRed(q)), std::abs(qGreen(p) - qGreen(q)), std::abs(qBlue(p) - qBlue(q))});
        }
    return worst;
}

}  // namespace

class TestStudioRegions : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_folder;
    QString m_source, m_reference, m_referenceB, m_sideBySide, m_tiny;

    bool load(StudioSession& session, const QString& source, const QString& reference)
    {
        session.openSource(source);
        if (!reference.isEmpty()) session.openReference(reference);
        return QTest::qWaitFor([&] {
            return !session.isLoading() && session.source().path == source &&
                   (reference.isEmpty() || session.reference().path == reference);
        }, 20000);
    }

    bool runToResult(StudioSession& session)
    {
        QSignalSpy finished(&session, &StudioSession::finished);
        session.run();
        return QTest::qWaitFor([&] { return finished.count() == 1 && !session.isBusy(); }, 60000);
    }

    // The core's masked recolor of the session's images with the session's settings, on a fresh pipeline.
    uot::Image coreMasked(const StudioSession& session, const StudioParameters& p)
    {
        uot::RecolorPipeline pipeline(recolorSettingsFor(p));
        pipeline.setSource(*session.source().image);
        pipeline.setReference(*session.reference().image);
        return uot::recolorMasked(pipeline, *session.mask());
    }

    // A region's unblended result: the core's recolor of `source` from `reference`
    // with the source palette weighted by the region's mask; `stats` (or null)
    // gets its statistics.
    static uot::Image unblendedPart(const uot::Image& source, const uot::Mask& mask, const uot::Image& reference,
                                    const uot::RecolorSettings& settings, uot::PipelineStats* stats = nullptr)
    {
        uot::RecolorPipeline pipeline(settings);
        pipeline.setSource(source);
        pipeline.setReference(reference);
        pipeline.setSourcePalette(std::make_shared<const uot::Palette>(uot::buildWeightedImagePalette(
            source, mask.values.data(), settings.space, settings.palette, settings.threads)));
        uot::Image part = pipeline.run();
        if (stats) *stats = pipeline.stats();
        return part;
    }

    // The regions' parts composited over the source by hand (tests/support/region_composite.h).
    static uot::Image compositeParts(const uot::Image& source, const std::vector<const uot::Mask*>& masks,
                                     const std::vector<uot::Image>& parts)
    {
        std::vector<const uot::Image*> results;
        for (const uot::Image& part : parts) results.push_back(&part);
        return uot::test::compositeByHand(source, masks, results);
    }

    // The core's recolor of the session's regions, each with `solver` when not
    // empty, composited by hand; `firstStats` gets the first region's statistics.
    uot::Image coreRegions(const StudioSession& session, const std::string& solver = {},
                           uot::PipelineStats* firstStats = nullptr)
    {
        const uot::Image& source = *session.source().image;
        std::vector<uot::Image> parts;
        std::vector<const uot::Mask*> masks;
        for (const StudioRegion& region : session.regions()) {
            uot::RecolorSettings settings = recolorSettingsFor(region.parameters);
            if (!solver.empty()) settings.transport.solver = solver;
            parts.push_back(unblendedPart(source, *region.mask, *region.reference.image, settings,
                                          parts.empty() ? firstStats : nullptr));
            masks.push_back(region.mask.get());
        }
        return compositeParts(source, masks, parts);
    }

    // Two regions with their own references and strengths (0.5 for the second).
    bool addTwoRegions(StudioSession& session, const StudioParameters& p)
    {
        QSignalSpy regionsChanged(&session, &StudioSession::regionsChanged);
        session.maskFromLuminance(0.0, 0.45, 0.1);
        session.addRegion(m_referenceB);
        if (!regionsChanged.wait(20000)) return false;
        StudioParameters half = p;
        half.strength = 0.5;
        session.setParameters(half);
        session.maskFromLuminance(0.45, 1.0, 0.1);
        session.addRegion(m_reference);
        if (!regionsChanged.wait(20000)) return false;
        session.setParameters(p);
        return session.regions().size() == 2;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_folder.isValid());
        useIsolatedSettings(m_folder.filePath("settings"), "test_studio_regions");
        m_source = writeGradient(m_folder.filePath("source.png"), 64, 48, 0);
        m_reference = writeGradient(m_folder.filePath("ref.png"), 40, 40, 2);
        m_referenceB = writeGradient(m_folder.filePath("ref_b.png"), 40, 40, 3);
        // The two references side by side in one image.
        const QImage a(m_reference), b(m_referenceB);
        QImage both(80, 40, QImage::Format_RGB32);
        for (int y = 0; y < 40; ++y)
            for (int x = 0; x < 80; ++x) both.setPixel(x, y, x < 40 ? a.pixel(x, y) : b.pixel(x - 40, y));
        m_sideBySide = m_folder.filePath("both.png");
        QVERIFY(both.save(m_sideBySide));
        // Six pixels of known luma: grays 0, 40, 128, 170, 255 and pure red.
        QImage tiny(6, 1, QImage::Format_RGB32);
        const QRgb colours[6] = {qRgb(0, 0, 0), qRgb(40, 40, 40), qRgb(128, 128, 128), qRgb(170, 170, 170),
                                 qRgb(255, 255, 255), qRgb(255, 0, 0)};
        for (int x = 0; x < 6; ++x) tiny.setPixel(x, 0, colours[x]);
        m_tiny = m_folder.filePath("tiny.png");
        QVERIFY(tiny.save(m_tiny));
    }

    // A mask change makes the result out of date; auto-run renders it anew, and
    // the masked result is the core's masked recolor: black keeps the source.
    void maskEditInvalidatesAndRerenders()
    {
        StudioSession session;
        StudioParameters p = smallParameters();
        session.setParameters(p);
        QVERIFY(load(session, m_source, m_reference));
        QVERIFY(runToResult(session));
        QCOMPARE(session.validity(), ResultValidity::Current);

        QSignalSpy maskChanged(&session, &StudioSession::maskChanged);
        QSignalSpy validity(&session, &StudioSession::resultChanged);
        session.maskFromLuminance(0.0, 0.45, 0.0);
        QCOMPARE(maskChanged.count(), 1);
        QVERIFY(session.hasMask());
        QCOMPARE(session.validity(), ResultValidity::OutOfDate);
        QCOMPARE(session.staleInputs(), QStringList{QStringLiteral("the mask or regions")});

        // With auto-run on, the change renders again by itself.
        QSignalSpy newResult(&session, &StudioSession::newResult);
        p.autoRun = true;
        session.setParameters(p);
        QVERIFY(QTest::qWaitFor([&] { return newResult.count() >= 1 && !session.isBusy(); }, 60000));
        QCOMPARE(session.validity(), ResultValidity::Current);
        const uot::Image& result = *session.result().pixels;
        const uot::Image& source = *session.source().image;
        QCOMPARE(largestDifference(result, coreMasked(session, p)), 0);
        int kept = 0, changed = 0;
        for (std::size_t i = 0; i < source.pixelCount(); ++i) {
            const bool same = std::equal(&source.data[3 * i], &source.data[3 * i] + 3, &result.data[3 * i]);
            if (session.mask()->values[i] == 0.0f) {
                QVERIFY(same);
                ++kept;
            } else if (!same) {
                ++changed;
            }
        }
        QVERIFY(kept > 0);
        QVERIFY(changed > 0);

        // A strength change re-maps with the kept plan (the mask's palette stays).
        QSignalSpy remapped(&session, &StudioSession::remapped);
        QSignalSpy solved(&session, &StudioSession::solved);
        newResult.clear();
        p.strength = 0.5;
        session.setParameters(p);
        QVERIFY(QTest::qWaitFor([&] { return newResult.count() >= 1 && !session.isBusy(); }, 60000));
        QCOMPARE(remapped.count(), 1);
        QCOMPARE(solved.count(), 0);
        QCOMPARE(largestDifference(*session.result().pixels, coreMasked(session, p)), 0);

        // Clearing the mask gives the unmasked recolor again.
        session.clearMask();
        QVERIFY(!session.hasMask());
        QVERIFY(QTest::qWaitFor([&] { return session.validity() == ResultValidity::Current && !session.isBusy(); }, 60000));
        uot::RecolorPipeline plain(recolorSettingsFor(p));
        plain.setSource(source);
        plain.setReference(*session.reference().image);
        QCOMPARE(largestDifference(*session.result().pixels, plain.run()), 0);
    }

    // A brush stroke is one undo step; undo and redo put the mask back.
    // Worked by hand: a hard brush of size 10 at (20, 15) covers the pixels whose
    // centres are less than 5 from it; a soft one (hardness 0, opacity 0.5) at
    // the centre of pixel (10, 10) gives 0.5 there and, 3 pixels away (d = 0.6),
    // 0.5 (1 - 0.36 (3 - 1.2)) = 0.176.
    void brushStrokeUndoRedo()
    {
        StudioSession session;
        session.setParameters(smallParameters());
        QVERIFY(load(session, m_source, QString()));
        QSignalSpy maskChanged(&session, &StudioSession::maskChanged);
        MaskBrush hard;
        hard.size = 10;
        hard.hardness = 1.0;
        session.paintMask({QPointF(20, 15)}, hard);
        QCOMPARE(maskChanged.count(), 1);
        QCOMPARE(session.mask()->width, 64);
        QCOMPARE(maskAt(session, 19, 14), 1.0f);  // centre (19.5, 14.5): 0.71 away
        QCOMPARE(maskAt(session, 24, 15), 1.0f);  // 4.53 away
        QCOMPARE(maskAt(session, 25, 15), 0.0f);  // 5.52 away
        QCOMPARE(maskAt(session, 16, 11), 1.0f);  // (16.5, 11.5): sqrt(3.5^2 + 3.5^2) = 4.95 away
        QCOMPARE(maskAt(session, 16, 10), 0.0f);  // (16.5, 10.5): sqrt(3.5^2 + 4.5^2) = 5.70 away
        // Values only: no pointer to the mask is kept, so that undo restores it from the history's own copy.
        const std::vector<float> first = session.mask()->values;

        MaskBrush soft;
        soft.size = 10;
        soft.hardness = 0.0;
        soft.opacity = 0.5;
        session.paintMask({QPointF(10.5, 10.5)}, soft);
        QVERIFY(std::abs(maskAt(session, 10, 10) - 0.5f) < 1e-6f);
        QVERIFY(std::abs(maskAt(session, 13, 10) - 0.176f) < 1e-5f);
        QCOMPARE(maskAt(session, 20, 15), 1.0f);  // the first stroke is kept
        const std::vector<float> second = session.mask()->values;

        session.undoStack()->undo();
        QCOMPARE(session.mask()->values, first);
        QCOMPARE(maskAt(session, 10, 10), 0.0f);
        session.undoStack()->undo();
        QVERIFY(!session.hasMask());
        session.undoStack()->redo();
        session.undoStack()->redo();
        QCOMPARE(session.mask()->values, second);

        // The eraser takes the hard disc away again.
        MaskBrush eraser = hard;
        eraser.erase = true;
        session.paintMask({QPointF(20, 15)}, eraser);
        QCOMPARE(maskAt(session, 19, 14), 0.0f);
        QCOMPARE(maskChanged.count(), 7);  // two strokes, two undos, two redos, one erase
    }

    // Ranges on six pixels, worked by hand (luma of gray v is v / 255, of red 0.2126):
    // luminance [0.2, 0.6], softness 0.1: 0 -> 0 (0.2 below), 40 -> 1 - 0.0431 / 0.1 = 0.569,
    // 128 -> 1, 170 -> 1 - 0.0667 / 0.1 = 0.333, 255 -> 0, red -> 1.
    // Colour (40, 40, 40) picked, tolerance 0.1, softness 0.2: black is sqrt(3) 40 / 255 = 0.2717
    // away -> 1 - 0.1717 / 0.2 = 0.1415; itself -> 1; 128 gray 0.5977 away -> 0; red -> 0.
    void rangeMasksMatchHandWorkedValues()
    {
        StudioSession session;
        QVERIFY(load(session, m_tiny, QString()));
        session.maskFromLuminance(0.2, 0.6, 0.1);
        const double luminance[6] = {0.0, 1.0 - (0.2 - 40.0 / 255) / 0.1, 1.0, 1.0 - (170.0 / 255 - 0.6) / 0.1, 0.0, 1.0};
        for (int x = 0; x < 6; ++x) QVERIFY2(std::abs(maskAt(session, x, 0) - luminance[x]) < 1e-5, qPrintable(QString::number(x)));

        const QColor picked = session.sourceColorAt(QPointF(1.5, 0.5));
        QCOMPARE(picked.red(), 40);
        QCOMPARE(picked.green(), 40);
        QVERIFY(!session.sourceColorAt(QPointF(6.5, 0.5)).isValid());
        session.maskFromColor(picked, 0.1, 0.2);
        const double d0 = std::sqrt(3.0) * 40.0 / 255;
        const double colour[6] = {1.0 - (d0 - 0.1) / 0.2, 1.0, 0.0, 0.0, 0.0, 0.0};
        for (int x = 0; x < 6; ++x) QVERIFY2(std::abs(maskAt(session, x, 0) - colour[x]) < 1e-4, qPrintable(QString::number(x)));
        QCOMPARE(session.undoStack()->count(), 3);  // the load and the two masks
    }

    // Feathering pulls a mask painted past a color edge back to the edge: on a
    // source red left of column 32 and blue right of it, a mask white up to
    // column 36 (4 pixels into the blue), feathered by 8, has its largest step
    // between columns 31 and 32, and what spilled into the blue fades out.
    void featherFollowsColorEdges()
    {
        QImage halves(64, 16, QImage::Format_RGB32);
        for (int y = 0; y < 16; ++y)
            for (int x = 0; x < 64; ++x) halves.setPixel(x, y, x < 32 ? qRgb(200, 40, 30) : qRgb(30, 60, 200));
        const QString path = m_folder.filePath("halves.png");
        QVERIFY(halves.save(path));
        StudioSession session;
        QVERIFY(load(session, path, QString()));
        uot::Mask painted;
        painted.width = 64;
        painted.height = 16;
        painted.values.resize(64 * 16);
        for (int y = 0; y < 16; ++y)
            for (int x = 0; x < 64; ++x) painted.values[std::size_t(y) * 64 + x] = x < 36 ? 1.0f : 0.0f;
        session.setMask(painted, QStringLiteral("paint"));
        QSignalSpy maskChanged(&session, &StudioSession::maskChanged);
        session.featherMask(8);
        QVERIFY(maskChanged.wait(20000));
        int steepest = -1;
        float largest = 0;
        for (int x = 1; x < 64; ++x) {
            const float step = maskAt(session, x - 1, 8) - maskAt(session, x, 8);
            if (step > largest) largest = step, steepest = x;
        }
        QCOMPARE(steepest, 32);
        QCOMPARE(maskAt(session, 10, 8), 1.0f);  // far inside: unchanged
        QVERIFY(maskAt(session, 33, 8) < 0.5f);   // the spill into the blue fades
        QCOMPARE(maskAt(session, 60, 8), 0.0f);
        session.undoStack()->undo();
        QCOMPARE(maskAt(session, 35, 8), 1.0f);  // the painted mask again
    }

    // A LUT has no mask: exporting one with a mask set fails with the reason; once
    // the mask is cleared (without a run) the LUT preview is the whole image's
    // look, the unmasked recolor's through the LUT, not the masked palette's.
    void lutRefusedWithAMask()
    {
        StudioSession session;
        StudioParameters p = smallParameters();
        session.setParameters(p);
        QVERIFY(load(session, m_source, m_reference));
        session.maskFromLuminance(0.0, 0.45, 0.0);
        QVERIFY(runToResult(session));
        QSignalSpy failed(session.worker(), &SolveWorker::jobFailed);
        QSignalSpy finished(session.worker(), &SolveWorker::jobFinished);
        LutRequest request;
        session.worker()->submit(QStringLiteral("LUT"), session.lutJob(request));
        // The worker's signals reach the spies on its own thread: the refusal may come
        // before wait() starts, and wait() counts only later ones.
        QVERIFY(failed.count() == 1 || failed.wait(20000));
        QVERIFY(failed.last().at(1).toString().contains("mask"));

        session.clearMask();
        session.worker()->submit(QStringLiteral("LUT"), session.lutJob(request));
        QVERIFY(finished.count() == 1 || finished.wait(60000));
        const auto lut = std::dynamic_pointer_cast<const LutOutput>(finished.last().at(1).value<std::shared_ptr<const JobOutput>>());
        QVERIFY(lut && lut->pixels);
        // Fitted to the unmasked recolor: close to it (the masked palette's LUT is far from it).
        uot::RecolorPipeline plain(recolorSettingsFor(p));
        plain.setSource(*session.source().image);
        plain.setReference(*session.reference().image);
        const int difference = largestDifference(*lut->pixels, plain.run());
        qInfo("LUT against the unmasked recolor: %d", difference);
        QVERIFY2(difference >= 0 && difference <= 12, qPrintable(QString::number(difference)));
    }

    // The mask goes to a file and back (8-bit gray: within half a step).
    void maskFileRoundTrip()
    {
        StudioSession session;
        QVERIFY(load(session, m_tiny, QString()));
        session.maskFromLuminance(0.2, 0.6, 0.1);
        const std::vector<float> before = session.mask()->values;
        const QString path = m_folder.filePath("mask.png");
        QVERIFY(session.saveMask(path));
        session.clearMask();
        QVERIFY(session.loadMask(path));
        for (std::size_t i = 0; i < before.size(); ++i) QVERIFY(std::abs(session.mask()->values[i] - before[i]) <= 0.5f / 255);
    }

    // The current mask becomes a region with its own reference; the regions are
    // listed, solved and composited; removing one is an undo step.
    void regionsListChanges()
    {
        StudioSession session;
        StudioParameters p = smallParameters();
        session.setParameters(p);
        QVERIFY(load(session, m_source, m_reference));
        QSignalSpy regionsChanged(&session, &StudioSession::regionsChanged);
        session.maskFromLuminance(0.0, 0.45, 0.0);
        const std::shared_ptr<const uot::Mask> dark = session.mask();
        session.addRegion(m_referenceB);
        QVERIFY(regionsChanged.wait(20000));
        QCOMPARE(session.regions().size(), 1);
        QCOMPARE(session.regions()[0].reference.path, m_referenceB);
        QCOMPARE(session.regions()[0].mask, dark);
        QVERIFY(!session.hasMask());  // the mask is the region's now
        // The second region is made with other settings: it keeps them.
        StudioParameters half = p;
        half.strength = 0.5;
        session.setParameters(half);
        session.maskFromLuminance(0.45, 1.0, 0.0);
        session.addRegion(m_reference);
        QVERIFY(regionsChanged.wait(20000));
        QCOMPARE(session.regions().size(), 2);

        QVERIFY(runToResult(session));
        QCOMPARE(session.validity(), ResultValidity::Current);
        // The core's two masked recolors, each from its own reference, composited by hand.
        const uot::Image& source = *session.source().image;
        std::vector<uot::Image> parts;
        std::vector<const uot::Mask*> masks;
        for (const StudioRegion& region : session.regions()) {
            parts.push_back(unblendedPart(source, *region.mask, *region.reference.image,
                                          recolorSettingsFor(&region == &session.regions()[0] ? p : half)));
            masks.push_back(region.mask.get());
        }
        const uot::Image expected = compositeParts(source, masks, parts);
        QCOMPARE(largestDifference(*session.result().pixels, expected), 0);

        // The panel's settings are not the regions': changing them leaves the result current;
        // giving them to a region makes it out of date.
        session.setParameters(p);
        QCOMPARE(session.validity(), ResultValidity::Current);
        QCOMPARE(session.regions()[1].parameters.strength, 0.5);
        session.setRegionParameters(1, p);
        QCOMPARE(session.regions()[1].parameters.strength, 1.0);
        QCOMPARE(session.validity(), ResultValidity::OutOfDate);
        session.undoStack()->undo();
        QCOMPARE(session.validity(), ResultValidity::Current);

        session.removeRegion(0);
        QCOMPARE(session.regions().size(), 1);
        QCOMPARE(session.validity(), ResultValidity::OutOfDate);
        session.undoStack()->undo();
        QCOMPARE(session.regions().size(), 2);
        QCOMPARE(session.validity(), ResultValidity::Current);  // the same regions as the result's
    }

    // A region run fills the statistics panel: the timings of each region and
    // of the whole run, and the first region's solve (its palette's size).
    void regionRunShowsItsTimings()
    {
        MainWindow window(testOptions());
        StudioSession& session = *window.session();
        const StudioParameters p = smallParameters();
        window.setParameters(p);
        QVERIFY(load(session, m_source, m_reference));
        QVERIFY(addTwoRegions(session, p));
        QSignalSpy solved(&session, &StudioSession::solved);
        QVERIFY(runToResult(session));
        QCOMPARE(solved.count(), 1);
        const QString timings = window.statisticsPanel()->text("timings");
        QVERIFY2(timings.contains("region 1: palette") && timings.contains("region 2: palette") &&
                     timings.contains("solve") && timings.contains("region(s) in"),
                 qPrintable(timings));
        uot::PipelineStats first;
        coreRegions(session, {}, &first);
        const QString run = window.statisticsPanel()->text("run");
        QVERIFY2(run.contains(QStringLiteral("region 1 of 2, %1 x %2").arg(first.sourcePaletteSize).arg(first.referencePaletteSize)),
                 qPrintable(run));
        QVERIFY2(window.statisticsPanel()->text("status") != "-", qPrintable(window.statisticsPanel()->text("status")));
    }

    // The comparison dock runs the same look on both sides: with a mask, each
    // side's image is the core's masked recolor with that side's variant; with
    // regions, the core's regions composited, each region solved with it.
    void comparisonHonoursMaskAndRegions()
    {
        MainWindow window(testOptions());
        StudioSession& session = *window.session();
        const StudioParameters p = smallParameters();
        window.setParameters(p);
        QVERIFY(load(session, m_source, m_reference));
        ComparisonView* view = window.comparisonView();
        view->setVariants("fused", "log");
        view->setConcurrent(false);
        const auto compare = [&] {
            QSignalSpy done(view, &ComparisonView::comparisonFinished);
            window.compare();
            return done.wait(60000) && view->lastOutput() && view->lastOutput()->runs.size() == 2;
        };

        session.maskFromLuminance(0.0, 0.5, 0.1);
        QVERIFY(compare());
        const uot::Image& source = *session.source().image;
        for (int side = 0; side < 2; ++side) {
            uot::RecolorSettings settings = recolorSettingsFor(p);
            settings.transport.solver = side == 0 ? "fused" : "log";
            uot::RecolorPipeline pipeline(settings);
            pipeline.setSource(source);
            pipeline.setReference(*session.reference().image);
            const QImage expected = toQImage(uot::recolorMasked(pipeline, *session.mask()));
            const QImage& got = view->lastOutput()->runs[side].image;
            QVERIFY2(largestDifference(got, expected) == 0, qPrintable(QString::number(largestDifference(got, expected))));
        }
        // Under black the source is kept on both sides.
        const QImage plainSource = toQImage(source);
        const uot::Mask& mask = *session.mask();
        int black = 0;
        for (int y = 0; y < mask.height; ++y)
            for (int x = 0; x < mask.width; ++x)
                if (mask.values[std::size_t(y) * mask.width + x] == 0.0f) {
                    ++black;
                    for (int side = 0; side < 2; ++side)
                        QCOMPARE(view->lastOutput()->runs[side].image.pixel(x, y), plainSource.pixel(x, y));
                }
        QVERIFY(black > 100);

        QVERIFY(addTwoRegions(session, p));
        QVERIFY(compare());
        for (int side = 0; side < 2; ++side) {
            const QImage expected = toQImage(coreRegions(session, side == 0 ? "fused" : "log"));
            const QImage& got = view->lastOutput()->runs[side].image;
            QVERIFY2(largestDifference(got, expected) == 0, qPrintable(QString::number(largestDifference(got, expected))));
        }
    }

    // The mask and the regions are kept between sessions: a new session with the
    // same source gets them back (the masks within the 8-bit file's rounding, the
    // references, names and settings as they were); a missing file is said once
    // and the rest restored; a session with another source gets nothing.
    void maskAndRegionsKeptBetweenSessions()
    {
        QSettings settings(m_folder.filePath("kept.ini"), QSettings::IniFormat);
        const QString folder = m_folder.filePath("kept");
        const StudioParameters p = smallParameters();
        std::shared_ptr<const uot::Mask> savedMask;
        QVector<StudioRegion> savedRegions;
        {
            StudioSession session;
            session.setParameters(p);
            QVERIFY(load(session, m_source, m_reference));
            QVERIFY(addTwoRegions(session, p));
            session.maskFromColor(QColor(200, 60, 60), 0.3, 0.1);  // a current mask besides the regions
            QVERIFY(session.hasMask());
            savedMask = session.mask();
            savedRegions = session.regions();
            session.saveRegionalSession(settings, folder);
        }
        const auto sameMask = [](const uot::Mask& a, const uot::Mask& b) {
            if (a.width != b.width || a.height != b.height) return false;
            for (std::size_t k = 0; k < a.values.size(); ++k)
                if (std::abs(a.values[k] - b.values[k]) > 0.5f / 255 + 1e-6f) return false;
            return true;
        };
        {
            StudioSession session;
            session.setParameters(p);
            QVERIFY(load(session, m_source, m_reference));
            QSignalSpy maskChanged(&session, &StudioSession::maskChanged), regionsChanged(&session, &StudioSession::regionsChanged),
                failed(&session, &StudioSession::failed);
            session.restoreRegionalSession(settings);
            QCOMPARE(maskChanged.count(), 1);
            QVERIFY(sameMask(*session.mask(), *savedMask));
            QVERIFY(QTest::qWaitFor([&] { return session.regions().size() == 2; }, 20000));
            QCOMPARE(regionsChanged.count(), 2);
            QCOMPARE(failed.count(), 0);
            for (int k = 0; k < 2; ++k) {
                const StudioRegion& got = session.regions()[k];
                QCOMPARE(got.name, savedRegions[k].name);
                QCOMPARE(got.reference.path, savedRegions[k].reference.path);
                QVERIFY(got.parameters.sameLookAs(savedRegions[k].parameters));
                QVERIFY(sameMask(*got.mask, *savedRegions[k].mask));
            }
            QCOMPARE(session.regions()[1].parameters.strength, 0.5);
        }
        {
            // Restored while the source is still loading: once it has.
            StudioSession session;
            session.setParameters(p);
            QSignalSpy maskChanged(&session, &StudioSession::maskChanged);
            session.openSource(m_source);
            session.restoreRegionalSession(settings);
            QVERIFY(QTest::qWaitFor([&] { return session.regions().size() == 2; }, 20000));
            QCOMPARE(maskChanged.count(), 1);
        }
        {
            // Another source: not restored.
            StudioSession session;
            session.setParameters(p);
            QVERIFY(load(session, m_tiny, m_reference));
            QSignalSpy maskChanged(&session, &StudioSession::maskChanged), failed(&session, &StudioSession::failed);
            session.restoreRegionalSession(settings);
            QTest::qWait(300);
            QCOMPARE(maskChanged.count(), 0);
            QCOMPARE(failed.count(), 0);
            QVERIFY(session.regions().isEmpty());
        }
        {
            // A region's mask file gone: said once, naming it; the mask and the other region restored.
            QVERIFY(QFile::remove(folder + "/region1.png"));
            StudioSession session;
            session.setParameters(p);
            QVERIFY(load(session, m_source, m_reference));
            QSignalSpy failed(&session, &StudioSession::failed);
            session.restoreRegionalSession(settings);
            QCOMPARE(failed.count(), 1);
            QVERIFY2(failed[0][1].toString().contains("region1.png"), qPrintable(failed[0][1].toString()));
            QVERIFY(session.hasMask());
            QVERIFY(QTest::qWaitFor([&] { return session.regions().size() == 1; }, 20000));
            QCOMPARE(session.regions()[0].name, savedRegions[1].name);
            QTest::qWait(200);
            QCOMPARE(session.regions().size(), 1);
        }
    }

    // The window keeps them on closing and a plain start (the last session's
    // images) restores them once the source has loaded.
    void windowKeepsRegionsAcrossStarts()
    {
        {
            MainWindow window(testOptions());
            const StudioParameters p = smallParameters();
            window.setParameters(p);
            QVERIFY(load(*window.session(), m_source, m_reference));
            QVERIFY(addTwoRegions(*window.session(), p));
            window.close();  // saves the settings
        }
        MainWindowOptions options = testOptions();
        options.loadSamplesIfEmpty = true;  // the last session's images
        MainWindow window(options);
        QVERIFY(QTest::qWaitFor([&] { return window.session()->regions().size() == 2; }, 20000));
        QCOMPARE(window.session()->source().path, m_source);
        QCOMPARE(window.session()->regions()[1].reference.path, m_reference);
        QCOMPARE(window.session()->regions()[1].parameters.strength, 0.5);
        QSettings().remove("session");  // the other tests start without them
    }

    // Two references with equal weights pool into the palette of the two side by side.
    void severalReferencesPool()
    {
        StudioParameters p = smallParameters();
        StudioSession pooled;
        pooled.setParameters(p);
        QVERIFY(load(pooled, m_source, m_reference));
        QSignalSpy references(&pooled, &StudioSession::referencesChanged);
        pooled.addReference(m_referenceB);
        QVERIFY(references.wait(20000));
        QCOMPARE(pooled.extraReferences().size(), 1);
        QCOMPARE(pooled.extraReferences()[0].weight, 1.0);
        QVERIFY(runToResult(pooled));

        StudioSession joined;
        joined.setParameters(p);
        QVERIFY(load(joined, m_source, m_sideBySide));
        QVERIFY(runToResult(joined));
        QCOMPARE(largestDifference(*pooled.result().pixels, *joined.result().pixels), 0);

        StudioSession single;
        single.setParameters(p);
        QVERIFY(load(single, m_source, m_reference));
        QVERIFY(runToResult(single));
        QVERIFY(largestDifference(*pooled.result().pixels, *single.result().pixels) > 0);

        // A weight is an undo step that makes the result out of date.
        pooled.setReferenceWeight(1, 3.0);
        QCOMPARE(pooled.extraReferences()[0].weight, 3.0);
        QCOMPARE(pooled.validity(), ResultValidity::OutOfDate);
        pooled.removeReference(1);
        QVERIFY(pooled.extraReferences().isEmpty());
    }

    // After a render the scopes of source, reference and result are ready, with the plots' sizes.
    void scopesReadyAfterRender()
    {
        StudioSession session;
        session.setParameters(smallParameters());
        QVERIFY(load(session, m_source, m_reference));
        QSignalSpy ready(&session, &StudioSession::scopesReady);
        QVERIFY(runToResult(session));
        QVERIFY(ready.count() == 1 || ready.wait(20000));
        QVERIFY(session.hasScopes());
        const std::pair<ScopeImage, std::size_t> images[3] = {
            {ScopeImage::Source, 64 * 48}, {ScopeImage::Reference, 40 * 40}, {ScopeImage::Result, 64 * 48}};
        for (const auto& [image, pixels] : images) {
            const uot::Scopes& s = session.scopes(image);
            QCOMPARE(s.samples, pixels);  // small images: every pixel is read
            QCOMPARE(s.waveform.width, 256);
            QCOMPARE(s.waveform.height, 256);
            for (const uot::ScopePlot& plot : s.parade) QCOMPARE(plot.counts.size(), std::size_t(256 * 256));
            QCOMPARE(s.vectorscope.width, 256);
            double total = 0;
            for (float c : s.waveform.counts) total += c;
            QCOMPARE(total, double(pixels));
            QCOMPARE(session.scopeImage(image, ScopeKind::Vectorscope).size(), QSize(256, 256));
        }
        qInfo("scopes: %.1f ms from the new result to its scopes (64x48)", session.scopesLatencyMs());
    }

    // Zooming or panning the source pane does the same to the result pane while linked.
    void linkedZoom()
    {
        MainWindow window(testOptions());
        window.resize(1200, 800);
        window.show();
        QImage picture(200, 100, QImage::Format_RGB32);
        picture.fill(Qt::darkCyan);
        window.sourceView()->setImage(picture);
        window.resultView()->setImage(picture);
        QVERIFY(window.zoomLinked());  // on by default
        window.sourceView()->zoomBy(2.0);
        const ImageView::Transform source = window.sourceView()->transform();
        QVERIFY(!source.fit);
        QCOMPARE(window.resultView()->transform().fit, false);
        QCOMPARE(window.resultView()->transform().scale, source.scale);
        window.resultView()->zoomActualSize();
        QCOMPARE(window.sourceView()->transform().scale, 1.0);
        QCOMPARE(window.sourceView()->zoom(), 1.0);

        window.setZoomLinked(false);
        window.sourceView()->zoomBy(2.0);
        QCOMPARE(window.sourceView()->zoom(), 2.0);
        QCOMPARE(window.resultView()->zoom(), 1.0);
    }
};

QTEST_MAIN(TestStudioRegions)
#include "test_studio_regions.moc"
