#pragma once
// What the libav reader and writer share (private to core/video): FFmpeg's
// headers, the copied packet, error texts and the colour matrices of swscale.

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
}

#include <string>

#include "core/video/clip_reader.h"

namespace uot {

struct CopiedPacket {
    AVPacket* packet = nullptr;  // owned
    int inputStream = 0;         // the stream's index in the input file
    AVRational timeBase{1, 1};   // of packet's timestamps
};

// Silences FFmpeg's own log (encoder statistics, decoder complaints): errors reach the user as uot::Error
// messages naming the file and frame. Called by the reader and writer.
void quietLibav();

// FFmpeg's text for an error code.
std::string avErrorText(int code);

// The input file of a libav reader (its streams' parameters, to copy them), null for a sequence.
const AVFormatContext* libavInputOf(const ClipReader& reader);
// The input's video stream index (-1 for a sequence).
int libavVideoStreamOf(const ClipReader& reader);

// swscale's YUV<->RGB coefficients for a stream's matrix (AVColorSpace; unspecified: BT.601, as ffmpeg).
const int* swsCoefficientsFor(int matrix);

}  // namespace uot
