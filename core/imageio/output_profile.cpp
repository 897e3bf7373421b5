#include "core/imageio/output_profile.h"

#include <algorithm>
#include <cctype>

#include "core/imageio/lcms_profile.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {

using lcms::ProfileHandle;

// An RGB profile from D65 primaries and one tone curve for all three channels,
// with its description in English.
IccProfile buildRgbProfile(const cmsCIExyYTRIPLE& primaries, cmsToneCurve* curve, const char* description)
{
    cmsCIExyY d65{0.3127, 0.3290, 1.0};
    cmsToneCurve* curves[3] = {curve, curve, curve};
    ProfileHandle profile(cmsCreateRGBProfile(&d65, &primaries, curves));
    cmsFreeToneCurve(curve);
    if (!profile) throw Error(ErrorCode::Unavailable, std::string("LittleCMS could not build the ") + description + " profile");
    cmsMLU* text = cmsMLUalloc(nullptr, 1);
    cmsMLUsetASCII(text, "en", "US", description);
    cmsWriteTag(profile.get(), cmsSigProfileDescriptionTag, text);
    cmsMLUfree(text);
    cmsMLU* copyright = cmsMLUalloc(nullptr, 1);
    cmsMLUsetASCII(copyright, "en", "US", "No copyright, use freely");
    cmsWriteTag(profile.get(), cmsSigCopyrightTag, copyright);
    cmsMLUfree(copyright);
    return lcms::save(profile.get());
}

[[noreturn]] void profileError(const std::string& name, const std::string& what)
{
    throw Error(ErrorCode::Io, name + ": " + what);
}

}  // namespace

std::string toString(OutputProfile profile)
{
    switch (profile) {
    case OutputProfile::None: return "none";
    case OutputProfile::Srgb: return "srgb";
    case OutputProfile::Source: return "source";
    case OutputProfile::DisplayP3: return "display-p3";
    case OutputProfile::AdobeRgb: return "adobe-rgb";
    }
    return "srgb";
}

const char* outputProfileChoices() { return "srgb|source|display-p3|adobe-rgb"; }

OutputProfile parseOutputProfile(const std::string& name)
{
    std::string n = name;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (n == "srgb") return OutputProfile::Srgb;
    if (n == "source") return OutputProfile::Source;
    if (n == "display-p3" || n == "p3") return OutputProfile::DisplayP3;
    if (n == "adobe-rgb" || n == "adobe-rgb-1998") return OutputProfile::AdobeRgb;
    throw Error(ErrorCode::InvalidArgument, "unknown output profile '" + name +
                                                "': choose srgb, source (the source's own), display-p3 or adobe-rgb");
}

const IccProfile& displayP3Profile()
{
    static const IccProfile bytes = [] {
        const cmsCIExyYTRIPLE primaries{{0.680, 0.320, 1.0}, {0.265, 0.690, 1.0}, {0.150, 0.060, 1.0}};
        // The sRGB curve: ((x + 0.055) / 1.055)^2.4 above 0.04045, x / 12.92 below.
        const cmsFloat64Number srgbCurve[5] = {2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045};
        return buildRgbProfile(primaries, cmsBuildParametricToneCurve(nullptr, 4, srgbCurve), "Display P3");
    }();
    return bytes;
}

const IccProfile& adobeRgbProfile()
{
    static const IccProfile bytes = [] {
        const cmsCIExyYTRIPLE primaries{{0.640, 0.330, 1.0}, {0.210, 0.710, 1.0}, {0.150, 0.060, 1.0}};
        return buildRgbProfile(primaries, cmsBuildGamma(nullptr, 563.0 / 256.0), "Adobe RGB (1998)");
    }();
    return bytes;
}

IccProfile outputProfileBytes(OutputProfile profile, const std::string& sourcePath)
{
    switch (profile) {
    case OutputProfile::None: return {};
    case OutputProfile::Srgb: return srgbProfile();
    case OutputProfile::DisplayP3: return displayP3Profile();
    case OutputProfile::AdobeRgb: return adobeRgbProfile();
    case OutputProfile::Source: break;
    }
    if (sourcePath.empty())
        throw Error(ErrorCode::InvalidArgument, "the output profile 'source' needs a source image to take it from");
    const IccProfile embedded = readEmbeddedProfileOfFile(sourcePath);
    if (embedded.empty()) return srgbProfile();  // read as sRGB, written as sRGB
    const ProfileHandle handle = lcms::open(embedded);
    if (!handle)
        profileError(sourcePath, "its embedded color profile is unreadable, so it cannot be the output profile; "
                                 "choose srgb, display-p3 or adobe-rgb");
    if (cmsGetColorSpace(handle.get()) != cmsSigRgbData)
        profileError(sourcePath, "its embedded color profile (" + profileDescription(embedded) +
                                     ") is not an RGB profile, so it cannot be the output profile; choose srgb, "
                                     "display-p3 or adobe-rgb");
    return embedded;
}

void convertFromSrgb(Image& image, const IccProfile& profile, const std::string& name)
{
    if (profile.empty() || image.channels < 3 || profile == srgbProfile()) return;
    const ProfileHandle to = lcms::open(profile);
    if (!to) profileError(name, "the output color profile is unreadable");
    if (cmsGetColorSpace(to.get()) != cmsSigRgbData) profileError(name, "the output color profile is not an RGB profile");
    const ProfileHandle from(cmsCreate_sRGBProfile());
    if (!lcms::transformInPlace(image, from.get(), to.get(), cmsFLAGS_BLACKPOINTCOMPENSATION))
        profileError(name, "cannot convert from sRGB into the output color profile");
}

}  // namespace uot
