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
#include "tests/support/test_harness.h"

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

void expectIoError(const std::string& path, const std::string& fragment)
{
    bool threw = false;
    try {
        npy::readNpy(path);
    } catch (const Error& e) {
        threw = true;
        const std::string what = e.what();
        UOT_CHECK_MSG(e.code() == ErrorCode::Io, what);
        UOT_CHECK_MSG(what.find(path) != std::string::npos, "message does not name the file: " << what);
        UOT_CHECK_MSG(what.find(fragment) != std::string::npos, "'" << what << "' lacks '" << fragment << "'");
    }
    UOT_CHECK_MSG(threw, "no uot::Error for " << path);
}

}  // namespace

UOT_TEST(roundTripFloat64AndFloat32)
{
    const std::vector<double> x{1.5, -2.0, 3.25, 4.0, 5.0, 6.125};
    const std::string p64 = (tempDir() / "x64.npy").string();
    npy::writeNpy(p64, x.data(), {2, 3});
    const npy::Array a = npy::readNpy(p64);
    UOT_CHECK(a.dtype == npy::DType::Float64);
    UOT_CHECK(a.shape == (std::vector<std::size_t>{2, 3}));
    UOT_CHECK(a.f64 == x);
    UOT_CHECK(a.rows() == 2 && a.cols() == 3);

    const std::vector<float> y{0.5f, 1.5f, 2.5f};
    const std::string p32 = (tempDir() / "x32.npy").string();
    npy::writeNpy(p32, y.data(), {3});
    const npy::Array b = npy::readNpy(p32);
    UOT_CHECK(b.dtype == npy::DType::Float32);
    UOT_CHECK(b.shape == std::vector<std::size_t>{3});
    UOT_CHECK(b.f32 == y);
    UOT_CHECK(b.toDouble() == (std::vector<double>{0.5, 1.5, 2.5}));
    // No temporary file is left behind.
    for (const auto& entry : std::filesystem::directory_iterator(tempDir()))
        UOT_CHECK_MSG(entry.path().string().find(".tmp.") == std::string::npos, entry.path());
}

UOT_TEST(readsVersion2HeadersAndNumpyStyleShapes)
{
    const std::string path = writeBytes(
        "v2.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", doubles({1, 2, 3}), 2));
    const npy::Array a = npy::readNpy(path);
    UOT_CHECK(a.f64 == (std::vector<double>{1, 2, 3}));
}

UOT_TEST(unreadableFilesGiveIoErrorsNamingTheFile)
{
    expectIoError((tempDir() / "does-not-exist.npy").string(), "cannot open");
    expectIoError(writeBytes("empty.npy", ""), "too short");
    expectIoError(writeBytes("garbage.npy", "this is not a numpy file at all, just text"), "bad magic");
    expectIoError(writeBytes("truncated-header.npy", std::string("\x93NUMPY\x01\x00\x76\x00{'descr'", 17)),
                  "truncated");
    expectIoError(writeBytes("truncated-data.npy",
                             npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                                      doubles({1, 2, 3, 4, 5}))),
                  "truncated");
    expectIoError(writeBytes("int.npy", npyBytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                                                 doubles({1, 2}))),
                  "dtype");
    expectIoError(writeBytes("bigendian.npy", npyBytes("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }",
                                                       doubles({1, 2}))),
                  "dtype");
    expectIoError(writeBytes("fortran.npy", npyBytes("{'descr': '<f8', 'fortran_order': True, 'shape': (1, 2), }",
                                                     doubles({1, 2}))),
                  "Fortran");
    expectIoError(writeBytes("3d.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 2), }",
                                                doubles({1, 2}))),
                  "dimensions");
    expectIoError(writeBytes("noshape.npy", npyBytes("{'descr': '<f8', 'fortran_order': False, }", doubles({1}))),
                  "shape");
}

UOT_TEST(writingIntoAMissingDirectoryFails)
{
    const double x = 1;
    UOT_CHECK_THROWS_WITH(npy::writeNpy((tempDir() / "no" / "such" / "dir.npy").string(), &x, {1}), "dir.npy");
    std::filesystem::remove_all(tempDir());
}
