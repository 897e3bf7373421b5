// The scriptable start of `uot-studio`, run as a separate process on the
// offscreen platform: --source --reference --run --screenshot --size --quit
// writes a non-empty screenshot of the requested size and exits with 0; a
// missing file exits non-zero with a message; a screenshot that cannot be
// written is refused before the run.

#include <QDir>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QTest>

#include <set>

#include "tests/support/relocatable_path.h"

namespace {
const QString kStudio = uot::test::relocatablePath("UOT_STUDIO_EXECUTABLE", QStringLiteral(UOT_STUDIO_EXECUTABLE));
const QString kSamples = uot::test::relocatablePath("UOT_SAMPLES_DIR", QStringLiteral(UOT_SAMPLES_DIR));
}  // namespace

class TestStudioScript : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_home;

    QProcessEnvironment environment() const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("QT_QPA_PLATFORM", "offscreen");
        env.insert("XDG_CONFIG_HOME", m_home.path());  // settings of this test only
        return env;
    }

private slots:
    void initTestCase()
    {
        // Saved parameters of a small problem, read by the studio at start-up as
        // a returning user's would be (keeps this test to a few seconds).
        QVERIFY(QDir().mkpath(m_home.filePath("UOT")));
        QFile settings(m_home.filePath("UOT/UOT Color Studio.conf"));
        QVERIFY(settings.open(QIODevice::WriteOnly));
        settings.write("[parameters]\npaletteSize=128\neps=0.01\nprecision=fp64\nsamplesShown=true\n");
    }

    void screenshotOfTheRequestedSize()
    {
        QTemporaryDir dir;
        const QString shot = dir.filePath("studio.png");
        QProcess studio;
        studio.setProcessEnvironment(environment());
        studio.start(kStudio, {"--source", kSamples + "/home.jpg", "--reference", kSamples + "/starry_night.jpg",
                               "--run", "--screenshot", shot, "--size", "1280x800", "--quit"});
        QVERIFY(studio.waitForFinished(120000));
        QVERIFY2(studio.exitCode() == 0, studio.readAllStandardError().constData());
        QCOMPARE(studio.exitStatus(), QProcess::NormalExit);
        const QImage image(shot);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), QSize(1280, 800));
        // Not a blank window: the panes and charts give many distinct colors.
        std::set<QRgb> colors;
        for (int y = 0; y < image.height(); y += 7)
            for (int x = 0; x < image.width(); x += 7) colors.insert(image.pixel(x, y));
        QVERIFY2(colors.size() > 500, qPrintable(QString::number(colors.size())));
    }

    // Issue 25, D18: --size had no upper bound (100000x100000 crashed in Qt's
    // painting, 40000x40000 took 12 GiB). Refused with exit 2 before any window.
    void sizeBeyondTheBoundIsRefused_data()
    {
        QTest::addColumn<QString>("size");
        QTest::newRow("16385 wide") << "16385x240";
        QTest::newRow("16385 high") << "320x16385";
        QTest::newRow("100000x100000") << "100000x100000";
        QTest::newRow("overflow") << "99999999999x1000";
        QTest::newRow("not a number") << "abcx1000";
        QTest::newRow("three parts") << "800x600x3";
    }

    void sizeBeyondTheBoundIsRefused()
    {
        QFETCH(QString, size);
        QProcess studio;
        studio.setProcessEnvironment(environment());
        studio.start(kStudio, {"--size", size, "--quit"});
        QVERIFY(studio.waitForFinished(60000));
        QCOMPARE(studio.exitStatus(), QProcess::NormalExit);
        const QByteArray error = studio.readAllStandardError();
        QVERIFY2(studio.exitCode() == 2, error.constData());
        QVERIFY2(error.contains("--size") && error.contains("16384"), error.constData());
    }

    void sizeAtTheBoundIsAccepted()
    {
        QProcess studio;
        studio.setProcessEnvironment(environment());
        studio.start(kStudio, {"--size", "16384x240", "--quit"});
        QVERIFY(studio.waitForFinished(60000));
        QVERIFY2(studio.exitCode() == 0, studio.readAllStandardError().constData());
    }

    // Issue 25, D26: the studio's limit message said "raise it with --max-pixels",
    // an option the studio did not have.
    void maxPixelsLimitsWhatOpensAndIsChecked()
    {
        QProcess studio;
        studio.setProcessEnvironment(environment());
        studio.start(kStudio, {"--source", kSamples + "/home.jpg", "--reference", kSamples + "/starry_night.jpg",
                               "--max-pixels", "1000", "--run", "--quit"});
        QVERIFY(studio.waitForFinished(60000));
        QVERIFY(studio.exitCode() != 0);
        const QByteArray error = studio.readAllStandardError();
        QVERIFY2(error.contains("above the limit of 1000") && error.contains("--max-pixels"), error.constData());
        for (const QString& bad : {QString("abc"), QString("-5")}) {
            studio.start(kStudio, {"--max-pixels", bad, "--quit"});
            QVERIFY(studio.waitForFinished(60000));
            QCOMPARE(studio.exitCode(), 2);
            const QByteArray message = studio.readAllStandardError();
            QVERIFY(message.contains("--max-pixels"));
            // The parameter table's message, the one `uot recolor --max-pixels` gives.
            QVERIFY2(message.contains("max pixels takes a finite number >= 0"), message.constData());
        }
        studio.start(kStudio, {"--device", "gpu:x", "--quit"});
        QVERIFY(studio.waitForFinished(60000));
        QCOMPARE(studio.exitCode(), 2);
        const QByteArray message = studio.readAllStandardError();
        QVERIFY2(message.contains("device takes cpu or gpu:N"), message.constData());
    }

    // Issue 25, D21: a symbolic link loop was reported as "does not exist".
    void symbolicLinkLoopIsNamedAsSuch()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString a = dir.filePath("loop_a.jpg"), b = dir.filePath("loop_b.jpg");
        QVERIFY(QFile::link(b, a) && QFile::link(a, b));
        QProcess studio;
        studio.setProcessEnvironment(environment());
        studio.start(kStudio, {"--source", a, "--quit"});
        QVERIFY(studio.waitForFinished(60000));
        QCOMPARE(studio.exitCode(), 2);
        const QByteArray error = studio.readAllStandardError();
        QVERIFY2(error.contains("symbolic link loop"), error.constData());
    }

    void unwritableScreenshotIsRefusedBeforeTheRun_data()
    {
        QTest::addColumn<QString>("name");      // in a fresh folder; {source}: the source's copy there
        QTest::addColumn<QByteArray>("reason");  // a part of the message
        QTest::newRow("missing folder") << "missing/shot.png" << QByteArray("does not exist");
        QTest::newRow("unknown image type") << "shot.xyz" << QByteArray("'.xyz' is not an image type");
        QTest::newRow("no extension") << "shot" << QByteArray("no extension");
        QTest::newRow("the source itself") << "{source}" << QByteArray("refusing to overwrite");
    }

    // Refused at once (exit 2, the reason named), not after the run with no reason;
    // nothing written, the source unchanged.
    void unwritableScreenshotIsRefusedBeforeTheRun()
    {
        QFETCH(QString, name);
        QFETCH(QByteArray, reason);
        QTemporaryDir dir;
        const QString source = dir.filePath("home.jpg");
        QVERIFY(QFile::copy(kSamples + "/home.jpg", source));
        QFile original(source);
        QVERIFY(original.open(QIODevice::ReadOnly));
        const QByteArray before = original.readAll();
        original.close();
        const QString shot = name == "{source}" ? source : dir.filePath(name);
        QProcess studio;
        studio.setProcessEnvironment(environment());
        studio.start(kStudio, {"--source", source, "--reference", kSamples + "/starry_night.jpg", "--run",
                               "--screenshot", shot, "--size", "640x480", "--quit"});
        QVERIFY(studio.waitForFinished(60000));
        const QByteArray error = studio.readAllStandardError();
        QVERIFY2(studio.exitCode() == 2, error.constData());
        QVERIFY2(error.contains("--screenshot") && error.contains(reason), error.constData());
        QVERIFY2(!studio.readAllStandardOutput().contains("statistics"), "the run started before the refusal");
        QVERIFY(original.open(QIODevice::ReadOnly));
        QCOMPARE(original.readAll(), before);
        QCOMPARE(QDir(dir.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden),
                 QStringList{"home.jpg"});
    }

    void aRunWithOneImageIsRefused_data()
    {
        QTest::addColumn<QString>("given");
        QTest::addColumn<QString>("action");
        QTest::newRow("source, run") << "--source" << "--run";
        QTest::newRow("reference, run") << "--reference" << "--run";
        QTest::newRow("source, compare") << "--source" << "--compare";
    }

    // It waited for the missing image for ever; now it says what to give.
    void aRunWithOneImageIsRefused()
    {
        QFETCH(QString, given);
        QFETCH(QString, action);
        QProcess studio;
        studio.setProcessEnvironment(environment());
        studio.start(kStudio, {given, kSamples + "/home.jpg", action, "--quit"});
        QVERIFY(studio.waitForFinished(60000));
        const QByteArray error = studio.readAllStandardError();
        QVERIFY2(studio.exitCode() == 2, error.constData());
        QVERIFY2(error.contains("needs both --source and --reference"), error.constData());
    }

    void missingFileFailsWithAMessage()
    {
        QProcess studio;
        studio.setProcessEnvironment(environment());
        studio.start(kStudio, {"--source", "/nonexistent/photo.jpg", "--run", "--quit"});
        QVERIFY(studio.waitForFinished(60000));
        QVERIFY(studio.exitCode() != 0);
        QVERIFY(studio.readAllStandardError().contains("photo.jpg"));
    }
};

QTEST_GUILESS_MAIN(TestStudioScript)
#include "test_studio_script.moc"
