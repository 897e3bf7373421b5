#include "core/transport/fused_solver.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <variant>
#include <vector>

#include "core/transport/multiplicative_solve.h"
#include "core/transport/pass_reductions.h"
#include "core/transport/plan_evaluation.h"
#include "core/transport/row_block_evaluation.h"
#include "core/transport/row_chunk_pool.h"
#include "core/transport/row_groups.h"
#include "core/transport/row_kernels.h"
#include "core/transport/traffic_model.h"

namespace uot {

namespace {

// Below this many matrix elements the pass runs on one thread (fork/join
// would cost more than it saves).
constexpr std::size_t kParallelThreshold = 1 << 15;

std::size_t alignedBytes(std::size_t bytes)
{
    return (bytes + kernels::kAlignBytes - 1) / kernels::kAlignBytes * kernels::kAlignBytes;
}

// The arrays a node's processes share for passes in row chunks (row_chunk_pool.h),
// all over the node's rows, and where this process's own block is.
template <typename T>
struct SharedChunkArrays {
    RowChunkPool* pool = nullptr;
    std::size_t rows = 0, chunks = 0;
    std::size_t blockOffset = 0, blockRows = 0;  // this process's block among the node's rows
    const T* own = nullptr;                      // this process's copy of its block's K (ld each)
    std::vector<std::size_t> ownerChunks;        // node process k owns chunks [ownerChunks[k], ownerChunks[k + 1])
    std::span<const double> a;                   // a of the node's rows
    double* u = nullptr;                         // u of the pass: each process writes its block's
    double* uNew = nullptr;                      // u after the pass: each process reads its block's
    ThreadSums* sums = nullptr;                  // each chunk's row-side sums
    T* slots = nullptr;                          // each chunk's column partials (ld each)
    T* kernel = nullptr;                         // K of the node's rows (ld each)

    // The first of chunk c's rows among the node's rows (c = chunks: their end).
    std::size_t chunkBegin(std::size_t c) const
    {
        return splitBegin(rows, static_cast<int>(chunks), static_cast<int>(c));
    }
    // K of rows [r0, r1): from the process's own copy when they are all its own
    // (its private memory, on huge pages where it can), else the shared kernel.
    const T* kernelRows(std::size_t r0, std::size_t r1, std::size_t ld) const
    {
        if (r0 >= blockOffset && r1 <= blockOffset + blockRows) return own + (r0 - blockOffset) * ld;
        return kernel + r0 * ld;
    }

    // The arrays placed in the node's shared memory (collective on the node); own:
    // this process's block of K (blockRows rows from node row blockFirst).
    static SharedChunkArrays placed(RowChunkPool& pool, std::size_t ld, std::span<const double> allA,
                                    std::size_t blockFirst, std::size_t blockRows, const T* own)
    {
        SharedChunkArrays s;
        s.pool = &pool;
        s.rows = pool.nodeRowCount();
        s.chunks = rowChunkCount(s.rows);
        s.blockOffset = blockFirst - pool.nodeFirstRow();
        s.blockRows = blockRows;
        s.own = own;
        s.a = allA.subspan(pool.nodeFirstRow(), s.rows);
        // A chunk belongs to the process whose block holds its first row.
        const std::vector<std::size_t>& blocks = pool.nodeBlocks();
        s.ownerChunks.assign(blocks.size(), s.chunks);
        for (std::size_t k = 0, c = 0; k + 1 < blocks.size(); ++k) {
            while (c < s.chunks && s.chunkBegin(c) < blocks[k]) ++c;
            s.ownerChunks[k] = c;
        }
        const std::size_t scalings = alignedBytes(s.rows * sizeof(double)),
                          sums = alignedBytes(s.chunks * sizeof(ThreadSums)),
                          slots = alignedBytes(s.chunks * ld * sizeof(T));
        auto* at = static_cast<std::byte*>(pool.sharedMemory(2 * scalings + sums + slots + s.rows * ld * sizeof(T)));
        s.u = reinterpret_cast<double*>(at);
        s.uNew = reinterpret_cast<double*>(at + scalings);
        s.sums = reinterpret_cast<ThreadSums*>(at + 2 * scalings);
        s.slots = reinterpret_cast<T*>(at + 2 * scalings + sums);
        s.kernel = reinterpret_cast<T*>(at + 2 * scalings + sums + slots);
        std::copy(own, own + blockRows * ld, s.kernel + s.blockOffset * ld);
        pool.barrier();
        return s;
    }
};

template <typename T>
class FusedPasses final : public ScalingPasses {
public:
    // rowBlocks: set when problem is this process's block of rows of a solve
    // distributed by rows (the column sums are then summed over all blocks).
    FusedPasses(const UotProblem& problem, const T* k, std::size_t ld, int threads,
                RowBlockReduction* rowBlocks = nullptr)
        : m_k(k), m_m(problem.a.size()), m_n(problem.cols()), m_ld(ld), m_threads(resolveThreadCount(threads)),
          m_a(problem.a), m_b(problem.b), m_fa(problem.exponentA()), m_fb(problem.exponentB()),
          m_kernels(kernels::rowKernels<T>()), m_sums(m_threads), m_rowBlocks(rowBlocks)
    {
        m_v.resize(ld);
        for (std::size_t j = 0; j < ld; ++j) m_v.data()[j] = T(0);
        m_partials.resize(static_cast<std::size_t>(m_threads) * ld);
        // Two more slots after the column sums travel in the same reduction: the
        // row-side error and the count of blocks whose u left the range.
        m_col.resize(ld + 2);
        m_parallel = m_m * m_ld >= kParallelThreshold;
    }

    PassStatus iterate(const double* u, const double* v, double* uNew, double* vNew, bool rowMarginal,
                       bool colMarginal, double& errA, double& errB) override
    {
        if (m_shared.pool) return iterateInChunks(u, v, uNew, vNew, rowMarginal, colMarginal, errA, errB);
        loadV(v);
        const T* k = m_k;
        const T* vt = m_v.data();
        T* partials = m_partials.data();
        const std::size_t m = m_m, n = m_n, ld = m_ld;
        const double fa = m_fa, fb = m_fb;
        const auto& kern = m_kernels;
        const double omega = m_omega;
        ThreadSums* sums = m_sums.data();
        double* col = m_col.data();
        int used = 1;
#pragma omp parallel num_threads(m_threads) if (m_parallel)
        {
            const int t = omp_get_thread_num();
            const int nt = omp_get_num_threads();
            if (t == 0) used = nt;
            ThreadSums local;
            T* s = partials + static_cast<std::size_t>(t) * ld;
            for (std::size_t j = 0; j < ld; ++j) s[j] = T(0);
            // Rows in groups (fusedRowPass, row_groups.h): the dot products of a
            // group, its scalings u_i = (a_i / r_i)^fa in one vector pow call, then its
            // column update while the rows are in cache (L2, and L1 for the last
            // columns: the update runs back to front). Where it measured faster
            // (Intel Xeon: small per-core bandwidth) the dot products of group
            // g+1 run interleaved with the column update of group g (same bits;
            // on the 2-core EPYC the plain order is faster). See
            // pipelinedRowsPreferred(). No software prefetch of the next group: on
            // the EPYC with the matrix on huge pages it made the pass slower
            // (docs/notes/benchmark-history.md, "Row-group kernels").
            const std::size_t r0 = splitBegin(m, nt, t), r1 = splitBegin(m, nt, t + 1);
            fusedRowPass<T>(kern, k, ld, r0, r1, vt, s, [&](RowGroup g, std::size_t stride, const T* rt, T* ut) {
                updateRowScalings(g.first, stride, g.count, rt, u, m_a, fa, kern, uNew, ut, rowMarginal, local, omega);
            });
#pragma omp barrier
            const std::size_t line = kernels::kAlignBytes / sizeof(T);
            const std::size_t c0 = splitBeginAligned(n, nt, t, line), c1 = splitBeginAligned(n, nt, t + 1, line);
            if (m_rowBlocks) {
                sumColumnPartials(c0, c1, partials, nt, ld, col);
            } else {
                updateColumnScalings(c0, c1, partials, nt, ld, m_b, fb, kern, col, vNew, colMarginal, local);
            }
            sums[t] = local;
        }
        const PassStatus status = mergeThreadSums(sums, used, errA, errB);
        if (!m_rowBlocks) return status;
        return finishColumnsOverBlocks(status, vNew, colMarginal, errA, errB);
    }

    // The block's rows after a move (FusedRowBlockSolve::moveRows): K's rows and a.
    void setRows(const UotProblem& block, const T* k)
    {
        m_k = k;
        m_m = block.a.size();
        m_a = block.a;
        m_parallel = m_m * m_ld >= kParallelThreshold;
    }

    // Passes in row chunks over the node's rows (row_chunk_pool.h).
    void shareRows(const SharedChunkArrays<T>& shared)
    {
        m_shared = shared;
        m_parallel = shared.rows * m_ld >= kParallelThreshold;
    }

    bool supportsRelaxation() const override { return true; }
    void setRowRelaxation(double omega) override { m_omega = omega; }

    double rowMarginalError(const double* u, const double* v) override
    {
        loadV(v);
        const double err = rowMarginalErrorOf(m_k, m_m, m_ld, m_v.data(), u, m_a, m_kernels, m_threads, m_parallel);
        return m_rowBlocks ? m_rowBlocks->sum(err) : err;
    }

private:
    // A pass in row chunks: this block's u to the shared u; chunks taken from the
    // node's counters until none is left (this process's own first, then each other
    // process's in turn), each with its column partials in its own slot and its
    // rows' new u in the shared uNew; then this process sums its share
    // of the columns over the chunks in chunk order (the node's first process the
    // chunks' row-side sums), zeros elsewhere, so that the reduction over all
    // processes adds each column's node sum once; its block's new u from the shared uNew.
    PassStatus iterateInChunks(const double* u, const double* v, double* uNew, double* vNew, bool rowMarginal,
                               bool colMarginal, double& errA, double& errB)
    {
        loadV(v);
        const SharedChunkArrays<T>& sh = m_shared;
        std::copy(u, u + m_m, sh.u + sh.blockOffset);
        sh.pool->startPass();
        const T* vt = m_v.data();
        const std::size_t ld = m_ld, n = m_n, chunks = sh.chunks;
        const double fa = m_fa, omega = m_omega;
        const auto& kern = m_kernels;
        const int owners = sh.pool->nodeSize(), self = sh.pool->nodeRank();
#pragma omp parallel num_threads(m_threads) if (m_parallel)
        for (int k = 0; k < owners; ++k) {
            const int owner = (self + k) % owners;
            const std::size_t first = sh.ownerChunks[static_cast<std::size_t>(owner)],
                              count = sh.ownerChunks[static_cast<std::size_t>(owner) + 1] - first;
            for (;;) {
                std::size_t taken = 0;
#pragma omp critical(uot_row_chunk_counter)
                taken = sh.pool->takeChunk(owner, count);
                if (taken >= count) break;
                const std::size_t c = first + taken, r0 = sh.chunkBegin(c), r1 = sh.chunkBegin(c + 1);
                T* s = sh.slots + c * ld;
                std::fill(s, s + ld, T(0));
                ThreadSums local;
                fusedRowPass<T>(kern, sh.kernelRows(r0, r1, ld), ld, 0, r1 - r0, vt, s,
                                [&](RowGroup g, std::size_t stride, const T* rt, T* ut) {
                                    updateRowScalings(g.first, stride, g.count, rt, sh.u + r0, sh.a.subspan(r0), fa,
                                                      kern, sh.uNew + r0, ut, rowMarginal, local, omega);
                                });
                sh.sums[c] = local;
            }
        }
        sh.pool->barrier();
        double* col = m_col.data();
        std::fill(col, col + n, 0.0);
        const std::size_t line = kernels::kAlignBytes / sizeof(T);
        const int parts = sh.pool->nodeSize(), part = sh.pool->nodeRank();
        const std::size_t c0 = splitBeginAligned(n, parts, part, line);
        const std::size_t c1 = splitBeginAligned(n, parts, part + 1, line);
#pragma omp parallel num_threads(m_threads) if (m_parallel)
        {
            const int t = omp_get_thread_num(), nt = omp_get_num_threads();
            sumColumnPartials(c0 + splitBegin(c1 - c0, nt, t), c0 + splitBegin(c1 - c0, nt, t + 1), sh.slots,
                              static_cast<int>(chunks), ld, col);
        }
        PassStatus status = PassStatus::Ok;
        errA = errB = 0;
        if (part == 0) status = mergeThreadSums(sh.sums, static_cast<int>(chunks), errA, errB);
        std::copy(sh.uNew + sh.blockOffset, sh.uNew + sh.blockOffset + m_m, uNew);
        return finishColumnsOverBlocks(status, vNew, colMarginal, errA, errB);
    }

    // The column step of a pass distributed by rows: this block's column sums
    // (in m_col), its row-side error and its u status are summed over all
    // blocks in one reduction, then every block computes the same whole v.
    PassStatus finishColumnsOverBlocks(PassStatus rowStatus, double* vNew, bool colMarginal, double& errA,
                                       double& errB)
    {
        double* col = m_col.data();
        const std::size_t n = m_n;
        col[n] = errA;
        col[n + 1] = rowStatus == PassStatus::Ok ? 0.0 : 1.0;
        m_rowBlocks->sum(std::span<double>(col, n + 2));
        errA = col[n];
        const bool rowsBad = col[n + 1] > 0;
        const double fb = m_fb;
        const auto& kern = m_kernels;
        ThreadSums* sums = m_sums.data();
        int used = 1;
#pragma omp parallel num_threads(m_threads) if (m_parallel)
        {
            const int t = omp_get_thread_num();
            const int nt = omp_get_num_threads();
            if (t == 0) used = nt;
            ThreadSums local;
            const std::size_t line = kernels::kAlignBytes / sizeof(T);
            const std::size_t c0 = splitBeginAligned(n, nt, t, line), c1 = splitBeginAligned(n, nt, t + 1, line);
            updateColumnsFromSums<T>(c0, c1, col, m_b, fb, kern, vNew, colMarginal, local);
            sums[t] = local;
        }
        double unusedA = 0;
        const PassStatus colStatus = mergeThreadSums(sums, used, unusedA, errB);
        return rowsBad || colStatus != PassStatus::Ok ? PassStatus::NotFinite : PassStatus::Ok;
    }

    void loadV(const double* v)
    {
        T* vt = m_v.data();
        for (std::size_t j = 0; j < m_n; ++j) vt[j] = static_cast<T>(v[j]);
    }

    const T* m_k;
    std::size_t m_m, m_n, m_ld;
    int m_threads;
    std::span<const double> m_a, m_b;
    double m_fa, m_fb;
    const kernels::RowKernels<T>& m_kernels;
    AlignedBuffer<T> m_v;
    AlignedBuffer<T> m_partials;
    AlignedBuffer<double> m_col;  // column sums K^T u of the last pass
    std::vector<ThreadSums> m_sums;
    RowBlockReduction* m_rowBlocks = nullptr;
    bool m_parallel = true;
    double m_omega = 1.0;  // over-relaxation of the row half-step
    SharedChunkArrays<T> m_shared;  // its pool is set for passes in row chunks
};

// Rows [first, first + count) of `block` as a problem of their own (same b, eps, tau).
UotProblem rowsOf(const UotProblem& block, std::size_t first, std::size_t count)
{
    UotProblem part = block;
    part.a = block.a.subspan(first, count);
    if (auto* dense = std::get_if<DenseCost>(&part.cost)) {
        if (dense->f32) dense->f32 += first * dense->cols;
        if (dense->f64) dense->f64 += first * dense->cols;
        dense->rows = count;
    } else {
        auto& cloud = std::get<PointCloudCost>(part.cost);
        cloud.x += first * cloud.dim;
        cloud.rows = count;
    }
    return part;
}

}  // namespace

std::uint64_t FusedSolver::bytesPerIteration(std::size_t rows, std::size_t cols, Precision precision) const
{
    return matrixTrafficBytes(sweeps::kOneRead, entryBytesFor(precision), rows, cols);
}

SolveResult FusedSolver::solve(const UotProblem& problem, const SolveOptions& options, const SolveControl& control)
{
    const std::uint64_t bytes = bytesPerIteration(problem.rows(), problem.cols(), options.precision);
    auto make = [&](const auto* k, std::size_t ld, std::vector<double>&, std::vector<double>&) {
        using T = std::remove_cv_t<std::remove_pointer_t<decltype(k)>>;
        return FusedPasses<T>(problem, k, ld, options.threads);
    };
    return solveInPrecision(problem, options, control, name(), bytes, m_k32, m_k64, make);
}

FusedRowBlockSolve::FusedRowBlockSolve(const UotProblem& block, const RowBlock& where, const SolveOptions& options)
    : m_block(block), m_where(where), m_options(options)
{
    const auto start = std::chrono::steady_clock::now();
    const std::size_t rows = block.a.size(), cols = block.cols();
    // A block without rows has nothing of its own to check: b, eps and tau are
    // the same on every process and the blocks with rows check them.
    if (rows > 0) validateSolveOptions(block, options);
    if (options.precision == Precision::Fp32) {
        m_ld = kernels::paddedLength<float>(cols);
        if (rows > 0) m_report = buildPaddedKernel<float>(block, m_k32, m_ld, options.threads);
    } else {
        m_ld = kernels::paddedLength<double>(cols);
        if (rows > 0) m_report = buildPaddedKernel<double>(block, m_k64, m_ld, options.threads);
    }
    if (rows == 0) m_report.nonZeroColumns.assign(cols, 0);
    m_setupSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

SolveResult FusedRowBlockSolve::run(RowBlockReduction& loop, RowBlockReduction& other, RowBlockMover* mover,
                                    RowChunkPool* chunks)
{
    if (mover && chunks) throw std::logic_error("rows move between blocks or go in chunks, not both");
    if (m_options.precision == Precision::Fp32) return runIn(m_k32, loop, other, mover, chunks);
    return runIn(m_k64, loop, other, mover, chunks);
}

RowSpan keptRowsOfMove(std::size_t oldFirst, std::size_t oldEnd, std::size_t first, std::size_t end)
{
    const std::size_t keptFirst = std::min(std::max(first, oldFirst), end);
    return {keptFirst, std::max(keptFirst, std::min(end, oldEnd))};
}

template <typename T, typename Passes>
void FusedRowBlockSolve::moveRows(const RowBlockMover::Move& move, RowBlockMover& mover, AlignedBuffer<T>& matrix,
                                  Passes& passes, RowBlockReduction& other, std::vector<double>& u)
{
    const auto start = std::chrono::steady_clock::now();
    // u of every row to every process (one reduction of M values), then this block's.
    const std::vector<double> all = gatherRows(other, m_where, u);
    const std::size_t oldFirst = m_where.firstRow, oldEnd = oldFirst + u.size();
    const std::size_t first = move.firstRow, end = first + move.rowCount;
    m_block = mover.rows(first, move.rowCount);
    // The rows this block had already keep their kernel rows; the others are built.
    const RowSpan kept = keptRowsOfMove(oldFirst, oldEnd, first, end);
    const std::size_t keptFirst = kept.first, keptEnd = kept.end;
    AlignedBuffer<T> next;
    next.resize(move.rowCount * m_ld);
    if (keptEnd > keptFirst)
        std::copy(matrix.data() + (keptFirst - oldFirst) * m_ld, matrix.data() + (keptEnd - oldFirst) * m_ld,
                  next.data() + (keptFirst - first) * m_ld);
    for (const auto& [from, to] : {std::pair{first, keptFirst}, std::pair{keptEnd, end}}) {
        if (to <= from) continue;
        AlignedBuffer<T> built;
        buildPaddedKernel<T>(rowsOf(m_block, from - first, to - from), built, m_ld, m_options.threads);
        std::copy(built.data(), built.data() + (to - from) * m_ld, next.data() + (from - first) * m_ld);
    }
    matrix = std::move(next);
    m_where.firstRow = first;
    passes.setRows(m_block, matrix.data());
    u.assign(all.begin() + static_cast<std::ptrdiff_t>(first), all.begin() + static_cast<std::ptrdiff_t>(end));
    mover.moved(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

template <typename T>
SolveResult FusedRowBlockSolve::runIn(AlignedBuffer<T>& matrix, RowBlockReduction& loop, RowBlockReduction& other,
                                      RowBlockMover* mover, RowChunkPool* chunks)
{
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const std::size_t rows = m_block.a.size(), cols = m_block.cols();
    SolveResult result;
    result.solver = "fused";
    result.mode = toString(m_options.mode);
    result.bytesPerIteration = matrixTrafficBytes(sweeps::kOneRead, sizeof(T), rows, cols);

    // The underflow test of the whole kernel: a row is zero in its own block, a
    // column only when it is zero in every block.
    ScalingLoopSetup setup;
    setup.bytesPerIteration = result.bytesPerIteration;
    setup.rowBlocks = &loop;
    std::vector<double> nonZero(cols);
    for (std::size_t j = 0; j < cols; ++j) nonZero[j] = m_report.nonZeroColumns[j];
    other.max(nonZero);
    setup.kernel.zeroRows = static_cast<std::size_t>(other.sum(static_cast<double>(m_report.zeroRows)));
    setup.kernel.zeroCols = static_cast<std::size_t>(std::count(nonZero.begin(), nonZero.end(), 0.0));

    std::vector<double> u = initialScaling(m_options.warmU, rows);
    std::vector<double> v = initialScaling(m_options.warmV, cols);
    FusedPasses<T> passes(m_block, matrix.data(), m_ld, m_options.threads, &loop);
    if (chunks) {
        // The node's kernel in its shared memory too: each block's rows at their place.
        passes.shareRows(
            SharedChunkArrays<T>::placed(*chunks, m_ld, m_where.allA, m_where.firstRow, rows, matrix.data()));
    }
    if (mover)
        setup.moveRows = [&](int iteration, std::vector<double>& block) {
            const RowBlockMover::Move move = mover->plan(iteration);
            if (move.moved) moveRows(move, *mover, matrix, passes, other, block);
            return move.moved;
        };
    result.timings.setupSeconds = m_setupSeconds + std::chrono::duration<double>(Clock::now() - start).count();
    if (setup.kernel.underflows()) {
        markUnderflow(result, setup.kernel, 0);
    } else {
        runScalingLoop(m_block, m_options, SolveControl{}, passes, setup, u, v, result);
    }

    // Rows' figures of the plan are gathered whole, the column sums summed; then the
    // same evaluation as one process (row_block_evaluation.h).
    auto evaluator = [&](const UotProblem& block, std::span<const double> logU, std::span<const double> logV) {
        return evaluationOverBlocks(other, block, m_where,
                                    planSums(block, logU, logV, m_options.threads, storageFloor(m_options.precision)));
    };
    finishResult(m_block, m_options, u, v, result, evaluator);
    result.logU = gatherRows(other, m_where, result.logU);
    return result;
}

template SolveResult FusedRowBlockSolve::runIn<float>(AlignedBuffer<float>&, RowBlockReduction&, RowBlockReduction&,
                                                      RowBlockMover*, RowChunkPool*);
template SolveResult FusedRowBlockSolve::runIn<double>(AlignedBuffer<double>&, RowBlockReduction&, RowBlockReduction&,
                                                       RowBlockMover*, RowChunkPool*);

}  // namespace uot
