// A set of outputs written as a unit (core/io/output_set.h), and `uot solve`
// writing its files as one: the manifest lists each file with its size, is
// removed before a new set is written and written last, so a partial or mixed
// set is told from a complete one. Qt Test.

#include <QFileInfo>
#include <QProcess>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/io/output_set.h"
#include "core/npy/npy_io.h"
#include "core/transport/uot_error.h"
#include "tests/support/qt_checks.h"
#include "tests/support/relocatable_path.h"

using namespace uot;
namespace fs = std::filesystem;

namespace {

fs::path tempDir()
{
    static const fs::path dir = [] {
        const fs::path d = fs::temp_directory_path() / ("uot-output-set-test-" + std::to_string(::getpid()));
        fs::remove_all(d);
        fs::create_directories(d);
        return d;
    }();
    return dir;
}

void writeText(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::string readText(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

QString uotCli() { return uot::test::relocatablePath("UOT_CLI", QStringLiteral(UOT_CLI_PATH)); }

}  // namespace

class TestOutputSet : public QObject {
    Q_OBJECT
private slots:
    void manifestListsTheSetAndIsWrittenLast();
    void solveWritesItsOutputsAsASet();
    void cleanupTestCase() { fs::remove_all(tempDir()); }
};

void TestOutputSet::manifestListsTheSetAndIsWrittenLast()
{
    const fs::path dir = tempDir() / "unit";
    fs::create_directories(dir);
    writeText(dir / "old.txt", "old");
    writeText(dir / OutputSet::kManifestName, "uot output set 1\n3 old.txt\n");
    QCOMPARE(readOutputSet(dir), std::vector<std::string>{"old.txt"});
    {
        OutputSet set(dir);  // the old set is no longer complete from here on
        UOT_QVERIFY_THROWS_WITH(readOutputSet(dir), "no uot-manifest.txt");
        writeText(dir / "a.bin", "12345");
        set.add("a.bin");
        writeText(dir / "b name.bin", "");
        set.add("b name.bin");
        UOT_QVERIFY_THROWS_WITH(readOutputSet(dir), "no complete set");
        set.commit();
    }
    QCOMPARE(readText(dir / OutputSet::kManifestName), std::string("uot output set 1\n5 a.bin\n0 b name.bin\n"));
    QCOMPARE(readOutputSet(dir), (std::vector<std::string>{"a.bin", "b name.bin"}));
    writeText(dir / "a.bin", "123");  // another run's file of another size
    UOT_QVERIFY_THROWS_WITH(readOutputSet(dir), "a.bin has 3 bytes, not the 5");
    fs::remove(dir / "a.bin");
    UOT_QVERIFY_THROWS_WITH(readOutputSet(dir), "a.bin is listed");
}

void TestOutputSet::solveWritesItsOutputsAsASet()
{
    if (!QFileInfo(uotCli()).isExecutable())
        QSKIP(qPrintable("no uot executable at " + uotCli() + " (set UOT_CLI to one)"));
    const fs::path dir = tempDir() / "solve";
    fs::create_directories(dir / "out");
    const std::vector<double> cost{0, 1, 1, 0}, weights{0.5, 0.5};
    npy::writeNpy((dir / "C.npy").string(), cost.data(), {2, 2});
    npy::writeNpy((dir / "a.npy").string(), weights.data(), {2});
    npy::writeNpy((dir / "b.npy").string(), weights.data(), {2});
    // An earlier run's manifest in the output folder, listing a file this run does not write.
    writeText(dir / "out" / "stale.npy", "x");
    writeText(dir / "out" / OutputSet::kManifestName, "uot output set 1\n1 stale.npy\n");
    QProcess p;
    p.start(uotCli(), {"solve", "--cost", QString::fromStdString((dir / "C.npy").string()), "--a",
                       QString::fromStdString((dir / "a.npy").string()), "--b",
                       QString::fromStdString((dir / "b.npy").string()), "--out-dir",
                       QString::fromStdString((dir / "out").string()), "--plan"});
    QVERIFY(p.waitForFinished(60000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    std::vector<std::string> files;
    try {
        files = readOutputSet(dir / "out");
    } catch (const std::exception& e) {
        QFAIL(e.what());
    }
    QCOMPARE(files, (std::vector<std::string>{"u.npy", "v.npy", "logu.npy", "logv.npy", "plan.npy"}));
    QCOMPARE(npy::readNpy((dir / "out" / "plan.npy").string()).shape, (std::vector<std::size_t>{2, 2}));
}

QTEST_GUILESS_MAIN(TestOutputSet)
#include "test_output_set.moc"
