#include "ui/parameter_reader.h"

#include <QLocale>
#include <QRegularExpression>
#include <QSettings>
#include <QVariant>

#include <cmath>

#include "core/color/look_controls.h"

namespace uot::ui {

namespace {

QString number(double x) { return QString::number(x, 'g', 6); }

// What the message shows of a value: short and printable.
QString shown(const QString& text)
{
    QString s = text.left(40);
    for (QChar& c : s)
        if (!c.isPrint()) c = QChar('?');
    return text.size() > 40 ? "\"" + s + "...\"" : "\"" + s + "\"";
}

}  // namespace

void ParameterReader::refuse(const QString& key, const QString& value, const QString& allowed, const QString& fallback)
{
    m_problems << QObject::tr("%1 = %2 is not valid: %1 takes %3 (default %4)").arg(key, value, allowed, fallback);
}

bool ParameterReader::text(const QString& key, QString& out, const QString& allowed, const QString& fallback)
{
    if (!m_settings.contains(key)) return false;
    const QVariant v = m_settings.value(key);
    switch (v.typeId()) {
    case QMetaType::QString:
    case QMetaType::Bool:
    case QMetaType::Int:
    case QMetaType::UInt:
    case QMetaType::LongLong:
    case QMetaType::ULongLong:
    case QMetaType::Double:
    case QMetaType::Float:
        out = v.toString().trimmed();
        return true;
    default:
        refuse(key, v.isValid() ? QObject::tr("a %1 value").arg(QString::fromLatin1(v.typeName())) : QObject::tr("an unreadable value"),
               allowed, fallback);
        return false;
    }
}

double ParameterReader::real(const QString& key, double fallback, double lo, double hi)
{
    const QString allowed = QObject::tr("a number from %1 to %2").arg(number(lo), number(hi));
    QString t;
    if (!text(key, t, allowed, number(fallback))) return fallback;
    bool ok = false;
    const double x = QLocale::c().toDouble(t, &ok);
    if (!ok || !std::isfinite(x) || x < lo || x > hi) {
        refuse(key, shown(t), allowed, number(fallback));
        return fallback;
    }
    return x;
}

double ParameterReader::lookControl(const QString& key, const char* control, double fallback)
{
    const QString fallbackText = number(fallback * 100);
    const QString allowed = QString::fromStdString(lookControlProblem(control, -1.0));  // the range, in words
    QString t;
    if (!text(key, t, allowed, fallbackText)) return fallback;
    bool ok = false;
    const double x = QLocale::c().toDouble(t, &ok) / 100.0;
    const std::string problem = ok ? lookControlProblem(control, x) : lookControlProblem(control, std::nan(""));
    if (!problem.empty()) {
        m_problems << QObject::tr("%1 = %2 is not valid: %3 (default %4)")
                          .arg(key, shown(t), QString::fromStdString(problem), fallbackText);
        return fallback;
    }
    return x;
}

int ParameterReader::integer(const QString& key, int fallback, int lo, int hi)
{
    const QString allowed = QObject::tr("a whole number from %1 to %2").arg(lo).arg(hi);
    QString t;
    if (!text(key, t, allowed, QString::number(fallback))) return fallback;
    bool ok = false;
    const qlonglong x = QLocale::c().toLongLong(t, &ok);
    if (!ok || x < lo || x > hi) {
        refuse(key, shown(t), allowed, QString::number(fallback));
        return fallback;
    }
    return int(x);
}

bool ParameterReader::flag(const QString& key, bool fallback)
{
    const QString allowed = QObject::tr("true or false");
    const QString def = fallback ? QStringLiteral("true") : QStringLiteral("false");
    QString t;
    if (!text(key, t, allowed, def)) return fallback;
    const QString lower = t.toLower();
    if (lower == "true" || lower == "1") return true;
    if (lower == "false" || lower == "0") return false;
    refuse(key, shown(t), allowed, def);
    return fallback;
}

QString ParameterReader::choice(const QString& key, const QString& fallback, const QStringList& allowed)
{
    const QString names = QObject::tr("one of %1").arg(allowed.join(", "));
    QString t;
    if (!text(key, t, names, fallback)) return fallback;
    if (!allowed.contains(t)) {
        refuse(key, shown(t), names, fallback);
        return fallback;
    }
    return t;
}

QString ParameterReader::device(const QString& key, const QString& fallback, int maxOrdinal)
{
    const QString allowed = QObject::tr("cpu or gpu:N with N from 0 to %1").arg(maxOrdinal);
    QString t;
    if (!text(key, t, allowed, fallback)) return fallback;
    if (t == "cpu") return t;
    static const QRegularExpression gpu(QStringLiteral("^gpu:([0-9]{1,4})$"));
    const QRegularExpressionMatch m = gpu.match(t);
    if (!m.hasMatch() || m.captured(1).toInt() > maxOrdinal) {
        refuse(key, shown(t), allowed, fallback);
        return fallback;
    }
    return QStringLiteral("gpu:%1").arg(m.captured(1).toInt());
}

}  // namespace uot::ui
