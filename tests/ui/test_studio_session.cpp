// StudioSession without a window: what it announces (QSignalSpy on its typed
// signals) and whether its result is valid after every change of an input. The
// expectations are the studio's rules written out by hand: a result is current
// only while the source, the reference and every setting that changes the
// picture are those it was made from; a change of eps needs a new solve, a
// change of strength only a new mapping; cancel and failure keep the previous
// result; undo puts back both the input and the validity; a result is never
// saved once another photo is the source; a preset applies as one undo step.

#include <QFileInfo>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

#include <cmath>

#include "tests/ui/studio_test_options.h"
#include "ui/studio_session.h"

using namespace uot::ui;

namespace {

}  // namespace

class TestStudioSession : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_folder;
    QString m_sourceA, m_sourceB, m_referenceA, m_referenceB;

    bool load(StudioSession& session, const QString& source, const QString& reference)
    {
        session.openSource(source);
        session.openReference(reference);
        return QTest::qWaitFor([&] {
            return !session.isLoading() && session.source().path == source && session.reference().path == reference;
        }, 20000);
    }

    // Runs and waits for the end of the run: true when it ended with a result.
    bool runToResult(StudioSession& session)
    {
        QSignalSpy finished(&session, &StudioSession::finished);
        session.run();
        return QTest::qWaitFor([&] { return finished.count() == 1 && !session.isBusy(); }, 60000);
    }

    // A session with `parameters`, the first source and reference, and their result.
    bool withResult(StudioSession& session, const StudioParameters& parameters)
    {
        session.setParameters(parameters);
        return load(session, m_sourceA, m_referenceA) && runToResult(session) &&
               session.validity() == ResultValidity::Current;
    }

    static ResultValidity lastAnnounced(const QSignalSpy& spy)
    {
        return spy.isEmpty() ? ResultValidity::None : spy.last().at(0).value<ResultValidity>();
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_folder.isValid());
        useIsolatedSettings(m_folder.filePath("settings"), "test_studio_session");
        m_sourceA = writeGradient(m_folder.filePath("a.png"), 64, 48, 0);
        m_sourceB = writeGradient(m_folder.filePath("b.png"), 48, 64, 1);
        m_referenceA = writeGradient(m_folder.filePath("ref_a.png"), 40, 40, 2);
        m_referenceB = writeGradient(m_folder.filePath("ref_b.png"), 40, 40, 3);
    }

    // Before any run there is nothing to be valid; the first run makes a current result.
    void firstRunGivesCurrentResult()
    {
        StudioSession session;
        session.setParameters(smallParameters());
        QCOMPARE(session.validity(), ResultValidity::None);
        QSignalSpy validity(&session, &StudioSession::resultChanged);
        QSignalSpy sourceChanged(&session, &StudioSession::sourceChanged);
        QSignalSpy referenceChanged(&session, &StudioSession::referenceChanged);
        QVERIFY(load(session, m_sourceA, m_referenceA));
        QCOMPARE(sourceChanged.count(), 1);
        QCOMPARE(referenceChanged.count(), 1);
        QCOMPARE(validity.count(), 0);  // no result yet: nothing changed for it
        QVERIFY(runToResult(session));
        QVERIFY(session.hasResult());
        QCOMPARE(lastAnnounced(validity), ResultValidity::Current);
        QCOMPARE(session.result().inputs.source.path, m_sourceA);
        QCOMPARE(session.result().image.size(), QSize(64, 48));  // the source's size
    }

    // A new source or a new reference makes the result out of date at once.
    void newImagesMakeTheResultOutOfDate()
    {
        StudioSession session;
        QVERIFY(withResult(session, smallParameters()));
        QSignalSpy validity(&session, &StudioSession::resultChanged);

        session.openSource(m_sourceB);
        QVERIFY(QTest::qWaitFor([&] { return session.source().path == m_sourceB; }, 20000));
        QCOMPARE(lastAnnounced(validity), ResultValidity::OutOfDate);
        QCOMPARE(session.staleInputs(), QStringList{QStringLiteral("the source")});

        QVERIFY(runToResult(session));
        QCOMPARE(lastAnnounced(validity), ResultValidity::Current);

        session.openReference(m_referenceB);
        QVERIFY(QTest::qWaitFor([&] { return session.reference().path == m_referenceB; }, 20000));
        QCOMPARE(session.validity(), ResultValidity::OutOfDate);
        QCOMPARE(lastAnnounced(validity), ResultValidity::OutOfDate);
        QCOMPARE(session.staleInputs(), QStringList{QStringLiteral("the reference")});
    }

    // eps changes the plan: a new solve. Strength changes only the mapping: a
    // re-map with the last solve. A setting that gives the same picture
    // (auto-run) leaves the result current and announces nothing.
    void solveOrRemapAfterAParameterChange()
    {
        StudioSession session;
        StudioParameters p = smallParameters();
        QVERIFY(withResult(session, p));
        QSignalSpy validity(&session, &StudioSession::resultChanged);
        QSignalSpy solved(&session, &StudioSession::solved);
        QSignalSpy remapped(&session, &StudioSession::remapped);

        p.eps = 0.02;
        session.setParameters(p);
        QCOMPARE(lastAnnounced(validity), ResultValidity::OutOfDate);
        QVERIFY(runToResult(session));
        QCOMPARE(solved.count(), 1);
        QCOMPARE(remapped.count(), 0);
        QCOMPARE(lastAnnounced(validity), ResultValidity::Current);

        // The progress bar counts iterations for a solve, and only says "busy" for a re-map.
        QSignalSpy estimate(&session, &StudioSession::estimateChanged);
        p.eps = 0.03;
        session.setParameters(p);
        QVERIFY(runToResult(session));
        QCOMPARE(solved.count(), 2);
        QCOMPARE(estimate.first().at(1).toInt(), p.maxIterations);
        estimate.clear();

        p.strength = 0.5;
        session.setParameters(p);
        QCOMPARE(session.validity(), ResultValidity::OutOfDate);
        QCOMPARE(session.staleInputs(), QStringList{QStringLiteral("the settings")});
        QVERIFY(runToResult(session));
        QCOMPARE(estimate.first().at(1).toInt(), 0);
        QCOMPARE(solved.count(), 2);  // no third solve
        QCOMPARE(remapped.count(), 1);
        QCOMPARE(session.validity(), ResultValidity::Current);
        QCOMPARE(session.result().inputs.parameters.strength, 0.5);

        const int announced = validity.count();
        p.autoRun = true;
        session.setParameters(p);
        QCOMPARE(session.validity(), ResultValidity::Current);
        QCOMPARE(validity.count(), announced);
        session.cancel();  // the auto-run just scheduled
    }

    // While a run of the current inputs is under way the result is "updating";
    // a cancel keeps the previous picture, out of date.
    void cancelKeepsThePreviousResult()
    {
        StudioSession session;
        StudioParameters p = smallParameters();
        QVERIFY(withResult(session, p));
        const qint64 before = session.result().image.cacheKey();

        p.eps = 0.001;             // a long solve: tolerance 0 runs every iteration
        p.tolerance = 0;
        p.maxIterations = 2000000;
        session.setParameters(p);
        QSignalSpy cancelled(&session, &StudioSession::cancelled);
        QSignalSpy started(&session, &StudioSession::runStarted);
        QSignalSpy finished(&session, &StudioSession::finished);
        session.run();
        QCOMPARE(session.validity(), ResultValidity::Updating);
        QVERIFY(QTest::qWaitFor([&] { return started.count() == 1; }, 20000));
        session.cancel();
        QVERIFY(QTest::qWaitFor([&] { return cancelled.count() == 1 && !session.isBusy(); }, 20000));
        QCOMPARE(finished.count(), 0);
        QCOMPARE(session.result().image.cacheKey(), before);
        QCOMPARE(session.validity(), ResultValidity::OutOfDate);
    }

    // A run that fails says why (failed, runFailed, lastError) and keeps the previous result.
    void failureKeepsThePreviousResult()
    {
        StudioSession session;
        StudioParameters p = smallParameters();
        QVERIFY(withResult(session, p));
        const qint64 before = session.result().image.cacheKey();

        p.solver = QStringLiteral("no-such-variant");
        session.setParameters(p);
        QSignalSpy failed(&session, &StudioSession::failed);
        QSignalSpy runFailed(&session, &StudioSession::runFailed);
        session.run();
        QVERIFY(QTest::qWaitFor([&] { return runFailed.count() == 1 && !session.isBusy(); }, 20000));
        QCOMPARE(failed.count(), 1);
        QVERIFY(session.lastError().contains(QStringLiteral("no-such-variant")));
        QCOMPARE(session.result().image.cacheKey(), before);
        QCOMPARE(session.validity(), ResultValidity::OutOfDate);
    }

    // Undo and redo put back the parameters and the images, and with them the validity.
    void undoRestoresInputsAndValidity()
    {
        StudioSession session;
        StudioParameters p = smallParameters();
        QVERIFY(withResult(session, p));
        QSignalSpy parameters(&session, &StudioSession::parametersChanged);
        QUndoStack* undo = session.undoStack();

        StudioParameters warmer = p;
        warmer.strength = 0.3;
        session.setParameters(warmer);
        QCOMPARE(session.validity(), ResultValidity::OutOfDate);
        undo->undo();
        QCOMPARE(session.parameters(), p);
        QCOMPARE(parameters.last().at(0).value<StudioParameters>(), p);
        QCOMPARE(session.validity(), ResultValidity::Current);
        undo->redo();
        QCOMPARE(session.parameters().strength, 0.3);
        QCOMPARE(session.validity(), ResultValidity::OutOfDate);
        undo->undo();

        // Two edits in a row (a slider drag) are one step; a whole set is a step of its own.
        const int steps = undo->index();
        StudioParameters edit = p;
        edit.strength = 0.9;
        session.editParameters(edit);
        edit.strength = 0.8;
        session.editParameters(edit);
        QCOMPARE(undo->index(), steps + 1);
        undo->undo();
        QCOMPARE(session.parameters().strength, p.strength);

        session.openSource(m_sourceB);
        QVERIFY(QTest::qWaitFor([&] { return session.source().path == m_sourceB; }, 20000));
        QCOMPARE(session.validity(), ResultValidity::OutOfDate);
        QSignalSpy sourceChanged(&session, &StudioSession::sourceChanged);
        undo->undo();
        QCOMPARE(sourceChanged.count(), 1);
        QCOMPARE(session.source().path, m_sourceA);
        QCOMPARE(session.validity(), ResultValidity::Current);

        session.swapImages();
        QCOMPARE(session.source().path, m_referenceA);
        QCOMPARE(session.validity(), ResultValidity::OutOfDate);
        QCOMPARE(session.staleInputs(), (QStringList{QStringLiteral("the source"), QStringLiteral("the reference")}));
        undo->undo();
        QCOMPARE(session.source().path, m_sourceA);
        QCOMPARE(session.validity(), ResultValidity::Current);
    }

    // Ctrl+S's file belongs to the photo it was saved from; a result of the last
    // photo is never written once another is the source.
    void staleResultIsNeverSaved()
    {
        StudioSession session;
        QVERIFY(withResult(session, smallParameters()));
        const QString first = m_folder.filePath("a_recolored.png");
        QSignalSpy saved(&session, &StudioSession::saved);
        QSignalSpy saveFailed(&session, &StudioSession::saveFailed);
        session.saveResultTo(first);
        QVERIFY(QTest::qWaitFor([&] { return saved.count() == 1; }, 20000));
        QCOMPARE(session.savePath(), first);
        QCOMPARE(QImage(first).size(), QSize(64, 48));

        session.openSource(m_sourceB);
        QVERIFY(QTest::qWaitFor([&] { return session.source().path == m_sourceB; }, 20000));
        QVERIFY(session.savePath().isEmpty());
        const QString second = m_folder.filePath("b_recolored.png");
        session.saveResultTo(second);
        QCOMPARE(saveFailed.count(), 1);
        QVERIFY(session.lastError().contains(QStringLiteral("out of date")));
        QTest::qWait(200);
        QVERIFY(!QFileInfo::exists(second));
        QCOMPARE(saved.count(), 1);

        // Never over the source either, even with a current result.
        QVERIFY(runToResult(session));
        session.saveResultTo(m_sourceB);
        QCOMPARE(saveFailed.count(), 2);
        QCOMPARE(QImage(m_sourceB).size(), QSize(48, 64));
        QVERIFY(QImage(m_sourceB) == QImage(writeGradient(m_folder.filePath("b_again.png"), 48, 64, 1)));
    }

    // A preset applies its settings (keeping auto-run) as one undo step.
    void presetApplies()
    {
        StudioSession session;
        StudioParameters p = smallParameters();
        p.strength = 0.4;
        p.eps = 0.03;
        session.setParameters(p);
        QSignalSpy library(&session, &StudioSession::libraryChanged);
        session.savePreset(QStringLiteral("soft"));
        QCOMPARE(library.count(), 1);

        StudioParameters other = smallParameters();
        other.autoRun = true;
        session.setParameters(other);
        session.cancel();
        const int steps = session.undoStack()->index();
        QSignalSpy parameters(&session, &StudioSession::parametersChanged);
        QVERIFY(session.applyPreset(QStringLiteral("soft")));
        QCOMPARE(parameters.count(), 1);
        QCOMPARE(session.parameters().strength, 0.4);
        QCOMPARE(session.parameters().eps, 0.03);
        QVERIFY(session.parameters().autoRun);  // kept, not the preset's
        QCOMPARE(session.undoStack()->index(), steps + 1);
        session.undoStack()->undo();
        QCOMPARE(session.parameters(), other);

        QSignalSpy failed(&session, &StudioSession::failed);
        QVERIFY(!session.applyPreset(QStringLiteral("no such preset")));
        QCOMPARE(failed.count(), 1);
        QCOMPARE(session.parameters(), other);
    }
};

QTEST_MAIN(TestStudioSession)
#include "test_studio_session.moc"
