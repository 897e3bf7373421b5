#pragma once
// LittleCMS helpers shared by image_metadata.cpp and output_profile.cpp (internal
// to the image I/O library; callers outside it use image_metadata.h and
// output_profile.h).

#include <lcms2.h>

#include <memory>

#include "core/color/image.h"
#include "core/imageio/image_metadata.h"

namespace uot::lcms {

struct ProfileCloser {
    void operator()(void* p) const { cmsCloseProfile(p); }
};
using ProfileHandle = std::unique_ptr<void, ProfileCloser>;

// Opens `profile` (nullptr handle when LittleCMS cannot parse it).
ProfileHandle open(const IccProfile& profile);

// Converts an RGB or RGBA image (8 or 16 bit; alpha kept) in place from one
// profile to the other, relative colorimetric, with `flags` (e.g. black-point
// compensation). False when LittleCMS cannot make the transform.
bool transformInPlace(Image& image, cmsHPROFILE from, cmsHPROFILE to, cmsUInt32Number flags = 0);

// The profile's ICC bytes, with the creation date in the header fixed to
// 2000-01-01 so that the same input gives a byte-identical output file.
IccProfile save(cmsHPROFILE profile);

}  // namespace uot::lcms
