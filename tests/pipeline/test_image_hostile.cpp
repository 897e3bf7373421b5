// Hostile image files, made here byte by byte: corrupt JPEGs are refused (not
// half-decoded) while valid ones (baseline, progressive, restart markers, gray)
// still load; the pixel and memory limit is checked from the header of every
// format before decoding (TIFF in both byte orders and BigTIFF, WebP's three
// kinds, BMP with negative heights, PNG, JPEG); unknown formats are refused;
// running out of memory names the file; metadata that cannot be copied is
// skipped with a warning naming the source. Qt Test.

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <cstdio>
#include <cstdlib>

#include <jpeglib.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include "core/imageio/image_io.h"
#include "core/transport/uot_error.h"
#include "tests/support/qt_checks.h"

using namespace uot;
namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

namespace {

fs::path tempDir()
{
    static const fs::path dir = [] {
        const fs::path d = fs::temp_directory_path() / ("uot-hostile-test-" + std::to_string(::getpid()));
        fs::remove_all(d);
        fs::create_directories(d);
        return d;
    }();
    return dir;
}

Bytes readFile(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), {});
}

void put(Bytes& b, std::uint64_t v, int size, bool bigEndian)
{
    for (int k = 0; k < size; ++k) b.push_back(static_cast<std::uint8_t>(v >> (8 * (bigEndian ? size - 1 - k : k))));
}

// A TIFF whose IFD0 says width x height, `samples` samples of `bits` bits, with
// a few bytes of junk as its only strip (so only the header can be trusted).
Bytes tiff(std::uint32_t width, std::uint32_t height, int samples, int bits, bool bigEndian, bool bigTiff)
{
    Bytes b;
    b.push_back(bigEndian ? 'M' : 'I');
    b.push_back(bigEndian ? 'M' : 'I');
    put(b, bigTiff ? 43 : 42, 2, bigEndian);
    const int offsetSize = bigTiff ? 8 : 4;
    if (bigTiff) {
        put(b, 8, 2, bigEndian);
        put(b, 0, 2, bigEndian);
    }
    put(b, bigTiff ? 16 : 8, offsetSize, bigEndian);  // IFD0 right after the header
    struct Entry {
        int tag, type;
        std::uint64_t value;
    };
    const std::vector<Entry> entries = {{256, 4, width}, {257, 4, height}, {258, 3, std::uint64_t(bits)},
                                        {259, 3, 1},     {262, 3, samples == 1 ? 1u : 2u},
                                        {273, 4, 0},     {277, 3, std::uint64_t(samples)},
                                        {278, 4, height}, {279, 4, 16}};
    put(b, entries.size(), bigTiff ? 8 : 2, bigEndian);
    for (const Entry& e : entries) {
        put(b, static_cast<std::uint64_t>(e.tag), 2, bigEndian);
        put(b, static_cast<std::uint64_t>(e.type), 2, bigEndian);
        put(b, 1, offsetSize, bigEndian);
        // A value is left-justified in its field.
        const int size = e.type == 3 ? 2 : 4;
        put(b, e.value, size, bigEndian);
        for (int k = size; k < offsetSize; ++k) b.push_back(0);
    }
    put(b, 0, offsetSize, bigEndian);  // no next IFD
    for (int k = 0; k < 16; ++k) b.push_back(0x55);
    return b;
}

// A real 8-bit gray TIFF, uncompressed, one row per strip. With shareStrips
// every strip's offset points at the same row of data (how a few-kilobyte file
// decodes to a 12000 x 12000 image); otherwise each row has its own bytes,
// row y holding the value y.
Bytes stripedTiff(std::uint32_t width, std::uint32_t height, bool shareStrips)
{
    Bytes b = {'I', 'I'};
    put(b, 42, 2, false);
    put(b, 8, 4, false);
    const std::uint32_t entryCount = 9;
    const std::uint32_t arrays = 8 + 2 + entryCount * 12 + 4;
    const std::uint32_t counts = arrays + 4 * height, data = counts + 4 * height;
    struct Entry {
        int tag, type;
        std::uint32_t count, value;
    };
    const Entry entries[] = {{256, 4, 1, width}, {257, 4, 1, height}, {258, 3, 1, 8},      {259, 3, 1, 1},
                             {262, 3, 1, 1},     {273, 4, height, arrays}, {277, 3, 1, 1}, {278, 4, 1, 1},
                             {279, 4, height, counts}};
    put(b, entryCount, 2, false);
    for (const Entry& e : entries) {
        put(b, static_cast<std::uint64_t>(e.tag), 2, false);
        put(b, static_cast<std::uint64_t>(e.type), 2, false);
        put(b, e.count, 4, false);
        put(b, e.value, e.type == 3 ? 2 : 4, false);
        if (e.type == 3) put(b, 0, 2, false);
    }
    put(b, 0, 4, false);
    for (std::uint32_t y = 0; y < height; ++y) put(b, data + (shareStrips ? 0 : y * width), 4, false);
    for (std::uint32_t y = 0; y < height; ++y) put(b, width, 4, false);
    for (std::uint32_t y = 0; y < (shareStrips ? 1 : height); ++y)
        for (std::uint32_t x = 0; x < width; ++x) b.push_back(static_cast<std::uint8_t>(y));
    return b;
}

// A RIFF WebP container holding one chunk.
Bytes webp(const char* fourcc, const Bytes& payload)
{
    Bytes b = {'R', 'I', 'F', 'F'};
    put(b, 4 + 8 + payload.size(), 4, false);
    for (const char* c : {"WEBP", fourcc})
        for (int k = 0; k < 4; ++k) b.push_back(static_cast<std::uint8_t>(c[k]));
    put(b, payload.size(), 4, false);
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
}

Bytes webpVp8x(std::uint32_t w, std::uint32_t h)
{
    Bytes p = {0x10, 0, 0, 0};  // alpha flag
    put(p, w - 1, 3, false);
    put(p, h - 1, 3, false);
    return webp("VP8X", p);
}

Bytes webpVp8l(std::uint32_t w, std::uint32_t h)
{
    Bytes p = {0x2F};
    put(p, (w - 1) | ((h - 1) << 14), 4, false);
    for (int k = 0; k < 8; ++k) p.push_back(0);
    return webp("VP8L", p);
}

Bytes webpVp8(std::uint32_t w, std::uint32_t h)
{
    Bytes p = {0x50, 0x02, 0x00, 0x9D, 0x01, 0x2A};  // key frame tag, start code
    put(p, w, 2, false);
    put(p, h, 2, false);
    for (int k = 0; k < 8; ++k) p.push_back(0);
    return webp("VP8 ", p);
}

// A 24-bit BMP header (BITMAPINFOHEADER) with the given height (negative: top-down).
Bytes bmp(std::int32_t w, std::int32_t h)
{
    Bytes b = {'B', 'M'};
    put(b, 54 + 16, 4, false);
    put(b, 0, 4, false);
    put(b, 54, 4, false);
    put(b, 40, 4, false);
    put(b, static_cast<std::uint32_t>(w), 4, false);
    put(b, static_cast<std::uint32_t>(h), 4, false);
    put(b, 1, 2, false);
    put(b, 24, 2, false);
    for (int k = 0; k < 24; ++k) b.push_back(0);
    for (int k = 0; k < 16; ++k) b.push_back(0x33);
    return b;
}

// A JPEG of `image` encoded by OpenCV with the given extra parameters.
Bytes jpegOf(const cv::Mat& image, std::vector<int> params = {})
{
    std::vector<std::uint8_t> out;
    cv::imencode(".jpg", image, out, params);
    return out;
}

cv::Mat texture(int w, int h, int type)
{
    cv::Mat m(h, w, type);
    cv::randu(m, cv::Scalar::all(0), cv::Scalar::all(255));
    return m;
}

// A CMYK JPEG (Adobe-style, as Photoshop writes for print) of w x h made with
// libjpeg directly (OpenCV cannot write one).
Bytes cmykJpeg(int w, int h)
{
    jpeg_compress_struct info;
    jpeg_error_mgr errors;
    info.err = jpeg_std_error(&errors);
    jpeg_create_compress(&info);
    unsigned char* buffer = nullptr;
    unsigned long size = 0;
    jpeg_mem_dest(&info, &buffer, &size);
    info.image_width = static_cast<JDIMENSION>(w);
    info.image_height = static_cast<JDIMENSION>(h);
    info.input_components = 4;
    info.in_color_space = JCS_CMYK;
    jpeg_set_defaults(&info);
    jpeg_start_compress(&info, TRUE);
    std::vector<unsigned char> row(static_cast<std::size_t>(w) * 4);
    while (info.next_scanline < info.image_height) {
        for (std::size_t k = 0; k < row.size(); ++k) row[k] = static_cast<unsigned char>((k * 37 + info.next_scanline * 11) & 255);
        JSAMPROW rows[1] = {row.data()};
        jpeg_write_scanlines(&info, rows, 1);
    }
    jpeg_finish_compress(&info);
    Bytes out(buffer, buffer + size);
    jpeg_destroy_compress(&info);
    std::free(buffer);
    return out;
}

// The offset of a JPEG's frame header (SOF0 or SOF2) marker.
std::size_t frameHeader(const Bytes& jpeg)
{
    for (std::size_t k = 2; k + 1 < jpeg.size(); ++k)
        if (jpeg[k] == 0xFF && (jpeg[k + 1] == 0xC0 || jpeg[k + 1] == 0xC2)) return k;
    return 0;
}

// The process's virtual memory size in bytes (VmSize in /proc/self/status).
std::uint64_t virtualMemory()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024;
    return 0;
}

}  // namespace

class TestImageHostile : public QObject {
    Q_OBJECT
private slots:
    void corruptJpegsAreRefused();
    void validJpegsStillLoad();
    void limitsAreCheckedFromEveryHeader();
    void memoryLimitCountsBytesPerPixel();
    void unknownFormatsAreRefused();
    void tiffStripsSharingTheirDataAreRefused();
    void outOfMemoryNamesTheFileAndSize();
    void uncopyableMetadataIsSkippedWithAWarning();
    void cleanupTestCase() { fs::remove_all(tempDir()); }
};

void TestImageHostile::corruptJpegsAreRefused()
{
    // The first half of a photo, with an end-of-image marker appended.
    const Bytes photo = readFile(std::string(UOT_SAMPLES_DIR) + "/home.jpg");
    QVERIFY(photo.size() > 10000);
    Bytes half(photo.begin(), photo.begin() + static_cast<std::ptrdiff_t>(photo.size() / 2));
    half.push_back(0xFF);
    half.push_back(0xD9);
    UOT_QVERIFY_THROWS_WITH(decodeImage(half, "half.jpg"), "half.jpg: the JPEG data is corrupt");

    // A 16x16 black JPEG whose frame header claims 14000 x 14000 (196 Mpx, under
    // the default limit): refused at once, without decoding 196 Mpx of gray.
    Bytes bomb = jpegOf(cv::Mat(16, 16, CV_8UC3, cv::Scalar::all(0)));
    const std::size_t sof = frameHeader(bomb);
    QVERIFY(sof > 0);
    bomb[sof + 5] = 14000 >> 8;
    bomb[sof + 6] = 14000 & 255;
    bomb[sof + 7] = 14000 >> 8;
    bomb[sof + 8] = 14000 & 255;
    const auto start = std::chrono::steady_clock::now();
    UOT_QVERIFY_THROWS_WITH(decodeImage(bomb, "bomb.jpg"), "bomb.jpg: the JPEG data is corrupt");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    UOT_QVERIFY_MSG(seconds < 2.0, "the refusal took " << seconds << " s");

    // The same as a progressive JPEG (whose decode allocates every coefficient
    // up front: 588 MB here): refused from the file's size, before that.
    Bytes progressive = jpegOf(cv::Mat(16, 16, CV_8UC3, cv::Scalar::all(0)), {cv::IMWRITE_JPEG_PROGRESSIVE, 1});
    const std::size_t sof2 = frameHeader(progressive);
    QVERIFY(sof2 > 0 && progressive[sof2 + 1] == 0xC2);
    progressive[sof2 + 5] = 14000 >> 8;
    progressive[sof2 + 6] = 14000 & 255;
    progressive[sof2 + 7] = 14000 >> 8;
    progressive[sof2 + 8] = 14000 & 255;
    UOT_QVERIFY_THROWS_WITH(decodeImage(progressive, "bomb2.jpg"),
                            "bomb2.jpg: the JPEG data is corrupt or incomplete (a 14000 x 14000 frame needs at least");
}

void TestImageHostile::validJpegsStillLoad()
{
    for (const auto& entry : fs::directory_iterator(UOT_SAMPLES_DIR)) {
        if (entry.path().extension() != ".jpg") continue;
        const cv::Mat reference = cv::imread(entry.path().string(), cv::IMREAD_COLOR);
        const Image image = readImage(entry.path().string());
        UOT_QVERIFY_MSG(image.width == reference.cols && image.height == reference.rows,
                        entry.path() << ": " << image.width << "x" << image.height);
    }
    const cv::Mat colour = texture(67, 45, CV_8UC3), gray = texture(40, 33, CV_8UC1);
    const struct {
        const char* name;
        cv::Mat image;
        std::vector<int> params;
        int channels;
    } cases[] = {{"progressive", colour, {cv::IMWRITE_JPEG_PROGRESSIVE, 1}, 3},
                 {"restart markers", colour, {cv::IMWRITE_JPEG_RST_INTERVAL, 2}, 3},
                 {"progressive gray", gray, {cv::IMWRITE_JPEG_PROGRESSIVE, 1}, 1},
                 {"optimized", colour, {cv::IMWRITE_JPEG_OPTIMIZE, 1}, 3}};
    const Image cmyk = decodeImage(cmykJpeg(30, 20), "cmyk.jpg");
    QVERIFY(cmyk.width == 30 && cmyk.height == 20 && cmyk.channels == 3);
    for (const auto& c : cases) {
        const Bytes bytes = jpegOf(c.image, c.params);
        Image image;
        try {
            image = decodeImage(bytes, c.name);
        } catch (const std::exception& e) {
            QFAIL((std::string(c.name) + ": " + e.what()).c_str());
        }
        UOT_QVERIFY_MSG(image.width == c.image.cols && image.height == c.image.rows && image.channels == c.channels,
                        c.name << ": " << image.width << "x" << image.height << "x" << image.channels);
    }
}

void TestImageHostile::limitsAreCheckedFromEveryHeader()
{
    // 100 x 100 pixels against a limit of 5000, every file with junk for data.
    ReadOptions limit;
    limit.maxPixels = 5000;
    const struct {
        const char* name;
        Bytes bytes;
    } cases[] = {{"le.tif", tiff(100, 100, 3, 8, false, false)},
                 {"be.tif", tiff(100, 100, 3, 8, true, false)},
                 {"big-le.tif", tiff(100, 100, 3, 8, false, true)},
                 {"big-be.tif", tiff(100, 100, 3, 8, true, true)},
                 {"vp8x.webp", webpVp8x(100, 100)},
                 {"vp8l.webp", webpVp8l(100, 100)},
                 {"vp8.webp", webpVp8(100, 100)},
                 {"bottom-up.bmp", bmp(100, 100)},
                 {"top-down.bmp", bmp(100, -100)}};
    for (const auto& c : cases)
        UOT_QVERIFY_THROWS_WITH(decodeImage(c.bytes, c.name, limit),
                                std::string(c.name) + ": the image has 10000 pixels (100x100), above the limit of 5000");
    // The probe's 20000 x 20000 TIFF, under the default limit: refused from its header.
    UOT_QVERIFY_THROWS_WITH(decodeImage(tiff(20000, 20000, 3, 8, false, false), "huge.tif"),
                            "(20000x20000), above the limit of 200000000");
}

void TestImageHostile::memoryLimitCountsBytesPerPixel()
{
    // 80 x 80 = 6400 pixels (under 10000), but 16-bit RGBA: 51200 bytes, more
    // than 10000 8-bit RGB pixels (30000 bytes).
    ReadOptions limit;
    limit.maxPixels = 10000;
    UOT_QVERIFY_THROWS_WITH(decodeImage(tiff(80, 80, 4, 16, false, false), "deep.tif", limit),
                            "deep.tif: decoding the image (80x80), 4 channels of 16 bit, would take 1 MB");
    // 8-bit RGB of the same size passes the header check (and fails only on its junk data).
    try {
        decodeImage(tiff(80, 80, 3, 8, false, false), "shallow.tif", limit);
    } catch (const std::exception& e) {
        QVERIFY2(std::string(e.what()).find("limit") == std::string::npos, e.what());
    }
}

// Issue 25, D6: a 6.7 KB TIFF of 12000 x 12000 whose strips all read one
// deflated strip was decoded (27 s, 3.4 GiB). Strips sharing their data are
// refused from the header; the same file with its own data per strip loads.
void TestImageHostile::tiffStripsSharingTheirDataAreRefused()
{
    UOT_QVERIFY_THROWS_WITH(decodeImage(stripedTiff(64, 48, true), "shared.tif"),
                            "shared.tif: not a readable image: 48 of its TIFF strips or tiles read their data from only 1");
    const Image image = decodeImage(stripedTiff(64, 48, false), "rows.tif");
    QCOMPARE(image.width, 64);
    QCOMPARE(image.height, 48);
    QCOMPARE(int(image.samples8()[std::size_t(30) * 64 * image.channels]), 30);
}

void TestImageHostile::unknownFormatsAreRefused()
{
    // A valid binary PPM (OpenCV could decode it, unbounded): not a supported format.
    std::string ppm = "P6\n2 2\n255\n";
    ppm += std::string(12, '\x40');
    const Bytes bytes(ppm.begin(), ppm.end());
    UOT_QVERIFY_THROWS_WITH(decodeImage(bytes, "image.ppm"), "image.ppm: not a readable image (the format is not recognised)");
    // A header too short to hold the size.
    UOT_QVERIFY_THROWS_WITH(decodeImage(Bytes{'B', 'M', 0, 0}, "short.bmp"), "short.bmp: not a readable image");
}

void TestImageHostile::outOfMemoryNamesTheFileAndSize()
{
    // A valid 8000 x 8000 gray PNG (64 MB of pixels, a few KB on disk), decoded
    // by a child process whose address space has 24 MB to spare.
    const cv::Mat black(8000, 8000, CV_8UC1, cv::Scalar::all(0));
    std::vector<std::uint8_t> png;
    cv::imencode(".png", black, png);
    const fs::path out = tempDir() / "message.txt";
    const pid_t pid = ::fork();
    if (pid == 0) {
        const rlimit cap{virtualMemory() + (24u << 20), virtualMemory() + (24u << 20)};
        ::setrlimit(RLIMIT_AS, &cap);
        std::string message = "no exception";
        try {
            decodeImage(png, "black.png");
        } catch (const std::exception& e) {
            message = e.what();
        }
        std::ofstream(out) << message;
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::ifstream in(out);
    const std::string message((std::istreambuf_iterator<char>(in)), {});
    QVERIFY2(message.find("black.png: not enough memory to decode the image (8000 x 8000, 64 MB") != std::string::npos,
             message.c_str());
}

void TestImageHostile::uncopyableMetadataIsSkippedWithAWarning()
{
    const Bytes photo = jpegOf(texture(64, 48, CV_8UC3));
    // EXIF whose first IFD lies 2 GB past the end; then an ICC profile of junk.
    Bytes badExif = {0xFF, 0xD8, 0xFF, 0xE1, 0, 16, 'E', 'x', 'i', 'f', 0, 0, 'I', 'I', 42, 0, 0xFF, 0xFF, 0xFF, 0x7F};
    badExif.insert(badExif.end(), photo.begin() + 2, photo.end());
    Bytes icc(1000, 0);
    for (int k = 0; k < 100; ++k)
        for (char c : std::string("garbage")) icc.push_back(static_cast<std::uint8_t>(c));
    Bytes badIcc = {0xFF, 0xD8, 0xFF, 0xE2};
    put(badIcc, 2 + 14 + icc.size(), 2, true);
    for (char c : std::string("ICC_PROFILE")) badIcc.push_back(static_cast<std::uint8_t>(c));
    badIcc.insert(badIcc.end(), {0, 1, 1});
    badIcc.insert(badIcc.end(), icc.begin(), icc.end());
    badIcc.insert(badIcc.end(), photo.begin() + 2, photo.end());

    const fs::path good = tempDir() / "good.jpg";
    std::ofstream(good, std::ios::binary).write(reinterpret_cast<const char*>(photo.data()),
                                                static_cast<std::streamsize>(photo.size()));
    QVERIFY(metadataCopyWarning(good.string(), "out.jpg").empty());
    for (const auto& [name, bytes] : {std::pair<std::string, Bytes>{"badexif.jpg", badExif}, {"badicc.jpg", badIcc}}) {
        const fs::path source = tempDir() / name;
        std::ofstream(source, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                      static_cast<std::streamsize>(bytes.size()));
        const Image image = readImage(source.string());
        // Said before any work, for an output of each format that carries metadata.
        UOT_QVERIFY_MSG(metadataCopyWarning(source.string(), "out.jpg").rfind(source.string() + ": its metadata", 0) == 0,
                        metadataCopyWarning(source.string(), "out.jpg"));
        QVERIFY(metadataCopyWarning(source.string(), "out.bmp").empty());  // BMP carries none
        for (const char* ext : {".jpg", ".png", ".tif"}) {
            const fs::path output = tempDir() / ("out_" + name + ext);
            WriteOptions options;
            options.metadataFrom = source.string();
            options.profile = OutputProfile::Srgb;
            std::vector<std::string> warnings;
            options.warn = [&](const std::string& m) { warnings.push_back(m); };
            try {
                writeImage(output.string(), image, options);
            } catch (const std::exception& e) {
                QFAIL((output.string() + ": " + e.what()).c_str());
            }
            QVERIFY2(fs::exists(output), output.c_str());
            QCOMPARE(warnings.size(), std::size_t(1));
            UOT_QVERIFY_MSG(warnings[0].rfind(source.string() + ": its metadata (EXIF, XMP, IPTC) cannot be copied", 0) == 0 &&
                                warnings[0].find("is written without it") != std::string::npos,
                            warnings[0]);
            const Image back = readImage(output.string());
            QVERIFY(back.width == 64 && back.height == 48);
        }
    }
}

QTEST_GUILESS_MAIN(TestImageHostile)
#include "test_image_hostile.moc"
