// Image files: round trips (gray, alpha, 16 bit), EXIF orientation, corrupt /
// truncated / empty files, atomic writes that never replace the source, and a
// batch folder with one corrupt file. Qt Test.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "core/imageio/image_io.h"
#include "core/io/atomic_file.h"
#include "core/pipeline/batch_engine.h"
#include "core/transport/uot_error.h"
#include "tests/support/qt_checks.h"

using namespace uot;
namespace fs = std::filesystem;

namespace {

fs::path makeTempDir()
{
    fs::path d = fs::temp_directory_path() / ("uot_test_imageio_" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

// Constructed before (so destroyed after) the cleanup object below.
const fs::path gTempDir = makeTempDir();
fs::path tempDir() { return gTempDir; }

struct Cleanup {
    ~Cleanup()
    {
        std::error_code ec;
        fs::remove_all(gTempDir, ec);
    }
} cleanup;

void writeBytes(const fs::path& p, const std::vector<std::uint8_t>& bytes)
{
    std::ofstream out(p, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::uint8_t> readBytes(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
}

Image pattern(int w, int h, int channels, int depth)
{
    Image img = Image::allocate(w, h, channels, depth);
    for (std::size_t k = 0; k < img.pixelCount() * channels; ++k) {
        const unsigned v = static_cast<unsigned>(k * 2654435761u >> 7);
        if (depth == 16) img.samples16()[k] = static_cast<std::uint16_t>(v);
        else img.data[k] = static_cast<std::uint8_t>(v);
    }
    return img;
}

// Left half red, right half blue (for orientation checks).
Image halves(int w, int h)
{
    Image img = Image::allocate(w, h, 3, 8);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            std::uint8_t* p = &img.data[(static_cast<std::size_t>(y) * w + x) * 3];
            p[0] = x < w / 2 ? 255 : 0;
            p[2] = x < w / 2 ? 0 : 255;
        }
    return img;
}

// Inserts an APP1 Exif segment with one Orientation tag after the JPEG's SOI marker
// (big-endian TIFF header, one IFD entry: tag 0x0112, SHORT, count 1).
std::vector<std::uint8_t> withOrientation(const std::vector<std::uint8_t>& jpeg, int orientation)
{
    const std::vector<std::uint8_t> tiff = {'M', 'M', 0, 42, 0, 0, 0, 8,                 // header, IFD at 8
                                            0, 1,                                         // one entry
                                            0x01, 0x12, 0, 3, 0, 0, 0, 1,                 // Orientation, SHORT, 1
                                            0, static_cast<std::uint8_t>(orientation), 0, 0,  // value, padding
                                            0, 0, 0, 0};                                  // no next IFD
    std::vector<std::uint8_t> payload = {'E', 'x', 'i', 'f', 0, 0};
    payload.insert(payload.end(), tiff.begin(), tiff.end());
    const std::size_t len = payload.size() + 2;
    std::vector<std::uint8_t> out = {0xFF, 0xD8, 0xFF, 0xE1, static_cast<std::uint8_t>(len >> 8), static_cast<std::uint8_t>(len & 255)};
    out.insert(out.end(), payload.begin(), payload.end());
    out.insert(out.end(), jpeg.begin() + 2, jpeg.end());
    return out;
}

}  // namespace

class TestImageIo : public QObject {
    Q_OBJECT
private slots:
    void lossless_round_trips_data();
    void lossless_round_trips();
    void requested_depth_and_gray_output();
    void exif_orientation_is_applied();
    void corrupt_truncated_empty_and_oversized_files();
    void writes_are_atomic_and_never_replace_the_source();
    void batch_reports_the_corrupt_file_and_does_the_others();
    void multiscale_warm_start_converges_faster_on_photos();
};

void TestImageIo::lossless_round_trips_data()
{
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("depth");
    QTest::addColumn<QString>("ext");
    struct Case {
        int channels, depth;
        const char* ext;
    } cases[] = {{3, 8, "png"}, {4, 8, "png"}, {1, 8, "png"}, {3, 16, "png"}, {4, 16, "png"}, {1, 16, "png"},
                 {3, 8, "tif"}, {3, 16, "tif"}, {4, 8, "tif"}, {3, 8, "bmp"}, {1, 8, "bmp"}};
    for (const Case& c : cases)
        QTest::addRow("%s %d channels %d bit", c.ext, c.channels, c.depth) << c.channels << c.depth << QString(c.ext);
}

void TestImageIo::lossless_round_trips()
{
    QFETCH(int, channels);
    QFETCH(int, depth);
    QFETCH(QString, ext);
    {
        const std::string extText = ext.toStdString();
        const struct {
            int channels, depth;
            const char* ext;
        } c{channels, depth, extText.c_str()};
        const Image img = pattern(37, 21, c.channels, c.depth);
        const fs::path p = tempDir() / ("rt_" + std::to_string(c.channels) + "_" + std::to_string(c.depth) + "." + c.ext);
        writeImage(p.string(), img);
        const Image back = readImage(p.string());
        UOT_QVERIFY_MSG(back.width == 37 && back.height == 21 && back.channels == c.channels && back.depth == c.depth,
                      p << ": got " << back.channels << " channels, " << back.depth << " bit");
        UOT_QVERIFY_MSG(back.data == img.data, p << ": pixels differ");
    }
}

void TestImageIo::requested_depth_and_gray_output()
{
    // 16 bit written to JPEG becomes 8 bit; the requested depth is honoured for PNG.
    const Image deep = pattern(16, 16, 3, 16);
    WriteOptions eight;
    eight.depth = 8;
    writeImage((tempDir() / "deep8.png").string(), deep, eight);
    QVERIFY(readImage((tempDir() / "deep8.png").string()).depth == 8);
    writeImage((tempDir() / "deep.jpg").string(), deep);
    QVERIFY(readImage((tempDir() / "deep.jpg").string()).depth == 8);
    // Gray output of a colour image.
    WriteOptions gray;
    gray.color = OutputColor::Gray;
    writeImage((tempDir() / "gray.png").string(), pattern(8, 8, 3, 8), gray);
    QVERIFY(readImage((tempDir() / "gray.png").string()).channels == 1);
}

void TestImageIo::exif_orientation_is_applied()
{
    const Image img = halves(40, 20);
    const std::vector<std::uint8_t> jpeg = encodeImage(".jpg", img);
    const fs::path p = tempDir() / "rotated.jpg";
    writeBytes(p, withOrientation(jpeg, 6));  // 6: rotate 90 degrees clockwise to display
    const Image shown = readImage(p.string());
    UOT_QVERIFY_MSG(shown.width == 20 && shown.height == 40, "got " << shown.width << "x" << shown.height);
    // The original left (red) half is now the top half.
    if (shown.width == 20 && shown.height == 40) {
        const std::uint8_t* top = &shown.data[(5 * 20 + 10) * 3];
        const std::uint8_t* bottom = &shown.data[(35 * 20 + 10) * 3];
        QVERIFY(top[0] > 200 && top[2] < 60);
        QVERIFY(bottom[2] > 200 && bottom[0] < 60);
    }
    ReadOptions raw;
    raw.applyExifOrientation = false;
    const Image stored = readImage(p.string(), raw);
    QVERIFY(stored.width == 40 && stored.height == 20);
}

void TestImageIo::corrupt_truncated_empty_and_oversized_files()
{
    const fs::path empty = tempDir() / "empty.jpg";
    writeBytes(empty, {});
    UOT_QVERIFY_THROWS_WITH(readImage(empty.string()), "empty.jpg: the file is empty");
    UOT_QVERIFY_THROWS_WITH(readImage((tempDir() / "missing.png").string()), "missing.png: no such file");
    const fs::path junk = tempDir() / "junk.jpg";
    writeBytes(junk, std::vector<std::uint8_t>(1000, 0x5A));
    UOT_QVERIFY_THROWS_WITH(readImage(junk.string()), "junk.jpg: not a readable image");

    const std::vector<std::uint8_t> jpeg = encodeImage(".jpg", pattern(64, 64, 3, 8));
    const fs::path cut = tempDir() / "cut.jpg";
    writeBytes(cut, std::vector<std::uint8_t>(jpeg.begin(), jpeg.begin() + static_cast<std::ptrdiff_t>(jpeg.size() / 2)));
    UOT_QVERIFY_THROWS_WITH(readImage(cut.string()), "cut.jpg: the JPEG data is truncated");
    const std::vector<std::uint8_t> png = encodeImage(".png", pattern(64, 64, 3, 8));
    const fs::path cutPng = tempDir() / "cut.png";
    writeBytes(cutPng, std::vector<std::uint8_t>(png.begin(), png.begin() + static_cast<std::ptrdiff_t>(png.size() / 2)));
    UOT_QVERIFY_THROWS_WITH(readImage(cutPng.string()), "cut.png");

    const fs::path big = tempDir() / "big.png";
    writeImage(big.string(), pattern(100, 100, 3, 8));
    ReadOptions limit;
    limit.maxPixels = 5000;
    UOT_QVERIFY_THROWS_WITH(readImage(big.string(), limit), "above the limit of 5000");
    // Refused from the header alone: a PNG claiming 100000 x 100000 pixels whose data is junk.
    std::vector<std::uint8_t> bomb = encodeImage(".png", pattern(8, 8, 3, 8));
    const std::uint8_t dims[8] = {0, 1, 0x86, 0xA0, 0, 1, 0x86, 0xA0};
    std::copy(dims, dims + 8, bomb.begin() + 16);
    const fs::path bombPath = tempDir() / "bomb.png";
    writeBytes(bombPath, bomb);
    UOT_QVERIFY_THROWS_WITH(readImage(bombPath.string()), "(100000x100000), above the limit");
    // And from a JPEG's frame header.
    const fs::path wide = tempDir() / "wide.jpg";
    writeBytes(wide, encodeImage(".jpg", pattern(120, 50, 3, 8)));
    UOT_QVERIFY_THROWS_WITH(readImage(wide.string(), limit), "(120x50), above the limit");
    try {
        readImage(junk.string());
    } catch (const Error& e) {
        QVERIFY(e.code() == ErrorCode::Io);
    }
}

void TestImageIo::writes_are_atomic_and_never_replace_the_source()
{
    const fs::path src = tempDir() / "source.png";
    writeImage(src.string(), pattern(20, 20, 3, 8));
    const std::vector<std::uint8_t> before = readBytes(src);
    WriteOptions protect;
    protect.protectedPaths = {src.string()};
    UOT_QVERIFY_THROWS_WITH(writeImage(src.string(), pattern(20, 20, 3, 8), protect), "refusing to overwrite the source");
    // Same file through another spelling of the path.
    const fs::path other = tempDir() / "." / "source.png";
    UOT_QVERIFY_THROWS_WITH(writeImage(other.string(), pattern(20, 20, 3, 8), protect), "refusing");
    QVERIFY(readBytes(src) == before);
    WriteOptions noOverwrite;
    noOverwrite.overwrite = false;
    UOT_QVERIFY_THROWS_WITH(writeImage(src.string(), pattern(20, 20, 3, 8), noOverwrite), "exists");
    UOT_QVERIFY_THROWS_WITH(writeImage((tempDir() / "nofolder" / "x.png").string(), pattern(4, 4, 3, 8)), "does not exist");
    UOT_QVERIFY_THROWS_WITH(writeImage((tempDir() / "x.gif").string(), pattern(4, 4, 3, 8)), "x.gif");
    // No temporary files left behind.
    for (const auto& e : fs::directory_iterator(tempDir()))
        UOT_QVERIFY_MSG(e.path().filename().string().rfind(kTemporaryPrefix, 0) != 0, e.path());
}

void TestImageIo::batch_reports_the_corrupt_file_and_does_the_others()
{
    const fs::path in = tempDir() / "batch_in", out = tempDir() / "batch_out";
    fs::create_directories(in);
    writeImage((in / "a.png").string(), pattern(48, 32, 3, 8));
    writeImage((in / "c.jpg").string(), halves(40, 30));
    writeBytes(in / "b.jpg", std::vector<std::uint8_t>(500, 0x11));  // corrupt
    writeBytes(in / "notes.txt", {'h', 'i'});                        // ignored: not an image
    const fs::path ref = tempDir() / "ref.png";
    writeImage(ref.string(), pattern(30, 30, 3, 8));

    BatchSettings s;
    s.recolor.palette.size = 64;
    s.recolor.mapping.lutSize = 17;
    s.recolor.transport.eps = 0.01;
    s.outDir = out.string();
    const std::vector<std::string> inputs = collectBatchInputs({in.string()});
    QVERIFY(inputs.size() == 3);
    std::size_t finished = 0;
    BatchControl control;
    control.onProgress = [&](const BatchProgress& p) { finished += p.finished != nullptr; };
    BatchSummary summary = runBatch(ref.string(), inputs, s, control);
    QVERIFY(summary.done == 2 && summary.failed == 1 && finished == 3);
    QVERIFY(fs::exists(out / "a_recolored.png") && fs::exists(out / "c_recolored.jpg"));
    QVERIFY(!fs::exists(out / "b_recolored.jpg"));
    for (const BatchItemResult& r : summary.items)
        if (r.status == BatchItemStatus::Failed) UOT_QVERIFY_MSG(r.message.find("b.jpg") != std::string::npos, r.message);

    // Again: existing outputs are skipped, not rewritten.
    summary = runBatch(ref.string(), inputs, s, {});
    QVERIFY(summary.skipped == 2 && summary.done == 0 && summary.failed == 1);

    // Outputs into the input folder with the input's own name: never replaces the sources.
    const std::vector<std::uint8_t> before = readBytes(in / "a.png");
    BatchSettings inPlace = s;
    inPlace.outDir = in.string();
    inPlace.pattern = "{name}.{ext}";
    inPlace.overwrite = true;
    summary = runBatch(ref.string(), {(in / "a.png").string()}, inPlace, {});
    QVERIFY(summary.done == 0 && summary.skipped == 1);
    QVERIFY(readBytes(in / "a.png") == before);

    // A missing reference is an error for the whole batch.
    UOT_QVERIFY_THROWS_WITH(runBatch((tempDir() / "nope.png").string(), inputs, s, {}), "nope.png");
}

void TestImageIo::multiscale_warm_start_converges_faster_on_photos()
{
    // Two bundled photos; same iterations, no early stop: the warm-started solve is much
    // closer to its fixed point (POT's stopping criterion) and to the source marginal.
    const Image src = readImage(std::string(UOT_SAMPLES_DIR) + "/home.jpg");
    const Image ref = readImage(std::string(UOT_SAMPLES_DIR) + "/starry_night.jpg");
    double error[2], marginal[2];
    for (int multiscale = 0; multiscale < 2; ++multiscale) {
        RecolorSettings s;
        s.palette.size = 1024;
        s.transport.multiscale = multiscale == 1;
        s.transport.coarseSize = 256;
        s.transport.options.maxIterations = 30;
        s.transport.options.tolerance = 0;
        RecolorPipeline pipeline(s);
        pipeline.setSource(src);
        pipeline.setReference(ref);
        pipeline.solve();
        error[multiscale] = pipeline.stats().solve->error;
        marginal[multiscale] = pipeline.stats().solve->marginalErrorA;
    }
    UOT_QVERIFY_MSG(error[1] < 0.5 * error[0], "stopping error warm " << error[1] << " vs cold " << error[0]);
    UOT_QVERIFY_MSG(marginal[1] < 0.5 * marginal[0], "marginal error warm " << marginal[1] << " vs cold " << marginal[0]);
}

QTEST_GUILESS_MAIN(TestImageIo)
#include "test_imageio.moc"
