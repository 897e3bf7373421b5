#include "core/transport/kernel_matrix.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

#include "core/transport/row_kernels.h"
#include "core/transport/uot_error.h"

namespace uot {

namespace {

struct CostRowFiller {
    std::size_t i;
    double* out;

    void operator()(const DenseCost& c) const
    {
        if (c.f32) {
            const float* row = c.f32 + i * c.cols;
            for (std::size_t j = 0; j < c.cols; ++j) out[j] = row[j];
        } else {
            const double* row = c.f64 + i * c.cols;
            std::copy(row, row + c.cols, out);
        }
    }

    void operator()(const PointCloudCost& c) const
    {
        const double* xi = c.x + i * c.dim;
        if (c.dim == 3) {  // colour palettes: the same sums, unrolled so that the loop over j vectorises
            const double x0 = xi[0], x1 = xi[1], x2 = xi[2];
            for (std::size_t j = 0; j < c.cols; ++j) {
                const double* yj = c.y + 3 * j;
                const double d0 = x0 - yj[0], d1 = x1 - yj[1], d2 = x2 - yj[2];
                out[j] = c.scale * ((d0 * d0 + d1 * d1) + d2 * d2);
            }
            return;
        }
        for (std::size_t j = 0; j < c.cols; ++j) {
            const double* yj = c.y + j * c.dim;
            double d2 = 0;
            for (std::size_t k = 0; k < c.dim; ++k) {
                const double d = xi[k] - yj[k];
                d2 += d * d;
            }
            out[j] = c.scale * d2;
        }
    }
};

}  // namespace

#if UOT_HAVE_X86_KERNELS && defined(__GNUC__)
// Built for AVX-512, AVX2 and the baseline, picked at load time (ifunc): every
// float64 sweep over the costs (kernel build, absorption, plan evaluation) runs it.
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void fillCostRow(const CostSource& cost, std::size_t i, double* out)
{
    std::visit(CostRowFiller{i, out}, cost);
}

double logReference(const UotProblem& problem, std::size_t i, std::size_t j)
{
    if (problem.reference == ReferenceMeasure::Ones) return 0.0;
    return std::log(problem.a[i]) + std::log(problem.b[j]);
}

int resolveThreadCount(int requested)
{
    if (requested > 0) return requested;
    return std::max(1, omp_get_max_threads());
}

template <typename T>
KernelBuildReport buildKernelMatrix(const UotProblem& problem, T* out, int threads)
{
    validateProblem(problem);
    const std::size_t rows = problem.rows();
    const std::size_t cols = problem.cols();
    const double invEps = 1.0 / problem.eps;
    const bool product = problem.reference == ReferenceMeasure::Product;
    std::vector<double> logB(product ? cols : 0);
    for (std::size_t j = 0; j < logB.size(); ++j) logB[j] = std::log(problem.b[j]);

    // First bad entry found, as a flat index; resolved to (i, j) after the
    // parallel region so that nothing throws inside it.
    const std::size_t noBadEntry = std::numeric_limits<std::size_t>::max();
    std::size_t firstBad = noBadEntry;
    std::size_t zeroRows = 0;
    std::vector<unsigned char> colNonZero(cols, 0);
    const auto expBatch = kernels::rowKernels<double>().expBatch;

#pragma omp parallel num_threads(resolveThreadCount(threads))
    {
        std::vector<double> cost(cols);
        std::vector<unsigned char> localColNonZero(cols, 0);
        std::size_t localFirstBad = noBadEntry;
        std::size_t localZeroRows = 0;
#pragma omp for schedule(static)
        for (std::ptrdiff_t si = 0; si < static_cast<std::ptrdiff_t>(rows); ++si) {
            const std::size_t i = static_cast<std::size_t>(si);
            fillCostRow(problem.cost, i, cost.data());
            const double logA = product ? std::log(problem.a[i]) : 0.0;
            T* krow = out + i * cols;
            double* logK = cost.data();
            // Branch-free (vectorises): an invalid cost (negative, NaN, inf) gives K = 0
            // and is located afterwards.
            unsigned char invalid = 0;
            for (std::size_t j = 0; j < cols; ++j) {
                const double c = logK[j];
                const bool valid = c >= 0.0 && c <= std::numeric_limits<double>::max();
                invalid |= static_cast<unsigned char>(!valid);
                const double x = -c * invEps + (product ? logA + logB[j] : 0.0);
                logK[j] = valid ? x : -std::numeric_limits<double>::infinity();
            }
            if (invalid) {
                std::vector<double> again(cols);
                fillCostRow(problem.cost, i, again.data());
                for (std::size_t j = 0; j < cols; ++j)
                    if (!(again[j] >= 0.0 && again[j] <= std::numeric_limits<double>::max())) {
                        localFirstBad = std::min(localFirstBad, i * cols + j);
                        break;
                    }
            }
            // Vector exp (libmvec): the scalar one made this the largest part of an
            // fp32 solve's set-up at 4096^2.
            expBatch(logK, logK, cols);
            // Subnormal entries are stored as 0: every later multiply-add that
            // reads one takes a slow microcode path on x86 (fp32 palette problems
            // at small eps ran 2.8x slower per pass), and below the smallest normal
            // number the entry carries too few bits to matter next to the row's
            // largest one. A row left all zero is the underflow the solvers detect;
            // mass that such entries carry under very large scalings is measured by
            // the final evaluation (planSums' storageFloor, plan_evaluation.h).
            // Branch-free, so that the loop vectorises.
            unsigned char anyNonZero = 0;
            unsigned char* colNonZeroRow = localColNonZero.data();
            for (std::size_t j = 0; j < cols; ++j) {
                const T k = static_cast<T>(logK[j]);
                const T kept = k < std::numeric_limits<T>::min() ? T(0) : k;
                krow[j] = kept;
                const unsigned char nonZero = kept > T(0) ? 1 : 0;
                colNonZeroRow[j] |= nonZero;
                anyNonZero |= nonZero;
            }
            if (!anyNonZero) ++localZeroRows;
        }
#pragma omp critical(uot_kernel_build_merge)
        {
            firstBad = std::min(firstBad, localFirstBad);
            zeroRows += localZeroRows;
            for (std::size_t j = 0; j < cols; ++j) colNonZero[j] |= localColNonZero[j];
        }
    }

    if (firstBad != noBadEntry) {
        const std::size_t i = firstBad / cols;
        const std::size_t j = firstBad % cols;
        std::vector<double> cost(cols);
        fillCostRow(problem.cost, i, cost.data());
        std::ostringstream msg;
        msg << "cost matrix entry (" << i << ", " << j << ") is " << cost[j]
            << ": costs must be finite and >= 0";
        throw Error(ErrorCode::InvalidArgument, msg.str());
    }
    KernelBuildReport report;
    report.zeroRows = zeroRows;
    report.zeroCols = static_cast<std::size_t>(std::count(colNonZero.begin(), colNonZero.end(), 0));
    report.nonZeroColumns = std::move(colNonZero);
    return report;
}

template KernelBuildReport buildKernelMatrix<float>(const UotProblem&, float*, int);
template KernelBuildReport buildKernelMatrix<double>(const UotProblem&, double*, int);

}  // namespace uot
