#pragma once
// Internal to gpu/ (CUDA device code): the decision of the safeguarded over-relaxed
// step on one candidate iterate, written once for the stored-matrix step
// (relaxed_step_device.cuh) and gpu-batched (batched_solver.cu), with the shared
// rules of core/transport/relaxed_rules.h.

#include "core/transport/relaxed_rules.h"
#include "gpu/relaxed_kernels.h"

namespace uot::gpu::detail {

enum class StepDecision { Stop, Undo, Accept };

// State: RelaxedState or gpu-batched's per-problem state (stop, rule, haveLast,
// lastObjective, lastScale, iterations). Not finite without the safeguard: stop
// (kNotFinite). Not finite, or an objective below the last accepted one beyond the
// rounding allowance `slack`, with the safeguard: undo, omega shrinks
// (OmegaRule::rejected). Else accept: counted, its objective kept, its change fed to
// the omega rule. The caller takes the new omega from st.rule.omega.
template <typename State>
__device__ StepDecision decideStep(State& st, bool finite, bool safeguard, const RelaxedObjective& objective,
                                   double change, double slack)
{
    if (!finite && !safeguard) {
        st.stop = kNotFinite;
        return StepDecision::Stop;
    }
    if (safeguard && (!finite || (st.haveLast && !objectiveAcceptable(st.lastObjective, st.lastScale, objective.value,
                                                                       objective.scale, slack)))) {
        st.rule.rejected(!finite);  // undo: the next pass runs from the same iterate with a smaller omega
        return StepDecision::Undo;
    }
    st.iterations += 1;
    st.lastObjective = objective.value;
    st.lastScale = objective.scale;
    st.haveLast = 1;
    st.rule.accepted(change);
    return StepDecision::Accept;
}

}  // namespace uot::gpu::detail
