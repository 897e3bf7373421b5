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
// problem (options.acceleration). Every problem decides on the device after each
// iteration as the single gpu-fused solve's relaxed step does (relaxed_kernels.h),
// with the same shared rules (core/transport/relaxed_rules.h): the safeguard
// undoes an iteration that lowers the dual objective (back to the problem's last
// accepted potentials) and shrinks omega (OmegaRule); the stopping test is
// StoppingRule::Potentials' figure (relaxedError: the plan's relative change and
// the marginals' violations, from the log-potentials) below the tolerance, after
// every accepted iteration when over-relaxed and every checkEvery without
// acceleration (the plain single loop's cadence); a non-finite value or the cap
// stop a problem alone. Below the tolerance with potentials too large for its fp32
// log-sum-exp to hold the plan within kFp32PlanAccuracy (the single loops' precision
// floor, potential_check.h), a problem stops not converged, with a message. A stopped problem's blocks return at once. The host loop
// is the shared one (device_loop.h). Starts cold (u = v = 1): warm starts are not
// used. The log-sum-exp runs in fp32 whatever options.precision says. The final
// plan is not evaluated (mass and marginal errors are NaN).

#include <memory>

#include "core/transport/batched_solver.h"

namespace uot::gpu {

// The batched solver on options.device. Throws uot::Error(Unavailable) without
// CUDA or without a device.
std::unique_ptr<BatchedUotSolver> createBatchedSolver();

}  // namespace uot::gpu
