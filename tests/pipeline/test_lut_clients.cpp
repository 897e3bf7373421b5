// The exported LUT in real LUT clients. Each case recolors a small PNG with
// `uot recolor --export-lut`, applies the .cube with ffmpeg's lut3d filter (and
// OpenColorIO's ocioconvert / ociochecklut when installed; the Hald CLUT with
// ffmpeg's haldclut), and compares the client's image with uot's own output:
// - a look without smoothing (a function of the colour alone) within 40 dB;
// - the default look (edge-aware smoothing, which no LUT can hold exactly): the
//   PSNR uot reports is what ffmpeg gets, and the fitted LUT is closer to the
//   result than the plan's global map alone.
// The studio's LUT preview (applyCubeToImage) must render what ffmpeg renders.
// Also the documented errors and exit codes of `uot lut`. Skips (not fails) only
// when a client program is not installed.

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <QJsonDocument>
#include <QJsonObject>

#include <cmath>

#include "core/color/cube_lut.h"
#include "core/imageio/image_io.h"

using namespace uot;

namespace {

const QString kSamples = QStringLiteral(UOT_SAMPLES_DIR);
const QString kUot = QStringLiteral(UOT_EXECUTABLE);

struct Run {
    int exitCode = -1;
    QString output;  // stdout + stderr
};

Run run(const QString& program, const QStringList& args, int timeoutMs = 180000)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    Run r;
    if (!p.waitForStarted(20000)) {
        r.output = "cannot start " + program;
        return r;
    }
    p.waitForFinished(timeoutMs);
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.output = QString::fromLocal8Bit(p.readAll());
    return r;
}

// PSNR over the RGB samples of two 8-bit images of the same size.
double psnr(const Image& a, const Image& b)
{
    if (a.width != b.width || a.height != b.height || a.depth != 8 || b.depth != 8) return -1;
    double sum = 0;
    for (std::size_t p = 0; p < a.pixelCount(); ++p)
        for (int k = 0; k < 3; ++k) {
            const double d = double(a.samples8()[p * a.channels + k]) - double(b.samples8()[p * b.channels + k]);
            sum += d * d;
        }
    const double mse = sum / (3.0 * double(a.pixelCount()));
    return mse == 0 ? 99.0 : 10 * std::log10(255.0 * 255.0 / mse);
}

// A small 8-bit RGB PNG of a sample (every `step`-th pixel), made without the
// clients so that every program reads the same file.
QString smallPng(const QString& sample, int step, const QString& dir)
{
    const Image full = readImage((kSamples + "/" + sample).toStdString());
    Image small = Image::allocate(full.width / step, full.height / step, 3, 8);
    for (int y = 0; y < small.height; ++y)
        for (int x = 0; x < small.width; ++x)
            for (int k = 0; k < 3; ++k)
                small.samples8()[(std::size_t(y) * small.width + x) * 3 + k] =
                    full.samples8()[(std::size_t(y) * step * full.width + std::size_t(x) * step) * full.channels +
                                    (full.channels == 1 ? 0 : k)];
    const QString path = dir + "/" + QFileInfo(sample).completeBaseName() + ".png";
    writeImage(path.toStdString(), small);
    return path;
}

const QStringList kQuick = {"--palette-size", "1024", "--quiet"};

}  // namespace

class LutClientsTest : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_ffmpeg;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        QVERIFY2(QFile::exists(kUot), qPrintable(kUot));
        m_ffmpeg = QStandardPaths::findExecutable("ffmpeg");
    }

    void ffmpegRendersTheLookAsRecolorNoSmooth_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("reference");
        QTest::addColumn<int>("size");
        QTest::addColumn<QString>("interp");  // ffmpeg lut3d interp (tetrahedral is its default)
        QTest::addColumn<QStringList>("options");
        QTest::addColumn<double>("minPsnr");
        // 33 (the default) and 65 nodes meet the 40 dB of the issue. 17 nodes are
        // coarse for a map that bends the sRGB cube this much: 36-41 dB on the
        // samples (docs/COMMAND_LINE.md, "Export a 3D LUT"), checked against a lower bar so a regression still shows.
        // The residual match lives in the smoothed field, so neither the LUT nor the
        // --no-smooth render has it (uot lut does not offer it).
        QTest::newRow("home-starry lab 33 default") << "home.jpg" << "starry_night.jpg" << 33 << "" << QStringList{} << 40.0;
        QTest::newRow("home-starry lab 65 trilinear")
            << "home.jpg" << "starry_night.jpg" << 65 << "trilinear" << QStringList{} << 40.0;
        QTest::newRow("fruits-squirrel oklab 33 strength 0.7 keep L")
            << "fruits.jpg" << "squirrel_cls.jpg" << 33 << "tetrahedral"
            << QStringList{"--space", "oklab", "--strength", "0.7", "--preserve-luminance"} << 40.0;
        QTest::newRow("butterfly-leuven linear-rgb 33 clip")
            << "butterfly.jpg" << "leuvenA.jpg" << 33 << "" << QStringList{"--space", "linear-rgb", "--gamut", "clip"} << 40.0;
        QTest::newRow("butterfly-leuven linear-rgb 17 clip")
            << "butterfly.jpg" << "leuvenA.jpg" << 17 << "" << QStringList{"--space", "linear-rgb", "--gamut", "clip"} << 34.0;
    }
    void ffmpegRendersTheLookAsRecolorNoSmooth()
    {
        QFETCH(QString, source);
        QFETCH(QString, reference);
        QFETCH(int, size);
        QFETCH(QString, interp);
        QFETCH(QStringList, options);
        QFETCH(double, minPsnr);
        if (m_ffmpeg.isEmpty()) QSKIP("ffmpeg is not installed (scripts/setup.sh installs it)");
        const QString dir = m_dir.path() + "/" + QTest::currentDataTag();
        QVERIFY(QDir().mkpath(dir));
        const QString src = smallPng(source, 4, dir), ref = smallPng(reference, 4, dir);
        const QString noSmooth = dir + "/no_smooth.png", cube = dir + "/look.cube", client = dir + "/ffmpeg.png";
        Run r = run(kUot, QStringList{"recolor", src, ref, "-o", noSmooth, "--no-smooth", "--export-lut", cube,
                                      "--export-lut-size", QString::number(size)} + kQuick + options);
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));

        // The file as a client reads it (independently of uot's reader).
        QFile file(cube);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(file.readAll());
        QVERIFY(text.contains(QString("\nLUT_3D_SIZE %1\n").arg(size)));
        QVERIFY(text.contains("\nDOMAIN_MIN 0 0 0\nDOMAIN_MAX 1 1 1\n"));
        QVERIFY(text.contains("\nTITLE \""));

        const QString filter = "lut3d=file=" + cube + (interp.isEmpty() ? QString() : ":interp=" + interp);
        r = run(m_ffmpeg, {"-v", "error", "-y", "-i", src, "-vf", filter, "-pix_fmt", "rgb24", client});
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));

        const Image original = readImage(src.toStdString());
        const Image expected = readImage(noSmooth.toStdString());
        const Image rendered = readImage(client.toStdString());
        const double vsRecolor = psnr(rendered, expected);
        qInfo("%s: ffmpeg lut3d vs uot recolor --no-smooth: PSNR %.2f dB", qPrintable(QTest::currentDataTag()), vsRecolor);
        QVERIFY2(vsRecolor >= minPsnr, qPrintable(QString::number(vsRecolor)));
        // The look changes the image a lot, so the 40 dB above is not met by chance.
        const double change = psnr(original, expected);
        QVERIFY2(change < 30.0, qPrintable(QString::number(change)));

        // The studio's LUT preview renders what ffmpeg renders (ffmpeg truncates
        // to 8 bits where the preview rounds: about half a code value apart).
        const CubeInterpolation mode = interp == "trilinear" ? CubeInterpolation::Trilinear : CubeInterpolation::Tetrahedral;
        const Image preview = applyCubeToImage(readCubeFile(cube.toStdString()), original, mode);
        const double vsPreview = psnr(rendered, preview);
        qInfo("%s: ffmpeg lut3d vs the LUT preview: PSNR %.2f dB", qPrintable(QTest::currentDataTag()), vsPreview);
        QVERIFY2(vsPreview >= 48.0, qPrintable(QString::number(vsPreview)));
    }

    void ffmpegRendersTheDefaultLookAsReported_data()
    {
        QTest::addColumn<QString>("source");
        QTest::addColumn<QString>("reference");
        QTest::newRow("home-starry") << "home.jpg" << "starry_night.jpg";
        QTest::newRow("fruits-squirrel") << "fruits.jpg" << "squirrel_cls.jpg";
    }
    void ffmpegRendersTheDefaultLookAsReported()
    {
        QFETCH(QString, source);
        QFETCH(QString, reference);
        if (m_ffmpeg.isEmpty()) QSKIP("ffmpeg is not installed (scripts/setup.sh installs it)");
        const QString dir = m_dir.path() + "/default-" + QTest::currentDataTag();
        QVERIFY(QDir().mkpath(dir));
        const QString src = smallPng(source, 4, dir), ref = smallPng(reference, 4, dir);
        const QString result = dir + "/result.png", cube = dir + "/look.cube", hald = dir + "/look.png";
        Run r = run(kUot, QStringList{"recolor", src, ref, "-o", result, "--export-lut", cube, "--json"} + kQuick);
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        const QJsonObject lut = QJsonDocument::fromJson(r.output.toUtf8()).object().value("lut").toObject();
        const double reported = lut.value("psnr_vs_result").toDouble(), global = lut.value("global_map_psnr_vs_result").toDouble();
        QVERIFY2(reported > 0 && global > 0, qPrintable(r.output));

        const QString client = dir + "/ffmpeg.png";
        r = run(m_ffmpeg, {"-v", "error", "-y", "-i", src, "-vf", "lut3d=file=" + cube, "-pix_fmt", "rgb24", client});
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        const Image expected = readImage(result.toStdString());
        const double measured = psnr(readImage(client.toStdString()), expected);
        qInfo("%s: ffmpeg lut3d vs uot recolor (defaults): %.2f dB; uot reported %.2f dB, the global map alone %.2f dB",
              qPrintable(QTest::currentDataTag()), measured, reported, global);
        // ffmpeg truncates to 8 bits where uot rounds: about half the samples one code lower,
        // about 0.5 code^2 of mean squared error on top of the LUT's own. A fraction of a dB
        // for a LUT at 35 dB; near 55 dB (a look that a LUT holds) it caps ffmpeg near 50 dB.
        const auto mse = [](double db) { return 255.0 * 255.0 * std::pow(10.0, -db / 10); };
        QVERIFY2(measured <= reported + 1.0 && mse(measured) <= mse(reported) + 0.6,
                 qPrintable(QString("%1 vs %2").arg(measured).arg(reported)));
        QVERIFY2(reported > global + 1.0, qPrintable(QString("%1 vs %2").arg(reported).arg(global)));

        // The Hald CLUT of the same look, in ffmpeg's haldclut filter.
        r = run(kUot, QStringList{"lut", src, ref, "-o", hald} + kQuick);
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        const Image haldImage = readImage(hald.toStdString());
        QCOMPARE(haldImage.width, 512);
        QCOMPARE(haldImage.depth, 16);
        const QString haldClient = dir + "/ffmpeg-hald.png";
        r = run(m_ffmpeg, {"-v", "error", "-y", "-i", src, "-i", hald, "-filter_complex", "[0][1]haldclut",
                           "-pix_fmt", "rgb24", haldClient});
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        const double haldMeasured = psnr(readImage(haldClient.toStdString()), expected);
        qInfo("%s: ffmpeg haldclut (level 8) vs uot recolor: %.2f dB", qPrintable(QTest::currentDataTag()), haldMeasured);
        QVERIFY2(haldMeasured > measured - 1.0, qPrintable(QString("%1 vs %2").arg(haldMeasured).arg(measured)));
    }

    void uotLutWritesTheSameFileAsExportLut()
    {
        const QString dir = m_dir.path() + "/same";
        QVERIFY(QDir().mkpath(dir));
        const QString src = smallPng("home.jpg", 8, dir), ref = smallPng("starry_night.jpg", 8, dir);
        Run r = run(kUot, QStringList{"recolor", src, ref, "-o", dir + "/out.png", "--export-lut", dir + "/a.cube",
                                      "--strength", "0.8"} + kQuick);
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        r = run(kUot, QStringList{"lut", src, ref, "-o", dir + "/b.cube", "--strength", "0.8"} + kQuick);
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        QFile a(dir + "/a.cube"), b(dir + "/b.cube");
        QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
        QCOMPARE(a.readAll(), b.readAll());
        QCOMPARE(readCubeFile((dir + "/b.cube").toStdString()).size, 33);
    }

    void openColorIoAgrees()
    {
        const QString convert = QStandardPaths::findExecutable("ocioconvert");
        const QString check = QStandardPaths::findExecutable("ociochecklut");
        if (convert.isEmpty() || check.isEmpty())
            QSKIP("OpenColorIO's tools are not installed (Debian package opencolorio-tools)");
        const QString dir = m_dir.path() + "/ocio";
        QVERIFY(QDir().mkpath(dir));
        const QString src = smallPng("home.jpg", 4, dir), ref = smallPng("starry_night.jpg", 4, dir);
        const QString noSmooth = dir + "/no_smooth.png", cube = dir + "/look.cube", client = dir + "/ocio.png";
        Run r = run(kUot, QStringList{"recolor", src, ref, "-o", noSmooth, "--no-smooth", "--export-lut", cube} + kQuick);
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        r = run(convert, {"--lut", cube, src, client});
        QVERIFY2(r.exitCode == 0, qPrintable(r.output));
        const double vsRecolor = psnr(readImage(client.toStdString()), readImage(noSmooth.toStdString()));
        qInfo("ocioconvert --lut vs uot recolor --no-smooth: PSNR %.2f dB", vsRecolor);
        QVERIFY2(vsRecolor >= 40.0, qPrintable(QString::number(vsRecolor)));

        // OCIO's reader and interpolation at single colours against uot's reader.
        const CubeLut lut = readCubeFile(cube.toStdString());
        const float points[][3] = {{0.5f, 0.3f, 0.2f}, {0.1f, 0.8f, 0.45f}, {0.93f, 0.93f, 0.1f}};
        for (const auto& p : points) {
            r = run(check, {cube, QString::number(p[0]), QString::number(p[1]), QString::number(p[2])});
            QVERIFY2(r.exitCode == 0, qPrintable(r.output));
            const QStringList fields = r.output.trimmed().split('\n').last().split(' ', Qt::SkipEmptyParts);
            QVERIFY2(fields.size() == 3, qPrintable(r.output));
            float tri[3], tet[3];
            applyCube(lut, p, tri, CubeInterpolation::Trilinear);
            applyCube(lut, p, tet, CubeInterpolation::Tetrahedral);
            for (int a = 0; a < 3; ++a) {
                const double ocio = fields[a].toDouble();
                QVERIFY2(std::min(std::abs(ocio - tri[a]), std::abs(ocio - tet[a])) < 1e-5,
                         qPrintable(QString("%1 vs trilinear %2 / tetrahedral %3").arg(ocio).arg(tri[a]).arg(tet[a])));
            }
        }
    }

    void lutCommandErrors_data()
    {
        QTest::addColumn<QStringList>("args");  // {src} and {ref} and {dir} are replaced
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        QTest::newRow("bad size") << QStringList{"{src}", "{ref}", "-o", "{dir}/x.cube", "--size", "32"} << 2 << "17, 33 or 65";
        QTest::newRow("not .cube or .png") << QStringList{"{src}", "{ref}", "-o", "{dir}/x.gif"} << 2 << "must end in .cube";
        QTest::newRow("bad Hald level") << QStringList{"{src}", "{ref}", "-o", "{dir}/x.png", "--hald-level", "9"} << 2
                                        << "from 4 to 8";
        // An option of the other kind of LUT file is refused, not ignored (a bad value used to pass).
        QTest::newRow("--size for a Hald CLUT") << QStringList{"{src}", "{ref}", "-o", "{dir}/x.png", "--size", "1000"} << 2
                                                << "is a Hald CLUT (.png), sized by --hald-level";
        QTest::newRow("--hald-level for a .cube") << QStringList{"{src}", "{ref}", "-o", "{dir}/x.cube", "--hald-level", "0"}
                                                  << 2 << "applies to a Hald CLUT";
        QTest::newRow("output is the source") << QStringList{"{dir}/s.cube", "{ref}", "-o", "{dir}/s.cube"} << 2
                                              << "is one of this command's images";
        QTest::newRow("missing folder") << QStringList{"{src}", "{ref}", "-o", "{dir}/none/x.cube"} << 1 << "does not exist";
        QTest::newRow("exists") << QStringList{"{src}", "{ref}", "-o", "{dir}/old.cube"} << 1 << "--overwrite";
        QTest::newRow("no output") << QStringList{"{src}", "{ref}"} << 2 << "missing -o";
        QTest::newRow("unreadable source") << QStringList{"{dir}/none.png", "{ref}", "-o", "{dir}/y.cube"} << 1 << "none.png";
    }
    void lutCommandErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        const QString dir = m_dir.path() + "/errors";
        QVERIFY(QDir().mkpath(dir));
        const QString src = kSamples + "/home.jpg", ref = kSamples + "/starry_night.jpg";
        QFile::copy(src, dir + "/s.cube");  // an image whose name ends in .cube
        QFile old(dir + "/old.cube");
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("keep");
        old.close();
        QStringList full{"lut"};
        for (QString a : args) full << a.replace("{src}", src).replace("{ref}", ref).replace("{dir}", dir);
        const Run r = run(kUot, full + kQuick);
        QVERIFY2(r.exitCode == exitCode, qPrintable(QString::number(r.exitCode) + ": " + r.output));
        QVERIFY2(r.output.contains(message), qPrintable(r.output));
        QVERIFY(old.open(QIODevice::ReadOnly));
        QCOMPARE(old.readAll(), QByteArray("keep"));
        old.close();
        QVERIFY(!QFile::exists(dir + "/x.cube"));
    }

    void recolorExportLutErrors()
    {
        const QString dir = m_dir.path() + "/recolor-errors";
        QVERIFY(QDir().mkpath(dir));
        const QString src = kSamples + "/home.jpg", ref = kSamples + "/starry_night.jpg";
        Run r = run(kUot, QStringList{"recolor", src, ref, "-o", dir + "/out.png", "--export-lut", dir + "/x.cube",
                                      "--export-lut-size", "20"} + kQuick);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.output.contains("17, 33 or 65"), qPrintable(r.output));
        r = run(kUot, QStringList{"recolor", src, ref, "-o", dir + "/out.png", "--export-lut", dir + "/x.png",
                                  "--export-lut-size", "0"} + kQuick);  // a Hald CLUT has no --export-lut-size
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.output.contains("is a Hald CLUT (.png), written at level 8"), qPrintable(r.output));
        r = run(kUot, QStringList{"recolor", src, ref, "-o", dir + "/out.png", "--export-lut", dir + "/out.png"} + kQuick);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.output.contains("one of this command's images"), qPrintable(r.output));
        QVERIFY(!QFile::exists(dir + "/out.png"));  // nothing written: the checks come before the work
    }

    void helpSaysTheLutIsFittedToTheResult()
    {
        for (const QString& command : {QString("lut"), QString("recolor")}) {
            const Run r = run(kUot, {command, "--help"});
            QCOMPARE(r.exitCode, 0);
            QVERIFY2(r.output.contains("fitted to the rendered result") && r.output.contains("PSNR"), qPrintable(r.output));
        }
    }
};

QTEST_GUILESS_MAIN(LutClientsTest)
#include "test_lut_clients.moc"
