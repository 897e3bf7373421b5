// libFuzzer target: the .cube reader and writer (core/color/cube_lut).
// 1. Arbitrary text through parseCube: a LUT it accepts is consistent (size in
//    range, size^3 finite triples, domain min < max) and survives the round trip
//    formatCube -> parseCube -> formatCube with identical text (the writer's
//    output is a fixed point).
// 2. The same bytes read as a lattice (size 2..5, values and domain from the
//    input): formatCube either refuses it (non-finite values) or writes text that
//    parses back to the same lattice within the writer's 6 decimals.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "core/color/cube_lut.h"
#include "core/transport/uot_error.h"

namespace {

void check(bool ok, const char* what)
{
    if (!ok) {
        std::fprintf(stderr, "fuzz_cube_lut: %s\n", what);
        std::abort();
    }
}

void checkConsistent(const uot::CubeLut& lut)
{
    check(lut.size >= uot::kMinCubeSize && lut.size <= uot::kMaxCubeSize, "size out of range");
    const std::size_t n = static_cast<std::size_t>(lut.size);
    check(lut.values.size() == n * n * n * 3, "value count differs from size^3 x 3");
    for (float v : lut.values) check(std::isfinite(v), "a non-finite value was accepted");
    for (int a = 0; a < 3; ++a) check(lut.domainMin[a] < lut.domainMax[a], "domain min >= max was accepted");
}

void parsedTextRoundTrip(std::string_view text)
{
    uot::CubeLut lut;
    try {
        lut = uot::parseCube(text, "fuzz input");
    } catch (const uot::Error&) {
        return;
    }
    checkConsistent(lut);
    std::string first;
    try {
        first = uot::formatCube(lut);
    } catch (const uot::Error&) {
        // A parsed value may still overflow float (e.g. 1e300): refusing it is fine.
        return;
    }
    const uot::CubeLut again = uot::parseCube(first, "written LUT");
    checkConsistent(again);
    check(uot::formatCube(again) == first, "formatCube(parseCube(text)) is not a fixed point");
}

// Consumes bytes from the input as numbers.
class Reader {
public:
    Reader(const std::uint8_t* data, std::size_t size) : m_data(data), m_size(size) {}
    bool has(std::size_t n) const { return m_pos + n <= m_size; }
    std::uint8_t byte() { return has(1) ? m_data[m_pos++] : 0; }
    float number()
    {
        std::uint32_t bits = 0;
        for (int k = 0; k < 4; ++k) bits = (bits << 8) | byte();
        float v;
        std::memcpy(&v, &bits, sizeof v);
        return v;
    }

private:
    const std::uint8_t* m_data;
    std::size_t m_size;
    std::size_t m_pos = 0;
};

void latticeRoundTrip(const std::uint8_t* data, std::size_t size)
{
    Reader in(data, size);
    uot::CubeLut lut;
    lut.size = 2 + in.byte() % 4;
    lut.title = "fuzz";
    for (int a = 0; a < 3; ++a) {
        lut.domainMin[a] = in.number();
        lut.domainMax[a] = in.number();
    }
    const std::size_t count = static_cast<std::size_t>(lut.size) * lut.size * lut.size * 3;
    lut.values.resize(count);
    for (float& v : lut.values) v = in.number();
    std::string text;
    try {
        text = uot::formatCube(lut);
    } catch (const uot::Error&) {
        return;  // refused: non-finite values or an empty domain
    }
    uot::CubeLut back;
    try {
        back = uot::parseCube(text, "written LUT");
    } catch (const uot::Error&) {
        // The writer's %.6f of a float beyond ~1e38 rounds to a number above float's
        // range, which the reader refuses; only such values may fail.
        for (float v : lut.values) if (std::fabs(v) > 1e38f) return;
        check(false, "the reader refused the writer's text");
    }
    check(back.size == lut.size && back.values.size() == lut.values.size(), "size changed in the round trip");
    for (std::size_t k = 0; k < count; ++k) {
        // %.6f: an absolute error of at most 5e-7, plus float rounding of the result.
        const double tol = 5.1e-7 + 1e-6 * std::fabs(static_cast<double>(lut.values[k]));
        check(std::fabs(static_cast<double>(back.values[k]) - lut.values[k]) <= tol, "a value changed in the round trip");
    }
    for (int a = 0; a < 3; ++a)
        check(static_cast<float>(back.domainMin[a]) == static_cast<float>(lut.domainMin[a]) &&
                  static_cast<float>(back.domainMax[a]) == static_cast<float>(lut.domainMax[a]),
              "the domain changed in the round trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    parsedTextRoundTrip(std::string_view(reinterpret_cast<const char*>(data), size));
    latticeRoundTrip(data, size);
    return 0;
}
