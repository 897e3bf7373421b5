// A clip's share weight in `uot-mpi batch` (app/mpi/clip_work.h): frames x
// pixels from the header, against hand counts (fruits.jpg is 512 x 480 by
// ffprobe; a sequence of three copies of it weighs 3 x 512 x 480).
#include <QtTest/QtTest>

#include <filesystem>
#include <fstream>
#include <string>

#include "app/mpi/clip_work.h"
#include "tests/support/qt_checks.h"

using uot::mpi::headerClipWork;

class TestClipWork : public QObject {
    Q_OBJECT

private slots:
    void sequenceWeighsItsFramesTimesPixels()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::filesystem::path folder = dir.path().toStdString();
        for (int k = 0; k < 3; ++k)
            std::filesystem::copy_file(std::string(UOT_SAMPLES_DIR) + "/fruits.jpg",
                                       folder / ("f_00" + std::to_string(k) + ".jpg"));
        QCOMPARE(headerClipWork((folder / "f_%03d.jpg").string()), std::uint64_t{3} * 512 * 480);
    }

    void unreadableClipWeighsNothing()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string video = dir.path().toStdString() + "/cut.mp4";
        std::ofstream(video) << "not a video";
        QCOMPARE(headerClipWork(video), std::uint64_t{0});
        QCOMPARE(headerClipWork(dir.path().toStdString() + "/missing.mp4"), std::uint64_t{0});
    }
};

QTEST_GUILESS_MAIN(TestClipWork)
#include "test_clip_work.moc"
