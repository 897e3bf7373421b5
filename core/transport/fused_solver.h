#pragma once
// `fused`: one read-only pass over K per iteration (docs/ALGORITHMS.md s3).
// For each row: r_i = K_i. v, u_i = (a_i / r_i)^fa, and while the row is still
// in cache, s += u_i K_i. into per-thread column partials; then the partials
// are reduced (in parallel over column blocks) and v_j = (b_j / s_j)^fb.
// Same iterates as POT's sinkhorn_unbalanced; K is never written.

#include <span>
#include <vector>

#include "core/transport/cpu_buffers.h"
#include "core/transport/row_block_reduction.h"
#include "core/transport/row_chunk_pool.h"
#include "core/transport/uot_solver.h"

namespace uot {

class FusedSolver final : public UotSolver {
public:
    std::string name() const override { return "fused"; }
    // One read of the matrix per iteration: rows * cols * element size.
    std::uint64_t bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const override;
    // Multiplicative form: stops with NumericalStatus::Underflow (last finite
    // iterate kept) when K has zero rows/columns or a scaling leaves the range.
    SolveResult solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control) override;

private:
    AlignedBuffer<float> m_k32;  // kept between solves of the same size
    AlignedBuffer<double> m_k64;
};

// Where the rows of a distributed `fused` solve may move during the solve
// (uot-mpi --balance): the caller decides the new split from what it measures and
// provides the cost of the new rows; the solve keeps the kernel rows it already
// has, builds the others and hands the scalings over. Collective where it says so.
class RowBlockMover {
public:
    struct Move {
        bool moved = false;  // the same on every process: whether any row moves
        std::size_t firstRow = 0, rowCount = 0;  // this process's rows after the move
    };
    virtual ~RowBlockMover() = default;
    // At the check after accepted iteration `iteration`. Collective.
    virtual Move plan(int iteration) = 0;
    // The block of rows [firstRow, firstRow + rowCount) (its cost and a; b, eps and
    // tau as before), kept alive by the mover until the next call. Collective (an
    // error on one process is thrown on all).
    virtual UotProblem rows(std::size_t firstRow, std::size_t rowCount) = 0;
    // After the move, with the seconds it took this process.
    virtual void moved(double seconds) { (void)seconds; }
};

// The rows a block keeps when it moves from [oldFirst, oldEnd) to [first, end):
// their overlap, or an empty range inside [first, end) when the block moved past
// its old rows either way. The moved block builds [first, kept.first) and
// [kept.end, end) and copies the kept rows' kernel.
struct RowSpan {
    std::size_t first = 0, end = 0;
    bool operator==(const RowSpan&) const = default;
};
RowSpan keptRowsOfMove(std::size_t oldFirst, std::size_t oldEnd, std::size_t first, std::size_t end);

// This process's share of a `fused` solve distributed by rows (uot-mpi): each
// process holds a contiguous block of rows of C (possibly none), the a of its
// rows and the whole b. Every process runs the same single-pass kernel on its
// block; per iteration the column sums (with the row-side error and the
// validity of u) are summed over all blocks in one reduction, so every process
// computes the same v. Same iterates as FusedSolver on the whole problem up to
// the order of the column sums' additions (float64: agreement to ~1e-15).
// Plain and translation-invariant modes; no cancel, no fallback to the log domain.
class FusedRowBlockSolve {
public:
    // Validates this block and the options and builds its kernel: throws
    // uot::Error (bad entry, size mismatch, memory) before any communication,
    // so that the caller can agree on errors across processes first. block
    // holds the block's rows (a = its rows' weights; cost rows = 0 allowed);
    // options.warmU, if given, holds the block's rows of u.
    FusedRowBlockSolve(const UotProblem& block, const RowBlock& where, const SolveOptions& options);

    // The iterations and the final evaluation. Collective: every process calls
    // it. `loop` carries the reductions of the iterations, `other` those of the
    // set-up and the end (two objects so that their costs can be told apart;
    // they may be the same). On every process the result holds logU of all
    // rows, logV, and the figures of the whole plan.
    // mover: set when rows may move between the processes at the checks.
    // chunks: set when the processes of a node share their rows' kernel and take
    // each pass's rows in chunks (row_chunk_pool.h; collective on the node; not
    // with a mover). The iterates are the same either way.
    SolveResult run(RowBlockReduction& loop, RowBlockReduction& other, RowBlockMover* mover = nullptr,
                    RowChunkPool* chunks = nullptr);

private:
    template <typename T>
    SolveResult runIn(AlignedBuffer<T>& matrix, RowBlockReduction& loop, RowBlockReduction& other, RowBlockMover* mover,
                      RowChunkPool* chunks);
    // The move `move` asks for (scaling_loop.h's moveRows): this block's kernel
    // rows, problem, place and u become those of the new rows.
    template <typename T, typename Passes>
    void moveRows(const RowBlockMover::Move& move, RowBlockMover& mover, AlignedBuffer<T>& matrix, Passes& passes,
                  RowBlockReduction& other, std::vector<double>& u);

    UotProblem m_block;
    RowBlock m_where;
    SolveOptions m_options;
    std::size_t m_ld = 0;
    KernelBuildReport m_report;
    double m_setupSeconds = 0;
    AlignedBuffer<float> m_k32;
    AlignedBuffer<double> m_k64;
};

}  // namespace uot
