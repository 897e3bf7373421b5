#include "core/imageio/image_io.h"
#include "core/imageio/image_header.h"
#include "core/imageio/image_metadata.h"
#include "core/imageio/jpeg_check.h"

#include <algorithm>
#include <cstdio>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <system_error>
#include <utility>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "core/io/atomic_file.h"
#include "core/transport/uot_error.h"

namespace fs = std::filesystem;

namespace uot {

namespace {

std::string lowerExtension(const std::string& path)
{
    std::string ext = fs::path(path).extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext;
}

[[noreturn]] void ioError(const std::string& name, const std::string& what)
{
    throw Error(ErrorCode::Io, name + ": " + what);
}

// libjpeg and libpng decode truncated files into partly gray images with only a
// warning; refuse them here: a JPEG must contain its end-of-image marker, a PNG its IEND chunk.
void checkComplete(const std::vector<std::uint8_t>& b, ImageFormat format, const std::string& name)
{
    if (format == ImageFormat::Jpeg) {
        // The EOI marker is normally last; tolerate a little trailing padding.
        const std::size_t window = std::min<std::size_t>(b.size(), 4096);
        for (std::size_t k = b.size() - 1; k + window >= b.size() && k >= 1; --k)
            if (b[k - 1] == 0xFF && b[k] == 0xD9) return;
        ioError(name, "the JPEG data is truncated (no end-of-image marker); the file is incomplete or damaged");
    }
    if (format == ImageFormat::Png) {
        static const char iend[4] = {'I', 'E', 'N', 'D'};
        const std::size_t window = std::min<std::size_t>(b.size(), 64);
        if (std::search(b.end() - static_cast<std::ptrdiff_t>(window), b.end(), iend, iend + 4) == b.end())
            ioError(name, "the PNG data is truncated (no IEND chunk); the file is incomplete or damaged");
    }
}

std::string megabytes(std::uint64_t bytes) { return std::to_string((bytes + 999'999) / 1'000'000) + " MB"; }

// The limit bounds the memory a decode takes: at most maxPixels pixels, and at
// most the bytes of maxPixels 8-bit RGB pixels (a 16-bit RGBA pixel counts 8/3).
void checkPixelLimit(const ImageHeader& h, const ReadOptions& options, const std::string& name)
{
    if (options.maxPixels == 0) return;
    const std::uint64_t w = h.width, ht = h.height;
    std::string size = "(";
    size += std::to_string(w) + "x" + std::to_string(ht) + ")";
    const long double pixels = static_cast<long double>(w) * static_cast<long double>(ht);
    if (pixels > static_cast<long double>(options.maxPixels))
        ioError(name, "the image has " + std::to_string(static_cast<unsigned long long>(pixels)) + " pixels " + size +
                          ", above the limit of " + std::to_string(options.maxPixels) + " (raise it with --max-pixels)");
    const long double budget = 3.0L * static_cast<long double>(options.maxPixels);
    if (static_cast<long double>(h.decodedBytes()) > budget)
        ioError(name, "decoding the image " + size + ", " + std::to_string(h.channels) + " channels of " +
                          std::to_string(8 * h.bytesPerSample) + " bit, would take " + megabytes(h.decodedBytes()) +
                          ", above the limit of " + std::to_string(options.maxPixels) + " pixels of 8-bit RGB (" +
                          megabytes(static_cast<std::uint64_t>(budget)) + "; raise it with --max-pixels)");
}

[[noreturn]] void outOfMemory(const std::string& name, const ImageHeader& h)
{
    ioError(name, "not enough memory to decode the image (" + std::to_string(h.width) + " x " + std::to_string(h.height) +
                      ", " + megabytes(h.decodedBytes()) + " for its pixels, more while converting)");
}

Image fromMat(const cv::Mat& decoded, const std::string& name)
{
    cv::Mat m = decoded;
    if (m.depth() != CV_8U && m.depth() != CV_16U) {
        // Float or other depths (HDR/EXR/32-bit TIFF): map to 16 bit.
        cv::Mat converted;
        const double scale = (m.depth() == CV_32F || m.depth() == CV_64F) ? 65535.0 : 1.0;
        m.convertTo(converted, CV_16U, scale);
        m = converted;
    }
    const int ch = m.channels();
    cv::Mat rgb;
    if (ch == 1) rgb = m;
    else if (ch == 3) cv::cvtColor(m, rgb, cv::COLOR_BGR2RGB);
    else if (ch == 4) cv::cvtColor(m, rgb, cv::COLOR_BGRA2RGBA);
    else if (ch == 2) cv::cvtColor(m, rgb, cv::COLOR_GRAY2RGB);  // gray + alpha is not kept as such
    else ioError(name, "unsupported number of channels (" + std::to_string(ch) + ")");
    if (ch == 2) ioError(name, "gray images with alpha are not supported; save it as RGBA or gray");
    Image image;
    image.width = rgb.cols;
    image.height = rgb.rows;
    image.channels = rgb.channels();
    image.depth = rgb.depth() == CV_16U ? 16 : 8;
    image.data.resize(image.byteSize());
    const std::size_t rowBytes = static_cast<std::size_t>(image.width) * image.channels * image.bytesPerSample();
    for (int y = 0; y < image.height; ++y)
        std::memcpy(image.data.data() + static_cast<std::size_t>(y) * rowBytes, rgb.ptr(y), rowBytes);
    return image;
}

cv::Mat toMat(const Image& image, int depth, OutputColor color)
{
    const int type = CV_MAKETYPE(image.depth == 16 ? CV_16U : CV_8U, image.channels);
    cv::Mat view(image.height, image.width, type, const_cast<std::uint8_t*>(image.data.data()));
    cv::Mat out;
    if (image.channels == 3) cv::cvtColor(view, out, cv::COLOR_RGB2BGR);
    else if (image.channels == 4) cv::cvtColor(view, out, cv::COLOR_RGBA2BGRA);
    else out = view.clone();
    if (color == OutputColor::Gray && out.channels() != 1)
        cv::cvtColor(out, out, out.channels() == 4 ? cv::COLOR_BGRA2GRAY : cv::COLOR_BGR2GRAY);
    else if (color == OutputColor::Color && out.channels() == 1)
        cv::cvtColor(out, out, cv::COLOR_GRAY2BGR);
    if (depth == 8 && out.depth() == CV_16U) out.convertTo(out, CV_8U, 255.0 / 65535.0);
    else if (depth == 16 && out.depth() == CV_8U) out.convertTo(out, CV_16U, 65535.0 / 255.0);
    return out;
}

std::vector<std::uint8_t> readBytes(const std::string& path)
{
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) ioError(path, "no such file");
    if (fs::is_directory(st)) ioError(path, "is a folder, not an image file");
    const auto size = fs::file_size(path, ec);
    if (ec) ioError(path, "cannot read the file size (" + ec.message() + ")");
    if (size == 0) ioError(path, "the file is empty (0 bytes)");
    std::ifstream in(path, std::ios::binary);
    if (!in) ioError(path, "cannot open the file for reading (permissions?)");
    std::vector<std::uint8_t> bytes(size);
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
    if (static_cast<std::uintmax_t>(in.gcount()) != size) ioError(path, "could not read the whole file");
    return bytes;
}

}  // namespace

bool isSupportedImageExtension(const std::string& path)
{
    static const char* kExt[] = {".jpg", ".jpeg", ".jpe", ".png", ".tif", ".tiff", ".webp", ".bmp"};
    const std::string ext = lowerExtension(path);
    return std::any_of(std::begin(kExt), std::end(kExt), [&](const char* e) { return ext == e; });
}

Image decodeImage(const std::vector<std::uint8_t>& bytes, const std::string& name, const ReadOptions& options)
{
    if (bytes.empty()) ioError(name, "the file is empty (0 bytes)");
    // Everything the header can tell is checked before any pixel is decoded.
    const ImageHeader header = peekImageHeader(bytes);
    checkComplete(bytes, header.format, name);
    if (header.format == ImageFormat::Unknown)
        ioError(name, "not a readable image (the format is not recognised); supported: JPEG, PNG, TIFF, WebP, BMP");
    if (!header.sizeKnown())
        ioError(name, "not a readable image: its " + formatName(header.format) +
                          " header gives no image size (the file is damaged)");
    checkPixelLimit(header, options, name);
    if (header.sharesDataBlocks())
        ioError(name, "not a readable image: " + std::to_string(header.dataBlocks) + " of its TIFF strips or tiles read " +
                          "their data from only " + std::to_string(header.distinctDataBlocks) +
                          " places in the file (a crafted file that decodes a huge image from a few bytes)");
    const bool jpeg = header.format == ImageFormat::Jpeg;
    if (jpeg) checkJpegIntegrity(bytes, name);
    // JPEG has no alpha: decode with orientation. Others: keep alpha and depth unchanged
    // (OpenCV applies EXIF orientation only to JPEG files in any case).
    int flags = cv::IMREAD_UNCHANGED;
    if (jpeg) {
        flags = cv::IMREAD_ANYCOLOR | cv::IMREAD_ANYDEPTH;
        if (!options.applyExifOrientation) flags |= cv::IMREAD_IGNORE_ORIENTATION;
    }
    cv::Mat decoded;
    try {
        const cv::Mat buffer(1, static_cast<int>(bytes.size()), CV_8U, const_cast<std::uint8_t*>(bytes.data()));
        decoded = cv::imdecode(buffer, flags);
    } catch (const std::bad_alloc&) {
        outOfMemory(name, header);
    } catch (const cv::Exception& e) {
        if (e.code == cv::Error::StsNoMem) outOfMemory(name, header);
        ioError(name, std::string("cannot decode the image (") + e.what() + ")");
    }
    if (decoded.empty())
        ioError(name, "not a readable image (unknown format, or the data is corrupt); supported: JPEG, PNG, TIFF, WebP, BMP");
    try {
        Image image = fromMat(decoded, name);
        decoded.release();
        if (options.convertToSrgb) convertToSrgb(image, readEmbeddedProfile(bytes), name);  // the working space
        return image;
    } catch (const std::bad_alloc&) {
        outOfMemory(name, header);
    } catch (const cv::Exception& e) {
        if (e.code == cv::Error::StsNoMem) outOfMemory(name, header);
        ioError(name, std::string("cannot convert the decoded image (") + e.what() + ")");
    }
}

Image readImage(const std::string& path, const ReadOptions& options)
{
    return decodeImage(readBytes(path), path, options);
}

std::vector<std::uint8_t> encodeImage(const std::string& extension, const Image& image, const WriteOptions& options)
{
    validateImage(image, "image to write");
    std::string ext = extension;
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!ext.empty() && ext[0] != '.') ext.insert(0, 1, '.');
    std::string probe = "x";
    probe += ext;
    if (!isSupportedImageExtension(probe))
        throw Error(ErrorCode::InvalidArgument,
                    "cannot write '" + ext + "' files; use .jpg, .png, .tif, .webp or .bmp");
    int depth = options.depth == 0 ? image.depth : options.depth;
    if (depth != 8 && depth != 16) throw Error(ErrorCode::InvalidArgument, "output depth must be 8 or 16");
    const bool eightOnly = ext == ".jpg" || ext == ".jpeg" || ext == ".jpe" || ext == ".webp" || ext == ".bmp";
    if (eightOnly) depth = 8;
    cv::Mat mat = toMat(image, depth, options.color);
    if ((ext == ".jpg" || ext == ".jpeg" || ext == ".jpe" || ext == ".bmp") && mat.channels() == 4)
        cv::cvtColor(mat, mat, cv::COLOR_BGRA2BGR);  // no alpha in these formats
    std::vector<int> params;
    if (ext == ".jpg" || ext == ".jpeg" || ext == ".jpe")
        params = {cv::IMWRITE_JPEG_QUALITY, std::clamp(options.jpegQuality, 1, 100)};
    else if (ext == ".png")
        params = {cv::IMWRITE_PNG_COMPRESSION, std::clamp(options.pngCompression, 0, 9)};
    else if (ext == ".webp")
        params = {cv::IMWRITE_WEBP_QUALITY, std::clamp(options.webpQuality, 1, 101)};
    std::vector<std::uint8_t> bytes;
    try {
        if (!cv::imencode(ext, mat, bytes, params)) throw Error(ErrorCode::Io, "the encoder failed");
    } catch (const cv::Exception& e) {
        throw Error(ErrorCode::Io, std::string("cannot encode the image as ") + ext + " (" + e.what() + ")");
    }
    return bytes;
}

std::string metadataCopyWarning(const std::string& metadataFrom, const std::string& outputPath)
{
    const std::string ext = lowerExtension(outputPath);
    if (metadataFrom.empty() || !isSupportedImageExtension(outputPath)) return {};
    std::string warning;
    const std::vector<std::uint8_t> tiny = encodeImage(ext, Image::allocate(8, 8, 3, 8));
    withMetadata(tiny, metadataFrom, {}, outputPath, [&](const std::string& message) { warning = message; });
    return warning;
}

IccProfile chosenOutputProfile(const WriteOptions& options)
{
    return outputProfileBytes(options.profile, options.profileSource.empty() ? options.metadataFrom : options.profileSource);
}

void writeImage(const std::string& path, const Image& image, const WriteOptions& options)
{
    AtomicWriteOptions destination;
    destination.overwrite = options.overwrite;
    destination.protectedPaths = options.protectedPaths;
    destination.protectedHint = "choose another output, or pass --overwrite-source";
    checkWritableDestination(path, destination);  // before the encoding, which may take a while
    IccProfile profile = chosenOutputProfile(options);
    // Only PNG, JPEG and TIFF carry the profile: other formats stay sRGB, said once.
    const std::string ext = lowerExtension(path);
    const bool carriesProfile = ext == ".png" || ext == ".jpg" || ext == ".jpeg" || ext == ".jpe" || ext == ".tif" ||
                                ext == ".tiff";
    if (!carriesProfile && !profile.empty() && profile != srgbProfile()) {
        const std::string message = path + ": " + ext.substr(1) + " files carry no color profile here; written as sRGB";
        if (options.warn) options.warn(message);
        else std::fprintf(stderr, "warning: %s\n", message.c_str());
        profile = srgbProfile();
    }
    // The pixels are sRGB: converted into another chosen profile (not gray outputs).
    const bool convert =
        !profile.empty() && image.channels >= 3 && options.color != OutputColor::Gray && profile != srgbProfile();
    Image converted;
    if (convert) {
        converted = image;
        convertFromSrgb(converted, profile, path);
    }
    std::vector<std::uint8_t> bytes;
    try {
        bytes = encodeImage(fs::path(path).extension().string(), convert ? converted : image, options);
    } catch (const Error& e) {
        ioError(path, e.what());
    }
    // Metadata is added in memory: the file is written once, through the
    // descriptor of a file this process created (no reopening by name).
    if (!options.metadataFrom.empty() || !profile.empty())
        bytes = withMetadata(bytes, options.metadataFrom, profile, path, options.warn);
    writeFileAtomically(path, bytes.data(), bytes.size(), destination);
}

void setOutputChoices(WriteOptions& options, const std::string& depth, const std::string& color,
                      const std::string& profile, int quality)
{
    if (depth == "source") options.depth = 0;
    else if (depth == "8" || depth == "16") options.depth = std::stoi(depth);
    else throw Error(ErrorCode::InvalidArgument, "unknown output depth '" + depth + "' (source, 8 or 16)");
    if (color == "auto") options.color = OutputColor::Auto;
    else if (color == "color") options.color = OutputColor::Color;
    else if (color == "gray") options.color = OutputColor::Gray;
    else throw Error(ErrorCode::InvalidArgument, "unknown output color '" + color + "' (auto, color or gray)");
    options.profile = parseOutputProfile(profile);
    if (quality < 1 || quality > 100)
        throw Error(ErrorCode::InvalidArgument, "output quality " + std::to_string(quality) + " is not from 1 to 100");
    options.jpegQuality = options.webpQuality = quality;
}

}  // namespace uot
