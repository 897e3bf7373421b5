// File > Open Clip and Export Clip in either build. With FFmpeg's libraries
// (UOT_VIDEO) a clip opens as the source; without them both entries say that
// clips need FFmpeg support and are disabled, and a clip given as the source is
// refused with that reason, without a crash. Registered in both builds.

#include <QAction>
#include <QImage>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "tests/ui/studio_test_options.h"
#include "ui/main_window.h"

using namespace uot::ui;

class TestStudioClipMenus : public QObject {
    Q_OBJECT

private:
    QTemporaryDir m_folder;

private slots:
    void initTestCase()
    {
        QVERIFY(m_folder.isValid());
        useIsolatedSettings(m_folder.filePath("settings"), "test_studio_clip_menus");
    }

    void menuEntriesSayWhetherClipsWork()
    {
        MainWindow window(testOptions());
        QAction* open = window.action("openClipAction");
        QAction* exportClip = window.action("exportClipAction");
        QVERIFY(open && exportClip);
        QVERIFY(!exportClip->isEnabled());  // no clip, no result
        if (ClipModel::supported()) {
            QVERIFY(open->isEnabled());
            QVERIFY(!open->text().contains("FFmpeg"));
        } else {
            for (QAction* a : {open, exportClip}) {
                QVERIFY(!a->isEnabled());
                QVERIFY2(a->text().contains("needs FFmpeg support"), qPrintable(a->text()));
                QVERIFY(a->toolTip().contains("FFmpeg"));
            }
        }
    }

    // A three-frame PNG sequence as the source: opened, or refused with the reason.
    void clipAsTheSource()
    {
        for (int k = 0; k < 3; ++k) {
            QImage frame(32, 24, QImage::Format_RGB888);
            frame.fill(QColor(40 * k, 100, 200 - 40 * k));
            QVERIFY(frame.save(m_folder.filePath(QString::asprintf("shot_%04d.png", k))));
        }
        // A frame chosen in the dialog names its sequence.
        const QString pattern = ClipModel::clipPathFor(m_folder.filePath("shot_0001.png"));
        QCOMPARE(pattern, m_folder.filePath("shot_%04d.png"));
        QCOMPARE(ClipModel::clipPathFor(m_folder.filePath("still.png")), m_folder.filePath("still.png"));
        StudioSession session;
        QSignalSpy failed(&session, &StudioSession::loadFailed);
        QSignalSpy loaded(&session, &StudioSession::sourceLoaded);
        session.openSource(pattern);
        QVERIFY(QTest::qWaitFor([&] { return !failed.isEmpty() || !loaded.isEmpty(); }, 30000));
        if (ClipModel::supported()) {
            QVERIFY2(failed.isEmpty(), qPrintable(session.lastError()));
            QVERIFY(session.hasClip());
            QCOMPARE(session.clip()->description().frames, 3LL);
            QCOMPARE(session.source().image->width, 32);
        } else {
            QVERIFY(loaded.isEmpty());
            QVERIFY(!session.hasClip());
            QVERIFY2(failed.first().at(0).toString().contains("FFmpeg"), qPrintable(failed.first().at(0).toString()));
        }
    }
};

QTEST_MAIN(TestStudioClipMenus)
#include "test_studio_clip_menus.moc"
