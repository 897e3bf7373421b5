#pragma once
// The colour profile an output file is written in. The pipeline works in sRGB;
// on writing, the pixels are converted from sRGB into the chosen profile
// (relative colorimetric, black-point compensation, LittleCMS) and the profile
// is embedded in the file (PNG iCCP chunk, JPEG APP2, TIFF tag). Display P3 and
// Adobe RGB (1998) are built by LittleCMS from their primaries, white point and
// transfer curve. Qt-free; used through image_io.h's WriteOptions.

#include <string>

#include "core/color/image.h"
#include "core/imageio/image_metadata.h"

namespace uot {

enum class OutputProfile {
    None,       // no profile embedded, pixels written as they are (sRGB)
    Srgb,       // sRGB IEC 61966-2.1 (the working space: no conversion)
    Source,     // the profile embedded in the source file (sRGB when it has none)
    DisplayP3,  // Display P3 (DCI-P3 primaries, D65 white, sRGB transfer curve)
    AdobeRgb,   // Adobe RGB (1998) (gamma 563/256, D65 white)
};

// "srgb", "source", "display-p3", "adobe-rgb" ("none" for None).
std::string toString(OutputProfile profile);

// Reads a name as toString writes it (case-insensitive; "p3" and "adobe-rgb-1998"
// are accepted too). Throws uot::Error(InvalidArgument) naming the choices.
OutputProfile parseOutputProfile(const std::string& name);

// The choices a user is offered, in order (everything but None).
const char* outputProfileChoices();  // "srgb|source|display-p3|adobe-rgb"

// The ICC bytes of `profile`; for Source, the profile embedded in the file at
// `sourcePath` (sRGB's when it has none). Empty for None. Throws
// uot::Error(Io) naming the source when its profile cannot be read or is not
// an RGB profile.
IccProfile outputProfileBytes(OutputProfile profile, const std::string& sourcePath = {});

// The profiles LittleCMS builds for Display P3 and Adobe RGB (1998).
const IccProfile& displayP3Profile();
const IccProfile& adobeRgbProfile();

// Converts an sRGB RGB or RGBA image (8 or 16 bit; alpha kept) into `profile`
// in place: relative colorimetric with black-point compensation. Gray images,
// an empty profile and sRGB's own bytes leave it as it is. Throws
// uot::Error(Io) naming `name` when the profile cannot be used.
void convertFromSrgb(Image& image, const IccProfile& profile, const std::string& name);

}  // namespace uot
