// The parameter table (core/params) walked entry by entry against its two
// front ends: `uot recolor`'s options (app/cli/recolor_options.cpp, in
// process) and the studio (settings file, presets, the parameters dock). For
// every entry: the CLI accepts the default and refuses an out-of-range value
// with the very message the studio gives for it in a settings file; the studio
// saves and loads a non-default value unchanged; the dock's widget has the
// table's range and default. And every member of StudioParameters is bound to
// an entry with a settings key, every entry with a key to a member.

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "app/cli/recolor_options.h"
#include "core/params/parameter_schema.h"
#include "ui/parameters_panel.h"
#include "ui/studio_parameters.h"

using namespace uot;
using namespace uot::ui;

namespace {

// Out of range (or no valid spelling), as typed.
QString badValue(const params::Parameter& p)
{
    switch (p.kind) {
    case params::Kind::Real:
    case params::Kind::Integer: return QString::fromStdString(params::shownNumber(p, p.max * 2 + 1));
    case params::Kind::Flag: return QStringLiteral("maybe");
    case params::Kind::Choice: return QStringLiteral("no-such-choice");
    case params::Kind::Device: return QStringLiteral("gpu:%1").arg(int(p.max) + 1);
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
        QCoreApplication::setOrganizationName("UOT-test");
        QSettings::setDefaultFormat(QSettings::IniFormat);
        QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, m_dir.path());
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

        if (!p.cliFlag.empty()) {
            const QString flag = "--" + QString::fromStdString(p.cliFlag);
            if (p.kind == params::Kind::Flag) {
                QCOMPARE(cliError({flag}), QString());
            } else {
                QCOMPARE(cliError({flag, QString::fromStdString(p.defaultShown())}), QString());
                const QString error = cliError({flag, bad});
                QCOMPARE(error, QStringLiteral("option '%1': %2, got '%3'").arg(flag, problem, bad));
            }
        }
        if (p.settingsKey.empty()) return;
        const QString key = QString::fromStdString(p.settingsKey);
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
        QCOMPARE(StudioParameters::boundNames().size(), 25);
    }
};

QTEST_MAIN(TestParameterTable)
#include "test_parameter_table.moc"
