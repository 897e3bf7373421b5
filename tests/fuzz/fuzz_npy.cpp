// libFuzzer target: the .npy reader (core/npy) on arbitrary bytes. The reader
// takes a path, so each input is written to a private file first. Besides
// memory safety (ASan/UBSan), a file the reader accepts must hold exactly the
// elements its shape says, and the header-only and row readers must agree with it.

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/npy/npy_io.h"
#include "core/transport/uot_error.h"

namespace {

const std::string& scratchPath()
{
    static const std::string path = [] {
        const char* dir = std::getenv("TMPDIR");
        return std::string(dir && *dir ? dir : "/tmp") + "/uot-fuzz-npy-" + std::to_string(::getpid()) + ".npy";
    }();
    return path;
}

void check(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_npy: %s\n", what);
        std::abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string& path = scratchPath();
    {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    try {
        const uot::npy::Array a = uot::npy::readNpy(path);
        const std::size_t stored = a.dtype == uot::npy::DType::Float32 ? a.f32.size() : a.f64.size();
        check(a.shape.size() == 1 || a.shape.size() == 2, "accepted an array that is not 1-D or 2-D");
        check(stored == a.size(), "the element count differs from the shape's");
        check(a.toDouble().size() == stored, "toDouble() lost elements");
        const uot::npy::Header h = uot::npy::readNpyHeader(path);
        check(h.shape == a.shape && h.dtype == a.dtype, "the header reader disagrees with the reader");
        if (a.shape.size() == 2 && a.rows() > 0) {
            // The last row, read by seeking, is the last row of the whole array.
            const uot::npy::Array last = uot::npy::readNpyRows(path, a.rows() - 1, 1);
            const std::vector<double> all = a.toDouble(), row = last.toDouble();
            check(row.size() == a.cols(), "readNpyRows returned a row of the wrong length");
            for (std::size_t c = 0; c < row.size(); ++c) {
                const double x = all[(a.rows() - 1) * a.cols() + c], y = row[c];
                check(x == y || (x != x && y != y), "readNpyRows disagrees with readNpy");
            }
        }
    } catch (const uot::Error&) {
        // A refusal with a message is the expected outcome for a bad file.
    }
    return 0;
}
