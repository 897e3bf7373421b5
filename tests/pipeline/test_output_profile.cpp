// Output color profiles (issue 27): the sRGB result converted into sRGB,
// Display P3, Adobe RGB (1998) or the source's own profile, with that profile
// embedded in the PNG, JPEG or TIFF. Checked independently of the code under
// test: the embedded profile is taken out of the file by exiftool, the pixels
// are read by OpenCV (no color management), and LittleCMS turns both into
// CIELAB to compare with the sRGB original. The converted primaries are also
// held against their published values (sRGB red is (234, 51, 35) in Display P3
// and (219, 0, 0) in Adobe RGB). Bad choices give a clear message, in the
// library and in `uot recolor`.

#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <lcms2.h>
#include <opencv2/imgcodecs.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/imageio/image_io.h"
#include "tests/support/qt_checks.h"

using namespace uot;

namespace {

const QString kSamples = QStringLiteral(UOT_SAMPLES_DIR);
const QString kUot = QStringLiteral(UOT_CLI_EXECUTABLE);

struct Patch {
    const char* name;
    std::uint8_t rgb[3];
};
const Patch kPatches[] = {{"red", {255, 0, 0}}, {"green", {0, 255, 0}}, {"blue", {0, 0, 255}}, {"grey", {128, 128, 128}}};
constexpr int kSide = 16;  // uniform 16x16 patches: JPEG's chroma subsampling keeps their centres

// The four patches side by side, sRGB, 8 bit.
Image patches()
{
    Image image = Image::allocate(4 * kSide, kSide, 3, 8);
    for (int y = 0; y < kSide; ++y)
        for (int x = 0; x < 4 * kSide; ++x)
            for (int c = 0; c < 3; ++c)
                image.data[(static_cast<std::size_t>(y) * 4 * kSide + x) * 3 + c] = kPatches[x / kSide].rgb[c];
    return image;
}

// The RGB (not BGR) value at the centre of patch `k`, as the file stores it.
std::vector<int> centreOf(const cv::Mat& bgr, int k)
{
    const cv::Vec3b p = bgr.at<cv::Vec3b>(kSide / 2, k * kSide + kSide / 2);
    return {p[2], p[1], p[0]};
}

bool run(const QString& program, const QStringList& args, QByteArray* out = nullptr, QByteArray* err = nullptr,
         int* exitCode = nullptr)
{
    QProcess p;
    p.start(program, args);
    if (!p.waitForFinished(120000)) return false;
    if (out) *out = p.readAllStandardOutput();
    if (err) *err = p.readAllStandardError();
    if (exitCode) *exitCode = p.exitCode();
    return p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
}

// The ICC profile embedded in `file`, as exiftool extracts it (empty: none).
QByteArray embeddedProfile(const QString& file)
{
    QByteArray icc;
    run("exiftool", {"-b", "-ICC_Profile", file}, &icc);
    return icc;
}

std::string descriptionOf(cmsHPROFILE profile)
{
    char text[256] = {};
    cmsGetProfileInfoASCII(profile, cmsInfoDescription, "en", "US", text, sizeof text);
    return text;
}

// CIELAB (D50) of an 8-bit RGB value in `profile`.
cmsCIELab labOf(cmsHPROFILE profile, const std::vector<int>& rgb)
{
    cmsHPROFILE lab = cmsCreateLab4Profile(nullptr);
    cmsHTRANSFORM t = cmsCreateTransform(profile, TYPE_RGB_8, lab, TYPE_Lab_DBL, INTENT_RELATIVE_COLORIMETRIC, 0);
    const std::uint8_t in[3] = {std::uint8_t(rgb[0]), std::uint8_t(rgb[1]), std::uint8_t(rgb[2])};
    cmsCIELab out{};
    cmsDoTransform(t, in, &out, 1);
    cmsDeleteTransform(t);
    cmsCloseProfile(lab);
    return out;
}

// The ICC bytes of `profile`, which is closed.
QByteArray bytesOf(cmsHPROFILE profile)
{
    cmsUInt32Number size = 0;
    cmsSaveProfileToMem(profile, nullptr, &size);
    QByteArray bytes(int(size), 0);
    cmsSaveProfileToMem(profile, bytes.data(), &size);
    cmsCloseProfile(profile);
    return bytes;
}

// An Adobe RGB (1998) profile made here (primaries, D65, gamma 563/256) with its own name.
QByteArray testAdobeRgbProfile()
{
    const cmsCIExyY white{0.3127, 0.3290, 1.0};
    const cmsCIExyYTRIPLE primaries{{0.64, 0.33, 1.0}, {0.21, 0.71, 1.0}, {0.15, 0.06, 1.0}};
    cmsToneCurve* gamma = cmsBuildGamma(nullptr, 563.0 / 256.0);
    cmsToneCurve* curves[3] = {gamma, gamma, gamma};
    cmsHPROFILE profile = cmsCreateRGBProfile(&white, &primaries, curves);
    cmsFreeToneCurve(gamma);
    cmsMLU* text = cmsMLUalloc(nullptr, 1);
    cmsMLUsetASCII(text, "en", "US", "Adobe RGB (1998) source test");
    cmsWriteTag(profile, cmsSigProfileDescriptionTag, text);
    cmsMLUfree(text);
    return bytesOf(profile);
}

// A PNG of the patches at `path` with `icc` embedded by exiftool.
bool writeTaggedSource(const QString& path, const QByteArray& icc, const QString& folder)
{
    writeImage(path.toStdString(), patches());
    const QString iccFile = folder + "/embedded.icc";
    QFile f(iccFile);
    if (!f.open(QIODevice::WriteOnly) || f.write(icc) != icc.size()) return false;
    f.close();
    return run("exiftool", {"-overwrite_original", "-ICC_Profile<=" + iccFile, path});
}

}  // namespace

class TestOutputProfile : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        if (QStandardPaths::findExecutable("exiftool").isEmpty())
            QSKIP("exiftool is not installed (apt-get install libimage-exiftool-perl)");
    }

    void convertsIntoTheProfileAndEmbedsIt_data()
    {
        QTest::addColumn<QString>("format");
        QTest::addColumn<QString>("profile");
        QTest::addColumn<QString>("description");
        QTest::addColumn<QList<int>>("red");  // sRGB red in that space, 8 bit (published values)
        for (const char* format : {"png", "jpg", "tif"}) {
            QTest::addRow("%s, srgb", format) << format << "srgb" << "sRGB" << QList<int>{255, 0, 0};
            QTest::addRow("%s, display-p3", format) << format << "display-p3" << "Display P3" << QList<int>{234, 51, 35};
            QTest::addRow("%s, adobe-rgb", format) << format << "adobe-rgb" << "Adobe RGB (1998)" << QList<int>{219, 0, 0};
        }
    }
    void convertsIntoTheProfileAndEmbedsIt()
    {
        QFETCH(QString, format);
        QFETCH(QString, profile);
        QFETCH(QString, description);
        QFETCH(QList<int>, red);
        QTemporaryDir dir;
        const QString output = dir.filePath("out." + format);
        WriteOptions options;
        options.profile = parseOutputProfile(profile.toStdString());
        options.jpegQuality = 100;
        writeImage(output.toStdString(), patches(), options);

        const QByteArray icc = embeddedProfile(output);
        QVERIFY2(!icc.isEmpty(), "no ICC profile in the file");
        cmsHPROFILE embedded = cmsOpenProfileFromMem(icc.constData(), cmsUInt32Number(icc.size()));
        QVERIFY2(embedded, "the embedded profile does not parse");
        QCOMPARE(cmsGetColorSpace(embedded), cmsSigRgbData);
        QVERIFY2(QString::fromStdString(descriptionOf(embedded)).contains(description), descriptionOf(embedded).c_str());

        const cv::Mat pixels = cv::imread(output.toStdString(), cv::IMREAD_COLOR);
        QVERIFY(!pixels.empty());
        cmsHPROFILE srgb = cmsCreate_sRGBProfile();
        for (int k = 0; k < 4; ++k) {
            const std::vector<int> stored = centreOf(pixels, k);
            const cmsCIELab want = labOf(srgb, {kPatches[k].rgb[0], kPatches[k].rgb[1], kPatches[k].rgb[2]});
            const cmsCIELab got = labOf(embedded, stored);
            const double dE = cmsCIE2000DeltaE(&want, &got, 1, 1, 1);
            UOT_QVERIFY_MSG(dE < 1.0, kPatches[k].name << ": dE2000 " << dE << " (stored " << stored[0] << ","
                                                       << stored[1] << "," << stored[2] << ")");
        }
        const std::vector<int> storedRed = centreOf(pixels, 0);
        for (int c = 0; c < 3; ++c) UOT_QCOMPARE_CLOSE(storedRed[std::size_t(c)], red[c], 2);
        cmsCloseProfile(srgb);
        cmsCloseProfile(embedded);
    }

    // "source": the source's own embedded profile goes into the output, byte for
    // byte, and the pixels are converted into it.
    void sourceProfileRoundTrips()
    {
        QTemporaryDir dir;
        const QByteArray adobe = testAdobeRgbProfile();
        const QString source = dir.filePath("source.png");
        QVERIFY(writeTaggedSource(source, adobe, dir.path()));
        QCOMPARE(embeddedProfile(source), adobe);
        for (const char* format : {"png", "jpg", "tif"}) {
            const QString output = dir.filePath(QStringLiteral("out.%1").arg(format));
            WriteOptions options;
            options.profile = OutputProfile::Source;
            options.metadataFrom = source.toStdString();
            options.jpegQuality = 100;
            writeImage(output.toStdString(), patches(), options);
            QCOMPARE(embeddedProfile(output), adobe);
            cmsHPROFILE embedded = cmsOpenProfileFromMem(adobe.constData(), cmsUInt32Number(adobe.size()));
            cmsHPROFILE srgb = cmsCreate_sRGBProfile();
            const cv::Mat pixels = cv::imread(output.toStdString(), cv::IMREAD_COLOR);
            for (int k = 0; k < 4; ++k) {
                const cmsCIELab want = labOf(srgb, {kPatches[k].rgb[0], kPatches[k].rgb[1], kPatches[k].rgb[2]});
                const cmsCIELab got = labOf(embedded, centreOf(pixels, k));
                UOT_QVERIFY_MSG(cmsCIE2000DeltaE(&want, &got, 1, 1, 1) < 1.0, format << " " << kPatches[k].name);
            }
            UOT_QCOMPARE_CLOSE(centreOf(pixels, 0)[0], 219, 2);  // converted, not only tagged
            cmsCloseProfile(srgb);
            cmsCloseProfile(embedded);
        }
    }

    void badChoicesGiveAClearMessage()
    {
        UOT_QVERIFY_THROWS_WITH(parseOutputProfile("prophoto"),
                                "unknown output profile 'prophoto': choose srgb, source (the source's own), display-p3 "
                                "or adobe-rgb");
        QVERIFY(parseOutputProfile("Display-P3") == OutputProfile::DisplayP3);
        QTemporaryDir dir;
        WriteOptions options;
        options.profile = OutputProfile::Source;
        UOT_QVERIFY_THROWS_WITH(writeImage(dir.filePath("a.png").toStdString(), patches(), options),
                                "needs a source image");
        QVERIFY(!QFile::exists(dir.filePath("a.png")));
        // A source whose profile is a gray one: it cannot describe RGB output.
        cmsToneCurve* gamma = cmsBuildGamma(nullptr, 2.2);
        cmsHPROFILE gray = cmsCreateGrayProfile(cmsD50_xyY(), gamma);
        cmsFreeToneCurve(gamma);
        const QByteArray grayBytes = bytesOf(gray);
        const QString source = dir.filePath("gray_profile.png");
        QVERIFY(writeTaggedSource(source, grayBytes, dir.path()));
        options.metadataFrom = source.toStdString();
        UOT_QVERIFY_THROWS_WITH(writeImage(dir.filePath("b.png").toStdString(), patches(), options),
                                "is not an RGB profile, so it cannot be the output profile; choose srgb, display-p3 "
                                "or adobe-rgb");
        QVERIFY(!QFile::exists(dir.filePath("b.png")));
    }

    // WebP and BMP carry no profile here: the output stays sRGB (not P3 pixels
    // without their profile), and the caller is told.
    void formatsWithoutAProfileStaySrgb()
    {
        QTemporaryDir dir;
        for (const char* format : {"webp", "bmp"}) {
            const QString output = dir.filePath(QStringLiteral("out.%1").arg(format));
            WriteOptions options;
            options.profile = OutputProfile::DisplayP3;
            options.webpQuality = 101;  // lossless
            std::vector<std::string> warnings;
            options.warn = [&](const std::string& m) { warnings.push_back(m); };
            writeImage(output.toStdString(), patches(), options);
            QCOMPARE(warnings.size(), std::size_t(1));
            QVERIFY2(warnings[0].find("carry no color profile here; written as sRGB") != std::string::npos,
                     warnings[0].c_str());
            const cv::Mat pixels = cv::imread(output.toStdString(), cv::IMREAD_COLOR);
            QVERIFY(!pixels.empty());
            for (int k = 0; k < 4; ++k)
                for (int c = 0; c < 3; ++c)
                    UOT_QCOMPARE_CLOSE(centreOf(pixels, k)[std::size_t(c)], kPatches[k].rgb[c], 1);
        }
    }

    // The flag of `uot recolor` and `uot batch`, end to end.
    void commandLineWritesTheChosenProfile()
    {
        QTemporaryDir dir;
        const QStringList quick = {"--palette-size", "64", "--max-iter", "20", "--quiet"};
        const QString home = kSamples + "/home.jpg", starry = kSamples + "/starry_night.jpg";
        QVERIFY(run(kUot, QStringList{"recolor", home, starry, "-o", dir.filePath("p3.jpg"), "--output-profile",
                                      "display-p3"} + quick));
        QByteArray icc = embeddedProfile(dir.filePath("p3.jpg"));
        cmsHPROFILE p = cmsOpenProfileFromMem(icc.constData(), cmsUInt32Number(icc.size()));
        QVERIFY(p);
        QCOMPARE(descriptionOf(p), std::string("Display P3"));
        cmsCloseProfile(p);
        QVERIFY(run(kUot, QStringList{"batch", starry, home, "--out-dir", dir.path(), "--output-profile", "adobe-rgb"} +
                              quick));
        icc = embeddedProfile(dir.filePath("home_recolored.jpg"));
        p = cmsOpenProfileFromMem(icc.constData(), cmsUInt32Number(icc.size()));
        QVERIFY(p);
        QCOMPARE(descriptionOf(p), std::string("Adobe RGB (1998)"));
        cmsCloseProfile(p);
        QByteArray err;
        int code = 0;
        QVERIFY(!run(kUot, QStringList{"recolor", home, starry, "-o", dir.filePath("x.png"), "--output-profile", "prophoto"},
                     nullptr, &err, &code));
        QCOMPARE(code, 2);
        QVERIFY2(err.contains("--output-profile") && err.contains("one of srgb, source"), err.constData());
        QVERIFY(!QFile::exists(dir.filePath("x.png")));
    }
};

QTEST_MAIN(TestOutputProfile)
#include "test_output_profile.moc"
