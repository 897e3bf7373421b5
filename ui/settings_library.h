#pragma once
// Saved settings the user names (QSettings):
//  - presets: a set of parameters ("Soft pastel", "Strong, keep light");
//  - named references: a reference image plus the parameters used with it,
//    reapplied in one click (like a "style");
// and settings as text for copy/paste between images and sessions. Names are
// free text; auto-run is a preference of the window, never part of them.

#include <QString>
#include <QStringList>

#include <optional>

#include "ui/studio_parameters.h"

namespace uot::ui {

struct NamedReference {
    QString name;
    QString imagePath;
    StudioParameters parameters;
};

namespace settings_library {

QStringList presetNames();  // sorted
void savePreset(const QString& name, const StudioParameters& parameters);
// A bad saved value gives its default and a message in `problems` (StudioParameters::load).
std::optional<StudioParameters> preset(const QString& name, QStringList* problems = nullptr);
void removePreset(const QString& name);

QStringList referenceNames();  // sorted
void saveReference(const NamedReference& reference);
std::optional<NamedReference> reference(const QString& name, QStringList* problems = nullptr);
void removeReference(const QString& name);

// "[parameters]\neps=0.01\n..." and back. fromText returns nothing for text that
// holds no settings, and nothing when any value is not valid: then `problems`
// gets one message per bad value (key and allowed range, StudioParameters::load)
// and none of the text is to be applied.
QString toText(const StudioParameters& parameters);
std::optional<StudioParameters> fromText(const QString& text, QStringList* problems = nullptr);

}  // namespace settings_library

}  // namespace uot::ui
