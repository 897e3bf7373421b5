// Issue 25, D17: the settings file and Edit > Paste Settings turned NaN, inf and
// garbage into range extremes (NaN through std::clamp showed as the maximum,
// unparsable text as 0), ran with them and saved them. Every value is now
// checked: at start a bad value gives its default (never a limit) with one
// warning naming each key and what it takes; a paste with any bad value is
// refused whole with the same messages, and nothing is applied. Also checked:
// presets, and values that QSettings reads as lists, rectangles or @Variant.

#include <QClipboard>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QGuiApplication>
#include <QRegularExpression>
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include "tests/support/relocatable_path.h"
#include "tests/ui/studio_test_options.h"
#include "ui/main_window.h"
#include "ui/settings_library.h"

using namespace uot::ui;

namespace {

const QString kSamples = uot::test::relocatablePath("UOT_SAMPLES_DIR", QStringLiteral(UOT_SAMPLES_DIR));

// The numeric keys of the settings file, with the range each takes, written
// out by hand from the parameters dock's limits.
struct NumericKey {
    const char* key;
    const char* range;  // as the message must say it
};
const QList<NumericKey>& numericKeys()
{
    static const QList<NumericKey> keys = {
        {"paletteSize", "from 1 to 65536"},       {"eps", "from 1e-05 to 10"},
        {"tau", "from 0.001 to 1000"},            {"maxIterations", "from 1 to 2147483647"},
        {"tolerance", "from 0 to 1"},             {"threads", "from 0 to 1024"},
        {"epsScalingRatio", "from 0 to 10000"},   {"epsScalingFactor", "from 0.05 to 0.95"},
        {"strength", "from 0 to 2"},              {"smoothingScale", "from 0 to 4"},
        {"paletteMatch", "from 0 to 1"},          {"lightnessTransfer", "from 0 to 1"},
        // The look controls, saved in percent: the message is `uot recolor`'s.
        {"luminanceIntensity", "luminance intensity must be between 0 % and 200 %"},
        {"colorIntensity", "color intensity must be between 0 % and 200 %"},
        {"protectSkin", "protect skin tones must be between 0 % and 100 %"},
        {"protectNeutrals", "protect neutrals must be between 0 % and 100 %"},
    };
    return keys;
}

// The field a key is loaded into.
double field(const StudioParameters& p, const QString& key)
{
    if (key == "paletteSize") return p.paletteSize;
    if (key == "eps") return p.eps;
    if (key == "tau") return p.tau;
    if (key == "maxIterations") return p.maxIterations;
    if (key == "tolerance") return p.tolerance;
    if (key == "threads") return p.threads;
    if (key == "epsScalingRatio") return p.epsScalingRatio;
    if (key == "epsScalingFactor") return p.epsScalingFactor;
    if (key == "strength") return p.strength;
    if (key == "smoothingScale") return p.smoothing;
    if (key == "paletteMatch") return p.paletteMatch;
    if (key == "lightnessTransfer") return p.lightnessTransfer;
    if (key == "luminanceIntensity") return p.luminanceIntensity;
    if (key == "colorIntensity") return p.colorIntensity;
    if (key == "protectSkin") return p.protectSkin;
    if (key == "protectNeutrals") return p.protectNeutrals;
    qFatal("unknown key %s", qPrintable(key));
    return 0;
}

const QStringList kHostileValues = {"nan", "inf", "abc", "-5", "1e308"};

// The text a hostile user (or a damaged disk) leaves in the settings file.
void writeSettingsFile(const QByteArray& text)
{
    const QString path = QSettings().fileName();
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(text);
}

}  // namespace

class TestSettingsValidation : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_settingsDir;
    int m_case = 0;

private slots:
    void initTestCase()
    {
        QVERIFY(m_settingsDir.isValid());
        QCoreApplication::setOrganizationName("UOT-test");
        QSettings::setDefaultFormat(QSettings::IniFormat);
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_settingsDir.path());
    }

    // A settings file of its own per test (QSettings caches files it has read).
    void init() { QCoreApplication::setApplicationName(QStringLiteral("settings-validation-%1").arg(++m_case)); }

    void everyNumericKeyRefusesHostileValues_data()
    {
        QTest::addColumn<QString>("key");
        QTest::addColumn<QString>("range");
        QTest::addColumn<QString>("value");
        for (const NumericKey& k : numericKeys())
            for (const QString& v : kHostileValues)
                QTest::newRow(qPrintable(QStringLiteral("%1=%2").arg(k.key, v))) << k.key << k.range << v;
    }

    void everyNumericKeyRefusesHostileValues()
    {
        QFETCH(QString, key);
        QFETCH(QString, range);
        QFETCH(QString, value);
        const StudioParameters defaults;
        // From the settings file: the default, one message.
        writeSettingsFile("[parameters]\n" + key.toUtf8() + "=" + value.toUtf8() + "\n");
        QSettings settings;
        QStringList problems;
        const StudioParameters loaded = StudioParameters::load(settings, &problems);
        QCOMPARE(field(loaded, key), field(defaults, key));
        QCOMPARE(loaded, defaults);  // nothing else touched
        QCOMPARE(problems.size(), 1);
        QVERIFY2(problems[0].startsWith(key + " = ") && problems[0].contains(range) && problems[0].contains(value),
                 qPrintable(problems[0]));

        // Pasted: refused, with the same message.
        QStringList pasted;
        QVERIFY(!settings_library::fromText("[parameters]\n" + key + "=" + value + "\n", &pasted).has_value());
        QCOMPARE(pasted, problems);
    }

    // Every look control goes through presets, named references and pasted settings unchanged.
    void lookControlsRoundTrip()
    {
        StudioParameters p;
        p.luminanceIntensity = 0.35;
        p.colorIntensity = 1.7;
        p.neutralize = true;
        p.protectSkin = 0.8;
        p.protectNeutrals = 0.45;
        p.lightnessTransfer = 0.3;
        QVERIFY(!p.sameLookAs(StudioParameters{}));
        QVERIFY(p.sameSolveAs(StudioParameters{}));  // a control change re-maps, no new solve
        QStringList problems;
        const std::optional<StudioParameters> pasted = settings_library::fromText(settings_library::toText(p), &problems);
        QVERIFY2(pasted.has_value(), qPrintable(problems.join('\n')));
        QCOMPARE(*pasted, p);
        QVERIFY(settings_library::toText(p).contains("luminanceIntensity=35"));  // percent, as the CLI
        QVERIFY(settings_library::toText(p).contains("lightnessTransfer=0.3"));   // a fraction, as the CLI
        settings_library::savePreset("Look", p);
        const std::optional<StudioParameters> preset = settings_library::preset("Look", &problems);
        QVERIFY(preset.has_value());
        QCOMPARE(*preset, p);
        settings_library::saveReference(NamedReference{"Style", kSamples + "/starry_night.jpg", p});
        const std::optional<NamedReference> reference = settings_library::reference("Style", &problems);
        QVERIFY(reference.has_value());
        QCOMPARE(reference->parameters, p);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
    }

    void valuesInRangeStillLoad()
    {
        writeSettingsFile("[parameters]\neps=0.02\npaletteSize=64\nstrength=0.25\nsolver=auto\ndevice=cpu\nbalanced=false\n");
        QSettings settings;
        QStringList problems;
        const StudioParameters loaded = StudioParameters::load(settings, &problems);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
        QCOMPARE(loaded.eps, 0.02);
        QCOMPARE(loaded.paletteSize, 64);
        QCOMPARE(loaded.strength, 0.25);
        QCOMPARE(loaded.balanced, false);
    }

    // The probe's file (D17): the window starts with the defaults, says so once,
    // and the file never gets the bad values or the extremes they were clamped to.
    void aBadSettingsFileStartsWithDefaultsAndOneWarning()
    {
        writeSettingsFile("[parameters]\neps=nan\ntolerance=nan\ntau=inf\nstrength=nan\nsmoothingScale=nan\n"
                          "paletteMatch=nan\nmaxIterations=abc\npaletteSize=-5\nthreads=100000\n"
                          "solver=$(touch /tmp/x)\ndevice=gpu:99999999999999999999\nbalanced=maybe\n"
                          "colorSpace=cmyk\n");
        const StudioParameters defaults;
        {
            MainWindow window(testOptions());
            StudioParameters expected = defaults;
            expected.device = window.parameters().device;  // the dock offers the devices of this machine
            QCOMPARE(window.parameters(), expected);
            QCOMPARE(window.parameters().eps, defaults.eps);  // not 10 (the maximum NaN was clamped to)
            QCOMPARE(window.parameters().maxIterations, defaults.maxIterations);  // not 1
            const QString warning = window.lastError();
            QVERIFY2(warning.contains("replaced by their defaults"), qPrintable(warning));
            for (const char* key : {"eps", "tolerance", "tau", "strength", "smoothingScale", "paletteMatch", "maxIterations",
                                    "paletteSize", "threads", "solver", "device", "balanced", "colorSpace"})
                QVERIFY2(warning.contains(QStringLiteral("\n%1 = ").arg(key)), key);
            QCOMPARE(warning.count(" is not valid: "), 13);
            window.close();
        }
        QSettings settings;
        settings.beginGroup("parameters");
        for (const QString& key : settings.childKeys()) {
            const QString value = settings.value(key).toString();
            QVERIFY2(!value.contains("nan") && !value.contains("inf") && !value.contains("touch"), qPrintable(key + "=" + value));
        }
        QCOMPARE(settings.value("maxIterations").toString(), QString("5000"));
        QCOMPARE(settings.value("eps").toDouble(), defaults.eps);
        settings.endGroup();
        // The next start has nothing to say.
        MainWindow again(testOptions());
        QVERIFY2(again.lastError().isEmpty(), qPrintable(again.lastError()));
    }

    // The probe's clipboard (B19): nothing applied, each bad value named.
    void pasteWithBadValuesAppliesNothing()
    {
        MainWindow window(testOptions());
        StudioParameters before;
        before.strength = 0.6;
        before.eps = 0.02;
        window.setParameters(before);
        const StudioParameters shown = window.parameters();
        QGuiApplication::clipboard()->setText(
            "[parameters]\neps=nan\ntolerance=nan\ntau=nan\nstrength=nan\nsmoothingScale=nan\npaletteMatch=nan\n"
            "maxIterations=abc\npaletteSize=-5\nthreads=100000\nsolver=$(touch /tmp/pwned)\n"
            "device=gpu:99999999999999999999\n");
        QVERIFY(!window.pasteSettings());
        QCOMPARE(window.parameters(), shown);
        const QString error = window.lastError();
        QVERIFY2(error.contains("not pasted"), qPrintable(error));
        QCOMPARE(error.count(" is not valid: "), 11);
        QVERIFY2(error.contains("eps = \"nan\" is not valid: eps takes a number from 1e-05 to 10"), qPrintable(error));
        QVERIFY2(error.contains("maxIterations = \"abc\" is not valid: maximum iterations takes a whole number from 1 to 2147483647"),
                 qPrintable(error));

        // One bad value among good ones: still nothing applied.
        QGuiApplication::clipboard()->setText("[parameters]\neps=0.05\nstrength=0.2\npaletteMatch=1e308\n");
        QVERIFY(!window.pasteSettings());
        QCOMPARE(window.parameters(), shown);
        QCOMPARE(window.lastError().count(" is not valid: "), 1);
    }

    // Values QSettings parses into other types (B21): refused, not read as 0 or the minimum.
    void typedGarbageIsRefused()
    {
        QStringList problems;
        QVERIFY(!settings_library::fromText("[parameters]\neps=@Variant(\\0\\0\\0\\x7f\\0\\0\\0\\xeQFooBarBaz)\n"
                                            "paletteSize=@ByteArray(AAAA)\nstrength=@Rect(1 2 3 4)\ntau=1, 2\n",
                                            &problems)
                     .has_value());
        QCOMPARE(problems.size(), 4);
        for (const QString key : {"eps", "paletteSize", "strength", "tau"})
            QVERIFY2(!problems.filter(QRegularExpression("^" + key + " = ")).isEmpty(), qPrintable(problems.join('\n')));
    }

    // A serialized Qt value is never read (fuzz_settings_text, 2026-11-26): QSettings
    // deserialized this 94-byte list (a count of about 800 million) into 2.2 GB before
    // any check. Also spelt with an escape (\x40 = @) or continued on the next line.
    void serializedValuesAreNotRead()
    {
        const QByteArray bomb("[parameters]\ncolor-intans=@Variant(\\0\\0\\00\\t(\\0\\0\\0\\x\x01\x00\x00\x00"
                              "0\\0\\x2\\x41)\n2trength=@ByteArra\x16(xyz)\x0b", 94);
        const QString escaped = "[parameters]\neps=\\x40Variant(\\0\\0\\0\\t\\x7f\\xff\\xff\\xff)\n"
                                "strength=\\\n@ByteArray(x)\npaletteSize=64\n";
        for (const QString& text : {QString::fromLatin1(bomb), escaped}) {
            QStringList problems;
            QVERIFY(!settings_library::fromText(text, &problems).has_value());
            QCOMPARE(problems.filter("not a serialized Qt value").size(), 2);
        }
    }

    // Save As starts from the last bit depth and quality: garbage there gave
    // quality 0 (toInt of "nan"); now the defaults, 95 and the source's depth,
    // with the parameter table's message for each bad value.
    void badSavedWriteOptionsGiveTheDefaults()
    {
        QSettings().setValue("save/quality", "nan");
        QSettings().setValue("save/depth", "1e308");
        MainWindow window(testOptions());
        window.openSource(kSamples + "/home.jpg");
        window.openReference(kSamples + "/starry_night.jpg");
        QVERIFY(QTest::qWaitFor([&] { return window.hasSource() && window.hasReference() && !window.isLoading(); }, 20000));
        StudioParameters p;
        p.paletteSize = 64;
        p.maxIterations = 100;
        p.tolerance = 1e-3;
        p.eps = 0.02;
        window.setParameters(p);
        QSignalSpy ready(&window, &MainWindow::resultReady);
        window.run();
        QTRY_VERIFY_WITH_TIMEOUT(ready.count() >= 1 && !window.isRunning(), 60000);
        int quality = -1;
        QString depth;
        QTemporaryDir dir;
        SavePrompts prompts;
        prompts.choosePath = [&](QString& path, QString&) {
            path = dir.filePath("out.jpg");
            return true;
        };
        prompts.confirmReplace = [](const QString&) { return true; };
        prompts.chooseOptions = [&](const QString&, StudioSaveOptions& options) {
            quality = options.quality;
            depth = options.depth;
            return false;  // cancel: only the offered options matter here
        };
        window.setSavePrompts(prompts);
        window.saveAs();
        QCOMPARE(quality, 95);
        QCOMPARE(depth, QStringLiteral("source"));
        const QString said = window.phaseLabel()->text();
        QVERIFY2(said.contains("quality = \"nan\" is not valid: JPEG quality takes a whole number from 1 to 100"),
                 qPrintable(said));
        QVERIFY2(said.contains("depth = \"1e308\" is not valid: bit depth takes one of source, 8, 16"), qPrintable(said));
    }

    void aPresetWithBadValuesIsNotApplied()
    {
        MainWindow window(testOptions());
        window.savePreset("Broken");
        QSettings().setValue("presets/Broken/parameters/strength", "nan");
        const StudioParameters shown = window.parameters();
        QVERIFY(!window.applyPreset("Broken"));
        QCOMPARE(window.parameters(), shown);
        QVERIFY2(window.lastError().contains("strength = \"nan\""), qPrintable(window.lastError()));
    }
};

QTEST_MAIN(TestSettingsValidation)
#include "test_settings_validation.moc"
