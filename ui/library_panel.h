#pragma once
// The Library dock: named references (a reference image with its settings)
// and presets (settings only), each applied with one click on its name. The
// lists read settings_library; saving asks the window (which knows the current
// reference and parameters) through the save... signals.

#include <QWidget>

QT_BEGIN_NAMESPACE
class QListWidget;
class QPushButton;
QT_END_NAMESPACE

namespace uot::ui {

class LibraryPanel final : public QWidget {
    Q_OBJECT
public:
    explicit LibraryPanel(QWidget* parent = nullptr);
    Q_DISABLE_COPY_MOVE(LibraryPanel)

    // Reloads both lists from the saved settings.
    void refresh();
    QListWidget* referenceList() const { return m_references; }
    QListWidget* presetList() const { return m_presets; }

signals:
    void referenceChosen(const QString& name);
    void presetChosen(const QString& name);
    void saveReferenceRequested();
    void savePresetRequested();

private:
    void refreshButtons();

    QListWidget* m_references = nullptr;
    QListWidget* m_presets = nullptr;
    QPushButton* m_removeReference = nullptr;  // off while nothing is selected
    QPushButton* m_removePreset = nullptr;
};

}  // namespace uot::ui
