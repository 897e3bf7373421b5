// File > Export LUT and View > LUT Preview in the main window: the preview is
// the source through the exported lattice and matches the studio's own result
// without smoothing (PSNR >= 40 dB) and ffmpeg's lut3d on the written file
// (when ffmpeg is installed); turning it off shows the result again; the export
// never replaces an input; the dialog offers 17/33/65 and says that the LUT is
// fitted to the rendered result, with its PSNR.

#include <QAction>
#include <QComboBox>
#include <QLabel>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "core/color/cube_lut.h"
#include "tests/ui/studio_test_options.h"
#include "tests/support/relocatable_path.h"
#include "ui/image_view.h"
#include "ui/lut_actions.h"
#include "ui/main_window.h"

using namespace uot;
using namespace uot::ui;

namespace {

const QString kSamples = uot::test::relocatablePath("UOT_SAMPLES_DIR", QStringLiteral(UOT_SAMPLES_DIR));

StudioParameters quick()
{
    StudioParameters p;
    p.paletteSize = 512;
    p.maxIterations = 100;
    p.precision = uot::Precision::Fp32;
    p.smoothing = 0;  // the result is then the global map alone, what a LUT holds
    return p;
}

double psnr(const QImage& first, const QImage& second)
{
    const QImage a = first.convertToFormat(QImage::Format_RGB888), b = second.convertToFormat(QImage::Format_RGB888);
    if (a.size() != b.size()) return -1;
    double sum = 0;
    for (int y = 0; y < a.height(); ++y) {
        const uchar* p = a.constScanLine(y);
        const uchar* q = b.constScanLine(y);
        for (int x = 0; x < 3 * a.width(); ++x) sum += double(p[x] - q[x]) * double(p[x] - q[x]);
    }
    const double mse = sum / (3.0 * a.width() * a.height());
    return mse == 0 ? 99.0 : 10 * std::log10(255.0 * 255.0 / mse);
}

}  // namespace

class TestLutExport : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_source;  // a PNG, so that ffmpeg and the studio decode the same pixels

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QCoreApplication::setOrganizationName("UOT-test");
        QCoreApplication::setApplicationName("lut-test");
        QSettings::setDefaultFormat(QSettings::IniFormat);
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_dir.path());
        m_source = m_dir.filePath("home.png");
        const QImage home(kSamples + "/home.jpg");
        QVERIFY(!home.isNull());
        QVERIFY(home.scaled(256, 192).convertToFormat(QImage::Format_RGB888).save(m_source));
    }

    void previewIsTheExportedLutAndFollowsTheToggle()
    {
        MainWindow window(testOptions());
        window.openSource(m_source);
        window.openReference(kSamples + "/starry_night.jpg");
        QVERIFY(QTest::qWaitFor([&] { return window.hasSource() && window.hasReference() && !window.isLoading(); }, 20000));
        window.setParameters(quick());
        QSignalSpy ready(&window, &MainWindow::resultReady);
        window.run();
        QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, 90000);
        const QImage result = window.resultImage();

        LutActions* lut = window.lutActions();
        QVERIFY(lut);
        QSignalSpy previewed(lut, &LutActions::previewReady);
        lut->previewAction()->setChecked(true);
        QTRY_COMPARE_WITH_TIMEOUT(previewed.count(), 1, 90000);
        QVERIFY(lut->previewShown());
        QCOMPARE(window.resultView()->image(), lut->previewImage());
        const double vsResult = psnr(lut->previewImage(), result);
        qInfo("LUT preview (33^3) vs the studio's result without smoothing: PSNR %.2f dB", vsResult);
        QVERIFY2(vsResult >= 40.0, qPrintable(QString::number(vsResult)));
        QVERIFY(psnr(lut->previewImage(), QImage(m_source)) < 30.0);  // the look does change the image

        const QString cube = m_dir.filePath("look.cube");
        QSignalSpy exported(lut, &LutActions::exported);
        lut->exportTo(cube, 33);
        QTRY_COMPARE_WITH_TIMEOUT(exported.count(), 1, 90000);
        const CubeLut file = readCubeFile(cube.toStdString());
        QCOMPARE(file.size, 33);
        QCOMPARE(QString::fromStdString(file.title), QString("look"));

        const QString ffmpeg = QStandardPaths::findExecutable("ffmpeg");
        if (!ffmpeg.isEmpty()) {
            const QString out = m_dir.filePath("ffmpeg.png");
            QProcess p;
            p.setProcessChannelMode(QProcess::MergedChannels);
            p.start(ffmpeg, {"-v", "error", "-y", "-i", m_source, "-vf", "lut3d=file=" + cube, "-pix_fmt", "rgb24", out});
            QVERIFY(p.waitForFinished(60000));
            QVERIFY2(p.exitCode() == 0, p.readAll().constData());
            const double vsFfmpeg = psnr(lut->previewImage(), QImage(out));
            qInfo("LUT preview vs ffmpeg lut3d on the exported file: PSNR %.2f dB", vsFfmpeg);
            QVERIFY2(vsFfmpeg >= 48.0, qPrintable(QString::number(vsFfmpeg)));
        } else {
            qInfo("ffmpeg is not installed: the preview is not compared with it here (test_lut_clients does)");
        }

        lut->previewAction()->setChecked(false);
        QCOMPARE(window.resultView()->image(), result);
    }

    void exportNeverReplacesAnInput()
    {
        MainWindow window(testOptions());
        window.openSource(m_source);
        window.openReference(kSamples + "/starry_night.jpg");
        QVERIFY(QTest::qWaitFor([&] { return window.hasSource() && window.hasReference() && !window.isLoading(); }, 20000));
        window.setParameters(quick());
        const QByteArray before = [&] {
            QFile f(m_source);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
        }();
        QSignalSpy failed(window.lutActions(), &LutActions::exportFailed);
        window.lutActions()->exportTo(m_source, 17);
        QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, 90000);
        QVERIFY2(failed.first().first().toString().contains("refusing"), qPrintable(failed.first().first().toString()));
        QFile f(m_source);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(f.readAll(), before);
    }

    void dialogOffersTheSizesAndSaysWhatALutHolds()
    {
        ExportLutDialog dialog("/tmp/look", 65);
        auto* size = dialog.findChild<QComboBox*>();
        QVERIFY(size);
        QCOMPARE(size->count(), 3);
        QCOMPARE(size->itemData(0).toInt(), 17);
        QCOMPARE(size->itemData(2).toInt(), 65);
        QCOMPARE(dialog.size(), 65);
        QCOMPARE(dialog.path(), QString("/tmp/look.cube"));
        auto* note = dialog.findChild<QLabel*>("globalMapNote");
        QVERIFY(note);
        QVERIFY(note->text().contains("fitted to the rendered result"));
        QVERIFY(note->text().contains("PSNR"));
    }
};

QTEST_MAIN(TestLutExport)
#include "test_lut_export.moc"
