#include "core/color/cube_lut.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/transport/kernel_matrix.h"
#include "core/transport/uot_error.h"

namespace uot {

bool isOfferedCubeSize(int size) { return size == 17 || size == 33 || size == 65; }

CubeLut identityCube(int size)
{
    if (size < kMinCubeSize || size > kMaxCubeSize)
        throw Error(ErrorCode::InvalidArgument, "LUT size must be between 2 and 256 (got " + std::to_string(size) + ")");
    CubeLut lut;
    lut.title = "identity";
    lut.size = size;
    lut.values.resize(3 * static_cast<std::size_t>(size) * size * size);
    const double last = size - 1;
    for (int b = 0; b < size; ++b)
        for (int g = 0; g < size; ++g)
            for (int r = 0; r < size; ++r) {
                float* v = &lut.values[3 * lut.nodeIndex(r, g, b)];
                v[0] = static_cast<float>(r / last), v[1] = static_cast<float>(g / last), v[2] = static_cast<float>(b / last);
            }
    return lut;
}

void validateCube(const CubeLut& lut)
{
    auto bad = [](const std::string& what) { throw Error(ErrorCode::InvalidArgument, "invalid LUT: " + what); };
    if (lut.size < kMinCubeSize || lut.size > kMaxCubeSize)
        bad("size must be between 2 and 256 (got " + std::to_string(lut.size) + ")");
    const std::size_t s = static_cast<std::size_t>(lut.size);
    if (lut.values.size() != 3 * s * s * s) bad("expected " + std::to_string(3 * s * s * s) + " values, got " +
                                                std::to_string(lut.values.size()));
    for (int a = 0; a < 3; ++a)
        if (!std::isfinite(lut.domainMin[a]) || !std::isfinite(lut.domainMax[a]) || !(lut.domainMin[a] < lut.domainMax[a]))
            bad("DOMAIN_MIN must be below DOMAIN_MAX in every channel");
    for (float v : lut.values)
        if (!std::isfinite(v)) bad("a value is not a finite number");
}

namespace {

// A title on one line without double quotes (the format has no escapes).
std::string cleanTitle(const std::string& title)
{
    std::string out;
    for (char c : title) out += (c == '"' || c == '\n' || c == '\r') ? ' ' : c;
    return out;
}

// Shortest text that reads back as the same float.
void appendNumber(std::string& out, double v)
{
    char buffer[32];
    const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, static_cast<float>(v));
    out.append(buffer, ec == std::errc() ? end : buffer);
}

}  // namespace

std::string formatCube(const CubeLut& lut)
{
    validateCube(lut);
    std::string out;
    out.reserve(lut.values.size() * 10 + 200);
    out += "# Created by UOT Color Studio: the global color map of an unbalanced optimal transport color transfer\n";
    out += "TITLE \"" + cleanTitle(lut.title) + "\"\n";
    out += "LUT_3D_SIZE " + std::to_string(lut.size) + "\n";
    const auto appendDomain = [&out](const char* key, const double* d) {
        out += key;
        for (int a = 0; a < 3; ++a) {
            out += ' ';
            appendNumber(out, d[a]);
        }
        out += '\n';
    };
    appendDomain("DOMAIN_MIN", lut.domainMin);
    appendDomain("DOMAIN_MAX", lut.domainMax);
    // "%.6f" of a float takes at most 47 characters (sign, 39 digits, point, 6 decimals).
    char line[3 * 48 + 1];
    for (std::size_t k = 0; k < lut.values.size(); k += 3) {
        const int len = std::snprintf(line, sizeof line, "%.6f %.6f %.6f\n", static_cast<double>(lut.values[k]),
                                      static_cast<double>(lut.values[k + 1]), static_cast<double>(lut.values[k + 2]));
        if (len < 0 || static_cast<std::size_t>(len) >= sizeof line)
            throw Error(ErrorCode::InvalidArgument, "invalid LUT: a value does not fit a table line");
        out.append(line, static_cast<std::size_t>(len));
    }
    return out;
}

namespace {

class CubeParser {
public:
    CubeParser(std::string_view text, const std::string& name) : m_text(text), m_name(name) {}

    CubeLut parse()
    {
        CubeLut lut;
        bool haveSize = false, haveTitle = false, haveMin = false, haveMax = false, haveRange = false;
        std::size_t expected = 0;
        std::string_view line;
        while (nextLine(line)) {
            const std::string_view t = trim(line);
            if (t.empty() || t.front() == '#') continue;
            const bool numeric = std::isdigit(static_cast<unsigned char>(t.front())) || t.front() == '-' ||
                                 t.front() == '+' || t.front() == '.';
            if (numeric) {
                if (!haveSize) fail("a table line before LUT_3D_SIZE");
                if (lut.values.size() >= 3 * expected)
                    fail("more than LUT_3D_SIZE^3 = " + std::to_string(expected) + " table lines");
                double v[3];
                readNumbers(t, v, 3);
                for (double x : v) {
                    // Stored as float: a number beyond float's range would become infinite.
                    if (!fitsFloat(x)) fail("a table value beyond float's range");
                    lut.values.push_back(static_cast<float>(x));
                }
                continue;
            }
            if (!lut.values.empty()) fail("a keyword after the table has started");
            const std::size_t space = t.find_first_of(" \t");
            const std::string_view key = t.substr(0, space);
            const std::string_view rest = space == std::string_view::npos ? std::string_view() : trim(t.substr(space));
            if (key == "TITLE") {
                once(haveTitle, key);
                if (rest.size() < 2 || rest.front() != '"' || rest.back() != '"') fail("TITLE must be a quoted string");
                lut.title = std::string(rest.substr(1, rest.size() - 2));
            } else if (key == "LUT_3D_SIZE") {
                once(haveSize, key);
                double n;
                readNumbers(rest, &n, 1);
                if (n != std::floor(n) || n < kMinCubeSize || n > kMaxCubeSize)
                    fail("LUT_3D_SIZE must be a whole number between 2 and 256");
                lut.size = static_cast<int>(n);
                expected = static_cast<std::size_t>(lut.size) * lut.size * lut.size;
                lut.values.reserve(3 * expected);
            } else if (key == "DOMAIN_MIN") {
                once(haveMin, key);
                readNumbers(rest, lut.domainMin, 3);
                checkFloatRange(lut.domainMin, 3, key);
            } else if (key == "DOMAIN_MAX") {
                once(haveMax, key);
                readNumbers(rest, lut.domainMax, 3);
                checkFloatRange(lut.domainMax, 3, key);
            } else if (key == "LUT_3D_INPUT_RANGE") {  // Resolve's older form of the domain: one min and max
                once(haveRange, key);
                if (haveMin || haveMax) fail("LUT_3D_INPUT_RANGE together with DOMAIN_MIN/DOMAIN_MAX");
                double r[2];
                readNumbers(rest, r, 2);
                checkFloatRange(r, 2, key);
                for (int a = 0; a < 3; ++a) lut.domainMin[a] = r[0], lut.domainMax[a] = r[1];
            } else if (key == "LUT_1D_SIZE") {
                fail("a 1-D LUT (LUT_1D_SIZE); only 3-D LUTs are supported");
            } else {
                fail("unknown keyword '" + std::string(key) + "'");
            }
        }
        m_line = 0;
        if (!haveSize) fail("no LUT_3D_SIZE line (not a 3-D .cube LUT)");
        if (lut.values.size() != 3 * expected)
            fail("the table has " + std::to_string(lut.values.size() / 3) + " lines, LUT_3D_SIZE " +
                 std::to_string(lut.size) + " needs " + std::to_string(expected));
        for (int a = 0; a < 3; ++a)
            if (!(lut.domainMin[a] < lut.domainMax[a])) fail("DOMAIN_MIN must be below DOMAIN_MAX in every channel");
        return lut;
    }

private:
    bool nextLine(std::string_view& line)
    {
        if (m_pos >= m_text.size()) return false;
        const std::size_t end = m_text.find('\n', m_pos);
        const std::size_t stop = end == std::string_view::npos ? m_text.size() : end;
        line = m_text.substr(m_pos, stop - m_pos);
        m_pos = stop + 1;
        ++m_line;
        return true;
    }

    static std::string_view trim(std::string_view s)
    {
        while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
        while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
        return s;
    }

    void once(bool& seen, std::string_view key)
    {
        if (seen) fail(std::string(key) + " given twice");
        seen = true;
    }

    // True when x rounds to a finite float: below FLT_MAX + half its ulp (2^103),
    // e.g. "3.4028235e+38", the shortest text of FLT_MAX, which is above FLT_MAX.
    static bool fitsFloat(double x)
    {
        static const double limit = static_cast<double>(std::numeric_limits<float>::max()) + std::ldexp(1.0, 103);
        return std::fabs(x) < limit;
    }

    // The domain is written as floats (formatCube): a wider number could not be written back.
    void checkFloatRange(const double* v, int count, std::string_view key)
    {
        for (int k = 0; k < count; ++k)
            if (!fitsFloat(v[k])) fail(std::string(key) + " beyond float's range");
    }

    // Exactly `count` finite numbers separated by blanks.
    void readNumbers(std::string_view s, double* out, int count)
    {
        std::string copy(s);  // strtod needs a terminated string
        const char* p = copy.c_str();
        for (int k = 0; k < count; ++k) {
            char* end = nullptr;
            errno = 0;
            const double v = std::strtod(p, &end);
            if (end == p || errno == ERANGE || !std::isfinite(v))
                fail("expected " + std::to_string(count) + " numbers, got '" + copy + "'");
            if (*end != '\0' && !std::isspace(static_cast<unsigned char>(*end)))
                fail("expected " + std::to_string(count) + " numbers, got '" + copy + "'");
            out[k] = v;
            p = end;
        }
        while (*p && std::isspace(static_cast<unsigned char>(*p))) ++p;
        if (*p) fail("expected " + std::to_string(count) + " numbers, got '" + copy + "'");
    }

    [[noreturn]] void fail(const std::string& what) const
    {
        const std::string where = m_line > 0 ? " (line " + std::to_string(m_line) + ")" : "";
        throw Error(ErrorCode::InvalidArgument, m_name + ": not a valid .cube LUT: " + what + where);
    }

    std::string_view m_text;
    std::string m_name;
    std::size_t m_pos = 0;
    std::size_t m_line = 0;
};

}  // namespace

CubeLut parseCube(std::string_view text, const std::string& nameForMessages)
{
    return CubeParser(text, nameForMessages).parse();
}

void writeCubeFile(const std::string& path, const CubeLut& lut, const AtomicWriteOptions& options)
{
    const std::string text = formatCube(lut);
    writeFileAtomically(path, text.data(), text.size(), options);
}

CubeLut readCubeFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorCode::Io, path + ": cannot open the file (missing, or no permission)");
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw Error(ErrorCode::Io, path + ": reading failed");
    return parseCube(text.str(), path);
}

CubeAxisPosition cubeAxisPosition(const CubeLut& lut, int channel, float value)
{
    const int n = lut.size;
    const double t = (value - lut.domainMin[channel]) / (lut.domainMax[channel] - lut.domainMin[channel]) * (n - 1);
    const double c = std::clamp(t, 0.0, static_cast<double>(n - 1));
    int i = static_cast<int>(c);
    if (i > n - 2) i = n - 2;
    return {i, static_cast<float>(c - i)};
}

CubeStencil cubeStencil(const CubeLut& lut, const float rgb[3], CubeInterpolation interpolation)
{
    int i0[3];
    float f[3];
    for (int a = 0; a < 3; ++a) {
        const CubeAxisPosition p = cubeAxisPosition(lut, a, rgb[a]);
        i0[a] = p.cell;
        f[a] = p.fraction;
    }
    // Corner (dr, dg, db) of the lattice cell that holds the point.
    auto node = [&](int dr, int dg, int db) { return lut.nodeIndex(i0[0] + dr, i0[1] + dg, i0[2] + db); };
    const float fr = f[0], fg = f[1], fb = f[2];
    CubeStencil s;
    if (interpolation == CubeInterpolation::Trilinear) {
        s.count = 8;
        int k = 0;
        for (int db = 0; db < 2; ++db)
            for (int dg = 0; dg < 2; ++dg)
                for (int dr = 0; dr < 2; ++dr, ++k) {
                    s.node[k] = node(dr, dg, db);
                    s.weight[k] = (dr ? fr : 1 - fr) * (dg ? fg : 1 - fg) * (db ? fb : 1 - fb);
                }
        return s;
    }
    // Tetrahedral: the unit cell split into six tetrahedra along its main
    // diagonal; the one holding the point is chosen by the order of the fractions
    // and the point is a barycentric blend of its four corners: c000, two corners
    // on the path to c111, and c111.
    s.count = 4;
    s.node[0] = node(0, 0, 0);
    s.node[3] = node(1, 1, 1);
    if (fr > fg) {
        if (fg > fb) {  // r > g > b
            s.node[1] = node(1, 0, 0), s.node[2] = node(1, 1, 0);
            s.weight[0] = 1 - fr, s.weight[1] = fr - fg, s.weight[2] = fg - fb, s.weight[3] = fb;
        } else if (fr > fb) {  // r > b >= g
            s.node[1] = node(1, 0, 0), s.node[2] = node(1, 0, 1);
            s.weight[0] = 1 - fr, s.weight[1] = fr - fb, s.weight[2] = fb - fg, s.weight[3] = fg;
        } else {  // b >= r > g
            s.node[1] = node(0, 0, 1), s.node[2] = node(1, 0, 1);
            s.weight[0] = 1 - fb, s.weight[1] = fb - fr, s.weight[2] = fr - fg, s.weight[3] = fg;
        }
    } else {
        if (fb > fg) {  // b > g >= r
            s.node[1] = node(0, 0, 1), s.node[2] = node(0, 1, 1);
            s.weight[0] = 1 - fb, s.weight[1] = fb - fg, s.weight[2] = fg - fr, s.weight[3] = fr;
        } else if (fb > fr) {  // g >= b > r
            s.node[1] = node(0, 1, 0), s.node[2] = node(0, 1, 1);
            s.weight[0] = 1 - fg, s.weight[1] = fg - fb, s.weight[2] = fb - fr, s.weight[3] = fr;
        } else {  // g >= r >= b
            s.node[1] = node(0, 1, 0), s.node[2] = node(1, 1, 0);
            s.weight[0] = 1 - fg, s.weight[1] = fg - fr, s.weight[2] = fr - fb, s.weight[3] = fb;
        }
    }
    return s;
}

void applyCube(const CubeLut& lut, const float rgb[3], float out[3], CubeInterpolation interpolation)
{
    const CubeStencil s = cubeStencil(lut, rgb, interpolation);
    for (int a = 0; a < 3; ++a) {
        float sum = 0.0f;
        for (int k = 0; k < s.count; ++k) sum += s.weight[k] * lut.values[3 * s.node[k] + a];
        out[a] = sum;
    }
}

Image applyCubeToImage(const CubeLut& lut, const Image& image, CubeInterpolation interpolation, int threads)
{
    validateImage(image, "image");
    validateCube(lut);
    const int channels = image.channels == 4 ? 4 : 3;
    Image out = Image::allocate(image.width, image.height, channels, image.depth);
    const bool deep = image.depth == 16;
    const float maxValue = deep ? 65535.0f : 255.0f;
    const int ic = image.channels;
    const std::ptrdiff_t count = static_cast<std::ptrdiff_t>(image.pixelCount());
    const int t = resolveThreadCount(threads);
#pragma omp parallel for num_threads(t) schedule(static) if (count > 16384)
    for (std::ptrdiff_t p = 0; p < count; ++p) {
        const std::size_t in = static_cast<std::size_t>(p) * ic, o = static_cast<std::size_t>(p) * channels;
        float rgb[3], r[3];
        for (int k = 0; k < 3; ++k) {
            const int c = ic == 1 ? 0 : k;
            rgb[k] = (deep ? image.samples16()[in + c] : image.samples8()[in + c]) / maxValue;
        }
        applyCube(lut, rgb, r, interpolation);
        for (int k = 0; k < 3; ++k) {
            const float v = std::clamp(r[k], 0.0f, 1.0f) * maxValue + 0.5f;
            if (deep) out.samples16()[o + k] = static_cast<std::uint16_t>(v);
            else out.samples8()[o + k] = static_cast<std::uint8_t>(v);
        }
        if (channels == 4) {
            if (deep) out.samples16()[o + 3] = image.samples16()[in + 3];
            else out.samples8()[o + 3] = image.samples8()[in + 3];
        }
    }
    return out;
}

}  // namespace uot
