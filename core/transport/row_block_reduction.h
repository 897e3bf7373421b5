#pragma once
// The seam of a solve distributed by rows (uot-mpi): each process holds a
// contiguous block of rows of K, the whole of v, and its own block of u. What
// depends on all rows (column sums, row-side error sums, the stopping test's
// maxima, the translation-invariant step's row sum) is combined across the
// processes through this interface. core/ stays free of MPI: the MPI
// implementation lives with the uot-mpi executable (app/mpi). A null pointer
// wherever one is accepted means a single process (nothing to combine).
//
// The O(M + N) steps after a pass need sums, maxima and log-sum-exps over the
// rows at once: they pack them into one RowTotals and combine it in one
// collective call (startCombine / finishCombine), so that a step costs one or
// two round trips instead of one per figure. Between the two calls the caller
// does the work that does not depend on the totals (the column side of the
// step), which the transport overlaps with the reduction.

#include <cstddef>
#include <span>
#include <vector>

namespace uot {

// One log-sum-exp log sum_k exp(x_k) kept as two numbers: the largest term and
// the sum of exp(x_k - largest). Two blocks' parts combine without a second pass
// over the terms (combinedWith), so a log-sum-exp over all rows needs one
// reduction, not a maximum and then a sum.
struct LogSumParts {
    double largest;    // -inf when there are no terms (or all are -inf)
    double scaledSum;  // sum_k exp(x_k - largest); 0 when there are no terms

    // The parts of the terms x (largest first, then the scaled sum).
    static LogSumParts of(std::span<const double> x);
    LogSumParts combinedWith(const LogSumParts& other) const;
    // log sum_k exp(x_k): -inf for no terms; the largest term itself when it is
    // not finite (+inf or NaN), as a direct evaluation would give.
    double value() const;
};

// Sums, maxima and log-sum-exps over the rows of every block, packed in one
// buffer (three counts, then the sums, the maxima and the log-sum parts) so that
// a transport combines them in one call.
class RowTotals {
public:
    RowTotals(std::size_t sums, std::size_t maxima, std::size_t logSums);

    double& sum(std::size_t k) { return m_data[kHeader + k]; }
    double& max(std::size_t k) { return m_data[kHeader + m_sums + k]; }
    void setLogSum(std::size_t k, const LogSumParts& parts);
    LogSumParts logSum(std::size_t k) const;

    // The sections (for a transport that reduces them one by one) and the whole
    // packed buffer (for one that reduces it at once with combinePacked).
    std::span<double> sums() { return std::span<double>(m_data).subspan(kHeader, m_sums); }
    std::span<double> maxima() { return std::span<double>(m_data).subspan(kHeader + m_sums, m_maxima); }
    std::size_t logSumCount() const { return m_logSums; }
    std::span<double> packed() { return m_data; }

    // Combines `in` (another block's packed values, same layout) into `inout`
    // element by element: sums add, maxima take the larger, log-sum parts
    // combine (LogSumParts::combinedWith). Commutative; the counts stay.
    static void combinePacked(const double* in, double* inout);

    static constexpr std::size_t kHeader = 3;

private:
    std::size_t m_sums, m_maxima, m_logSums;
    std::vector<double> m_data;
};

// Where a block of rows sits in the whole problem.
struct RowBlock {
    std::size_t firstRow = 0;      // global index of the block's first row
    std::span<const double> allA;  // a of every row of the whole problem
};

class RowBlockReduction {
public:
    virtual ~RowBlockReduction() = default;

    // Element-wise sum / maximum over all processes, in place. Collective:
    // every process calls it in the same order with the same length.
    virtual void sum(std::span<double> values) = 0;
    virtual void max(std::span<double> values) = 0;

    // One combination of packed totals over all processes, in place: begun by
    // startCombine, finished by finishCombine (the totals must stay alive and
    // untouched in between, and no other reduction may run then). Collective. The
    // defaults do it all in finishCombine with sum and max calls; a transport
    // overrides both to combine in one non-blocking call that runs while the
    // caller works.
    virtual void startCombine(RowTotals& totals) { (void)totals; }
    virtual void finishCombine(RowTotals& totals);

    // Reductions between pauseWaitTiming() and resumeWaitTiming() are outside the
    // iteration loop's time (the set-up, a report's extra pass): a transport that
    // times its waits leaves them out too, so that its waits stay within that time.
    virtual void pauseWaitTiming() {}
    virtual void resumeWaitTiming() {}

    double sum(double value)
    {
        sum(std::span<double>(&value, 1));
        return value;
    }
    double max(double value)
    {
        max(std::span<double>(&value, 1));
        return value;
    }
};

// Wait timing paused for a scope (RowBlockReduction::pauseWaitTiming); nothing
// without row blocks.
class UntimedWaits {
public:
    explicit UntimedWaits(RowBlockReduction* rowBlocks) : m_rowBlocks(rowBlocks)
    {
        if (m_rowBlocks) m_rowBlocks->pauseWaitTiming();
    }
    ~UntimedWaits()
    {
        if (m_rowBlocks) m_rowBlocks->resumeWaitTiming();
    }
    UntimedWaits(const UntimedWaits&) = delete;
    UntimedWaits& operator=(const UntimedWaits&) = delete;

private:
    RowBlockReduction* m_rowBlocks;
};

// startCombine / finishCombine on `blocks`, nothing for a single process (null).
inline void startCombine(RowBlockReduction* blocks, RowTotals& totals)
{
    if (blocks) blocks->startCombine(totals);
}
inline void finishCombine(RowBlockReduction* blocks, RowTotals& totals)
{
    if (blocks) blocks->finishCombine(totals);
}

}  // namespace uot
