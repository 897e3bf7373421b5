#pragma once
// File > Save Result As: the Save Options for the chosen file (bit depth for
// PNG/TIFF, quality for JPEG/WebP, color profile for PNG/JPEG/TIFF, output
// color for every format). Each row edits an output entry of the parameter
// table: its title, choices, range and tooltip (the --help text of `uot
// recolor`'s flag) are the table's, so the studio and the CLI offer the same.

#include <QDialog>
#include <QMap>

#include "ui/studio_save_options.h"

namespace uot::ui {

class SaveOptionsDialog : public QDialog {
    Q_OBJECT
public:
    // For a file with extension `extension` ("jpg"), starting from `options`.
    SaveOptionsDialog(const QString& extension, const StudioSaveOptions& options, QWidget* parent = nullptr);

    // Whether the format has any option to choose (every format has the output color).
    static bool hasOptions(const QString& extension);
    // The options shown; those of rows the format does not offer keep their value.
    StudioSaveOptions options() const;
    // The widget of entry `name` (a QComboBox or QSpinBox), or null when the format has no such row.
    QWidget* editor(const QString& name) const { return m_editors.value(name); }

private:
    StudioSaveOptions m_start;
    QMap<QString, QWidget*> m_editors;
};

}  // namespace uot::ui
