// `uot batch` over images and clips reads its reference once: the clips take
// the palette the image batch computed (BatchSummary::referencePalette,
// runClipBatch) instead of decoding the reference again. The reference file is
// removed once that palette exists, so a second read would fail the clip; the
// clip must come out recolored toward that palette (a red one: the output's
// mean red well above its green and blue, where the source is balanced).

#include <QTemporaryDir>
#include <QTest>

#include <filesystem>

#include "app/cli/batch_options.h"
#include "app/cli/video_command.h"
#include "core/imageio/image_io.h"
#include "core/video/clip_reader.h"
#include "tests/support/qt_checks.h"
#include "tests/video/clip_test_frames.h"

using namespace uot;

class ClipBatchTest : public QObject {
    Q_OBJECT

private slots:
    void clipsUseTheImageBatchsReferencePalette()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string clip = test::writeTestClip(dir, 12, 64, 48);
        Image red = Image::allocate(32, 32, 3, 8);
        for (std::size_t p = 0; p < red.pixelCount(); ++p) {
            red.samples8()[3 * p] = std::uint8_t(150 + p % 100);
            red.samples8()[3 * p + 1] = std::uint8_t(p % 40);
            red.samples8()[3 * p + 2] = std::uint8_t(p % 30);
        }
        const std::string reference = dir.filePath("red.png").toStdString();
        writeImage(reference, red);
        const std::string outDir = dir.filePath("out").toStdString();
        std::filesystem::create_directories(outDir);

        cli::ArgParser parser("uot batch REFERENCE INPUT... --out-dir DIR", "");
        cli::addBatchOptions(parser, cli::BatchInputKinds::ImagesAndClips);
        parser.parse({reference, clip, "--out-dir", outDir, "--quiet", "--palette-size", "64"});
        const cli::BatchCliSettings batch = cli::readBatchOptions(parser);
        BatchSummary summary;
        summary.referencePalette = computePalette(readImage(reference), batch.settings.recolor);
        std::filesystem::remove(reference);  // read once, by the image batch

        cli::runClipBatch({clip}, batch, parser, summary);
        QCOMPARE(summary.items.size(), std::size_t(1));
        QVERIFY2(summary.done == 1, summary.items.front().message.c_str());

        const auto reader = ClipReader::open(outDir + "/clip_recolored.mp4");
        double mean[3] = {};
        std::size_t samples = 0;
        ClipItem item;
        while (reader->next(item)) {
            if (!item.frame) continue;
            const Image& f = item.frame->image;
            for (std::size_t p = 0; p < f.pixelCount(); ++p)
                for (int c = 0; c < 3; ++c) mean[c] += f.samples8()[3 * p + std::size_t(c)];
            samples += f.pixelCount();
        }
        QVERIFY(samples > 0);
        for (double& m : mean) m /= double(samples);
        UOT_QVERIFY_MSG(mean[0] > mean[1] + 50 && mean[0] > mean[2] + 50,
                        "mean RGB of the output " << mean[0] << ", " << mean[1] << ", " << mean[2]);
    }
};

QTEST_GUILESS_MAIN(ClipBatchTest)
#include "test_clip_batch.moc"
