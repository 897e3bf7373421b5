#pragma once
// Reading and writing NumPy .npy files (format versions 1.0 to 3.0): float32
// and float64, little-endian, C order, 1-D or 2-D. Qt-free and OpenCV-free.
// Every failure is a uot::Error(Io) whose message names the file and says
// what is wrong with it.

#include <cstddef>
#include <string>
#include <vector>

namespace uot::npy {

enum class DType { Float32, Float64 };

struct Array {
    DType dtype = DType::Float64;
    std::vector<std::size_t> shape;  // 1 or 2 entries
    std::vector<float> f32;          // the data when dtype is Float32 (row-major)
    std::vector<double> f64;         // the data when dtype is Float64

    std::size_t size() const;        // number of elements
    std::size_t rows() const;        // shape[0]
    std::size_t cols() const;        // shape[1], or 1 for a 1-D array
    // The data as float64 (a copy for float32 arrays).
    std::vector<double> toDouble() const;
};

// What the header of a .npy file says (checked against the file's size).
struct Header {
    DType dtype = DType::Float64;
    std::vector<std::size_t> shape;  // 1 or 2 entries
    std::size_t dataOffset = 0;      // bytes before the first element
    std::size_t elementBytes() const { return dtype == DType::Float32 ? 4 : 8; }
};

// The header alone (same checks and errors as readNpy); reads no data.
Header readNpyHeader(const std::string& path);

// Rows firstRow .. firstRow + rowCount - 1 of a 2-D array, read by seeking to
// them (the rest of the file is not read): an array of shape (rowCount, cols).
// Throws uot::Error(Io) like readNpy, and for a 1-D array or rows out of range.
Array readNpyRows(const std::string& path, std::size_t firstRow, std::size_t rowCount);

// Reads path. Throws uot::Error(Io) for a missing/unreadable file, a bad
// magic string or header, an unsupported dtype (anything but '<f4' / '<f8'),
// Fortran order, more than 2 dimensions, a shape whose element or byte count
// overflows, or data shorter than the header says.
Array readNpy(const std::string& path);

// Writes a float64 / float32 array of the given shape (1-D or 2-D, C order,
// host memory holding prod(shape) values). The file appears atomically and
// safely through writeFileAtomically (core/io/atomic_file.h), replacing path.
void writeNpy(const std::string& path, const double* data, const std::vector<std::size_t>& shape);
void writeNpy(const std::string& path, const float* data, const std::vector<std::size_t>& shape);

}  // namespace uot::npy
