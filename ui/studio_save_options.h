#pragma once
// The studio's Save Options (File > Save Result As): bit depth, output color,
// color profile and quality, each bound to the output entry of the parameter
// table (core/params: depth, output-color, output-profile, jpeg-quality) that
// gives its default, choices, range, settings key and message for a bad value,
// the same as `uot recolor`'s flags. Saved under the group "save" of the
// settings file, checked on reading like the parameters dock's values. They
// are not part of presets or Copy/Paste Settings: a preset is a look, and the
// file format is chosen per file.

#include <QString>
#include <QStringList>

#include "core/imageio/image_io.h"

class QSettings;

namespace uot::ui {

struct StudioSaveOptions {
    // Each member holds its entry's value as a settings file spells it.
    QString depth;    // depth: source, 8, 16
    QString color;    // output-color: auto, color, gray
    QString profile;  // output-profile: srgb, source, display-p3, adobe-rgb
    int quality = 0;  // jpeg-quality: 1..100 (JPEG and WebP)

    // The table's defaults.
    StudioSaveOptions();
    bool operator==(const StudioSaveOptions& other) const = default;

    // The names of the entries the members are bound to, in the table's order.
    static QStringList boundNames();
    // The value of entry `name` as spelled in a settings file, and back (false,
    // leaving it as it was, for a text the entry refuses or a name not bound here).
    QString shownValue(const QString& name) const;
    bool setShownValue(const QString& name, const QString& shown);

    // The writer's options (depth, color, profile, JPEG and WebP quality).
    WriteOptions writeOptions() const;

    void save(QSettings& settings) const;
    // Reads the group "save" of the current group: a value that is not valid
    // keeps its default, with one message in `problems` naming the key and what
    // the entry takes (ui/parameter_reader.h).
    static StudioSaveOptions load(QSettings& settings, QStringList* problems = nullptr);
};

}  // namespace uot::ui
