#pragma once
// Internal to gpu/: the translation-invariant correction of one iterate on the
// device (core/transport/translation_invariant.h has the mathematics and the
// host version it matches). Three small kernels (row partials, column partials,
// apply), O(M + N) work, no host sync, so they sit inside the CUDA graph of the
// iteration loop right after the variant's pass.

#include <cuda_runtime.h>

#include <cstddef>

#include "core/transport/translation_invariant.h"

namespace uot::gpu::detail {

using TranslationParams = TranslationCoefficients;

// V is the scalings' type: T for multiplicative variants, double for log-domain
// ones (logDomain = true: u, v hold log u, log v).
//
// init: state[0] = log sum_j b_j exp(-rb G_j) for the current v; nothing else.
// Otherwise, after a plain pass that left u^ in u and v^ in v (computed from
// u^): shifts them into the TI iterate in place, multiplies colSum (K^T u of the
// pass, when not null) by the common factor of u, and leaves state[0] for the
// next iteration. A non-finite step writes NaN into u[0] (the check flags it).
// state: device buffer of translationStateDoubles() doubles, kept between calls.
std::size_t translationStateDoubles();

template <typename V>
void launchTranslate(V* u, std::size_t rows, V* v, std::size_t cols, const double* a, const double* b,
                     const TranslationParams& params, bool logDomain, bool init, V* colSum, double* state,
                     cudaStream_t stream);

}  // namespace uot::gpu::detail
