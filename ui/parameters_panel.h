#pragma once
// The parameters dock: every setting of a recolor with a tooltip saying what it
// does. On top what a photographer adjusts (Run, Strength, Preserve luminance,
// Smoothing); the palette and solver settings sit under "Advanced settings",
// folded away by default. Inputs are spin boxes and lists bounded by the parameter table's ranges, so
// an invalid value cannot be entered. Emits parametersChanged on every edit.

#include <QHash>
#include <QWidget>

#include "ui/studio_parameters.h"

QT_BEGIN_NAMESPACE
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QToolButton;
class QPushButton;
class QSlider;
class QSpinBox;
QT_END_NAMESPACE

namespace uot::ui {

class ParametersPanel final : public QWidget {
    Q_OBJECT
public:
    explicit ParametersPanel(QWidget* parent = nullptr);
    Q_DISABLE_COPY_MOVE(ParametersPanel)

    // At least as wide as the unfolded sections need (see the constructor).
    QSize sizeHint() const override;

    StudioParameters parameters() const;
    void setParameters(const StudioParameters& parameters);
    // Enables Run/Cancel for the idle and running states.
    void setRunning(bool running);
    bool isRunning() const { return m_running; }
    // Unfolds or folds the advanced settings.
    void setAdvancedVisible(bool visible);
    bool advancedVisible() const;

    QPushButton* runButton() const { return m_run; }
    QPushButton* cancelButton() const { return m_cancel; }
    QDoubleSpinBox* epsBox() const { return m_eps; }
    QSlider* strengthSlider() const { return m_strength; }
    QLabel* strengthValueLabel() const { return m_strengthValue; }
    QToolButton* advancedToggle() const { return m_advancedToggle; }
    QWidget* advancedSettings() const { return m_advanced; }
    QDoubleSpinBox* toleranceBox() const { return m_tolerance; }
    QSpinBox* iterationsBox() const { return m_iterations; }
    QCheckBox* luminanceBox() const { return m_luminance; }
    QDoubleSpinBox* smoothingBox() const { return m_smoothing; }
    QSlider* paletteMatchSlider() const { return m_paletteMatch; }
    QSlider* lightnessTransferSlider() const { return m_lightnessTransfer; }
    QSlider* luminanceIntensitySlider() const { return m_luminanceIntensity; }
    QSlider* colorIntensitySlider() const { return m_colorIntensity; }
    QCheckBox* neutralizeBox() const { return m_neutralize; }
    QSlider* protectSkinSlider() const { return m_protectSkin; }
    QSlider* protectNeutralsSlider() const { return m_protectNeutrals; }
    QDoubleSpinBox* colorRangeBox() const { return m_colorRange; }
    QCheckBox* colorRangeUnboundedBox() const { return m_colorRangeUnbounded; }
    QDoubleSpinBox* colorEdgesBox() const { return m_colorEdges; }
    QToolButton* colourControlsToggle() const { return m_lookToggle; }
    QSpinBox* epsScalingBox() const { return m_epsScaling; }
    // The widget that edits the parameter-table entry `name` (core/params), or null.
    QWidget* editor(const QString& name) const;

signals:
    void parametersChanged();
    void runRequested();
    void cancelRequested();
    void advancedVisibilityChanged(bool visible);

private:
    void fillSolvers();
    void fillDevices();
    void updateEnabled();

    QComboBox* m_space = nullptr;
    QSpinBox* m_palette = nullptr;
    QDoubleSpinBox* m_eps = nullptr;
    QDoubleSpinBox* m_tau = nullptr;
    QCheckBox* m_balanced = nullptr;
    QComboBox* m_reference = nullptr;
    QSpinBox* m_iterations = nullptr;
    QDoubleSpinBox* m_tolerance = nullptr;
    QComboBox* m_solver = nullptr;
    QComboBox* m_device = nullptr;
    QSpinBox* m_threads = nullptr;
    QComboBox* m_precision = nullptr;
    QComboBox* m_acceleration = nullptr;
    QSpinBox* m_epsScaling = nullptr;
    QDoubleSpinBox* m_epsScalingFactor = nullptr;
    QSlider* m_strength = nullptr;
    QLabel* m_strengthValue = nullptr;
    QToolButton* m_advancedToggle = nullptr;
    QWidget* m_advanced = nullptr;
    QCheckBox* m_luminance = nullptr;
    QDoubleSpinBox* m_smoothing = nullptr;
    QSlider* m_paletteMatch = nullptr;
    QLabel* m_paletteMatchValue = nullptr;
    QSlider* m_lightnessTransfer = nullptr;
    QLabel* m_lightnessTransferValue = nullptr;
    QSlider* m_luminanceIntensity = nullptr;
    QLabel* m_luminanceIntensityValue = nullptr;
    QSlider* m_colorIntensity = nullptr;
    QLabel* m_colorIntensityValue = nullptr;
    QCheckBox* m_neutralize = nullptr;
    QToolButton* m_lookToggle = nullptr;
    QGroupBox* m_lookControls = nullptr;
    QSlider* m_protectSkin = nullptr;
    QLabel* m_protectSkinValue = nullptr;
    QSlider* m_protectNeutrals = nullptr;
    QLabel* m_protectNeutralsValue = nullptr;
    QDoubleSpinBox* m_colorRange = nullptr;
    QCheckBox* m_colorRangeUnbounded = nullptr;
    QDoubleSpinBox* m_colorEdges = nullptr;
    QCheckBox* m_autoRun = nullptr;
    QPushButton* m_run = nullptr;
    QPushButton* m_cancel = nullptr;
    QHash<QString, QWidget*> m_editors;  // by table entry
    bool m_running = false;
    bool m_updating = false;
};

}  // namespace uot::ui
