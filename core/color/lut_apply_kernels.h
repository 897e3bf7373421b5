#pragma once
// The row kernels of core/color/lut_apply.cpp, one per build (portable C++ and
// AVX2 + FMA, the latter only on x86-64 and only called where the CPU has it).
// Each maps `width` pixels of one row from `in` to `out` (formats of the same
// depth; out may equal in).

#include <cstdint>
#include <type_traits>

#include "core/color/lut_apply.h"

namespace uot::lutkernels {

// Calls row(deep, inBgr, outBgr) with the three as std::bool_constant values, so
// that a kernel's row template is instantiated once per format pair.
template <class Row>
void forFormats(FramePixelFormat inFormat, FramePixelFormat outFormat, Row&& row)
{
    using T = std::true_type;
    using F = std::false_type;
    const bool inBgr = isBgr(inFormat), outBgr = isBgr(outFormat);
    if (isDeep(inFormat)) {
        if (inBgr) outBgr ? row(T{}, T{}, T{}) : row(T{}, T{}, F{});
        else outBgr ? row(T{}, F{}, T{}) : row(T{}, F{}, F{});
    } else {
        if (inBgr) outBgr ? row(F{}, T{}, T{}) : row(F{}, T{}, F{});
        else outBgr ? row(F{}, F{}, T{}) : row(F{}, F{}, F{});
    }
}

void mapRowGeneric(const FrameLut& lut, const std::uint8_t* in, FramePixelFormat inFormat, std::uint8_t* out,
                   FramePixelFormat outFormat, int width);
void mapRowAvx2(const FrameLut& lut, const std::uint8_t* in, FramePixelFormat inFormat, std::uint8_t* out,
                FramePixelFormat outFormat, int width);

}  // namespace uot::lutkernels
