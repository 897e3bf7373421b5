#pragma once
// The row kernels of core/color/lut_apply.cpp, one per build (portable C++ and
// AVX2 + FMA, the latter only on x86-64 and only called where the CPU has it).
// Each maps `width` pixels of one row from `in` to `out` (formats of the same
// depth; out may equal in).

#include <cstdint>

#include "core/color/lut_apply.h"

namespace uot::lutkernels {

void mapRowGeneric(const FrameLut& lut, const std::uint8_t* in, FramePixelFormat inFormat, std::uint8_t* out,
                   FramePixelFormat outFormat, int width);
void mapRowAvx2(const FrameLut& lut, const std::uint8_t* in, FramePixelFormat inFormat, std::uint8_t* out,
                FramePixelFormat outFormat, int width);

}  // namespace uot::lutkernels
