// Metadata and colour profiles through `uot recolor` (issue 16, defect 1),
// checked with exiftool and LittleCMS, independently of the code under test:
//  - EXIF, XMP and IPTC tags of the source are in the output, the orientation
//    tag says "normal" and the pixels are upright;
//  - an Adobe RGB source (pixels converted from sRGB with LittleCMS here, the
//    profile embedded with exiftool) comes out as sRGB pixels with an sRGB
//    profile that match the original sRGB photo: it renders the same in a
//    colour-managed viewer. Without colour management it would not (control).

#include <QColorSpace>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTransform>

#include <lcms2.h>

#include <cmath>

namespace {

const QString kSamples = QStringLiteral(UOT_SAMPLES_DIR);
const QString kUot = QStringLiteral(UOT_CLI_EXECUTABLE);

// Adobe RGB (1998): its primaries, D65 and a 563/256 gamma.
cmsHPROFILE createAdobeRgb()
{
    const cmsCIExyY white = {0.3127, 0.3290, 1.0};
    const cmsCIExyYTRIPLE primaries = {{0.64, 0.33, 1.0}, {0.21, 0.71, 1.0}, {0.15, 0.06, 1.0}};
    cmsToneCurve* gamma = cmsBuildGamma(nullptr, 563.0 / 256.0);
    cmsToneCurve* curves[3] = {gamma, gamma, gamma};
    cmsHPROFILE profile = cmsCreateRGBProfile(&white, &primaries, curves);
    cmsFreeToneCurve(gamma);
    cmsMLU* text = cmsMLUalloc(nullptr, 1);
    cmsMLUsetASCII(text, "en", "US", "Adobe RGB (1998) test");
    cmsWriteTag(profile, cmsSigProfileDescriptionTag, text);
    cmsMLUfree(text);
    return profile;
}

QImage toAdobeRgb(const QImage& srgbImage, cmsHPROFILE adobe)
{
    QImage in = srgbImage.convertToFormat(QImage::Format_RGB888);
    QImage out(in.size(), QImage::Format_RGB888);
    cmsHPROFILE srgb = cmsCreate_sRGBProfile();
    cmsHTRANSFORM t = cmsCreateTransform(srgb, TYPE_RGB_8, adobe, TYPE_RGB_8, INTENT_RELATIVE_COLORIMETRIC, 0);
    for (int y = 0; y < in.height(); ++y) cmsDoTransform(t, in.constScanLine(y), out.scanLine(y), in.width());
    cmsDeleteTransform(t);
    cmsCloseProfile(srgb);
    return out;
}

double meanAbsDifference(const QImage& a, const QImage& b)
{
    const QImage x = a.convertToFormat(QImage::Format_RGB888), y = b.convertToFormat(QImage::Format_RGB888);
    if (x.size() != y.size()) return 1e9;
    double sum = 0;
    for (int r = 0; r < x.height(); ++r)
        for (int c = 0; c < 3 * x.width(); ++c) sum += std::abs(int(x.constScanLine(r)[c]) - int(y.constScanLine(r)[c]));
    return sum / (3.0 * x.width() * x.height());
}

bool run(const QString& program, const QStringList& args, QByteArray* output = nullptr)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(120000)) return false;
    if (output) *output = p.readAllStandardOutput();
    if (p.exitCode() != 0) qWarning("%s: %s", qPrintable(program), p.readAllStandardError().constData());
    return p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

QJsonObject exiftool(const QString& file)
{
    QByteArray out;
    if (!run("exiftool", {"-j", "-Artist", "-Copyright", "-Creator", "-Keywords", "-ProfileDescription", "-Orientation",
                          "-ImageWidth", "-ImageHeight", file},
             &out))
        return {};
    return QJsonDocument::fromJson(out).array().first().toObject();
}

}  // namespace

class TestImageMetadata : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        if (QStandardPaths::findExecutable("exiftool").isEmpty())
            QSKIP("exiftool is not installed (apt-get install libimage-exiftool-perl)");
    }

    void tagsAndProfileSurviveARecolor_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<int>("orientation");
        QTest::addColumn<bool>("iptc");
        QTest::addColumn<double>("tolerance");  // mean |difference| in 8-bit levels
        QTest::addColumn<bool>("batch");        // through `uot batch` instead of `uot recolor`
        QTest::newRow("jpeg, rotated") << "jpg" << 6 << true << 2.0 << false;
        QTest::newRow("png") << "png" << 0 << false << 1.0 << false;
        QTest::newRow("batch, jpeg, rotated") << "jpg" << 6 << true << 2.0 << true;
    }
    void tagsAndProfileSurviveARecolor()
    {
        QFETCH(QString, format);
        QFETCH(int, orientation);
        QFETCH(bool, iptc);
        QFETCH(double, tolerance);
        QFETCH(bool, batch);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QImage original = QImage(kSamples + "/home.jpg").convertToFormat(QImage::Format_RGB888);
        QVERIFY(!original.isNull());

        // The source: the photo in Adobe RGB, its profile and tags written by exiftool.
        cmsHPROFILE adobe = createAdobeRgb();
        const QImage adobePixels = toAdobeRgb(original, adobe);
        const QString icc = dir.filePath("adobe.icc");
        QVERIFY(cmsSaveProfileToFile(adobe, icc.toLocal8Bit().constData()));
        cmsCloseProfile(adobe);
        // Control: shown without colour management, the Adobe RGB pixels look different.
        QVERIFY(meanAbsDifference(adobePixels, original) > 3 * tolerance);
        const QString source = dir.filePath("source." + format);
        QVERIFY(adobePixels.save(source, nullptr, 100));
        QStringList tags = {"-overwrite_original", "-ICC_Profile<=" + icc, "-EXIF:Artist=Ansel Test",
                            "-Copyright=CC-BY test", "-XMP-dc:Creator=Ansel Test"};
        if (iptc) tags << "-IPTC:Keywords=uot-metadata-test";
        if (orientation) tags << QStringLiteral("-Orientation#=%1").arg(orientation);
        QVERIFY(run("exiftool", tags << source));
        QCOMPARE(exiftool(source).value("ProfileDescription").toString(), QString("Adobe RGB (1998) test"));

        // Strength 0: the recolor returns the source's colours, so the output must render as the original.
        const QString output = dir.filePath((batch ? "out_source." : "out.") + format);
        const QStringList settings = {"--strength", "0", "--palette-size", "128", "--max-iter", "20", "--quiet"};
        if (batch)
            QVERIFY(run(kUot, QStringList{"batch", kSamples + "/starry_night.jpg", source, "--out-dir", dir.path(),
                                          "--pattern", "out_{name}.{ext}"} + settings));
        else
            QVERIFY(run(kUot, QStringList{"recolor", source, kSamples + "/starry_night.jpg", "-o", output} + settings));
        const QJsonObject tagsOut = exiftool(output);
        QCOMPARE(tagsOut.value("Artist").toString(), QString("Ansel Test"));
        QCOMPARE(tagsOut.value("Copyright").toString(), QString("CC-BY test"));
        QCOMPARE(tagsOut.value("Creator").toString(), QString("Ansel Test"));
        if (iptc) QCOMPARE(tagsOut.value("Keywords").toString(), QString("uot-metadata-test"));
        QVERIFY2(tagsOut.value("ProfileDescription").toString().contains("sRGB"),
                 qPrintable(tagsOut.value("ProfileDescription").toString()));
        QImage expected = original;
        if (orientation) {
            QCOMPARE(tagsOut.value("Orientation").toString(), QString("Horizontal (normal)"));
            expected = original.transformed(QTransform().rotate(90));  // 6 = shown turned 90 degrees clockwise
        }
        QCOMPARE(tagsOut.value("ImageWidth").toInt(), expected.width());
        // A reader built on libpng/libjpeg (Qt's) must accept the embedded profile; an
        // unnamed PNG iCCP chunk is rejected ("bad keyword") and the profile lost.
        const QColorSpace space = QImage(output).colorSpace();
        QVERIFY2(space.isValid() && space.description().contains("sRGB"), qPrintable(space.description()));
        // The output's pixels are sRGB (its embedded profile): compare them with the sRGB original.
        const double difference = meanAbsDifference(QImage(output), expected);
        QVERIFY2(difference < tolerance, qPrintable(QString::number(difference)));
    }
};

QTEST_MAIN(TestImageMetadata)
#include "test_image_metadata.moc"
