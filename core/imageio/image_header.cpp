#include "core/imageio/image_header.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace uot {

namespace {

// Bounds-checked little/big-endian reads from a byte vector (0 past the end).
class Reader {
public:
    Reader(const std::vector<std::uint8_t>& bytes, bool bigEndian) : m_bytes(bytes), m_big(bigEndian) {}
    bool has(std::uint64_t at, std::uint64_t size) const { return at <= m_bytes.size() && size <= m_bytes.size() - at; }
    std::uint64_t read(std::uint64_t at, int size) const
    {
        if (!has(at, static_cast<std::uint64_t>(size))) return 0;
        std::uint64_t v = 0;
        for (int k = 0; k < size; ++k) {
            const std::uint64_t b = m_bytes[static_cast<std::size_t>(at) + static_cast<std::size_t>(k)];
            v |= m_big ? b << (8 * (size - 1 - k)) : b << (8 * k);
        }
        return v;
    }

private:
    const std::vector<std::uint8_t>& m_bytes;
    bool m_big;
};

bool startsWith(const std::vector<std::uint8_t>& b, const char* magic, std::size_t size, std::size_t at = 0)
{
    return b.size() >= at + size && std::memcmp(b.data() + at, magic, size) == 0;
}

int bytesForBits(std::uint64_t bits) { return bits <= 8 ? 1 : bits <= 16 ? 2 : bits <= 32 ? 4 : 8; }

void peekPng(const std::vector<std::uint8_t>& b, ImageHeader& h)
{
    const Reader r(b, true);
    if (!startsWith(b, "IHDR", 4, 12)) return;
    h.width = r.read(16, 4);
    h.height = r.read(20, 4);
    const std::uint64_t depth = r.read(24, 1), colorType = r.read(25, 1);
    h.bytesPerSample = depth > 8 ? 2 : 1;
    h.channels = colorType == 0 ? 1 : colorType == 2 ? 3 : 4;  // palette, gray+alpha, RGBA: up to 4
}

void peekJpeg(const std::vector<std::uint8_t>& b, ImageHeader& h)
{
    const Reader r(b, true);
    std::size_t k = 2;
    while (k + 9 < b.size()) {
        if (b[k] != 0xFF) return;
        const std::uint8_t marker = b[k + 1];
        if (marker == 0xFF) {
            ++k;
            continue;
        }
        const std::size_t length = static_cast<std::size_t>(r.read(k + 2, 2));
        const bool sof = marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
        if (sof) {
            h.bytesPerSample = r.read(k + 4, 1) > 8 ? 2 : 1;
            h.height = r.read(k + 5, 2);
            h.width = r.read(k + 7, 2);
            h.channels = r.read(k + 9, 1) == 1 ? 1 : 3;
            return;
        }
        k += 2 + length;
    }
}

// The data offsets of a TIFF's strips or tiles (the values of an offsets tag):
// how many, and how many distinct non-zero ones. At most 1 << 20 are read.
void countDataBlocks(const Reader& r, std::uint64_t field, std::uint64_t count, int size, int offsetSize,
                     ImageHeader& h)
{
    if (count > (std::uint64_t(1) << 20)) return;
    const bool inlineValues = count <= static_cast<std::uint64_t>(offsetSize / size);
    const std::uint64_t start = inlineValues ? field : r.read(field, offsetSize);
    if (!r.has(start, count * static_cast<std::uint64_t>(size))) return;
    std::vector<std::uint64_t> offsets;
    offsets.reserve(static_cast<std::size_t>(count));
    for (std::uint64_t i = 0; i < count; ++i)
        if (const std::uint64_t o = r.read(start + i * static_cast<std::uint64_t>(size), size); o != 0) offsets.push_back(o);
    std::sort(offsets.begin(), offsets.end());
    h.dataBlocks = offsets.size();
    h.distinctDataBlocks = static_cast<std::uint64_t>(std::unique(offsets.begin(), offsets.end()) - offsets.begin());
}

// IFD0 of a TIFF or BigTIFF: ImageWidth, ImageLength, BitsPerSample,
// SamplesPerPixel, SampleFormat, PhotometricInterpretation, and the strip or
// tile offsets (StripOffsets, TileOffsets).
void peekTiff(const std::vector<std::uint8_t>& b, ImageHeader& h)
{
    const Reader r(b, b[0] == 'M');
    const bool big = r.read(2, 2) == 43;
    const int offsetSize = big ? 8 : 4;
    const std::uint64_t ifd = big ? r.read(8, 8) : r.read(4, 4);
    const std::uint64_t entries = r.read(ifd, big ? 8 : 2);
    const std::uint64_t first = ifd + (big ? 8 : 2);
    const std::uint64_t entrySize = big ? 20 : 12;
    std::uint64_t bits = 8, samples = 1, sampleFormat = 1, photometric = 1;
    for (std::uint64_t e = 0; e < entries && r.has(first + e * entrySize, entrySize); ++e) {
        const std::uint64_t at = first + e * entrySize;
        const std::uint64_t tag = r.read(at, 2), type = r.read(at + 2, 2);
        const std::uint64_t count = r.read(at + 4, offsetSize);
        const int size = type == 3 ? 2 : type == 4 ? 4 : type == 16 ? 8 : type == 1 ? 1 : 0;
        if (size == 0 || count == 0) continue;
        // The first value: inline when all values fit in the value field, else at the offset it holds.
        const std::uint64_t field = at + 4 + static_cast<std::uint64_t>(offsetSize);
        const bool inlineValue = count <= static_cast<std::uint64_t>(offsetSize / size);
        const std::uint64_t value = inlineValue ? r.read(field, size) : r.read(r.read(field, offsetSize), size);
        switch (tag) {
        case 256: h.width = value; break;
        case 257: h.height = value; break;
        case 258: bits = value; break;
        case 262: photometric = value; break;
        case 277: samples = value; break;
        case 339: sampleFormat = value; break;
        case 273:  // StripOffsets
        case 324:  // TileOffsets
            countDataBlocks(r, field, count, size, offsetSize, h);
            break;
        default: break;
        }
    }
    h.bytesPerSample = sampleFormat == 3 ? bytesForBits(bits < 32 ? 32 : bits) : bytesForBits(bits);
    h.channels = photometric == 3 ? 3 : samples == 1 ? 1 : samples == 3 ? 3 : 4;
}

void peekWebP(const std::vector<std::uint8_t>& b, ImageHeader& h)
{
    const Reader r(b, false);
    if (startsWith(b, "VP8X", 4, 12)) {
        h.channels = (r.read(20, 1) & 0x10) ? 4 : 3;
        if (!r.has(24, 6)) return;
        h.width = r.read(24, 3) + 1;
        h.height = r.read(27, 3) + 1;
    } else if (startsWith(b, "VP8L", 4, 12)) {
        if (r.read(20, 1) != 0x2F || !r.has(21, 4)) return;
        const std::uint64_t v = r.read(21, 4);
        h.width = (v & 0x3FFF) + 1;
        h.height = ((v >> 14) & 0x3FFF) + 1;
        h.channels = ((v >> 28) & 1) ? 4 : 3;
    } else if (startsWith(b, "VP8 ", 4, 12)) {
        if (!startsWith(b, "\x9D\x01\x2A", 3, 23)) return;
        h.width = r.read(26, 2) & 0x3FFF;
        h.height = r.read(28, 2) & 0x3FFF;
        h.channels = 3;
    }
}

void peekBmp(const std::vector<std::uint8_t>& b, ImageHeader& h)
{
    const Reader r(b, false);
    const std::uint64_t infoSize = r.read(14, 4);
    std::uint64_t bits = 0;
    if (infoSize == 12) {  // OS/2 core header: 16-bit sizes
        h.width = r.read(18, 2);
        h.height = r.read(20, 2);
        bits = r.read(24, 2);
    } else if (infoSize >= 40 && r.has(14, 16)) {
        const auto w = static_cast<std::int32_t>(r.read(18, 4));
        const auto ht = static_cast<std::int32_t>(r.read(22, 4));  // negative: rows stored top-down
        h.width = w > 0 ? static_cast<std::uint64_t>(w) : 0;
        h.height = ht < 0 ? static_cast<std::uint64_t>(-static_cast<std::int64_t>(ht)) : static_cast<std::uint64_t>(ht);
        bits = r.read(28, 2);
    }
    h.channels = bits == 32 ? 4 : 3;
}

}  // namespace

std::uint64_t ImageHeader::decodedBytes() const
{
    const long double bytes = static_cast<long double>(width) * static_cast<long double>(height) * channels *
                              bytesPerSample;
    const auto max = std::numeric_limits<std::uint64_t>::max();
    return bytes >= static_cast<long double>(max) ? max : static_cast<std::uint64_t>(bytes);
}

ImageHeader peekImageHeader(const std::vector<std::uint8_t>& b)
{
    ImageHeader h;
    if (startsWith(b, "\x89PNG\r\n\x1A\n", 8)) {
        h.format = ImageFormat::Png;
        peekPng(b, h);
    } else if (startsWith(b, "\xFF\xD8\xFF", 3)) {
        h.format = ImageFormat::Jpeg;
        peekJpeg(b, h);
    } else if (startsWith(b, "II*\0", 4) || startsWith(b, "MM\0*", 4) || startsWith(b, "II+\0", 4) ||
               startsWith(b, "MM\0+", 4)) {
        h.format = ImageFormat::Tiff;
        peekTiff(b, h);
    } else if (startsWith(b, "RIFF", 4) && startsWith(b, "WEBP", 4, 8)) {
        h.format = ImageFormat::WebP;
        peekWebP(b, h);
    } else if (startsWith(b, "BM", 2)) {
        h.format = ImageFormat::Bmp;
        peekBmp(b, h);
    }
    return h;
}

std::string formatName(ImageFormat format)
{
    switch (format) {
    case ImageFormat::Jpeg: return "JPEG";
    case ImageFormat::Png: return "PNG";
    case ImageFormat::Tiff: return "TIFF";
    case ImageFormat::WebP: return "WebP";
    case ImageFormat::Bmp: return "BMP";
    case ImageFormat::Unknown: break;
    }
    return "unknown";
}

}  // namespace uot
