// Atomic, safe file output (core/io/atomic_file.h): the creation primitive
// never follows or reuses an existing name, the longest legal file name can be
// written (one byte more is refused before any work), the old file's mode is
// kept under overwrite, a symbolic link at the destination is refused,
// concurrent writers without overwrite cannot replace each other, and no
// temporary file is left behind, not even by a SIGTERM or Ctrl-C between the
// write and the rename (pending_temporaries.h). Qt Test.

#include <fcntl.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/io/atomic_file.h"
#include "core/io/pending_temporaries.h"
#include "core/transport/uot_error.h"
#include "tests/support/qt_checks.h"

using namespace uot;
namespace fs = std::filesystem;

namespace {

fs::path tempDir()
{
    static const fs::path dir = [] {
        const fs::path d = fs::temp_directory_path() / ("uot-atomic-test-" + std::to_string(::getpid()));
        fs::remove_all(d);
        fs::create_directories(d);
        return d;
    }();
    return dir;
}

std::string readText(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeText(const fs::path& p, const std::string& text)
{
    std::ofstream out(p, std::ios::binary);
    out << text;
}

// Entries of `dir` whose names start with the temporary prefix.
std::vector<std::string> temporaries(const fs::path& dir)
{
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().filename().string().rfind(kTemporaryPrefix, 0) == 0) found.push_back(e.path().string());
    return found;
}

unsigned permissions(const fs::path& p)
{
    struct stat st{};
    ::lstat(p.c_str(), &st);
    return st.st_mode & 0777;
}

}  // namespace

class TestAtomicFile : public QObject {
    Q_OBJECT
private slots:
    // A signal between the temporary file's creation and its rename: the
    // pending file (and a pending folder of frames, with its files) is deleted
    // and the process still ends by that signal; a file whose registration
    // ended (renamed into place) is kept.
    void aSignalRemovesPendingTemporaries_data()
    {
        QTest::addColumn<int>("signal");
        QTest::newRow("SIGTERM") << int(SIGTERM);
        QTest::newRow("SIGINT") << int(SIGINT);
        QTest::newRow("SIGHUP") << int(SIGHUP);
    }
    void aSignalRemovesPendingTemporaries()
    {
        QFETCH(int, signal);
        const fs::path pending = tempDir() / (std::string(kTemporaryPrefix) + "pending" + std::to_string(signal));
        const fs::path finished = tempDir() / ("finished" + std::to_string(signal));
        const fs::path pendingFolder = tempDir() / (std::string(kTemporaryPrefix) + "frames" + std::to_string(signal));
        const pid_t child = ::fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            // As at a program's start (Qt Test has handlers of its own).
            for (int s : {SIGINT, SIGTERM, SIGHUP}) std::signal(s, SIG_DFL);
            removeTemporariesOnSignals();
            std::ofstream(pending) << "half of an image";
            std::ofstream(finished) << "a whole image";
            { const PendingTemporary done(finished.string()); }
            const PendingTemporary stillPending(pending.string());
            fs::create_directory(pendingFolder);
            for (const char* frame : {"f_00001.png", "f_00002.png"}) std::ofstream(pendingFolder / frame) << "a frame";
            const PendingTemporary framesPending(pendingFolder.string(), PendingKind::FolderOfFiles);
            std::raise(signal);
            ::_exit(0);  // not reached: the signal ends the process
        }
        int status = 0;
        QCOMPARE(::waitpid(child, &status, 0), child);
        QVERIFY(WIFSIGNALED(status));
        QCOMPARE(WTERMSIG(status), signal);
        const bool removed = !fs::exists(pending), kept = fs::exists(finished), folderRemoved = !fs::exists(pendingFolder);
        fs::remove(pending);
        fs::remove(finished);
        fs::remove_all(pendingFolder);
        QVERIFY2(removed, pending.c_str());
        QVERIFY(kept);
        QVERIFY2(folderRemoved, pendingFolder.c_str());
    }

    void initTestCase() { ::umask(022); }
    void creationRefusesAnExistingNameOrLink();
    void writesTheLongestLegalName();
    void keepsTheModeUnderOverwrite();
    void refusesASymlinkDestination();
    void concurrentWritersWithoutOverwriteExactlyOneWins();
    void writesEveryPieceAndLeavesNoTemporary();
    void cleanupTestCase() { fs::remove_all(tempDir()); }
};

void TestAtomicFile::creationRefusesAnExistingNameOrLink()
{
    const fs::path dir = tempDir() / "create";
    fs::create_directories(dir);
    const fs::path victim = dir / "victim.txt";
    writeText(victim, "IMPORTANT DATA");
    fs::create_symlink(victim, dir / "planted");
    fs::create_symlink(dir / "nowhere", dir / "dangling");
    writeText(dir / "existing", "old");
    const int folder = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
    QVERIFY(folder >= 0);
    for (const char* name : {"planted", "dangling", "existing"}) {
        errno = 0;
        const int fd = createExclusiveFile(folder, name);
        if (fd >= 0) ::close(fd);
        UOT_QVERIFY_MSG(fd < 0 && errno == EEXIST, name << ": fd " << fd << ", errno " << errno);
    }
    QCOMPARE(readText(victim), std::string("IMPORTANT DATA"));
    QVERIFY(!fs::exists(dir / "nowhere"));  // the dangling link's target was not created
    QCOMPARE(readText(dir / "existing"), std::string("old"));
    const int fd = createExclusiveFile(folder, "fresh");
    QVERIFY(fd >= 0);
    ::close(fd);
    QCOMPARE(permissions(dir / "fresh"), 0600u);
    ::close(folder);
}

void TestAtomicFile::writesTheLongestLegalName()
{
    const std::string name = std::string(251, 'L') + ".png";  // 255 bytes: NAME_MAX
    const fs::path p = tempDir() / name;
    writeFileAtomically(p.string(), "long", 4, {});
    QCOMPARE(readText(p), std::string("long"));
    fs::remove(p);
    // One byte more: refused by the check made before any work (not when the finished file is moved).
    const fs::path tooLong = tempDir() / (std::string(252, 'L') + ".png");
    UOT_QVERIFY_THROWS_WITH(checkWritableDestination(tooLong.string()), "256 bytes long, above the 255");
}

void TestAtomicFile::keepsTheModeUnderOverwrite()
{
    const fs::path p = tempDir() / "private.txt";
    writeText(p, "secret v1");
    fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
    writeFileAtomically(p.string(), "secret v2", 9, {});
    QCOMPARE(readText(p), std::string("secret v2"));
    QCOMPARE(permissions(p), 0600u);
    fs::permissions(p, static_cast<fs::perms>(0640));
    writeFileAtomically(p.string(), "v3", 2, {});
    QCOMPARE(permissions(p), 0640u);
    // A new file gets what the umask allows (022 here).
    const fs::path fresh = tempDir() / "fresh.txt";
    writeFileAtomically(fresh.string(), "x", 1, {});
    QCOMPARE(permissions(fresh), 0644u);
}

void TestAtomicFile::refusesASymlinkDestination()
{
    const fs::path target = tempDir() / "target.txt";
    const fs::path link = tempDir() / "link.txt";
    writeText(target, "target");
    fs::create_symlink(target, link);
    UOT_QVERIFY_THROWS_WITH(writeFileAtomically(link.string(), "new", 3, {}), "symbolic link");
    AtomicWriteOptions keep;
    keep.overwrite = false;
    UOT_QVERIFY_THROWS_WITH(writeFileAtomically(link.string(), "new", 3, keep), "exists");
    QVERIFY(fs::is_symlink(link));
    QCOMPARE(readText(target), std::string("target"));
    QVERIFY(temporaries(tempDir()).empty());
}

void TestAtomicFile::concurrentWritersWithoutOverwriteExactlyOneWins()
{
    const fs::path dir = tempDir() / "threads";
    fs::create_directories(dir);
    AtomicWriteOptions keep;
    keep.overwrite = false;
    for (int trial = 0; trial < 20; ++trial) {
        const fs::path p = dir / ("same" + std::to_string(trial) + ".txt");
        std::atomic<int> wins{0}, refusals{0};
        std::atomic<bool> go{false};
        std::vector<std::thread> writers;
        for (int w = 0; w < 8; ++w) {
            writers.emplace_back([&, w] {
                const std::string text = "writer " + std::to_string(w);
                while (!go.load()) std::this_thread::yield();
                try {
                    writeFileAtomically(p.string(), text.data(), text.size(), keep);
                    ++wins;
                } catch (const Error& e) {
                    if (std::string(e.what()).find("exists") != std::string::npos) ++refusals;
                }
            });
        }
        go = true;
        for (std::thread& t : writers) t.join();
        UOT_QVERIFY_MSG(wins == 1 && refusals == 7, "trial " << trial << ": " << wins << " wins, " << refusals
                                                               << " refusals");
        QVERIFY(readText(p).rfind("writer ", 0) == 0);
    }
    QVERIFY(temporaries(dir).empty());
}

void TestAtomicFile::writesEveryPieceAndLeavesNoTemporary()
{
    std::string big(3'000'000, '\0');
    for (std::size_t k = 0; k < big.size(); ++k) big[k] = static_cast<char>('a' + k % 26);
    const fs::path p = tempDir() / "pieces.bin";
    writeFileAtomically(p.string(), {{"head:", 5}, {big.data(), big.size()}, {":tail", 5}});
    QCOMPARE(readText(p), "head:" + big + ":tail");
    // A failure (a folder at the destination) leaves nothing behind.
    fs::create_directories(tempDir() / "afolder");
    UOT_QVERIFY_THROWS_WITH(writeFileAtomically((tempDir() / "afolder").string(), "x", 1, {}), "is a folder");
    QVERIFY(temporaries(tempDir()).empty());
}

QTEST_APPLESS_MAIN(TestAtomicFile)
#include "test_atomic_file.moc"
