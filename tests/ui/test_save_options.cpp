// The studio's Save Options (ui/save_options_dialog.h, ui/studio_save_options.h):
// the dialog offers the rows of the chosen format with the parameter table's
// choices, range, titles and tooltips, and what the user picks goes through
// the settings file and comes back unchanged; rows a format does not offer keep
// the last value. With UOT_SCREENSHOT_DIR set, the dialogs are saved there as
// PNG files (to look at them).

#include <QComboBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "core/params/parameter_schema.h"
#include "tests/ui/studio_test_options.h"
#include "ui/save_options_dialog.h"

using namespace uot;
using namespace uot::ui;

namespace {

QComboBox* combo(const SaveOptionsDialog& d, const char* name) { return qobject_cast<QComboBox*>(d.editor(name)); }

void choose(QComboBox* box, const QString& spelling)
{
    QVERIFY(box);
    const int index = box->findData(spelling);
    QVERIFY2(index >= 0, qPrintable(spelling));
    box->setCurrentIndex(index);
}

// Clicks OK, as the user does.
void accept(SaveOptionsDialog& d)
{
    QSignalSpy accepted(&d, &QDialog::accepted);
    d.show();
    QVERIFY(QTest::qWaitForWindowExposed(&d));
    QPushButton* ok = d.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
    QTest::mouseClick(ok, Qt::LeftButton);
    QCOMPARE(accepted.count(), 1);
    QCOMPARE(d.result(), int(QDialog::Accepted));
}

void screenshot(QWidget& w, const QString& name)
{
    const QString dir = qEnvironmentVariable("UOT_SCREENSHOT_DIR");
    if (!dir.isEmpty()) QVERIFY(w.grab().save(dir + "/" + name));
}

}  // namespace

class TestSaveOptions : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    int m_case = 0;

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        useIsolatedSettings(m_dir.path(), "save-options");
    }

    void init() { QCoreApplication::setApplicationName(QStringLiteral("save-options-%1").arg(++m_case)); }

    // TIFF: depth, color and profile; the quality it does not offer keeps its value.
    void tiffRoundTrip()
    {
        {
            QSettings settings;
            settings.setValue("save/depth", "16");
            settings.setValue("save/outputColor", "gray");
            settings.setValue("save/profile", "adobe-rgb");
            settings.setValue("save/quality", 70);
        }
        QSettings settings;
        QStringList problems;
        const StudioSaveOptions last = StudioSaveOptions::load(settings, &problems);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
        SaveOptionsDialog dialog("tif", last);
        QVERIFY(!dialog.editor("jpeg-quality"));
        QCOMPARE(combo(dialog, "depth")->currentData().toString(), QStringLiteral("16"));
        QCOMPARE(combo(dialog, "output-color")->currentData().toString(), QStringLiteral("gray"));
        QCOMPARE(combo(dialog, "output-profile")->currentData().toString(), QStringLiteral("adobe-rgb"));
        screenshot(dialog, "save_options_tiff.png");
        choose(combo(dialog, "depth"), "8");
        choose(combo(dialog, "output-profile"), "display-p3");
        accept(dialog);
        dialog.options().save(settings);

        QSettings again;
        const StudioSaveOptions read = StudioSaveOptions::load(again, &problems);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
        QCOMPARE(read.depth, QStringLiteral("8"));
        QCOMPARE(read.color, QStringLiteral("gray"));
        QCOMPARE(read.profile, QStringLiteral("display-p3"));
        QCOMPARE(read.quality, 70);
        QCOMPARE(again.value("save/depth").toString(), QStringLiteral("8"));
    }

    // JPEG: the quality box has the table's range; no bit depth (JPEG is 8-bit).
    void jpegRoundTrip()
    {
        SaveOptionsDialog dialog("jpg", StudioSaveOptions{});
        QVERIFY(!dialog.editor("depth"));
        auto* quality = qobject_cast<QSpinBox*>(dialog.editor("jpeg-quality"));
        QVERIFY(quality);
        const params::Parameter& entry = params::parameter("jpeg-quality");
        QCOMPARE(quality->minimum(), 1);
        QCOMPARE(quality->maximum(), 100);
        QCOMPARE(quality->value(), 95);
        QVERIFY2(quality->toolTip().contains(QString::fromStdString(entry.description).mid(1)), qPrintable(quality->toolTip()));
        QVERIFY2(quality->toolTip().contains("a whole number from 1 to 100"), qPrintable(quality->toolTip()));
        screenshot(dialog, "save_options_jpeg.png");
        quality->setValue(42);
        choose(combo(dialog, "output-profile"), "source");
        accept(dialog);
        {
            QSettings settings;
            dialog.options().save(settings);
        }
        QSettings settings;
        const StudioSaveOptions read = StudioSaveOptions::load(settings);
        QCOMPARE(read.quality, 42);
        QCOMPARE(read.profile, QStringLiteral("source"));
        QCOMPARE(read.depth, QStringLiteral("source"));  // not offered: the default kept
        // The writer gets the quality for JPEG and WebP alike.
        QCOMPARE(read.writeOptions().jpegQuality, 42);
        QCOMPARE(read.writeOptions().webpQuality, 42);
    }

    // Every row is labelled with the table's title and offers exactly the table's choices.
    void rowsAreTheTables()
    {
        SaveOptionsDialog dialog("png", StudioSaveOptions{});
        QStringList titles;
        for (const QLabel* label : dialog.findChildren<QLabel*>()) titles << label->text();
        for (const char* name : {"depth", "output-color", "output-profile"}) {
            const params::Parameter& entry = params::parameter(name);
            QVERIFY2(titles.contains(QString::fromStdString(entry.studioTitle())), name);
            QComboBox* box = combo(dialog, name);
            QVERIFY(box);
            QStringList offered, allowed;
            for (int i = 0; i < box->count(); ++i) offered << box->itemData(i).toString();
            for (const std::string& c : entry.choiceList()) allowed << QString::fromStdString(c);
            QCOMPARE(offered, allowed);
            QCOMPARE(box->currentData().toString(), QString::fromStdString(entry.defaultText));
        }
        // BMP has nothing to choose: no dialog.
        QVERIFY(!SaveOptionsDialog::hasOptions("bmp"));
        QVERIFY(SaveOptionsDialog::hasOptions("WEBP"));
    }

    // Cancel keeps nothing: the settings stay as they were.
    void cancelKeepsTheSettings()
    {
        QSettings settings;
        StudioSaveOptions start;
        start.quality = 60;
        start.save(settings);
        SaveOptionsDialog dialog("webp", start);
        QVERIFY(!dialog.editor("output-profile"));  // WebP stays sRGB
        QSignalSpy rejected(&dialog, &QDialog::rejected);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        qobject_cast<QSpinBox*>(dialog.editor("jpeg-quality"))->setValue(10);
        QTest::mouseClick(dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Cancel), Qt::LeftButton);
        QCOMPARE(rejected.count(), 1);
        QCOMPARE(StudioSaveOptions::load(settings).quality, 60);
    }
};

QTEST_MAIN(TestSaveOptions)
#include "test_save_options.moc"
