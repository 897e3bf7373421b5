// The pipeline's stage caches against the parameter table (core/params): for
// every entry the pipeline holds, a change of its value alone re-runs the stage
// the table names and reuses the stages before it. The caches compare each
// stage's inputs as a whole, so no setting can be missed; before that, a
// hand-written list left out e.g. the solve's thread count, and a changed
// setting reused a plan solved without it. Also: each stage's settings struct
// compares every member (a changed member of any kind makes them differ).
// Qt Test.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/params/parameter_schema.h"
#include "core/pipeline/recolor_pipeline.h"
#include "tests/support/qt_checks.h"
#include "tests/support/synthetic_scene.h"

using namespace uot;
using uot::test::scene;

namespace {

// A valid value other than the default, in the core's units.
double otherNumber(const params::Parameter& p)
{
    if (p.kind == params::Kind::Flag) return p.defaultValue != 0 ? 0.0 : 1.0;
    const double d = p.defaultValue;
    if (std::isinf(d)) return p.min + 1;  // a penalty: inf (balanced) -> a finite one
    double v = d != 0 && d * 2 <= p.max ? d * 2 : (p.min + p.max) / 2;
    if (v == d) v = (p.min + d) / 2;  // the default in the middle of the range
    if (p.kind == params::Kind::Integer) v = d + 1 <= p.max ? d + 1 : d - 1;
    if (p.name == "palette-bins") v = d * 2;  // a power of two
    return v;
}

std::string otherChoice(const params::Parameter& p)
{
    for (const std::string& c : p.choiceList())
        if (c != p.defaultText) return c;
    return p.defaultText;
}

}  // namespace

class TestParameterStages : public QObject {
    Q_OBJECT
private slots:
    void everyBoundEntryInvalidatesItsStage_data()
    {
        QTest::addColumn<QString>("name");
        int bound = 0;
        for (const params::Parameter& p : params::parameters())
            if ((p.get && p.set) || (p.getText && p.setText)) {  // held by the pipeline (not the studio's own forms)
                QTest::newRow(p.name.c_str()) << QString::fromStdString(p.name);
                ++bound;
            }
        QVERIFY(bound >= 30);
    }

    void everyBoundEntryInvalidatesItsStage()
    {
        QFETCH(QString, name);
        const params::Parameter& p = params::parameter(name.toStdString());
        RecolorSettings base;
        base.palette.size = 64;  // small solves: the test is about the caches
        base.threads = 1;
        RecolorSettings changed = base;
        if (p.setText) {
            QCOMPARE(QString::fromStdString(p.getText(base)), QString::fromStdString(p.defaultText));
            p.setText(changed, otherChoice(p));
        } else {
            if (p.name != "palette-size" && p.name != "threads") QCOMPARE(p.get(base), p.defaultValue);
            p.set(changed, otherNumber(p));
        }
        QVERIFY2(!(changed == base), "the table's setter changed nothing");

        RecolorPipeline pipeline(base);
        pipeline.setSource(scene(48, 32, 1));
        pipeline.setReference(scene(40, 30, 7));
        pipeline.run();
        pipeline.setSettings(changed);
        pipeline.run();
        const PipelineStats& st = pipeline.stats();
        switch (p.stage) {
        case params::Stage::Palette:
            QVERIFY2(!st.paletteFromCache, "a palette setting reused the palettes");
            break;
        case params::Stage::Solve:
            QVERIFY2(st.paletteFromCache, "a solve setting rebuilt the palettes");
            QVERIFY2(!st.planFromCache, "a solve setting reused the plan");
            break;
        case params::Stage::Map:
            QVERIFY2(st.paletteFromCache, "a mapping setting rebuilt the palettes");
            QVERIFY2(st.planFromCache, "a mapping setting solved again");
            break;
        case params::Stage::None:
            QFAIL("a bound entry without a stage");
        }
    }

    // The stage structs compare every member: one changed member of each kind makes them differ.
    void stageStructsCompareEveryMember()
    {
        SolveOptions a, b;
        b.autoInitialOmega = 1.3;  // left out of the former hand-written list
        QVERIFY(!(a == b));
        b = a;
        b.stopping = StoppingRule::Pot;
        QVERIFY(!(a == b));
        b = a;
        b.relaxationSafeguard = false;
        QVERIFY(!(a == b));
        b = a;
        const std::vector<double> warm(4, 1.0);
        b.warmU = warm;  // where the iteration starts is no part of the request
        QVERIFY(a == b);
        TransportSettings t, u;
        u.options.epsSchedule.factor = 0.25;
        QVERIFY(!(t == u));
        MappingSettings m, n;
        n.bounds.enabled = !m.bounds.enabled;
        QVERIFY(!(m == n));
    }
};

QTEST_GUILESS_MAIN(TestParameterStages)
#include "test_parameter_stages.moc"
