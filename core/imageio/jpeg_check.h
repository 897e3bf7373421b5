#pragma once
// A JPEG's entropy-coded data checked in full before OpenCV decodes it: libjpeg
// fills missing or damaged data with gray and only warns ("Corrupt JPEG data:
// premature end of data segment"), which OpenCV does not report. Here every
// libjpeg warning is an error, so a truncated, damaged or padded-out file (a
// tiny file claiming a huge frame, refused from its size before any
// allocation) is refused. No OpenCV, no Qt.

#include <cstdint>
#include <string>
#include <vector>

namespace uot {

// Decodes `bytes` with libjpeg at 1/8 scale, discarding the pixels (the
// entropy decoding, where damage shows, is done in full). Throws
// uot::Error(Io) "NAME: the JPEG data is corrupt (libjpeg's message)" on any
// libjpeg warning or error.
void checkJpegIntegrity(const std::vector<std::uint8_t>& bytes, const std::string& nameForMessages);

}  // namespace uot
