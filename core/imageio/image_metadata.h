#pragma once
// Metadata and colour profiles of image files (Exiv2 for EXIF/XMP/IPTC and the
// embedded ICC profile, LittleCMS for colour conversion):
//  - readImage converts pixels from the file's embedded ICC profile to sRGB,
//    the working space (files without a profile are taken as sRGB);
//  - writeImage can copy EXIF, XMP and IPTC from another file (the source) and
//    embed an ICC profile (sRGB) in the output. Orientation tags are set to
//    "normal", since the pixels were already turned upright when read.
// Qt-free; used through image_io.h.

#include <cstdint>
#include <string>
#include <vector>

#include "core/color/image.h"

namespace uot {

using IccProfile = std::vector<std::uint8_t>;

// The ICC profile embedded in an encoded image (empty when none, or when the
// format cannot carry one).
IccProfile readEmbeddedProfile(const std::vector<std::uint8_t>& encodedBytes);

// The profile's description ("Adobe RGB (1998)"); "sRGB (assumed)" for an empty
// profile; "unreadable profile" when LittleCMS cannot parse it.
std::string profileDescription(const IccProfile& profile);

// The description of the profile embedded in the file at `path` (see
// profileDescription); "sRGB (assumed)" when it has none or cannot be read.
std::string describeEmbeddedProfile(const std::string& path);

// The sRGB profile LittleCMS builds (what outputs embed).
const IccProfile& srgbProfile();

// Converts an RGB or RGBA image (8 or 16 bit; alpha kept) from `profile` to
// sRGB in place, relative colorimetric. Gray images and an empty profile are
// left as they are. Throws uot::Error(Io) naming `name` when the profile cannot
// be used.
void convertToSrgb(Image& image, const IccProfile& profile, const std::string& name);

// Writes into the encoded file `target`: EXIF, XMP and IPTC of `metadataFrom`
// (when not empty; orientation set to normal) and `profile` (when not empty).
// BMP files carry neither and are left alone. Throws uot::Error(Io) naming
// `nameForMessages` on failure.
void writeMetadata(const std::string& target, const std::string& metadataFrom, const IccProfile& profile,
                   const std::string& nameForMessages);

}  // namespace uot
