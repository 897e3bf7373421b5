// The flags of `uot solve`, `uot-mpi` and the clip commands that the parameter
// table declares (core/params: groups SolveIo, Mpi and Clip), run through the
// built programs: a
// bad value exits 2 with the table's one message, naming the flag and the
// value (hand-worked for four of them), and --help shows each flag once with
// the table's description and the defaults the commands have always had.
// uot-mpi runs as a single process (MPI singleton); its rows are skipped in a
// build without MPI (or where the program is not carried), the clip rows in a
// build without video (exit 4).

#include <QFileInfo>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTest>

#include <cmath>

#include "core/params/parameter_schema.h"
#include "tests/support/relocatable_path.h"

using namespace uot;

namespace {

struct Run {
    int exitCode = -1;
    QString output;  // stdout and stderr
};

Run run(const QString& program, const QStringList& args)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
    env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    if (!p.waitForFinished(60000)) return {};
    return {p.exitCode(), QString::fromUtf8(p.readAll())};
}

// The programs: the build tree's, or $UOT_CLI / $UOT_MPI_CLI (scripts/qt_test_bundle.sh
// carries `uot` and sets UOT_CLI; it carries no uot-mpi, whose rows are then skipped).
const QString kUot = uot::test::relocatablePath("UOT_CLI", QStringLiteral(UOT_CLI_EXECUTABLE));
const QString kUotMpi = uot::test::relocatablePath("UOT_MPI_CLI", QStringLiteral(UOT_MPI_EXECUTABLE));

// Why uot-mpi's rows cannot run here (empty: they can).
QString mpiAbsent()
{
    if (kUotMpi == "none") return QStringLiteral("uot-mpi is not built");
    if (!QFileInfo::exists(kUotMpi)) return "no uot-mpi at " + kUotMpi + " (set UOT_MPI_CLI to one)";
    return {};
}

// A value the entry refuses, as typed.
QString badValue(const params::Parameter& p)
{
    if (p.kind == params::Kind::Choice) return QStringLiteral("no-such-choice");
    if (std::isinf(p.max)) return QString::fromStdString(params::shownNumber(p, p.minExclusive ? p.min : p.min - 1));
    return QString::fromStdString(params::shownNumber(p, p.max + 1));
}

// Arguments that pass every check before the flags' values are read.
QStringList validSolve(bool clouds)
{
    return clouds ? QStringList{"--x", "x.npy", "--y", "y.npy", "--a", "a.npy", "--b", "b.npy", "--out-dir", "out"}
                  : QStringList{"--cost", "c.npy", "--a", "a.npy", "--b", "b.npy", "--out-dir", "out"};
}

// `uot recolor` of a clip: the clip flags are read before any file is opened.
QStringList clipRecolor() { return {"recolor", "in.mp4", "ref.png", "-o", "out.mp4"}; }

}  // namespace

class TestCommandFlags : public QObject {
    Q_OBJECT
private slots:
    void badValues_data()
    {
        QTest::addColumn<QString>("program");
        QTest::addColumn<QString>("name");
        for (const params::Parameter& p : params::parameters()) {
            const bool checked = p.kind == params::Kind::Real || p.kind == params::Kind::Integer || p.kind == params::Kind::Choice;
            if (!checked) continue;
            if (p.cliGroup == params::CliGroup::SolveIo) {
                QTest::newRow(("uot solve --" + p.cliFlag).c_str()) << kUot << QString::fromStdString(p.name);
                QTest::newRow(("uot-mpi solve --" + p.cliFlag).c_str()) << kUotMpi << QString::fromStdString(p.name);
            } else if (p.cliGroup == params::CliGroup::Mpi) {
                QTest::newRow(("uot-mpi solve --" + p.cliFlag).c_str()) << kUotMpi << QString::fromStdString(p.name);
            } else if (p.cliGroup == params::CliGroup::Clip) {
                QTest::newRow(("uot recolor CLIP --" + p.cliFlag).c_str()) << kUot << QString::fromStdString(p.name);
            }
        }
    }

    void badValues()
    {
        QFETCH(QString, program);
        QFETCH(QString, name);
        if (program == kUotMpi && !mpiAbsent().isEmpty()) QSKIP(qPrintable(mpiAbsent()));
        const params::Parameter& p = params::parameter(name.toStdString());
        const QString flag = "--" + QString::fromStdString(p.cliFlag), bad = badValue(p);
        const QStringList valid = p.cliGroup == params::CliGroup::Clip ? clipRecolor() : QStringList{"solve"} + validSolve(name == "cost-scale");
        const Run r = run(program, valid + QStringList{flag, bad});
        if (r.exitCode == 4 && p.cliGroup == params::CliGroup::Clip) QSKIP("this build has no video");
        QCOMPARE(r.exitCode, 2);
        const QString expected = QStringLiteral("option '%1': %2, got '%3'").arg(flag, QString::fromStdString(p.problem()), bad);
        QVERIFY2(r.output.contains(expected), qPrintable(r.output));
    }

    // The messages, worked out by hand.
    void messages()
    {
        Run r = run(kUot, QStringList{"solve"} + validSolve(true) + QStringList{"--cost-scale", "0"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.output.contains("option '--cost-scale': cost scale takes a finite number > 0, got '0'"), qPrintable(r.output));
        // `uot bench` takes uot-mpi's --seed (one entry: the random problem's seed).
        r = run(kUot, {"bench", "--seed", "-1"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.output.contains("option '--seed': seed takes a whole number from 0 to 2147483647, got '-1'"),
                 qPrintable(r.output));
        if (!mpiAbsent().isEmpty()) QSKIP(qPrintable(mpiAbsent()));
        const QStringList random{"solve", "--random", "4x4", "--out-dir", "out"};
        r = run(kUotMpi, random + QStringList{"--mpi-wait", "nap"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.output.contains("option '--mpi-wait': MPI wait takes one of spin, sleep, got 'nap'"), qPrintable(r.output));
        r = run(kUotMpi, random + QStringList{"--timeout", "-1"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.output.contains("option '--timeout': timeout takes a finite number >= 0, got '-1'"), qPrintable(r.output));
        r = run(kUotMpi, random + QStringList{"--seed", "x"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.output.contains("option '--seed': seed takes a whole number from 0 to 2147483647, got 'x'"),
                 qPrintable(r.output));
    }

    // The clip flags' messages and defaults, worked out by hand.
    void clipFlags()
    {
        Run r = run(kUot, clipRecolor() + QStringList{"--crf", "52"});
        if (r.exitCode == 4) QSKIP("this build has no video");
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.output.contains("option '--crf': CRF takes a whole number from 0 to 51, got '52'"), qPrintable(r.output));
        r = run(kUot, clipRecolor() + QStringList{"--video-preset", "quick"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.output.contains("option '--video-preset': video preset takes one of ultrafast, superfast, veryfast, "
                                   "faster, fast, medium, slow, slower, veryslow, got 'quick'"),
                 qPrintable(r.output));
        r = run(kUot, clipRecolor() + QStringList{"--look-frame", "2", "--per-shot"});
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.output.contains("--look-frame and --per-shot do not go together"), qPrintable(r.output));
        const QString help = run(kUot, {"recolor", "--help"}).output;
        for (const char* line : {"(or over each shot with --per-shot); a whole number from 1 to 1000 (default: 8)\n",
                                 "(0: switch at the cut); a whole number from 0 to 240 (default: 6)\n",
                                 "follows it) (default: veryfast)\n", "lower is better); a whole number from 0 to 51 (default: 18)\n"})
            QVERIFY2(help.contains(line), line);
        QCOMPARE(help.count("  --look-frame N\n"), 1);
        // `uot lut` takes the look's flags, not the encoder's.
        const QString lut = run(kUot, {"lut", "--help"}).output;
        QVERIFY(lut.contains("  --look-frames N\n") && !lut.contains("  --crf") && !lut.contains("  --video-preset"));
    }

    // --help: each flag once, with the table's description; the defaults the commands always had.
    void help()
    {
        const QString solve = run(kUot, {"solve", "--help"}).output;
        for (const params::Parameter& p : params::parameters()) {
            if (p.cliGroup != params::CliGroup::SolveIo) continue;
            const QString line = "  --" + QString::fromStdString(p.cliFlag) + (p.kind == params::Kind::Flag ? "\n" : " ");
            QCOMPARE(solve.count(line), 1);
            QVERIFY2(solve.contains(QString::fromStdString(p.description)), p.name.c_str());
        }
        if (!mpiAbsent().isEmpty()) QSKIP(qPrintable(mpiAbsent()));
        const QString mpi = run(kUotMpi, {"solve", "--help"}).output;
        QVERIFY2(mpi.contains("(default: spin)\n") && mpi.contains("(MPI_Abort) (default: 60)\n") &&
                     mpi.contains("the same seed, the same problem; a whole number from 0 to 2147483647 (default: 1)\n"),
                 qPrintable(mpi));
        QVERIFY(!mpi.contains("  --plan\n") && !mpi.contains("  --counters\n"));  // uot solve's alone
        for (const char* flag : {"--random MxN", "--seed N", "--mpi-wait spin|sleep", "--timeout SECONDS", "--x X.npy"})
            QCOMPARE(mpi.count(QStringLiteral("  ") + flag), 1);
    }
};

QTEST_GUILESS_MAIN(TestCommandFlags)
#include "test_command_flags.moc"
