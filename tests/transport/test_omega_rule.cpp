// The automatic omega's decisions (OmegaRule, core/transport/relaxed_rules.h: the
// rule every engine runs, the CPU loop and the GPU's device-resident step alike)
// against values worked out by hand from docs/TIME_TO_SOLUTION.md's formulas: the
// change of the iterate falls at a settled linear rate rho, so Young's relation
// (rho + w - 1)^2 = rho w^2 r gives the plain step's rate r and the better omega
// 2 / (1 + sqrt(1 - r)).
//   - after a step undone for lowering the objective, omega halves toward 1 and the
//     rate is measured again from there: with a settled rate omega moves up again;
//   - after a step that left the floating-point range it never moves above the halved
//     omega;
//   - after 8 rejections it no longer moves up, and further rejections take it to 1
//     (so at most 14 steps are ever undone).

#include <QTest>

#include <cmath>

#include "core/transport/relaxed_rules.h"

using namespace uot;

namespace {

// Seven accepted changes falling at rate rho from 1 (what the rule needs to measure it).
void feedSettledRate(OmegaRule& rule, double rho)
{
    double change = 1.0;
    for (int k = 0; k < 7; ++k, change *= rho) rule.accepted(change);
}

// The omega Young's relation gives for a settled rate rho at omega w.
double youngOmega(double rho, double w)
{
    const double r = (rho + w - 1) * (rho + w - 1) / (rho * w * w);
    return 2.0 / (1.0 + std::sqrt(1.0 - r));
}

}  // namespace

class TestOmegaRule : public QObject {
    Q_OBJECT

private slots:
    void risesAgainAfterAnObjectiveRejection()
    {
        OmegaRule rule;
        rule.start(Acceleration::Auto, 1.6);
        QCOMPARE(rule.omega, 1.6);
        rule.rejected(false);
        QCOMPARE(rule.omega, 1.3);
        feedSettledRate(rule, 0.9);
        // By hand: r = (0.9 + 0.3)^2 / (0.9 * 1.69) = 1.44 / 1.521, 1 - r = 0.081 / 1.521 = 9 / 169,
        // sqrt(1 - r) = 3 / 13, omega = 2 / (1 + 3 / 13) = 1.625.
        QVERIFY(std::fabs(youngOmega(0.9, 1.3) - 1.625) < 1e-12);
        QVERIFY(std::fabs(rule.omega - 1.625) < 1e-12);
    }

    void staysAfterANonFiniteStep()
    {
        OmegaRule rule;
        rule.start(Acceleration::Auto, 1.6);
        rule.rejected(true);
        QCOMPARE(rule.omega, 1.3);
        feedSettledRate(rule, 0.9);  // the rate asks for 1.625, above the halved omega
        QCOMPARE(rule.omega, 1.3);
        rule.rejected(false);        // a later objective rejection halves again; the limit stays 1.3
        QCOMPARE(rule.omega, 1.15);
        feedSettledRate(rule, 0.9);  // Young's value at 1.15 (above 1.3) is held at the limit
        QVERIFY(youngOmega(0.9, 1.15) > 1.3);
        QCOMPARE(rule.omega, 1.3);
    }

    void afterEightRejectionsOmegaOnlyShrinks()
    {
        OmegaRule rule;
        rule.start(Acceleration::Auto, 1.6);
        double expected = 1.6;
        for (int k = 0; k < OmegaRule::kMaxRejections; ++k) {
            rule.rejected(false);
            expected = 1.0 + 0.5 * (expected - 1.0);
            QVERIFY(std::fabs(rule.omega - expected) < 1e-12);
            if (k + 1 == OmegaRule::kMaxRejections) break;
            feedSettledRate(rule, 0.9);  // up again by Young's relation while rejections < 8
            expected = youngOmega(0.9, expected);
            QVERIFY(std::fabs(rule.omega - expected) < 1e-12);
            QVERIFY(rule.omega > 1.6);
        }
        feedSettledRate(rule, 0.9);  // the 8th: no more rises
        QVERIFY(std::fabs(rule.omega - expected) < 1e-12);
        QVERIFY(expected > 1.3);
        int more = 0;
        while (rule.omega > 1.0) {
            rule.rejected(false);
            ++more;
        }
        QVERIFY2(more <= 6, qPrintable(QString::number(more)));
        feedSettledRate(rule, 0.9);
        QCOMPARE(rule.omega, 1.0);
    }

    void fixedOmegaOnlyShrinks()
    {
        OmegaRule rule;
        rule.start(Acceleration::Relax, 1.8);
        rule.rejected(false);
        QCOMPARE(rule.omega, 1.4);
        feedSettledRate(rule, 0.9);  // a fixed omega is never raised
        QCOMPARE(rule.omega, 1.4);
    }
};

QTEST_GUILESS_MAIN(TestOmegaRule)
#include "test_omega_rule.moc"
