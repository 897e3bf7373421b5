// The .npy reader and writer: round trips, and a clear uot::Error(Io) naming
// the file for everything it cannot read.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/npy/npy_io.h"
#include "core/transport/uot_error.h"
#include "tests/support/qt_checks.h"

using namespace uot;

namespace {

std::filesystem::path tempDir()
{
    static const std::filesystem::path dir = [] {
        auto d = std::filesystem::temp_directory_path() / ("uot-npy-test-" + std::to_string(::getpid()));
        std::filesystem::create_directories(d);
        return d;
    }();
    return dir;
}

std::string writeBytes(const std::string& name, const std::string& bytes)
{
    const std::string path = (tempDir() / name).string();
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    return path;
}

// A hand-made version 1.0 file with the given header dict and data bytes.
std::string npyBytes(const std::string& dict, const std::string& data, char major = 1)
{
    std::string header = dict;
    const std::size_t prefix = major == 1 ? 10 : 12;
    while ((prefix + header.size() + 1) % 64 != 0) header.push_back(' ');
    header.push_back('\n');
    std::string out = std::string("\x93NUMPY", 6) + major + '\0';
    const std::size_t len = header.size();
    out.push_back(static_cast<char>(len & 0xff));
    out.push_back(static_cast<char>((len >> 8) & 0xff));
    if (major != 1) out += std::string(2, '\0');
    return out + header + data;
}

std::string doubles(const std::vector<double>& x)
{
    return std::string(reinterpret_cast<const char*>(x.data()), x.size() * sizeof(double));
}

}  // namespace

class TestNpyIo : public QObject {
    Q_OBJECT
private slots:
    void roundTripFloat64AndFloat32();
    void readsVersion2HeadersAndNumpyStyleShapes();
    void unreadableFilesGiveIoErrorsNamingTheFile_data();
    void unreadableFilesGiveIoErrorsNamingTheFile();
    void readsABlockOfRowsBySeeking();
    void writingIntoAMissingDirectoryFails();
};

void TestNpyIo::roundTripFloat64AndFloat32()
{
    const std::vector<double> x{1.5, -2.0, 3.25, 4.0, 5.0, 6.125};
    const std::string p64 = (tempDir() / "x64.npy").string();
    npy::writeNpy(p64, x.data(), {2, 3});
    const npy::Array a = npy::readNpy(p64);
    QVERIFY(a.dtype == npy::DType::Float64);
    QVERIFY(a.shape == (std::vector<std::size_t>{2, 3}));
    QVERIFY(a.f64 == x);
    QVERIFY2(a.rows() == 2 && a.cols() == 3, qPrintable(QString("%1 x %2").arg(a.rows()).arg(a.cols())));

    const std::vector<float> y{0.5f, 1.5f, 2.5f};
    const std::string p32 = (tempDir() / "x32.npy").string();
    npy::writeNpy(p32, y.data(), {3});
    const npy::Array b = npy::readNpy(p32);
    QVERIFY(b.dtype == npy::DType::Float32);
    QVERIFY(b.shape == std::vector<std::size_t>{3});
    QVERIFY(b.f32 == y);
    QVERIFY(b.toDouble() == (std::vector<double>{0.5, 1.5, 2.5}));
    // No temporary file is left behind.
    for (const auto& entry : std::filesystem::directory_iterator(tempDir()))
        QVERIFY2(entry.path().string().find(".tmp") == std::string::npos, entry.path().c_str());
}

void TestNpyIo::readsVersion2HeadersAndNumpyStyleShapes()
{
    const std::string path = writeBytes(
        "v2.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", doubles({1, 2, 3}), 2));
    const npy::Array a = npy::readNpy(path);
    QVERIFY(a.f64 == (std::vector<double>{1, 2, 3}));
}

void TestNpyIo::unreadableFilesGiveIoErrorsNamingTheFile_data()
{
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("fragment");
    QTest::newRow("does-not-exist") << QString::fromStdString((tempDir() / "does-not-exist.npy").string()) << QString("cannot open");
    QTest::newRow("empty") << QString::fromStdString(writeBytes("empty.npy", "")) << QString("too short");
    QTest::newRow("garbage") << QString::fromStdString(writeBytes("garbage.npy", "this is not a numpy file at all, just text")) << QString("bad magic");
    QTest::newRow("truncated-header") << QString::fromStdString(writeBytes("truncated-header.npy", std::string("\x93NUMPY\x01\x00\x76\x00{'descr'", 17))) << QString("truncated");
    QTest::newRow("truncated-data") << QString::fromStdString(writeBytes("truncated-data.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", doubles({1, 2, 3, 4, 5})))) << QString("truncated");
    QTest::newRow("int") << QString::fromStdString(writeBytes("int.npy", npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", doubles({1, 2})))) << QString("dtype");
    QTest::newRow("bigendian") << QString::fromStdString(writeBytes("bigendian.npy", npyBytes("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }", doubles({1, 2})))) << QString("dtype");
    QTest::newRow("fortran") << QString::fromStdString(writeBytes("fortran.npy", npyBytes("{'descr': '<f8', 'fortran_order': True, 'shape': (1, 2), }", doubles({1, 2})))) << QString("Fortran");
    QTest::newRow("3d") << QString::fromStdString(writeBytes("3d.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 2), }", doubles({1, 2})))) << QString("dimensions");
    // Shapes whose element count wraps modulo 2^64 (to 1, and to 0), and one whose
    // byte count does: refused from the header, before any data is read.
    QTest::newRow("count-wraps-to-1") << QString::fromStdString(writeBytes("wrap1.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 12297829382473034411), }", doubles({0.5})))) << QString("overflows");
    QTest::newRow("count-wraps-to-0") << QString::fromStdString(writeBytes("wrap0.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ""))) << QString("overflows");
    QTest::newRow("bytes-wrap") << QString::fromStdString(writeBytes("wrapbytes.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693953,), }", doubles({1})))) << QString("overflows");
    QTest::newRow("noshape") << QString::fromStdString(writeBytes("noshape.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, }", doubles({1})))) << QString("shape");
}

void TestNpyIo::unreadableFilesGiveIoErrorsNamingTheFile()
{
    QFETCH(QString, path);
    QFETCH(QString, fragment);
    const std::string file = path.toStdString(), part = fragment.toStdString();
    bool threw = false;
    try {
        npy::readNpy(file);
    } catch (const Error& e) {
        threw = true;
        const std::string what = e.what();
        QVERIFY2(e.code() == ErrorCode::Io, what.c_str());
        QVERIFY2(what.find(file) != std::string::npos, ("message does not name the file: " + what).c_str());
        QVERIFY2(what.find(part) != std::string::npos, ("'" + what + "' lacks '" + part + "'").c_str());
    }
    QVERIFY2(threw, ("no uot::Error for " + file).c_str());
}

void TestNpyIo::readsABlockOfRowsBySeeking()
{
    // A 4 x 3 matrix whose entry (i, j) is 10 i + j, in hand-made version 1 and 2 files.
    std::vector<double> m;
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j) m.push_back(10.0 * i + j);
    const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 3), }";
    for (char major : {char(1), char(2)}) {
        const std::string path = writeBytes("rows" + std::to_string(int(major)) + ".npy", npyBytes(dict, doubles(m), major));
        const npy::Header h = npy::readNpyHeader(path);
        QVERIFY(h.shape == (std::vector<std::size_t>{4, 3}));
        QVERIFY(h.dtype == npy::DType::Float64);
        const npy::Array block = npy::readNpyRows(path, 1, 2);
        QVERIFY(block.shape == (std::vector<std::size_t>{2, 3}));
        QVERIFY(block.f64 == (std::vector<double>{10, 11, 12, 20, 21, 22}));
        const npy::Array last = npy::readNpyRows(path, 3, 1);
        QVERIFY(last.f64 == (std::vector<double>{30, 31, 32}));
        const npy::Array none = npy::readNpyRows(path, 4, 0);  // a block of no rows (more ranks than rows)
        QVERIFY(none.shape == (std::vector<std::size_t>{0, 3}) && none.f64.empty());
        UOT_QVERIFY_THROWS_WITH(npy::readNpyRows(path, 3, 2), "only 4 rows");
    }
    const std::vector<float> f{1.f, 2.f, 3.f, 4.f};
    std::string fbytes(reinterpret_cast<const char*>(f.data()), f.size() * sizeof(float));
    const std::string p32 =
        writeBytes("rows32.npy", npyBytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", fbytes));
    QVERIFY(npy::readNpyRows(p32, 1, 1).f32 == (std::vector<float>{3.f, 4.f}));
    const std::string p1d =
        writeBytes("rows1d.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", doubles({1, 2})));
    UOT_QVERIFY_THROWS_WITH(npy::readNpyRows(p1d, 0, 1), "2-D");
    // The header of a truncated file is refused too (the data is checked against the file size).
    const std::string truncated =
        writeBytes("rows-truncated.npy", npyBytes(dict, doubles({1, 2, 3})));
    UOT_QVERIFY_THROWS_WITH(npy::readNpyHeader(truncated), "truncated");
}

void TestNpyIo::writingIntoAMissingDirectoryFails()
{
    const double x = 1;
    UOT_QVERIFY_THROWS_WITH(npy::writeNpy((tempDir() / "no" / "such" / "dir.npy").string(), &x, {1}), "dir.npy");
    std::filesystem::remove_all(tempDir());
}

QTEST_APPLESS_MAIN(TestNpyIo)
#include "test_npy_io.moc"
