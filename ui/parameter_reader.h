#pragma once
// Reads the values of one QSettings group (the settings file, or settings
// pasted as text) and checks each one against its entry of the parameter table
// (core/params): a value that is not a finite number in range (NaN, inf, text,
// 1e308 for an integer...), or not one of the allowed names, is never clamped
// into an extreme. The caller keeps the default instead, and one message per
// bad value naming the key and the table's message (the one `uot recolor`
// prints for the same value). A missing key gives nothing, without a message.

#include <QString>
#include <QStringList>

#include <functional>
#include <optional>

#include "core/params/parameter_schema.h"

class QSettings;

namespace uot::ui {

class ParameterReader {
public:
    // Reads from the current group of `settings`; messages go to `problems`.
    ParameterReader(QSettings& settings, QStringList& problems) : m_settings(settings), m_problems(problems) {}

    // Runs `read` on a reader of the group `group` of `settings`; its messages go to
    // `problems` when given.
    static void readGroup(QSettings& settings, const QString& group, QStringList* problems,
                          const std::function<void(ParameterReader&)>& read);

    // A Real, Integer or Flag entry, in the core's units (percent entries are
    // saved in percent and returned as fractions; flags as 0 or 1).
    std::optional<double> number(const params::Parameter& entry);
    // A Choice or Device entry ("gpu:007" reads as "gpu:7").
    std::optional<QString> text(const params::Parameter& entry);

private:
    // The value as text; false (with a message) when it is no plain value at all
    // (a list, a rectangle, an unreadable @Variant...). False without a message
    // when the key is missing.
    bool plainText(const QString& key, QString& out, const QString& problem, const QString& fallback);
    void refuse(const QString& key, const QString& shown, const QString& problem, const QString& fallback);

    QSettings& m_settings;
    QStringList& m_problems;
};

}  // namespace uot::ui
