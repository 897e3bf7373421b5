#include "core/color/look_cube.h"

#include "core/color/color_map_inline.h"
#include "core/color/color_space.h"
#include "core/transport/kernel_matrix.h"
#include "core/transport/uot_error.h"

namespace uot {

CubeLut bakeLookCube(const DisplacementLut& map, WorkingSpace space, const MappingSettings& mapping, int cubeSize,
                     const std::string& title, int threads, const LookAdjustment* look)
{
    CubeLut cube = identityCube(cubeSize);
    cube.title = title;
    if (mapping.strength == 0.0) return cube;
    const std::size_t s = static_cast<std::size_t>(map.size);
    if (map.size < 2 || map.values.size() != 3 * s * s * s)
        throw Error(ErrorCode::InvalidArgument, "bakeLookCube: the color map has no lattice (solve first)");
    const float strength = static_cast<float>(mapping.strength);
    const int t = resolveThreadCount(threads);
    const std::ptrdiff_t nodes = static_cast<std::ptrdiff_t>(cube.values.size() / 3);
#pragma omp parallel for num_threads(t) schedule(static)
    for (std::ptrdiff_t k = 0; k < nodes; ++k) {
        float* v = &cube.values[3 * static_cast<std::size_t>(k)];
        // The node's input colour (identityCube put it there), as the pipeline
        // reads a pixel: decode sRGB, convert to the working space.
        double linear[3], working[3];
        for (int a = 0; a < 3; ++a) linear[a] = srgbToLinear(v[a]);
        linearRgbToSpace(space, linear, working);
        const float c[3] = {static_cast<float>(working[0]), static_cast<float>(working[1]), static_cast<float>(working[2])};
        float d[3], rgb[3];
        color_detail::lutLookupRaw(map.values.data(), map.size, map.lo, map.step, c, d);
        if (look && look->active) look->applyToDisplacement(c, d, d);  // as the composition
        color_detail::composeLinear(space, strength, mapping.preserveLuminance, mapping.gamut, c, d, rgb);
        for (int a = 0; a < 3; ++a) v[a] = static_cast<float>(linearToSrgb(rgb[a]));
    }
    return cube;
}

}  // namespace uot
