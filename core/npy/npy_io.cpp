#include "core/npy/npy_io.h"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/transport/uot_error.h"

namespace uot::npy {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what)
{
    throw Error(ErrorCode::Io, "'" + path + "': " + what);
}

std::string trim(const std::string& s)
{
    const auto b = s.find_first_not_of(" \t\n\r");
    if (b == std::string::npos) return {};
    const auto e = s.find_last_not_of(" \t\n\r");
    return s.substr(b, e - b + 1);
}

// The value text of 'key' in the header dict, e.g. "'<f8'" or "(3, 4)".
std::string headerField(const std::string& header, const std::string& key, const std::string& path)
{
    const std::string quoted = "'" + key + "'";
    auto pos = header.find(quoted);
    if (pos == std::string::npos) fail(path, "the .npy header has no '" + key + "' field (not a valid .npy file)");
    pos = header.find(':', pos + quoted.size());
    if (pos == std::string::npos) fail(path, "the .npy header is malformed near '" + key + "'");
    ++pos;
    std::size_t end = pos;
    if (const auto open = header.find_first_not_of(" ", pos); open != std::string::npos && header[open] == '(') {
        end = header.find(')', open);
        if (end == std::string::npos) fail(path, "the .npy header has an unterminated shape");
        return trim(header.substr(open, end - open + 1));
    }
    end = header.find_first_of(",}", pos);
    if (end == std::string::npos) fail(path, "the .npy header is malformed near '" + key + "'");
    return trim(header.substr(pos, end - pos));
}

std::vector<std::size_t> parseShape(const std::string& text, const std::string& path)
{
    if (text.size() < 2 || text.front() != '(' || text.back() != ')') fail(path, "the .npy shape '" + text + "' is malformed");
    std::vector<std::size_t> shape;
    std::stringstream in(text.substr(1, text.size() - 2));
    std::string item;
    while (std::getline(in, item, ',')) {
        item = trim(item);
        if (item.empty()) continue;
        char* end = nullptr;
        errno = 0;
        const unsigned long long v = std::strtoull(item.c_str(), &end, 10);
        if (errno != 0 || end != item.c_str() + item.size() || item[0] == '-')
            fail(path, "the .npy shape '" + text + "' is malformed");
        shape.push_back(static_cast<std::size_t>(v));
    }
    return shape;
}

std::string shapeText(const std::vector<std::size_t>& shape)
{
    std::ostringstream s;
    s << "(";
    for (std::size_t k = 0; k < shape.size(); ++k) s << shape[k] << (shape.size() == 1 ? "," : (k + 1 < shape.size() ? ", " : ""));
    s << ")";
    return s.str();
}

void writeRaw(const std::string& path, const char* descr, const void* data, std::size_t bytes,
              const std::vector<std::size_t>& shape)
{
    if (shape.empty() || shape.size() > 2) fail(path, "only 1-D and 2-D arrays can be written");
    std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " +
                         shapeText(shape) + ", }";
    // Magic (6) + version (2) + header length (2) + header, padded with
    // spaces and a newline to a multiple of 64 bytes.
    const std::size_t unpadded = 10 + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header.push_back('\n');
    if (header.size() > 65535) fail(path, "the .npy header is too long");

    // The temporary name is unique per process and thread so that parallel
    // writers of one directory never collide.
    const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
                            std::to_string(reinterpret_cast<std::uintptr_t>(&header));
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) fail(path, std::string("cannot create the file for writing: ") + std::strerror(errno));
        const char magic[8] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
        const std::uint16_t len = static_cast<std::uint16_t>(header.size());
        const char lenBytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
        out.write(magic, 8);
        out.write(lenBytes, 2);
        out.write(header.data(), static_cast<std::streamsize>(header.size()));
        out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
        out.flush();
        if (!out) {
            out.close();
            std::remove(tmp.c_str());
            fail(path, "writing failed (disk full?)");
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string reason = std::strerror(errno);
        std::remove(tmp.c_str());
        fail(path, "cannot move the written file into place: " + reason);
    }
}

std::size_t product(const std::vector<std::size_t>& shape)
{
    std::size_t n = 1;
    for (std::size_t d : shape) n *= d;
    return n;
}

}  // namespace

std::size_t Array::size() const { return product(shape); }
std::size_t Array::rows() const { return shape.empty() ? 0 : shape[0]; }
std::size_t Array::cols() const { return shape.size() < 2 ? 1 : shape[1]; }

std::vector<double> Array::toDouble() const
{
    if (dtype == DType::Float64) return f64;
    return std::vector<double>(f32.begin(), f32.end());
}

namespace {

// An open .npy file positioned anywhere, with its header parsed and the data
// size checked against the file size.
struct OpenNpy {
    std::ifstream in;
    Header header;
};

OpenNpy openNpy(const std::string& path)
{
    static_assert(sizeof(float) == 4 && sizeof(double) == 8);
    OpenNpy file{std::ifstream(path, std::ios::binary), {}};
    std::ifstream& in = file.in;
    if (!in) fail(path, std::string("cannot open the file: ") + std::strerror(errno));
    char magic[8];
    if (!in.read(magic, 8)) fail(path, "the file is too short to be a .npy file");
    if (std::memcmp(magic, "\x93NUMPY", 6) != 0) fail(path, "not a .npy file (bad magic string)");
    const int major = static_cast<unsigned char>(magic[6]);
    std::size_t headerLen = 0;
    if (major == 1) {
        unsigned char b[2];
        if (!in.read(reinterpret_cast<char*>(b), 2)) fail(path, "the .npy header is truncated");
        headerLen = b[0] | (std::size_t(b[1]) << 8);
    } else if (major == 2 || major == 3) {
        unsigned char b[4];
        if (!in.read(reinterpret_cast<char*>(b), 4)) fail(path, "the .npy header is truncated");
        headerLen = b[0] | (std::size_t(b[1]) << 8) | (std::size_t(b[2]) << 16) | (std::size_t(b[3]) << 24);
    } else {
        fail(path, "unsupported .npy format version " + std::to_string(major));
    }
    if (headerLen > (1u << 20)) fail(path, "the .npy header length is implausible (corrupt file?)");
    std::string header(headerLen, '\0');
    if (!in.read(header.data(), static_cast<std::streamsize>(headerLen))) fail(path, "the .npy header is truncated");

    Header& info = file.header;
    const std::string descr = headerField(header, "descr", path);
    if (descr == "'<f8'" || descr == "'=f8'" || descr == "'f8'") {
        info.dtype = DType::Float64;
    } else if (descr == "'<f4'" || descr == "'=f4'" || descr == "'f4'") {
        info.dtype = DType::Float32;
    } else {
        fail(path, "dtype " + descr + " is not supported: save the array as float32 or float64 "
                   "(e.g. np.save(path, x.astype(np.float64)))");
    }
    const std::string order = headerField(header, "fortran_order", path);
    if (order == "True") fail(path, "the array is in Fortran order: save it in C order (np.ascontiguousarray)");
    if (order != "False") fail(path, "the .npy header has an invalid fortran_order");
    info.shape = parseShape(headerField(header, "shape", path), path);
    if (info.shape.empty() || info.shape.size() > 2)
        fail(path, "the array has " + std::to_string(info.shape.size()) + " dimensions; a 1-D or 2-D array is needed");

    // The element count must not wrap: a wrapped count would pass the size check below.
    for (std::size_t k = 0, n = 1; k < info.shape.size(); ++k)
        if (__builtin_mul_overflow(n, info.shape[k], &n))
            fail(path, "the shape " + shapeText(info.shape) + " is impossibly large (its element count overflows)");
    const std::size_t count = product(info.shape);
    const std::size_t elem = info.elementBytes();
    in.seekg(0, std::ios::end);
    const std::streamoff end = in.tellg();
    const std::streamoff dataStart = static_cast<std::streamoff>((major == 1 ? 10 : 12) + headerLen);
    const std::size_t available = end > dataStart ? static_cast<std::size_t>(end - dataStart) : 0;
    if (count > 0 && available / elem < count) {
        std::ostringstream msg;
        msg << "the file is truncated: shape " << shapeText(info.shape) << " needs " << count * elem
            << " bytes of data but only " << available << " are present";
        fail(path, msg.str());
    }
    info.dataOffset = static_cast<std::size_t>(dataStart);
    return file;
}

// Reads `count` elements starting at element `first` of the data into a new array of `shape`.
Array readElements(OpenNpy& file, const std::string& path, std::size_t first, std::size_t count,
                   std::vector<std::size_t> shape)
{
    Array array;
    array.dtype = file.header.dtype;
    array.shape = std::move(shape);
    const std::size_t elem = file.header.elementBytes();
    file.in.clear();
    file.in.seekg(static_cast<std::streamoff>(file.header.dataOffset + first * elem));
    char* dst = nullptr;
    if (array.dtype == DType::Float32) {
        array.f32.resize(count);
        dst = reinterpret_cast<char*>(array.f32.data());
    } else {
        array.f64.resize(count);
        dst = reinterpret_cast<char*>(array.f64.data());
    }
    if (count > 0 && !file.in.read(dst, static_cast<std::streamsize>(count * elem)))
        fail(path, "reading the data failed");
    return array;
}

}  // namespace

Header readNpyHeader(const std::string& path) { return openNpy(path).header; }

Array readNpy(const std::string& path)
{
    OpenNpy file = openNpy(path);
    return readElements(file, path, 0, product(file.header.shape), file.header.shape);
}

Array readNpyRows(const std::string& path, std::size_t firstRow, std::size_t rowCount)
{
    OpenNpy file = openNpy(path);
    const Header& h = file.header;
    if (h.shape.size() != 2) fail(path, "a 2-D array is needed to read a block of rows");
    if (firstRow > h.shape[0] || rowCount > h.shape[0] - firstRow) {
        std::ostringstream msg;
        msg << "rows " << firstRow << " to " << firstRow + rowCount << " were asked for but the array has only "
            << h.shape[0] << " rows";
        fail(path, msg.str());
    }
    return readElements(file, path, firstRow * h.shape[1], rowCount * h.shape[1], {rowCount, h.shape[1]});
}

void writeNpy(const std::string& path, const double* data, const std::vector<std::size_t>& shape)
{
    writeRaw(path, "<f8", data, product(shape) * sizeof(double), shape);
}

void writeNpy(const std::string& path, const float* data, const std::vector<std::size_t>& shape)
{
    writeRaw(path, "<f4", data, product(shape) * sizeof(float), shape);
}

}  // namespace uot::npy
