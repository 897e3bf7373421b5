#include "ui/parameter_reader.h"

#include <QSettings>
#include <QVariant>

namespace uot::ui {

namespace {

// What the message shows of a value: short and printable.
QString shown(const QString& text)
{
    QString s = text.left(40);
    for (QChar& c : s)
        if (!c.isPrint()) c = QChar('?');
    return text.size() > 40 ? "\"" + s + "...\"" : "\"" + s + "\"";
}

QString keyOf(const params::Parameter& entry) { return QString::fromStdString(entry.settingsKey); }
QString problemOf(const params::Parameter& entry) { return QString::fromStdString(entry.problem()); }
QString defaultOf(const params::Parameter& entry) { return QString::fromStdString(entry.defaultShown()); }

}  // namespace

void ParameterReader::readGroup(QSettings& settings, const QString& group, QStringList* problems,
                                const std::function<void(ParameterReader&)>& read)
{
    QStringList found;
    settings.beginGroup(group);
    ParameterReader reader(settings, found);
    read(reader);
    settings.endGroup();
    if (problems) *problems << found;
}

void ParameterReader::refuse(const QString& key, const QString& value, const QString& problem, const QString& fallback)
{
    m_problems << QObject::tr("%1 = %2 is not valid: %3 (default %4)").arg(key, value, problem, fallback);
}

bool ParameterReader::plainText(const QString& key, QString& out, const QString& problem, const QString& fallback)
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
               problem, fallback);
        return false;
    }
}

std::optional<double> ParameterReader::number(const params::Parameter& entry)
{
    QString t;
    if (!plainText(keyOf(entry), t, problemOf(entry), defaultOf(entry))) return std::nullopt;
    const QString text = entry.kind == params::Kind::Flag ? t.toLower() : t;
    const std::optional<double> value = params::parseNumber(entry, text.toStdString());
    if (!value) refuse(keyOf(entry), shown(t), problemOf(entry), defaultOf(entry));
    return value;
}

std::optional<QString> ParameterReader::text(const params::Parameter& entry)
{
    QString t;
    if (!plainText(keyOf(entry), t, problemOf(entry), defaultOf(entry))) return std::nullopt;
    if (!params::isValidText(entry, t.toStdString())) {
        refuse(keyOf(entry), shown(t), problemOf(entry), defaultOf(entry));
        return std::nullopt;
    }
    if (entry.kind == params::Kind::Device && t.startsWith(QLatin1String("gpu:")))
        return QStringLiteral("gpu:%1").arg(t.mid(4).toInt());
    return t;
}

}  // namespace uot::ui
