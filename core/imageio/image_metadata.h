#pragma once
// Metadata and colour profiles of image files (Exiv2 for EXIF/XMP/IPTC and the
// embedded ICC profile, LittleCMS for colour conversion):
//  - readImage converts pixels from the file's embedded ICC profile to sRGB,
//    the working space (files without a profile are taken as sRGB);
//  - writeImage can copy EXIF, XMP and IPTC from another file (the source) and
//    embed an ICC profile in the output (output_profile.h chooses it). Orientation tags are set to
//    "normal", since the pixels were already turned upright when read.
// Qt-free; used through image_io.h.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/color/image.h"

namespace uot {

using IccProfile = std::vector<std::uint8_t>;

// The ICC profile embedded in an encoded image (empty when none, or when the
// format cannot carry one).
IccProfile readEmbeddedProfile(const std::vector<std::uint8_t>& encodedBytes);

// The ICC profile embedded in the file at `path` (empty when none, or when the
// file cannot be read).
IccProfile readEmbeddedProfileOfFile(const std::string& path);

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

// Receives a warning (a sentence naming the file concerned).
using MetadataWarning = std::function<void(const std::string& message)>;

// `encoded` (an encoded image file's bytes) with EXIF, XMP and IPTC of
// `metadataFrom` (when not empty; orientation set to normal) and `profile`
// (when not empty) written into it, in memory. BMP (told by the extension of
// `nameForMessages`) carries neither and is returned as it is. Metadata of the
// source that Exiv2 cannot read or copy is left out, and `warn` (stderr when
// empty) is told so, naming `metadataFrom`. Throws uot::Error(Io) naming
// `nameForMessages` only when the profile cannot be embedded.
std::vector<std::uint8_t> withMetadata(const std::vector<std::uint8_t>& encoded, const std::string& metadataFrom,
                                       const IccProfile& profile, const std::string& nameForMessages,
                                       const MetadataWarning& warn = {});

}  // namespace uot
