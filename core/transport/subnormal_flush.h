#pragma once
// Flush-to-zero / denormals-are-zero for the threads of a CPU solve.
//
// x86 handles a subnormal operand or result of an SSE/AVX instruction with a
// microcode assist that costs on the order of a hundred cycles. The scaling
// products of a small-eps problem (K_ij * v_j, exp of very negative
// log-potentials) underflow into that range all the time, so without this a
// pass over K at eps 0.003 ran at less than half the speed of the same pass at
// eps 0.1. A subnormal value is below 1.2e-38 (fp32) or 2.2e-308 (fp64); the
// solvers already store such entries of K as 0 (kernel_matrix.h), and treating
// the products the same way changes no result at the accuracies we test
// (plans to 1e-9 of the float64 oracle) unless the scalings grow so large that
// the flushed entries carry mass: the final evaluation of every multiplicative
// solve measures that mass and reports Underflow when it counts (planSums'
// storageFloor, plan_evaluation.h). The float64 reference solver does not
// use this scope: it is the oracle and keeps IEEE gradual underflow.

namespace uot {

// While alive, the calling thread and the OpenMP team of `threads` threads
// (the team a solve's parallel regions use) flush subnormal results and
// operands to zero. The destructor restores the calling thread's previous mode
// on the same threads. A no-op on targets without the x86 control register.
class SubnormalFlushScope {
public:
    explicit SubnormalFlushScope(int threads);
    ~SubnormalFlushScope();
    SubnormalFlushScope(const SubnormalFlushScope&) = delete;
    SubnormalFlushScope& operator=(const SubnormalFlushScope&) = delete;

    // Whether the calling thread flushes subnormals now (for tests).
    static bool callingThreadFlushes();

private:
    int m_threads;
    unsigned m_savedBits;
};

}  // namespace uot
