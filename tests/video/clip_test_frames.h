#pragma once
// Test clips made in the tests themselves (Qt Test): frames that differ from
// one another, written as a PNG sequence and, through the clip pipeline with
// an identity look, encoded as H.264.

#include <QTemporaryDir>

#include <cstdio>
#include <string>

#include "core/color/cube_lut.h"
#include "core/imageio/image_io.h"
#include "core/video/clip_recolor.h"

namespace uot::test {

// Frame t: gradients that move with t, so that frames out of order show.
inline Image movingFrame(int t, int width, int height)
{
    Image image = Image::allocate(width, height, 3, 8);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x) {
            std::uint8_t* p = image.samples8() + 3 * (std::size_t(y) * std::size_t(width) + std::size_t(x));
            p[0] = std::uint8_t((x * 255 / (width - 1) + 6 * t) % 256);
            p[1] = std::uint8_t((y * 255 / (height - 1) + 3 * t) % 256);
            p[2] = std::uint8_t((x * y + 11 * t) % 256);
        }
    return image;
}

// dir/STEM_00000.png ... for frames 0 .. count - 1 of movingFrame; returns the pattern.
inline std::string writeFrameSequence(const QTemporaryDir& dir, int count, int width, int height,
                                      const char* stem = "in")
{
    for (int t = 0; t < count; ++t) {
        char name[64];
        std::snprintf(name, sizeof name, "%s_%05d.png", stem, t);
        writeImage(dir.filePath(name).toStdString(), movingFrame(t, width, height));
    }
    return dir.filePath(QString(stem) + "_%05d.png").toStdString();
}

// The sequence encoded into dir/clip.mp4 (libx264, ultrafast); returns its path.
inline std::string writeTestClip(const QTemporaryDir& dir, int count, int width, int height)
{
    ClipLook identity;
    identity.shots.resize(1);
    identity.shots[0].endFrame = count;
    identity.shots[0].lut = identityCube(2);
    const std::string clip = dir.filePath("clip.mp4").toStdString();
    ClipRecolorOptions options;
    options.write.preset = "ultrafast";
    applyClipLook(writeFrameSequence(dir, count, width, height), identity, clip, options);
    return clip;
}

}  // namespace uot::test
