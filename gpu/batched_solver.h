#pragma once
// The GPU backend's batched solver ("gpu-batched"), for gpu/ and the GPU tests
// and benches; everything else reaches it through
// core/registry/batched_solver_registry.h. No CUDA types here.
//
// It solves many point-cloud UOT problems (palette problems: C_ij = scale
// |x_i - y_j|^2, dimension <= 3) in one launch sequence: each half-step is one
// kernel over all unfinished problems (grid.y = problem, one thread per own
// point, tiles of the other side in shared memory, the cost recomputed on the
// fly, online log-sum-exp in fp32, potentials in float64), so a batch of small
// problems fills the device where one of them alone would not.
//
// The iteration is the log-domain scaling update of the single solve (same fixed
// point), in plain or translation-invariant mode (options.mode: the TI shift of
// each half-step, core/transport/translation_invariant.h), over-relaxed per
// problem (options.acceleration): omega from OmegaRule (relaxed_rules.h, the
// rule of the other engines) on the problem's own changes, shrunk when its change
// grew over a check interval. Every problem decides on the device after each
// iteration and stops on its own (the largest change of its log-scalings in one
// iteration below the tolerance, a non-finite value, or the cap); the host loop
// is the shared one (device_loop.h). Starts cold (u = v = 1): warm starts are not
// used. The final plan is not evaluated (mass and marginal errors are NaN).

#include <memory>

#include "core/transport/batched_solver.h"

namespace uot::gpu {

// The batched solver on options.device. Throws uot::Error(Unavailable) without
// CUDA or without a device.
std::unique_ptr<BatchedUotSolver> createBatchedSolver();

}  // namespace uot::gpu
