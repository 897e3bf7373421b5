// The studio's roofline for the matrix-free variants: their operational
// intensity is taken over the point traffic (far right of any ridge point: the
// runs are compute-bound), the chart's intensity axis and roof grow to show
// them, and the compute roof they are held against is the device's
// exp-and-FMA peak. References are the hand-derived figures in the comments.

#include <QTest>

#include <cmath>

#include "core/perf/roofline.h"
#include "core/registry/solver_registry.h"
#include "ui/live_charts.h"
#include "ui/machine_peaks.h"

using namespace uot;

class RooflineChartTest : public QObject {
    Q_OBJECT

private slots:
    void matrixFreeIntensityIsOverThePointTraffic_data()
    {
        QTest::addColumn<QString>("variant");
        QTest::addColumn<qulonglong>("side");
        QTest::newRow("gpu-mapreduce 65536^2") << "gpu-mapreduce" << 65536ull;
        QTest::newRow("mapreduce 4096^2") << "mapreduce" << 4096ull;
    }

    void matrixFreeIntensityIsOverThePointTraffic()
    {
        QFETCH(QString, variant);
        QFETCH(qulonglong, side);
        const perf::IterationCost cost = perf::iterationCost(variant.toStdString(), side, side, Precision::Fp32);
        QCOMPARE(cost.bytes, std::uint64_t(0));  // no matrix
        // Per entry and pass, d = 3 fp32: 3 FMAs (6), the shift (1), 3 adds of the
        // range reduction, a degree-5 polynomial (10), the accumulation (1) = 21
        // flops; two passes of side^2 entries. Points: two passes read both clouds,
        // 16 bytes a point: 2 * 2 side * 16 bytes.
        const double flops = 2.0 * double(side) * double(side) * 21.0;
        const double bytes = 2.0 * 2.0 * double(side) * 16.0;
        QVERIFY(std::abs(perf::operationalIntensity(cost) - flops / bytes) < 1e-9 * flops / bytes);
    }

    void computeRoofOfAMatrixFreeVariantIsItsExpPeak()
    {
        ui::MachinePeaks peaks;
        peaks.gpuReadGBps = 3000;
        peaks.gpuFp32Gflops = 60000;
        peaks.gpuExp2PerSecond = 4.15e12;  // the H100's exp2 probe
        peaks.hostPairsPerSecond = 1.8e10; // the VM's pair probe, 2 threads
        // 4.15e12 entries/s * 21 flops = 87150 GFLOP/s; 1.8e10 * 21 = 378 GFLOP/s.
        QCOMPARE(peaks.computeFor("gpu-mapreduce"), 87150.0);
        QCOMPARE(peaks.computeFor("mapreduce"), 378.0);
        // Stored-matrix variants keep their roofs: the FMA rate on the GPU, none on the CPU.
        QCOMPARE(peaks.computeFor("gpu-fused"), 60000.0);
        QCOMPARE(peaks.computeFor("fused"), 0.0);
    }

    void aMapReduceRunIsDrawnAsAComputeBoundPoint()
    {
        ui::LiveCharts charts;
        const double gbps = 3000, roof = 87150;
        charts.setBandwidthRoof(gbps, QStringLiteral("GPU"), roof);
        QCOMPARE(charts.rooflineMaxIntensity(), 100.0);
        const perf::IterationCost cost = perf::iterationCost("gpu-mapreduce", 65536, 65536, Precision::Fp32);
        const double intensity = perf::operationalIntensity(cost);  // 43008 flop/byte (see above)
        QVERIFY(intensity > roof / gbps);                           // right of the ridge: compute-bound
        // 2.54 ms an iteration on the H100: 2 * 65536^2 * 21 flops / 2.54e-3 s = 71000 GFLOP/s.
        const double gflops = 2.0 * 65536.0 * 65536.0 * 21.0 / 2.54e-3 / 1e9;
        charts.setRooflinePoint(0, intensity, gflops);
        QCOMPARE(charts.rooflinePointCount(), 1);
        QVERIFY(charts.rooflineMaxIntensity() >= intensity);
        const QList<QPointF> drawn = charts.roofPoints();
        QVERIFY(!drawn.isEmpty());
        // The roof reaches the point's intensity at the compute roof, which is above the point.
        QVERIFY(drawn.last().x() >= intensity);
        QCOMPARE(drawn.last().y(), roof);
        QVERIFY(gflops < roof);
        // The ridge point: the memory roof meets the compute roof at roof / bandwidth.
        bool ridge = false;
        for (const QPointF& p : drawn) ridge = ridge || std::abs(p.x() - roof / gbps) < 1e-9;
        QVERIFY(ridge);
    }
};

QTEST_MAIN(RooflineChartTest)
#include "test_roofline_chart.moc"
