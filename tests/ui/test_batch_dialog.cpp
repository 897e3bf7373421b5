// The batch dialog on a temporary folder with one corrupt file: every other
// file is written, the corrupt one is reported with its reason, no partial or
// temporary files are left, sources are untouched, and a second run skips the
// existing outputs.

#include <QCryptographicHash>

#include <algorithm>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QProgressBar>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QAction>
#include <QApplication>
#include <QStandardPaths>
#include <QTest>
#include <QTimer>

#include "tests/support/queued_signal_spy.h"
#include "tests/ui/studio_test_options.h"
#include "ui/batch_dialog.h"
#include "ui/main_window.h"
#include "ui/resource_file.h"
#include "tests/support/relocatable_path.h"

using namespace uot::ui;

namespace {

const QString kSamples = uot::test::relocatablePath("UOT_SAMPLES_DIR", QStringLiteral(UOT_SAMPLES_DIR));

QByteArray digest(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QCryptographicHash::hash(file.readAll(), QCryptographicHash::Sha256);
}

StudioParameters quick()
{
    StudioParameters p;
    p.paletteSize = 96;
    p.maxIterations = 100;
    p.eps = 0.01;
    p.precision = uot::Precision::Fp64;
    p.smoothing = 0;
    return p;
}

}  // namespace

class TestBatchDialog : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_settingsDir;

private slots:
    void initTestCase()
    {
        // The dialog remembers its choices: keep them out of the user's settings.
        QVERIFY(m_settingsDir.isValid());
        useIsolatedSettings(m_settingsDir.path(), "batch-dialog-test");
    }
    void init() { QSettings().clear(); }

    // Found by trying the studio as a new user: it starts on the bundled sample
    // pair, and File > Batch Recolor refused it ("open a reference from a file
    // first") although the reference was on screen. The sample now gets a copy
    // on disk, byte for byte the bundled one.
    void batchTakesTheBundledSampleReference()
    {
        const QString sample = QStringLiteral(":/samples/starry_night.jpg");
        MainWindow window(testOptions());
        if (!QFile::exists(sample)) QSKIP("this build has no bundled samples (resources/samples)");
        QStandardPaths::setTestModeEnabled(true);  // the copy goes to a test cache folder
        window.openReference(sample);
        QVERIFY(QTest::qWaitFor([&] { return window.hasReference() && !window.isLoading(); }, 20000));
        QString shownReference;
        QTimer::singleShot(500, [&] {
            if (auto* dialog = qobject_cast<BatchDialog*>(QApplication::activeModalWidget())) {
                shownReference = dialog->referencePath();
                dialog->close();
            }
        });
        window.action("batchAction")->trigger();
        QVERIFY2(!shownReference.isEmpty(), "File > Batch Recolor did not open the batch dialog");
        QVERIFY(!shownReference.startsWith(":/"));
        QFile copy(shownReference), bundled(sample);
        QVERIFY(copy.open(QIODevice::ReadOnly) && bundled.open(QIODevice::ReadOnly));
        QCOMPARE(copy.readAll(), bundled.readAll());
        // A file on disk is used as it is.
        QCOMPARE(diskPathFor(kSamples + "/home.jpg"), kSamples + "/home.jpg");
        QString error;
        QVERIFY(diskPathFor(QStringLiteral(":/samples/no-such-file.jpg"), &error).isEmpty());
        QVERIFY(error.contains("not in this build"));
    }

    void writesAllButTheCorruptFileAndReportsIt()
    {
        QTemporaryDir in, out;
        QVERIFY(in.isValid() && out.isValid());
        for (const char* name : {"home.jpg", "fruits.jpg", "butterfly.jpg"})
            QVERIFY(QFile::copy(kSamples + "/" + name, in.filePath(name)));
        {
            QFile corrupt(in.filePath("corrupt.jpg"));
            QVERIFY(corrupt.open(QIODevice::WriteOnly));
            corrupt.write(QByteArray("\xff\xd8\xff\xe0 truncated jpeg", 20));
        }
        const QByteArray homeBefore = digest(in.filePath("home.jpg"));

        SolveWorker worker;
        BatchDialog dialog(&worker, kSamples + "/starry_night.jpg", quick());
        dialog.setInputs({in.path()});
        dialog.setOutputDirectory(out.path());
        dialog.setPattern("{name}_batch.png");
        QSignalSpy finished(&dialog, &BatchDialog::batchFinished);
        dialog.start();
        QVERIFY(dialog.isRunning());
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QVERIFY(!dialog.isRunning());

        const BatchOutput* output = dialog.lastOutput();
        QVERIFY(output);
        QCOMPARE(output->written.size(), 3);
        QCOMPARE(output->failures.size(), 1);
        QCOMPARE(output->failures.first().count("corrupt.jpg"), 1);  // the path once (issue 16, defect 10)
        QVERIFY(dialog.summaryText().contains("corrupt.jpg"));
        QVERIFY(dialog.summaryText().contains("3 file(s) written"));
        QCOMPARE(dialog.summaryText().count("corrupt.jpg"), 1);
        // Defect 10: the bars end full and count what was done.
        QCOMPARE(dialog.overallProgress()->text(), QString("4 of 4 files done"));
        QCOMPARE(dialog.fileProgress()->value(), dialog.fileProgress()->maximum());
        // Exactly the three results, each a readable image of its source's size.
        const QStringList files = QDir(out.path()).entryList(QDir::Files, QDir::Name);
        QCOMPARE(files, (QStringList{"butterfly_batch.png", "fruits_batch.png", "home_batch.png"}));
        QCOMPARE(QImage(out.filePath("home_batch.png")).size(), QImage(in.filePath("home.jpg")).size());
        QCOMPARE(digest(in.filePath("home.jpg")), homeBefore);

        // Existing outputs are skipped unless replacing is asked for.
        dialog.start();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 60000);
        QCOMPARE(dialog.lastOutput()->written.size(), 0);
        QCOMPARE(dialog.lastOutput()->skipped, 3);
    }

    void cancelKeepsFinishedFilesAndLeavesNoPartialOnes()
    {
        QTemporaryDir in, out;
        for (int k = 0; k < 8; ++k)
            QVERIFY(QFile::copy(kSamples + "/fruits.jpg", in.filePath(QString("photo%1.jpg").arg(k))));
        SolveWorker worker;
        BatchDialog dialog(&worker, kSamples + "/starry_night.jpg", quick());
        dialog.setInputs({in.path()});
        dialog.setOutputDirectory(out.path());
        QSignalSpy finished(&dialog, &BatchDialog::batchFinished);
        uot::test::QueuedSignalSpy steps(&worker, &SolveWorker::stepChanged);  // emitted on the worker thread
        dialog.start();
        // Cancel once the first file is done.
        QTRY_VERIFY_WITH_TIMEOUT(std::any_of(steps.begin(), steps.end(),
                                             [](const QList<QVariant>& args) { return args.at(1).toInt() >= 1; }),
                                 60000);
        worker.cancel();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        QVERIFY(dialog.summaryText().contains("Cancelled"));
        // Defect 10: after Cancel, the count is what was done, not "8 of 8".
        QCOMPARE(dialog.overallProgress()->text(),
                 QString("cancelled: %1 of 8 files done").arg(dialog.lastOutput()->written.size()));
        const QStringList files = QDir(out.path()).entryList(QDir::Files | QDir::Hidden);
        QVERIFY(!files.isEmpty());
        QVERIFY(files.size() < 8);
        QCOMPARE(files.size(), int(dialog.lastOutput()->written.size()));
        for (const QString& name : files) QVERIFY2(!QImage(out.filePath(name)).isNull(), qPrintable(name));
    }

    // Defect 10: "0 of 100 files" before the start; inputs and output folder forgotten.
    void saysNotStartedAndRemembersInputsAndOutputFolder()
    {
        QTemporaryDir out;
        SolveWorker worker;
        {
            BatchDialog dialog(&worker, kSamples + "/starry_night.jpg", quick());
            QCOMPARE(dialog.overallProgress()->text(), QString("not started"));
            QVERIFY(!dialog.overallProgress()->text().contains("100"));
            dialog.setInputs({kSamples + "/home.jpg", kSamples + "/fruits.jpg"});
            dialog.setOutputDirectory(out.path());
            QSignalSpy finished(&dialog, &BatchDialog::batchFinished);
            dialog.start();
            QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 60000);
        }
        BatchDialog again(&worker, kSamples + "/starry_night.jpg", quick());
        QCOMPARE(again.inputs(), (QStringList{kSamples + "/home.jpg", kSamples + "/fruits.jpg"}));
        QCOMPARE(again.outputDirectory(), out.path());
    }

    void missingReferenceFailsWithAMessage()
    {
        QTemporaryDir out;
        SolveWorker worker;
        BatchDialog dialog(&worker, "/nonexistent/reference.jpg", quick());
        dialog.setInputs({kSamples + "/home.jpg"});
        dialog.setOutputDirectory(out.path());
        QSignalSpy finished(&dialog, &BatchDialog::batchFinished);
        dialog.start();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 20000);
        QVERIFY(dialog.summaryText().contains("reference.jpg"));
        QVERIFY(QDir(out.path()).entryList(QDir::Files).isEmpty());
    }
};

QTEST_MAIN(TestBatchDialog)
#include "test_batch_dialog.moc"
