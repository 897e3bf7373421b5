// The .cube writer, the strict reader, the two interpolations and the baking of
// a colour map into a LUT, against hand-computed cases: the identity, an affine
// map (which trilinear and tetrahedral interpolation both reproduce exactly),
// a product map whose two interpolations differ by known amounts, the exact text
// of a 2^3 LUT, malformed files, and a constant displacement whose baked LUT is
// written down with the sRGB formulas of IEC 61966-2-1.

#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <filesystem>
#include <limits>

#include "core/color/color_map.h"
#include "core/color/cube_lut.h"
#include "core/color/look_cube.h"
#include "core/transport/uot_error.h"

using namespace uot;

namespace {

// An affine map out = M rgb + c, written into a LUT's nodes.
const double kM[3][3] = {{0.8, 0.1, -0.05}, {0.2, 0.6, 0.1}, {-0.1, 0.3, 0.9}};
const double kC[3] = {0.02, -0.03, 0.05};

void affine(const double in[3], double out[3])
{
    for (int a = 0; a < 3; ++a) out[a] = kM[a][0] * in[0] + kM[a][1] * in[1] + kM[a][2] * in[2] + kC[a];
}

CubeLut affineCube(int size)
{
    CubeLut lut = identityCube(size);
    lut.title = "affine";
    for (std::size_t k = 0; k < lut.values.size(); k += 3) {
        const double in[3] = {lut.values[k], lut.values[k + 1], lut.values[k + 2]};
        double out[3];
        affine(in, out);
        for (int a = 0; a < 3; ++a) lut.values[k + a] = static_cast<float>(out[a]);
    }
    return lut;
}

// IEC 61966-2-1 sRGB transfer functions, written here independently of core/color.
double decodeSrgb(double v) { return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); }
double encodeSrgb(double v) { return v <= 0.0031308 ? 12.92 * v : 1.055 * std::pow(v, 1 / 2.4) - 0.055; }

}  // namespace

class CubeLutTest : public QObject {
    Q_OBJECT

private slots:
    void identityNodesAreTheirCoordinatesRedFastest()
    {
        const CubeLut lut = identityCube(5);
        QCOMPARE(lut.values.size(), std::size_t(5 * 5 * 5 * 3));
        // Entry k of the table is node (r, g, b) with k = r + 5 g + 25 b.
        QCOMPARE(lut.values[3 * 1 + 0], 0.25f);  // k = 1: r = 1
        QCOMPARE(lut.values[3 * 1 + 1], 0.0f);
        QCOMPARE(lut.values[3 * 5 + 1], 0.25f);  // k = 5: g = 1
        QCOMPARE(lut.values[3 * 25 + 2], 0.25f); // k = 25: b = 1
        QCOMPARE(lut.values[3 * 124 + 0], 1.0f); // last: white
        QCOMPARE(lut.values[3 * 124 + 2], 1.0f);
    }

    void exactTextOfATwoNodeLut()
    {
        CubeLut lut = identityCube(2);
        lut.title = "two \"nodes\"";
        lut.values[3 * 7 + 0] = 0.5f;  // white -> (0.5, 1, 1)
        const std::string text = formatCube(lut);
        const std::string expected = "TITLE \"two  nodes \"\n"
                                     "LUT_3D_SIZE 2\n"
                                     "DOMAIN_MIN 0 0 0\n"
                                     "DOMAIN_MAX 1 1 1\n"
                                     "0.000000 0.000000 0.000000\n"
                                     "1.000000 0.000000 0.000000\n"
                                     "0.000000 1.000000 0.000000\n"
                                     "1.000000 1.000000 0.000000\n"
                                     "0.000000 0.000000 1.000000\n"
                                     "1.000000 0.000000 1.000000\n"
                                     "0.000000 1.000000 1.000000\n"
                                     "0.500000 1.000000 1.000000\n";
        // After the leading comment line.
        QVERIFY(text.rfind("# ", 0) == 0);
        QCOMPARE(QString::fromStdString(text.substr(text.find('\n') + 1)), QString::fromStdString(expected));
    }

    void roundTripThroughTextAndFile_data()
    {
        QTest::addColumn<int>("size");
        QTest::newRow("2") << 2;
        QTest::newRow("17") << 17;
        QTest::newRow("33") << 33;
    }
    void roundTripThroughTextAndFile()
    {
        QFETCH(int, size);
        CubeLut lut = affineCube(size);
        lut.domainMin[1] = -0.5;
        lut.domainMax[2] = 2.0;
        QTemporaryDir dir;
        const std::string path = dir.filePath("look.cube").toStdString();
        writeCubeFile(path, lut);
        const CubeLut back = readCubeFile(path);
        QCOMPARE(back.size, size);
        QCOMPARE(QString::fromStdString(back.title), QString("affine"));
        QCOMPARE(back.domainMin[1], -0.5);
        QCOMPARE(back.domainMax[2], 2.0);
        QCOMPARE(back.values.size(), lut.values.size());
        for (std::size_t k = 0; k < lut.values.size(); ++k)
            QVERIFY2(std::abs(back.values[k] - lut.values[k]) <= 6e-7f, qPrintable(QString::number(k)));
        // Atomic write: nothing but the file in the folder.
        int files = 0;
        for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path().toStdString())) ++files;
        QCOMPARE(files, 1);
    }

    void interpolationReproducesAnAffineMap_data()
    {
        QTest::addColumn<int>("interpolation");
        QTest::newRow("trilinear") << int(CubeInterpolation::Trilinear);
        QTest::newRow("tetrahedral") << int(CubeInterpolation::Tetrahedral);
    }
    void interpolationReproducesAnAffineMap()
    {
        QFETCH(int, interpolation);
        const CubeLut lut = affineCube(5);
        // Points inside cells, on faces, on nodes, and outside the domain (clamped).
        const double points[][3] = {{0.1, 0.7, 0.33}, {0.9, 0.2, 0.55}, {0.25, 0.5, 0.75}, {1, 1, 1},
                                    {0, 0, 0},        {0.6, 0.6, 0.6},  {0.37, 0.91, 0.12}, {1.3, -0.2, 0.5}};
        for (const auto& p : points) {
            const double clamped[3] = {std::clamp(p[0], 0.0, 1.0), std::clamp(p[1], 0.0, 1.0), std::clamp(p[2], 0.0, 1.0)};
            double expected[3];
            affine(clamped, expected);
            const float in[3] = {float(p[0]), float(p[1]), float(p[2])};
            float out[3];
            applyCube(lut, in, out, static_cast<CubeInterpolation>(interpolation));
            for (int a = 0; a < 3; ++a) QVERIFY2(std::abs(out[a] - expected[a]) < 2e-6, qPrintable(QString::number(out[a])));
        }
    }

    void trilinearAndTetrahedralOfAProductMap()
    {
        // 2^3 LUT of f = r g b (1 at white, 0 elsewhere). At (0.5, 0.25, 0.75):
        // trilinear = 0.5 * 0.25 * 0.75; tetrahedral = the smallest fraction, 0.25.
        CubeLut lut = identityCube(2);
        for (std::size_t k = 0; k < 8; ++k)
            for (int a = 0; a < 3; ++a) lut.values[3 * k + a] = k == 7 ? 1.0f : 0.0f;
        const float in[3] = {0.5f, 0.25f, 0.75f};
        float out[3];
        applyCube(lut, in, out, CubeInterpolation::Trilinear);
        QCOMPARE(out[0], 0.09375f);
        applyCube(lut, in, out, CubeInterpolation::Tetrahedral);
        QCOMPARE(out[0], 0.25f);
    }

    void domainScalesTheInput()
    {
        CubeLut lut = identityCube(3);
        for (int a = 0; a < 3; ++a) lut.domainMin[a] = 0, lut.domainMax[a] = 2;
        const float in[3] = {1.0f, 0.5f, 2.0f};
        float out[3];
        applyCube(lut, in, out, CubeInterpolation::Trilinear);
        QCOMPARE(out[0], 0.5f);
        QCOMPARE(out[1], 0.25f);
        QCOMPARE(out[2], 1.0f);
    }

    void readerAcceptsCommentsCrLfAndInputRange()
    {
        const std::string text = "# comment\r\n\r\nTITLE \"x\"\r\nLUT_3D_SIZE 2\r\nLUT_3D_INPUT_RANGE 0 2\r\n"
                                 "0 0 0\r\n1 0 0\r\n0 1 0\r\n1 1 0\r\n# inside\r\n0 0 1\r\n1 0 1\r\n0 1 1\r\n1 1 1\r\n";
        const CubeLut lut = parseCube(text);
        QCOMPARE(lut.size, 2);
        QCOMPARE(lut.domainMax[1], 2.0);
        QCOMPARE(lut.values[3 * 3 + 1], 1.0f);
    }

    void readerRejectsMalformedFiles_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("reason");
        const QString table2 = "0 0 0\n1 0 0\n0 1 0\n1 1 0\n0 0 1\n1 0 1\n0 1 1\n1 1 1\n";
        QTest::newRow("no size") << table2 << "LUT_3D_SIZE";
        QTest::newRow("short table") << "LUT_3D_SIZE 2\n0 0 0\n1 0 0\n" << "needs 8";
        QTest::newRow("long table") << "LUT_3D_SIZE 2\n" + table2 + "1 1 1\n" << "more than";
        QTest::newRow("two numbers") << "LUT_3D_SIZE 2\n0 0\n" + table2.mid(6) << "expected 3 numbers";
        QTest::newRow("four numbers") << "LUT_3D_SIZE 2\n0 0 0 0\n" + table2.mid(6) << "expected 3 numbers";
        QTest::newRow("not a number") << "LUT_3D_SIZE 2\n0 x 0\n" + table2.mid(6) << "expected 3 numbers";
        QTest::newRow("nan") << "LUT_3D_SIZE 2\nnan 0 0\n" + table2.mid(6) << "keyword";
        QTest::newRow("beyond float") << "LUT_3D_SIZE 2\n1e39 0 0\n" + table2.mid(6) << "beyond float's range";
        QTest::newRow("domain beyond float") << "LUT_3D_SIZE 2\nDOMAIN_MAX 1 1 1e39\n" + table2 << "DOMAIN_MAX beyond float";
        QTest::newRow("1-D LUT") << "LUT_1D_SIZE 2\n0 0 0\n1 1 1\n" << "1-D";
        QTest::newRow("unknown keyword") << "LUT_3D_SIZE 2\nGAMMA 2.2\n" + table2 << "unknown keyword";
        QTest::newRow("size twice") << "LUT_3D_SIZE 2\nLUT_3D_SIZE 2\n" + table2 << "twice";
        QTest::newRow("size 1") << "LUT_3D_SIZE 1\n0 0 0\n" << "between 2 and 256";
        QTest::newRow("size 2.5") << "LUT_3D_SIZE 2.5\n" + table2 << "whole number";
        QTest::newRow("min above max") << "LUT_3D_SIZE 2\nDOMAIN_MIN 0 1 0\nDOMAIN_MAX 1 1 1\n" + table2 << "below";
        QTest::newRow("keyword after data") << "LUT_3D_SIZE 2\n0 0 0\nTITLE \"late\"\n" + table2.mid(6) << "after the table";
        QTest::newRow("unquoted title") << "TITLE late\nLUT_3D_SIZE 2\n" + table2 << "quoted";
        QTest::newRow("empty") << "" << "LUT_3D_SIZE";
    }
    void readerRejectsMalformedFiles()
    {
        QFETCH(QString, text);
        QFETCH(QString, reason);
        try {
            parseCube(text.toStdString(), "bad.cube");
            QFAIL("accepted a malformed file");
        } catch (const Error& e) {
            QCOMPARE(e.code(), ErrorCode::InvalidArgument);
            const QString message = QString::fromStdString(e.what());
            QVERIFY2(message.startsWith("bad.cube: not a valid .cube LUT"), qPrintable(message));
            QVERIFY2(message.contains(reason), qPrintable(message));
        }
    }

    // The widest table line (three floats of 39 digits each, as %.6f) is written
    // whole and reads back to the same floats.
    void writerKeepsTheLargestFloatsWhole()
    {
        CubeLut lut = identityCube(2);
        const float big = std::numeric_limits<float>::max();
        lut.values[0] = big;
        lut.values[1] = -big;
        lut.values[2] = -big;
        const std::string text = formatCube(lut);
        QVERIFY(text.find("340282346638528859811704183484516925440.000000 "
                          "-340282346638528859811704183484516925440.000000 "
                          "-340282346638528859811704183484516925440.000000\n") != std::string::npos);
        const CubeLut back = parseCube(text);
        QCOMPARE(back.values[0], big);
        // The shortest text of FLT_MAX, 3.4028235e+38, is above FLT_MAX yet rounds to it.
        const CubeLut wide = parseCube("LUT_3D_SIZE 2\nDOMAIN_MIN -3.4028235e+38 0 0\n" + text.substr(text.find("DOMAIN_MAX")));
        QCOMPARE(static_cast<float>(wide.domainMin[0]), -big);
        QCOMPARE(back.values[1], -big);
        QCOMPARE(back.values[2], -big);
        for (std::size_t k = 3; k < lut.values.size(); ++k) QCOMPARE(back.values[k], lut.values[k]);
    }

    void fileErrorsNameTheFile()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("look.cube").toStdString();
        writeCubeFile(path, identityCube(2));
        AtomicWriteOptions keep;
        keep.overwrite = false;
        try {
            writeCubeFile(path, identityCube(3), keep);
            QFAIL("replaced an existing file without overwrite");
        } catch (const Error& e) {
            QCOMPARE(e.code(), ErrorCode::Io);
            QVERIFY(QString(e.what()).contains("exists"));
        }
        QCOMPARE(readCubeFile(path).size, 2);  // untouched
        try {
            writeCubeFile(dir.filePath("missing/look.cube").toStdString(), identityCube(2));
            QFAIL("wrote into a missing folder");
        } catch (const Error& e) {
            QCOMPARE(e.code(), ErrorCode::Io);
            QVERIFY(QString(e.what()).contains("does not exist"));
        }
        try {
            readCubeFile(dir.filePath("none.cube").toStdString());
            QFAIL("read a missing file");
        } catch (const Error& e) {
            QCOMPARE(e.code(), ErrorCode::Io);
        }
    }

    void identityLutLeavesAnImageUnchanged_data()
    {
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("depth");
        QTest::newRow("rgb8") << 3 << 8;
        QTest::newRow("rgba8") << 4 << 8;
        QTest::newRow("rgb16") << 3 << 16;
        QTest::newRow("gray8") << 1 << 8;
    }
    void identityLutLeavesAnImageUnchanged()
    {
        QFETCH(int, channels);
        QFETCH(int, depth);
        Image image = Image::allocate(23, 7, channels, depth);
        const std::size_t samples = image.pixelCount() * static_cast<std::size_t>(channels);
        for (std::size_t k = 0; k < samples; ++k) {
            if (depth == 8) image.samples8()[k] = static_cast<std::uint8_t>((k * 37) % 256);
            else image.samples16()[k] = static_cast<std::uint16_t>((k * 4099) % 65536);
        }
        for (auto interpolation : {CubeInterpolation::Trilinear, CubeInterpolation::Tetrahedral}) {
            const Image out = applyCubeToImage(identityCube(33), image, interpolation);
            QCOMPARE(out.channels, channels == 4 ? 4 : 3);
            QCOMPARE(out.depth, depth);
            for (std::size_t p = 0; p < image.pixelCount(); ++p)
                for (int k = 0; k < out.channels; ++k) {
                    const int ik = channels == 1 ? 0 : k;
                    const std::size_t i = p * channels + ik, o = p * out.channels + k;
                    if (depth == 8) QCOMPARE(out.samples8()[o], image.samples8()[i]);
                    else QCOMPARE(out.samples16()[o], image.samples16()[i]);
                }
        }
    }

    void bakedConstantDisplacementInLinearRgb_data()
    {
        QTest::addColumn<double>("strength");
        QTest::addColumn<bool>("preserveLuminance");
        QTest::newRow("full") << 1.0 << false;
        QTest::newRow("half") << 0.5 << false;
        QTest::newRow("keep luminance") << 1.0 << true;
    }
    void bakedConstantDisplacementInLinearRgb()
    {
        // A working-space map that adds d to every linear RGB colour. The baked
        // node for sRGB input x is encode(clip(decode(x) + s d)), or with preserved
        // luminance that colour scaled to the input's luminance Y.
        QFETCH(double, strength);
        QFETCH(bool, preserveLuminance);
        const double d[3] = {0.08, -0.05, 0.02};
        DisplacementLut map;
        map.size = 3;
        for (int a = 0; a < 3; ++a) map.lo[a] = 0, map.step[a] = 0.5;
        map.values.resize(27 * 3);
        for (std::size_t k = 0; k < 27; ++k)
            for (int a = 0; a < 3; ++a) map.values[3 * k + a] = static_cast<float>(d[a]);
        MappingSettings mapping;
        mapping.strength = strength;
        mapping.preserveLuminance = preserveLuminance;
        mapping.gamut = GamutMode::Clip;
        const CubeLut lut = bakeLookCube(map, WorkingSpace::LinearRgb, mapping, 9, "constant");
        QCOMPARE(lut.size, 9);
        QCOMPARE(QString::fromStdString(lut.title), QString("constant"));
        const double w[3] = {0.2126729, 0.7151522, 0.0721750};
        for (int b = 0; b < 9; ++b)
            for (int g = 0; g < 9; ++g)
                for (int r = 0; r < 9; ++r) {
                    const double x[3] = {r / 8.0, g / 8.0, b / 8.0};
                    double lin[3], y[3];
                    for (int a = 0; a < 3; ++a) lin[a] = decodeSrgb(x[a]), y[a] = lin[a] + strength * d[a];
                    if (preserveLuminance) {
                        const double y0 = w[0] * lin[0] + w[1] * lin[1] + w[2] * lin[2];
                        const double y1 = w[0] * y[0] + w[1] * y[1] + w[2] * y[2];
                        for (int a = 0; a < 3; ++a) y[a] = y1 > 1e-6 ? y[a] * y0 / y1 : y0;
                    }
                    const float* node = &lut.values[3 * lut.nodeIndex(r, g, b)];
                    for (int a = 0; a < 3; ++a) {
                        const double expected = encodeSrgb(std::clamp(y[a], 0.0, 1.0));
                        QVERIFY2(std::abs(node[a] - expected) < 2e-5,
                                 qPrintable(QString("node %1 %2 %3 channel %4: %5 vs %6")
                                                .arg(r).arg(g).arg(b).arg(a).arg(node[a]).arg(expected)));
                    }
                }
    }

    void bakedZeroDisplacementInLabIsTheIdentity()
    {
        DisplacementLut map;
        map.size = 2;
        map.lo[0] = 0, map.lo[1] = -128, map.lo[2] = -128;
        map.step[0] = 100, map.step[1] = 255, map.step[2] = 255;
        map.values.assign(8 * 3, 0.0f);
        MappingSettings mapping;
        const CubeLut lut = bakeLookCube(map, WorkingSpace::Lab, mapping, 17, "zero");
        const CubeLut identity = identityCube(17);
        for (std::size_t k = 0; k < lut.values.size(); ++k)
            QVERIFY2(std::abs(lut.values[k] - identity.values[k]) < 2e-4, qPrintable(QString::number(k)));
        // Strength 0 is the identity exactly, as the pipeline returns the source.
        mapping.strength = 0;
        map.values.assign(8 * 3, 10.0f);
        QVERIFY(bakeLookCube(map, WorkingSpace::Lab, mapping, 17, "zero").values == identity.values);
    }
};

QTEST_GUILESS_MAIN(CubeLutTest)
#include "test_cube_lut.moc"
