#include "core/imageio/image_metadata.h"

#include <exiv2/exiv2.hpp>
#include <lcms2.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <cstdio>

#include "core/imageio/lcms_profile.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {

[[noreturn]] void metadataError(const std::string& name, const std::string& what)
{
    throw Error(ErrorCode::Io, name + ": " + what);
}

// Exiv2's XMP toolkit must be set up once before threads use it.
void initExiv2()
{
    static std::once_flag once;
    std::call_once(once, [] {
        Exiv2::XmpParser::initialize();
        Exiv2::LogMsg::setLevel(Exiv2::LogMsg::mute);
    });
}

using lcms::ProfileHandle;

std::uint32_t crc32(const std::uint8_t* data, std::size_t size)
{
    static const auto table = [] {
        std::array<std::uint32_t, 256> t{};
        for (std::uint32_t n = 0; n < 256; ++n) {
            std::uint32_t c = n;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[n] = c;
        }
        return t;
    }();
    std::uint32_t c = 0xFFFFFFFFu;
    for (std::size_t i = 0; i < size; ++i) c = table[(c ^ data[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

std::uint32_t readBigEndian(const std::uint8_t* p) { return (std::uint32_t(p[0]) << 24) | (p[1] << 16) | (p[2] << 8) | p[3]; }

void appendBigEndian(std::vector<std::uint8_t>& out, std::uint32_t v)
{
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(v >> shift));
}

// Exiv2 0.27 writes PNG iCCP chunks with an empty profile name, which libpng
// (and the viewers built on it) rejects as a bad keyword, dropping the profile.
// Give such a chunk a name; everything else is copied as it is.
void nameUnnamedPngProfile(std::vector<std::uint8_t>& png)
{
    static const std::uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    if (png.size() < 8 || !std::equal(kSignature, kSignature + 8, png.begin())) return;
    std::vector<std::uint8_t> out(png.begin(), png.begin() + 8);
    bool changed = false;
    for (std::size_t at = 8; at + 12 <= png.size();) {
        const std::uint32_t length = readBigEndian(&png[at]);
        if (length > png.size() - at - 12) return;  // damaged: leave the data alone
        const std::uint8_t* type = &png[at + 4];
        const std::uint8_t* data = &png[at + 8];
        if (std::equal(type, type + 4, "iCCP") && length > 0 && data[0] == 0) {
            static const std::string kName = "ICC profile";
            std::vector<std::uint8_t> chunk(type, type + 4);
            chunk.insert(chunk.end(), kName.begin(), kName.end());
            chunk.insert(chunk.end(), data, data + length);
            appendBigEndian(out, static_cast<std::uint32_t>(chunk.size() - 4));
            out.insert(out.end(), chunk.begin(), chunk.end());
            appendBigEndian(out, crc32(chunk.data(), chunk.size()));
            changed = true;
        } else {
            out.insert(out.end(), png.begin() + static_cast<std::ptrdiff_t>(at),
                       png.begin() + static_cast<std::ptrdiff_t>(at + 12 + length));
        }
        at += 12 + length;
    }
    if (changed) png = std::move(out);
}

// The metadata copied from a source file.
struct SourceMetadata {
    Exiv2::ExifData exif;
    Exiv2::XmpData xmp;
    Exiv2::IptcData iptc;
};

SourceMetadata readSourceMetadata(const std::string& path)
{
    auto in = Exiv2::ImageFactory::open(path);
    in->readMetadata();
    SourceMetadata m{in->exifData(), in->xmpData(), in->iptcData()};
    // The pixels were turned upright on reading: the tags must say so.
    if (m.exif.findKey(Exiv2::ExifKey("Exif.Image.Orientation")) != m.exif.end())
        m.exif["Exif.Image.Orientation"] = static_cast<std::uint16_t>(1);
    if (m.xmp.findKey(Exiv2::XmpKey("Xmp.tiff.Orientation")) != m.xmp.end()) m.xmp["Xmp.tiff.Orientation"] = "1";
    return m;
}

// `encoded` with `source` (when given) and `profile` (when not empty) written
// into it, in memory. Throws what Exiv2 throws.
std::vector<std::uint8_t> rewriteInMemory(const std::vector<std::uint8_t>& encoded, const SourceMetadata* source,
                                          const IccProfile& profile)
{
    auto out = Exiv2::ImageFactory::open(encoded.data(), static_cast<long>(encoded.size()));
    out->readMetadata();
    if (source) {
        out->setExifData(source->exif);
        out->setXmpData(source->xmp);
        out->setIptcData(source->iptc);
    }
    if (!profile.empty()) {
        Exiv2::DataBuf icc(profile.data(), static_cast<long>(profile.size()));
        out->setIccProfile(icc, true);
    }
    out->writeMetadata();
    Exiv2::BasicIo& io = out->io();
    if (io.open() != 0) throw Exiv2::Error(Exiv2::kerDataSourceOpenFailed, "memory");
    const Exiv2::DataBuf written = io.read(static_cast<long>(io.size()));
    io.close();
    std::vector<std::uint8_t> bytes(written.pData_, written.pData_ + written.size_);
    if (!profile.empty() && out->mimeType() == "image/png") nameUnnamedPngProfile(bytes);
    return bytes;
}

bool isBmp(const std::string& path)
{
    std::string ext = path.substr(path.find_last_of('.') == std::string::npos ? path.size() : path.find_last_of('.'));
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return ext == ".bmp";
}

}  // namespace

IccProfile readEmbeddedProfile(const std::vector<std::uint8_t>& encodedBytes)
{
    if (encodedBytes.empty()) return {};
    initExiv2();
    try {
        auto image = Exiv2::ImageFactory::open(encodedBytes.data(), static_cast<long>(encodedBytes.size()));
        if (!image.get()) return {};
        image->readMetadata();
        if (!image->iccProfileDefined()) return {};
        const Exiv2::DataBuf* icc = image->iccProfile();
        return IccProfile(icc->pData_, icc->pData_ + icc->size_);
    } catch (const Exiv2::AnyError&) {
        return {};  // a format Exiv2 does not know: no profile (the decoder decides if the file is readable)
    }
}

std::string profileDescription(const IccProfile& profile)
{
    if (profile.empty()) return "sRGB (assumed)";
    ProfileHandle handle(cmsOpenProfileFromMem(profile.data(), static_cast<cmsUInt32Number>(profile.size())));
    if (!handle) return "unreadable profile";
    char text[256] = {};
    cmsGetProfileInfoASCII(handle.get(), cmsInfoDescription, "en", "US", text, sizeof text);
    return text[0] ? std::string(text) : std::string("unnamed profile");
}

IccProfile readEmbeddedProfileOfFile(const std::string& path)
{
    initExiv2();
    try {
        auto image = Exiv2::ImageFactory::open(path);
        image->readMetadata();
        if (!image->iccProfileDefined()) return {};
        const Exiv2::DataBuf* icc = image->iccProfile();
        return IccProfile(icc->pData_, icc->pData_ + icc->size_);
    } catch (const Exiv2::AnyError&) {
        return {};
    }
}

std::string describeEmbeddedProfile(const std::string& path)
{
    return profileDescription(readEmbeddedProfileOfFile(path));
}

const IccProfile& srgbProfile()
{
    static const IccProfile bytes = [] {
        ProfileHandle srgb(cmsCreate_sRGBProfile());
        return lcms::save(srgb.get());
    }();
    return bytes;
}

void convertToSrgb(Image& image, const IccProfile& profile, const std::string& name)
{
    if (profile.empty() || image.channels < 3) return;
    ProfileHandle from(cmsOpenProfileFromMem(profile.data(), static_cast<cmsUInt32Number>(profile.size())));
    if (!from) metadataError(name, "the embedded color profile is unreadable; save the image without it or as sRGB");
    if (cmsGetColorSpace(from.get()) != cmsSigRgbData) return;  // e.g. a CMYK profile on an RGB decode: leave as is
    ProfileHandle to(cmsCreate_sRGBProfile());
    if (!lcms::transformInPlace(image, from.get(), to.get()))
        metadataError(name, "cannot convert from the embedded color profile to sRGB");
}

std::vector<std::uint8_t> withMetadata(const std::vector<std::uint8_t>& encoded, const std::string& metadataFrom,
                                       const IccProfile& profile, const std::string& nameForMessages,
                                       const MetadataWarning& warn)
{
    if ((metadataFrom.empty() && profile.empty()) || isBmp(nameForMessages)) return encoded;
    initExiv2();
    // The source's metadata is optional: what cannot be read or copied is dropped
    // with a warning naming the source, never a failed output.
    std::optional<SourceMetadata> source;
    std::string problem;
    if (!metadataFrom.empty()) {
        try {
            source = readSourceMetadata(metadataFrom);
        } catch (const std::exception& e) {
            problem = e.what();
        }
    }
    if (source) {
        try {
            return rewriteInMemory(encoded, &*source, profile);
        } catch (const std::exception& e) {
            problem = e.what();
        }
    }
    if (!problem.empty()) {
        const std::string message = metadataFrom + ": its metadata (EXIF, XMP, IPTC) cannot be copied (" + problem +
                                    "); " + nameForMessages + " is written without it";
        if (warn) warn(message);
        else std::fprintf(stderr, "warning: %s\n", message.c_str());
    }
    if (profile.empty()) return encoded;
    try {
        return rewriteInMemory(encoded, nullptr, profile);
    } catch (const std::exception& e) {
        metadataError(nameForMessages, std::string("could not embed the color profile (") + e.what() + ")");
    }
}

namespace lcms {

bool transformInPlace(Image& image, cmsHPROFILE from, cmsHPROFILE to, cmsUInt32Number flags)
{
    const bool deep = image.depth == 16;
    const bool alpha = image.channels == 4;
    const cmsUInt32Number format = alpha ? (deep ? TYPE_RGBA_16 : TYPE_RGBA_8) : (deep ? TYPE_RGB_16 : TYPE_RGB_8);
    cmsHTRANSFORM transform = cmsCreateTransform(from, format, to, format, INTENT_RELATIVE_COLORIMETRIC,
                                                 flags | (alpha ? cmsFLAGS_COPY_ALPHA : 0));
    if (!transform) return false;
    const std::size_t row = static_cast<std::size_t>(image.width) * image.channels * image.bytesPerSample();
    for (int y = 0; y < image.height; ++y) {
        std::uint8_t* line = image.data.data() + static_cast<std::size_t>(y) * row;
        cmsDoTransform(transform, line, line, static_cast<cmsUInt32Number>(image.width));
    }
    cmsDeleteTransform(transform);
    return true;
}

ProfileHandle open(const IccProfile& profile)
{
    if (profile.empty()) return ProfileHandle();
    return ProfileHandle(cmsOpenProfileFromMem(profile.data(), static_cast<cmsUInt32Number>(profile.size())));
}

IccProfile save(cmsHPROFILE profile)
{
    cmsUInt32Number size = 0;
    cmsSaveProfileToMem(profile, nullptr, &size);
    IccProfile out(size);
    cmsSaveProfileToMem(profile, out.data(), &size);
    // LittleCMS stamps the creation time into the header (bytes 24-35).
    static const std::uint8_t kDate[12] = {0x07, 0xD0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0};  // 2000-01-01 00:00:00
    if (out.size() >= 36) std::copy(kDate, kDate + 12, out.begin() + 24);
    return out;
}

}  // namespace lcms

}  // namespace uot
