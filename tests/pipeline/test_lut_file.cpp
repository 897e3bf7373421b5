// core/pipeline/lut_file: the one encoder and writer of LUT files that `uot lut`,
// `uot recolor --export-lut` and the studio share. Checked against a lattice
// whose every node is known by hand: a node (r, g, b) of a 16-node lattice
// holds (b, r, g) / 15, a rotation of the channels that an identity-preserving
// bug could not fake. Written as .cube and as a Hald CLUT (.png, level 4 = 16
// nodes per axis, the smallest), read back by the readers clients use, and compared with those
// values; decoded() must give what the file holds; a protected path is never
// replaced. Qt Test.
#include <QTemporaryDir>

#include <string>

#include "core/color/cube_lut.h"
#include "core/color/hald_clut.h"
#include "core/imageio/image_io.h"
#include "core/pipeline/lut_file.h"
#include "core/transport/uot_error.h"
#include "tests/support/qt_checks.h"

using namespace uot;

namespace {

constexpr int kNodes = 16;  // haldCubeSize(4)

CubeLut rotatedLattice()
{
    CubeLut lut;
    lut.title = "rotation";
    lut.size = kNodes;
    lut.values.resize(std::size_t(kNodes * kNodes * kNodes * 3));
    for (int b = 0; b < kNodes; ++b)
        for (int g = 0; g < kNodes; ++g)
            for (int r = 0; r < kNodes; ++r) {
                float* v = &lut.values[3 * lut.nodeIndex(r, g, b)];
                v[0] = float(b) / (kNodes - 1);
                v[1] = float(r) / (kNodes - 1);
                v[2] = float(g) / (kNodes - 1);
            }
    return lut;
}

// Every node of `lut` holds (b, r, g) / 15 within `tolerance`.
void checkRotation(const CubeLut& lut, double tolerance)
{
    QCOMPARE(lut.size, kNodes);
    for (int b = 0; b < kNodes; ++b)
        for (int g = 0; g < kNodes; ++g)
            for (int r = 0; r < kNodes; ++r) {
                const float* v = &lut.values[3 * lut.nodeIndex(r, g, b)];
                UOT_QCOMPARE_CLOSE(v[0], b / 15.0, tolerance);
                UOT_QCOMPARE_CLOSE(v[1], r / 15.0, tolerance);
                UOT_QCOMPARE_CLOSE(v[2], g / 15.0, tolerance);
            }
}

}  // namespace

class TestLutFile : public QObject {
    Q_OBJECT
private slots:
    void formatFromName()
    {
        QVERIFY(lutFileFormat("look.png") == LutFileFormat::Hald);
        QVERIFY(lutFileFormat("dir.x/LOOK.PNG") == LutFileFormat::Hald);
        QVERIFY(lutFileFormat("look.cube") == LutFileFormat::Cube);
        QVERIFY(lutFileFormat("look.CUBE") == LutFileFormat::Cube);
        QVERIFY(lutFileFormat("png") == LutFileFormat::Cube);
    }

    void cubeFile()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("look.cube").toStdString();
        const EncodedLut encoded = encodeLut(rotatedLattice(), LutFileFormat::Cube);
        writeEncodedLut(encoded, path, {});
        checkRotation(readCubeFile(path), 1e-6);
        checkRotation(encoded.decoded(), 1e-6);
    }

    void haldFile()
    {
        QCOMPARE(haldCubeSize(4), kNodes);
        QTemporaryDir dir;
        const std::string path = dir.filePath("look.png").toStdString();
        const EncodedLut encoded = encodeLut(rotatedLattice(), LutFileFormat::Hald);
        writeEncodedLut(encoded, path, {});
        const double step = 1.0 / 255;  // an 8-bit image at worst
        checkRotation(cubeFromHaldImage(readImage(path)), step);
        checkRotation(encoded.decoded(), step);
    }

    void protectedPathIsKept()
    {
        QTemporaryDir dir;
        const std::string path = dir.filePath("source.cube").toStdString();
        writeEncodedLut(encodeLut(rotatedLattice(), LutFileFormat::Cube), path, {});
        AtomicWriteOptions options;
        options.protectedPaths = {path};
        for (LutFileFormat format : {LutFileFormat::Cube, LutFileFormat::Hald})
            UOT_QVERIFY_THROWS_WITH(writeEncodedLut(encodeLut(rotatedLattice(), format), path, options), "source.cube");
        checkRotation(readCubeFile(path), 1e-6);
    }
};

QTEST_MAIN(TestLutFile)
#include "test_lut_file.moc"
