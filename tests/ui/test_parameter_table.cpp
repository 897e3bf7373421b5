// The parameter table (core/params) walked entry by entry against its front
// ends: `uot recolor`'s options (app/cli/recolor_options.cpp, in process: the
// pipeline's, solver and output flags), the solver flags of `uot solve` (raw
// problems, their own defaults and ranges) and the studio (settings file,
// presets, the parameters dock). For every entry: the CLI accepts the default
// and refuses an out-of-range value with the very message the studio gives for
// it in a settings file; the studio saves and loads a non-default value
// unchanged; the dock's widget has the table's range, default and description.
// And every member of StudioParameters is bound to an entry with a settings
// key, every entry with a key to a member. eps-scaling has one spelling
// (ratio and factor) that the former "START,FACTOR" reads into, and the
// studio's parameters reach the pipeline through the table.

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <type_traits>

#include "app/cli/recolor_options.h"
#include "app/cli/solver_flags.h"
#include "core/imageio/image_io.h"
#include "core/params/parameter_schema.h"
#include "ui/parameters_panel.h"
#include "ui/studio_parameters.h"
#include "ui/studio_save_options.h"
#include "tests/ui/studio_test_options.h"

using namespace uot;
using namespace uot::ui;

namespace {

// Out of range (or no valid spelling), as typed.
QString badValue(const params::Parameter& p)
{
    switch (p.kind) {
    case params::Kind::Real:
    case params::Kind::Integer:
        if (std::isinf(p.max))  // no upper bound: below the lower one (or on it, when it is excluded)
            return QString::fromStdString(params::shownNumber(p, p.minExclusive ? p.min : p.min - 1));
        return QString::fromStdString(params::shownNumber(p, p.max * 2 + 1));
    case params::Kind::Flag: return QStringLiteral("maybe");
    case params::Kind::Choice: return QStringLiteral("no-such-choice");
    case params::Kind::Device: return QStringLiteral("gpu:%1").arg(int(p.max) + 1);
    case params::Kind::Text: return {};
    }
    return {};
}

// A valid value other than the default, as typed.
QString otherValue(const params::Parameter& p)
{
    switch (p.kind) {
    case params::Kind::Flag: return p.defaultValue != 0 ? "false" : "true";
    case params::Kind::Integer: return QString::number(p.defaultValue + 1 <= p.max ? p.defaultValue + 1 : p.defaultValue - 1);
    case params::Kind::Real:
        return QString::fromStdString(params::shownNumber(p, p.defaultValue != p.max ? (p.defaultValue + p.max) / 2
                                                                                      : (p.min + p.max) / 2));
    case params::Kind::Choice:
        for (const std::string& c : p.choiceList())
            if (c != p.defaultText) return QString::fromStdString(c);
        return {};
    case params::Kind::Device: return QStringLiteral("gpu:1");
    case params::Kind::Text: return {};
    }
    return {};
}

// Parses `uot recolor` options; the UsageError's text, empty when accepted.
QString cliError(const QStringList& args)
{
    cli::ArgParser parser("uot recolor", "test");
    cli::addRecolorOptions(parser);
    std::vector<std::string> a;
    for (const QString& s : args) a.push_back(s.toStdString());
    try {
        parser.parse(a);
        (void)cli::readRecolorOptions(parser);
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

// The solver flags as `uot solve` declares them (raw problems); the UsageError's text, empty when accepted.
QString solveError(const QStringList& args, cli::SolverSettings* read = nullptr)
{
    cli::SolverFlagConfig config;
    config.warmStart = true;
    cli::ArgParser parser("uot solve", "test");
    cli::addSolverOptions(parser, config);
    std::vector<std::string> a;
    for (const QString& s : args) a.push_back(s.toStdString());
    try {
        parser.parse(a);
        const cli::SolverSettings settings = cli::readSolverOptions(parser, config);
        if (read) *read = settings;
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
    return {};
}

// The command line's checks of one entry: the default accepted, a bad value refused with the table's message.
template <typename Run>
void checkFlag(const params::Parameter& p, Run run)
{
    const QString flag = "--" + QString::fromStdString(p.cliFlag);
    if (p.kind == params::Kind::Flag) {
        QCOMPARE(run(QStringList{flag}), QString());
        return;
    }
    if (p.kind == params::Kind::Text) return;  // checked where it is read (a file, a list of GPUs)
    if (!p.cliDefaultFromContext || !p.defaultShown().empty())
        QCOMPARE(run(QStringList{flag, QString::fromStdString(p.defaultShown())}), QString());
    const QString bad = badValue(p);
    // The table's message (a command may add what to do instead: --tol 0 names --fixed-iterations).
    const QString error = run(QStringList{flag, bad});
    const QString expected = QStringLiteral("option '%1': %2, got '%3'").arg(flag, QString::fromStdString(p.problem()), bad);
    QVERIFY2(error == expected || error.startsWith(expected + " ("), qPrintable(error));
}

// An output entry in the studio's Save Options (group "save" of the settings):
// bound to a member; a bad value in the settings file gives the default with
// the message `uot recolor` gives for it; a non-default value saves and loads unchanged.
void checkSaveOption(const params::Parameter& p)
{
    const QString name = QString::fromStdString(p.name), key = QString::fromStdString(p.settingsKey);
    QVERIFY2(StudioSaveOptions::boundNames().contains(name), "an output entry with a settings key and no Save Options member");
    const QString bad = badValue(p);
    {
        QSettings settings;
        settings.setValue("save/" + key, bad);
        QStringList problems;
        QCOMPARE(StudioSaveOptions::load(settings, &problems), StudioSaveOptions{});
        QCOMPARE(problems.size(), 1);
        QCOMPARE(problems[0], QStringLiteral("%1 = \"%2\" is not valid: %3 (default %4)")
                                  .arg(key, bad, QString::fromStdString(p.problem()), QString::fromStdString(p.defaultShown())));
        // ...the very words of the command line's refusal.
        const QString cli = cliError({"--" + QString::fromStdString(p.cliFlag), bad});
        QVERIFY2(cli.contains(QString::fromStdString(p.problem())), qPrintable(cli));
        settings.remove("save/" + key);
    }
    StudioSaveOptions o;
    QCOMPARE(o.shownValue(name), QString::fromStdString(p.defaultShown()));
    QVERIFY2(o.setShownValue(name, otherValue(p)), qPrintable(otherValue(p)));
    QVERIFY(!(o == StudioSaveOptions{}));
    QSettings settings;
    o.save(settings);
    QStringList problems;
    const StudioSaveOptions loaded = StudioSaveOptions::load(settings, &problems);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
    QCOMPARE(loaded, o);
}

}  // namespace

class TestParameterTable : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    int m_case = 0;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        useIsolatedSettings(m_dir.path(), "parameter-table");
    }

    void init() { QCoreApplication::setApplicationName(QStringLiteral("parameter-table-%1").arg(++m_case)); }

    void everyEntry_data()
    {
        QTest::addColumn<QString>("name");
        for (const params::Parameter& p : params::parameters())
            if (!p.cliFlag.empty() || !p.settingsKey.empty()) QTest::newRow(p.name.c_str()) << QString::fromStdString(p.name);
    }

    void everyEntry()
    {
        QFETCH(QString, name);
        const params::Parameter& p = params::parameter(name.toStdString());
        const QString problem = QString::fromStdString(p.problem());
        const QString bad = badValue(p);

        // The flags of `uot recolor` (warm starts: `uot solve` only; the files of solve and
        // uot-mpi's own flags: test_command_flags runs those programs).
        const bool recolorFlag = p.cliGroup == params::CliGroup::Recolor || p.cliGroup == params::CliGroup::Solver ||
                                 p.cliGroup == params::CliGroup::Output;
        if (!p.cliFlag.empty() && recolorFlag && p.name != "warm-u" && p.name != "warm-v") {
            checkFlag(p, [](const QStringList& args) { return cliError(args); });
            if (QTest::currentTestFailed()) return;
        }
        if (p.settingsKey.empty()) return;
        const QString key = QString::fromStdString(p.settingsKey);
        if (p.cliGroup == params::CliGroup::Output) {  // the Save Options: their own checks
            checkSaveOption(p);
            return;
        }
        QVERIFY2(StudioParameters::boundNames().contains(name), "an entry with a settings key and no studio member");

        // A bad value in the settings file: the default, and the CLI's message.
        {
            QSettings settings;
            settings.setValue("parameters/" + key, bad);
            QStringList problems;
            const StudioParameters loaded = StudioParameters::load(settings, &problems);
            QCOMPARE(loaded, StudioParameters{});
            QCOMPARE(problems.size(), 1);
            QCOMPARE(problems[0], QStringLiteral("%1 = \"%2\" is not valid: %3 (default %4)")
                                      .arg(key, bad, problem, QString::fromStdString(p.defaultShown())));
        }
        // A non-default value goes through save and load unchanged.
        {
            StudioParameters p1;
            QCOMPARE(p1.shownValue(name), QString::fromStdString(p.defaultShown()));
            QVERIFY2(p1.setShownValue(name, otherValue(p)), qPrintable(otherValue(p)));
            QVERIFY(!(p1 == StudioParameters{}));
            QSettings settings;
            p1.save(settings);
            QStringList problems;
            const StudioParameters loaded = StudioParameters::load(settings, &problems);
            QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
            QCOMPARE(loaded, p1);
            QCOMPARE(loaded.shownValue(name), otherValue(p));
        }
        // The dock's widget: the table's range and default.
        ParametersPanel panel;
        QWidget* w = panel.editor(name);
        QVERIFY2(w, "no widget for the entry");
        // Its tooltip says what --help says (the description, first letter capitalised) and the range.
        QVERIFY2(w->toolTip().contains(QString::fromStdString(p.description).mid(1)), qPrintable(w->toolTip()));
        if (p.kind == params::Kind::Real || p.kind == params::Kind::Integer)
            QVERIFY2(w->toolTip().contains(QString::fromStdString(p.allowed())), qPrintable(w->toolTip()));
        // ...and its label is the table's title: a check box's text, or a label of the dock.
        const QString title = QString::fromStdString(p.studioTitle());
        bool labelled = false;
        if (auto* check = qobject_cast<QCheckBox*>(w)) labelled = check->text() == title;
        for (const QLabel* label : panel.findChildren<QLabel*>()) labelled = labelled || label->text() == title;
        QVERIFY2(labelled, qPrintable(title));
        const double scale = p.scale();
        if (auto* box = qobject_cast<QSpinBox*>(w)) {
            QCOMPARE(box->minimum(), int(p.min));
            QCOMPARE(box->maximum(), int(p.max));
            QCOMPARE(box->value(), int(p.defaultValue));
        } else if (auto* box = qobject_cast<QDoubleSpinBox*>(w)) {
            QCOMPARE(box->minimum(), p.min * scale);
            QCOMPARE(box->maximum(), p.max * scale);
            QCOMPARE(box->value(), p.defaultValue * scale);
        } else if (auto* slider = qobject_cast<QSlider*>(w)) {  // a fraction shown in percent
            QCOMPARE(slider->minimum(), int(std::lround(p.min * 100)));
            QCOMPARE(slider->maximum(), int(std::lround(p.max * 100)));
            QCOMPARE(slider->value(), int(std::lround(p.defaultValue * 100)));
        } else if (auto* check = qobject_cast<QCheckBox*>(w)) {
            QCOMPARE(check->isChecked(), p.defaultValue != 0);
        } else if (auto* combo = qobject_cast<QComboBox*>(w)) {
            QCOMPARE(combo->currentData().toString(), QString::fromStdString(p.defaultText));
            if (p.kind == params::Kind::Choice) {
                QStringList offered, allowed;
                for (int i = 0; i < combo->count(); ++i) offered << combo->itemData(i).toString();
                for (const std::string& c : p.choiceList()) allowed << QString::fromStdString(c);
                offered.sort();
                allowed.sort();
                QCOMPARE(offered, allowed);
            }
        } else {
            QFAIL("a widget of an unexpected kind");
        }
    }

    // The solver flags of the commands on raw problems (`uot solve`, `bench`, `uot-mpi`):
    // their defaults and ranges are the table's raw ones, with the table's message.
    void rawProblemFlags_data()
    {
        QTest::addColumn<QString>("name");
        for (const params::Parameter& p : params::parameters(params::Problems::Raw))
            if (!p.cliFlag.empty() && p.cliGroup == params::CliGroup::Solver)
                QTest::newRow(p.name.c_str()) << QString::fromStdString(p.name);
    }

    void rawProblemFlags()
    {
        QFETCH(QString, name);
        checkFlag(params::parameter(name.toStdString(), params::Problems::Raw),
                  [](const QStringList& args) { return solveError(args); });
    }

    // Raw problems keep their own documented defaults, read from the table: the
    // problem's eps (0.05), 1000 iterations, tol 1e-6, tau_a = tau_b = --tau.
    void rawProblemDefaults()
    {
        cli::SolverSettings s;
        QCOMPARE(solveError({}, &s), QString());
        QCOMPARE(s.eps, 0.05);
        QCOMPARE(s.options.maxIterations, 1000);
        QCOMPARE(s.options.tolerance, 1e-6);
        QCOMPARE(s.tauA, 1.0);
        QCOMPARE(s.tauB, 1.0);
        QCOMPARE(solveError({"--tau", "3"}, &s), QString());
        QCOMPARE(s.tauB, 3.0);
        QCOMPARE(solveError({"--tau", "3", "--tau-b", "inf"}, &s), QString());
        QCOMPARE(s.tauA, 3.0);
        QVERIFY(std::isinf(s.tauB));
        // eps in cost units: far above the colour problems' range of 1e-05 to 10.
        QCOMPARE(solveError({"--eps", "250"}, &s), QString());
        QCOMPARE(s.eps, 250.0);
    }

    // eps-scaling: one spelling, a ratio of eps and a factor. The former "START,FACTOR"
    // reads into it: --eps 0.01 with START 0.5 is a ratio of 50, stages from 0.5 down.
    void epsScalingSpellings()
    {
        cli::SolverSettings byRatio, bySchedule, off;
        QCOMPARE(solveError({"--eps", "0.01", "--eps-scaling", "50", "--eps-scaling-factor", "0.25"}, &byRatio), QString());
        QCOMPARE(byRatio.options.epsSchedule.start, 0.5);
        QCOMPARE(byRatio.options.epsSchedule.factor, 0.25);
        QCOMPARE(solveError({"--eps", "0.01", "--eps-schedule", "0.5,0.25"}, &bySchedule), QString());
        QCOMPARE(bySchedule.options.epsSchedule.start, 0.5);
        QCOMPARE(bySchedule.options.epsSchedule.factor, 0.25);
        QCOMPARE(solveError({"--eps-schedule", "none"}, &off), QString());
        QVERIFY(!off.options.epsSchedule.enabled());
        QVERIFY(solveError({"--eps-schedule", "0.5,0.25", "--eps-scaling", "50"}).contains("former spelling"));
        // The studio's ratio and factor reach the solver as the same schedule.
        StudioParameters p;
        p.eps = 0.01;
        p.epsScalingRatio = 50;
        p.epsScalingFactor = 0.25;
        const EpsSchedule studio = p.recolorSettings().transport.options.epsSchedule;
        QCOMPARE(studio.start, 0.5);
        QCOMPARE(studio.factor, 0.25);
        p.epsScalingRatio = 1;  // up to 1: off
        QVERIFY(!p.recolorSettings().transport.options.epsSchedule.enabled());
    }

    // The output file's options: every spelling the table offers is one the CLI
    // writes with, and the defaults are the image writer's.
    void outputOptions()
    {
        for (const params::Parameter& p : params::parameters()) {
            if (p.cliGroup != params::CliGroup::Output || p.kind != params::Kind::Choice) continue;
            for (const std::string& c : p.choiceList())
                QCOMPARE(cliError({"--" + QString::fromStdString(p.cliFlag), QString::fromStdString(c)}), QString());
        }
        QCOMPARE(int(params::parameter("jpeg-quality").defaultValue), WriteOptions{}.jpegQuality);
    }

    // The same output choices reach the image writer alike from `uot recolor`'s
    // flags and from the studio's Save Options (hand-worked: 16 bit, gray,
    // Display P3, quality 80 for JPEG and WebP).
    void outputChoicesReachTheWriter()
    {
        cli::ArgParser parser("uot recolor", "test");
        cli::addRecolorOptions(parser);
        parser.parse({"--depth", "16", "--output-color", "gray", "--output-profile", "display-p3", "--jpeg-quality", "80"});
        StudioSaveOptions studio;
        QVERIFY(studio.setShownValue("depth", "16"));
        QVERIFY(studio.setShownValue("output-color", "gray"));
        QVERIFY(studio.setShownValue("output-profile", "display-p3"));
        QVERIFY(studio.setShownValue("jpeg-quality", "80"));
        for (const WriteOptions& w : {cli::readRecolorOptions(parser).write, studio.writeOptions()}) {
            QCOMPARE(w.depth, 16);
            QVERIFY(w.color == OutputColor::Gray);
            QVERIFY(w.profile == OutputProfile::DisplayP3);
            QCOMPARE(w.jpegQuality, 80);
            QCOMPARE(w.webpQuality, 80);
        }
        // The defaults: the source's depth, the result's channels, sRGB, 95.
        const WriteOptions d = StudioSaveOptions{}.writeOptions();
        QCOMPARE(d.depth, 0);
        QVERIFY(d.color == OutputColor::Auto);
        QVERIFY(d.profile == OutputProfile::Srgb);
        QCOMPARE(d.jpegQuality, 95);
    }

    // The studio's parameters reach the pipeline through the table's setters, with
    // the conversions the studio has always made (hand-worked values).
    void studioToPipeline()
    {
        StudioParameters p;
        p.balanced = false;
        p.tau = 2.5;
        p.smoothing = 2;
        p.threads = 3;
        p.solver = "fused";
        p.device = "gpu:1";
        p.strength = 0.4;
        // The enum members hold the core's enums (the table's spellings are theirs).
        static_assert(std::is_enum_v<decltype(p.colorSpace)> && std::is_enum_v<decltype(p.precision)> &&
                      std::is_enum_v<decltype(p.acceleration)> && std::is_enum_v<decltype(p.referenceMeasure)>);
        p.colorSpace = WorkingSpace::Oklab;
        p.precision = Precision::Fp64;
        p.referenceMeasure = ReferenceMeasure::Product;
        p.acceleration = Acceleration::Relax;
        QCOMPARE(p.shownValue("space"), QStringLiteral("oklab"));
        const RecolorSettings s = p.recolorSettings();
        QVERIFY(s.space == WorkingSpace::Oklab);
        QVERIFY(s.transport.options.precision == Precision::Fp64);
        QVERIFY(s.transport.reference == ReferenceMeasure::Product);
        QVERIFY(s.transport.options.acceleration == Acceleration::Relax);
        QCOMPARE(s.transport.adherence, 2.5);
        QCOMPARE(s.mapping.smoothRadius, 2 * MappingSettings{}.smoothRadius);
        QVERIFY(s.mapping.smooth);
        QCOMPARE(s.threads, 3);
        QCOMPARE(s.transport.options.threads, 3);
        QCOMPARE(s.transport.solver, std::string("gpu-fused"));
        QCOMPARE(s.transport.options.device, 1);
        QCOMPARE(s.mapping.strength, 0.4);
        // auto on the CPU: the translation-invariant iteration, as `uot recolor` resolves it.
        StudioParameters q;
        q.smoothing = 0;
        const RecolorSettings t = q.recolorSettings();
        QVERIFY(std::isinf(t.transport.adherence));  // balanced by default
        QVERIFY(!t.mapping.smooth);
        QCOMPARE(t.transport.solver, std::string("auto"));
        QVERIFY(t.transport.options.mode == IterationMode::TranslationInvariant);
    }

    // Every member of StudioParameters is bound to an entry with a settings key.
    void everyMemberIsBound()
    {
        for (const QString& name : StudioParameters::boundNames())
            QVERIFY2(!params::parameter(name.toStdString()).settingsKey.empty(), qPrintable(name));
        // Each bound member changes the value it claims to (a wrong binding would leave the struct equal).
        for (const QString& name : StudioParameters::boundNames()) {
            StudioParameters p;
            QVERIFY(p.setShownValue(name, otherValue(params::parameter(name.toStdString()))));
            QVERIFY2(!(p == StudioParameters{}), qPrintable(name));
        }
        QCOMPARE(StudioParameters::boundNames().size(), 28);
    }
};

QTEST_MAIN(TestParameterTable)
#include "test_parameter_table.moc"
