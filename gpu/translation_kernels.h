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

// gpu-mapuot, whose matrix holds the plan: the TI shift of one half-step, applied
// to the scalings and to that half-step's factors before they scale the matrix, so
// that the matrix is never rescaled apart and the iterates are the TI ones exactly.
// Row half (column = false), after the row factors (x = u^, factor = alpha, length
// rows, weights a): s = cs (state[0] - log A(F^)); x, factor *= e^s. Column half
// (x = v^ computed from the shifted rows, factor = beta, length cols, weights b):
// t = ct (log A(F) - log B(G^)); x, factor *= e^t; state[0] = log B of the new v.
// state as launchTranslate's (its init call sets state[0] for the starting v).
template <typename V>
void launchTranslateHalf(V* x, V* factor, std::size_t rows, std::size_t cols, const double* weights,
                         const TranslationParams& params, bool column, double* state, cudaStream_t stream);

}  // namespace uot::gpu::detail
