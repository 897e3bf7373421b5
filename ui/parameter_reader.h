#pragma once
// Reads the values of one QSettings group (the settings file, or settings
// pasted as text) and checks each one: a value that is not a finite number in
// range (NaN, inf, text, 1e308 for an integer...), or not one of the allowed
// names, is never clamped into an extreme. The caller gets the default
// instead, and one message per bad value naming the key and what it takes.
// A missing key gives its default without a message.

#include <QString>
#include <QStringList>

class QSettings;
class QVariant;

namespace uot::ui {

class ParameterReader {
public:
    // Reads from the current group of `settings`; messages go to `problems`.
    ParameterReader(QSettings& settings, QStringList& problems) : m_settings(settings), m_problems(problems) {}

    double real(const QString& key, double fallback, double lo, double hi);
    int integer(const QString& key, int fallback, int lo, int hi);
    // A look control saved in percent (core/color/look_controls.h), returned as a
    // fraction; a bad value is refused with the control's own range message (the
    // one `uot recolor` prints). `control`: the name lookControlProblem takes.
    double lookControl(const QString& key, const char* control, double fallback);
    bool flag(const QString& key, bool fallback);
    QString choice(const QString& key, const QString& fallback, const QStringList& allowed);
    // "cpu" or "gpu:N" with N from 0 to maxOrdinal (whether that GPU exists here is
    // the parameters panel's business).
    QString device(const QString& key, const QString& fallback, int maxOrdinal);

private:
    // The value as text; false (with a message) when it is no plain value at all
    // (a list, a rectangle, an unreadable @Variant...). False without a message
    // when the key is missing.
    bool text(const QString& key, QString& out, const QString& allowed, const QString& fallback);
    void refuse(const QString& key, const QString& shown, const QString& allowed, const QString& fallback);

    QSettings& m_settings;
    QStringList& m_problems;
};

}  // namespace uot::ui
