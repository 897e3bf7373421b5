#include "ui/parameters_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSlider>
#include <QSpinBox>
#include <QThread>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "core/params/parameter_schema.h"

#include "ui/default_reset.h"
#include "ui/parameter_tooltip.h"
#include "ui/studio_session.h"

namespace uot::ui {

namespace {
const params::Parameter& entry(const char* name) { return params::parameter(name); }

// Ranges from the parameter table (core/params), in what the widget shows.
void setRange(QSpinBox* box, const params::Parameter& p) { box->setRange(int(p.min), int(p.max)); }
void setRange(QDoubleSpinBox* box, const params::Parameter& p) { box->setRange(p.min * p.scale(), p.max * p.scale()); }

// A spin box over the table entry's range, with `decimals` places and steps of `step`.
QDoubleSpinBox* numberBox(const params::Parameter& p, int decimals, double step)
{
    auto* box = new QDoubleSpinBox;
    box->setDecimals(decimals);
    setRange(box, p);
    box->setSingleStep(step);
    return box;
}

// The label of an entry's widget (its row, or a check box's text).
QString titleOf(const char* name) { return QString::fromStdString(entry(name).studioTitle()); }

// A % slider over the table entry's range (a fraction shown in percent) with its value shown beside it.
QHBoxLayout* percentSlider(QWidget* owner, QSlider*& slider, QLabel*& value, const params::Parameter& p)
{
    slider = new QSlider(Qt::Horizontal);
    slider->setRange(int(std::lround(p.min * 100)), int(std::lround(p.max * 100)));
    value = new QLabel;
    value->setMinimumWidth(QFontMetrics(owner->font()).horizontalAdvance(QStringLiteral("100 %")) + 4);
    value->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    QObject::connect(slider, &QSlider::valueChanged, value,
                     [value](int v) { value->setText(ParametersPanel::tr("%1 %").arg(v)); });
    value->setText(ParametersPanel::tr("%1 %").arg(slider->value()));
    auto* row = new QHBoxLayout;
    row->addWidget(slider, 1);
    row->addWidget(value);
    return row;
}
}  // namespace

ParametersPanel::ParametersPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);

    auto* buttons = new QHBoxLayout;
    m_run = new QPushButton(tr("Run"));
    m_run->setToolTip(tr("Recolor the source with the reference's palette (Ctrl+R)."));
    m_run->setDefault(true);
    m_cancel = new QPushButton(tr("Cancel"));
    m_cancel->setToolTip(tr("Stop the running solve (Esc). The previous result stays."));
    buttons->addWidget(m_run);
    buttons->addWidget(m_cancel);
    layout->addLayout(buttons);

    auto* mapping = new QGroupBox(tr("Look"));
    auto* mapForm = new QFormLayout(mapping);
    QHBoxLayout* strengthRow = percentSlider(this, m_strength, m_strengthValue, entry("fade"));
    mapForm->addRow(titleOf("fade"), strengthRow);
    m_luminance = new QCheckBox(titleOf("preserve-luminance"));
    mapForm->addRow(QString(), m_luminance);
    m_smoothing = numberBox(entry("smoothing"), 2, 0.1);
    mapForm->addRow(titleOf("smoothing"), m_smoothing);
    QHBoxLayout* matchRow = percentSlider(this, m_paletteMatch, m_paletteMatchValue, entry("residual-match"));
    mapForm->addRow(titleOf("residual-match"), matchRow);
    // Palette match's counterpart for the tones: how far the lightness follows the reference's.
    QHBoxLayout* transferRow =
        percentSlider(this, m_lightnessTransfer, m_lightnessTransferValue, entry("lightness-transfer"));
    mapForm->addRow(titleOf("lightness-transfer"), transferRow);
    layout->addWidget(mapping);

    // The colourist's controls, folded away by default (one row) so that the
    // photographer's panel still fits a small window; they open by themselves
    // when the parameters set any of them.
    m_lookToggle = new QToolButton;
    m_lookToggle->setText(tr("Color controls"));
    m_lookToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_lookToggle->setCheckable(true);
    m_lookToggle->setArrowType(Qt::RightArrow);
    m_lookToggle->setAutoRaise(true);
    m_lookToggle->setToolTip(
        tr("Luminance and color intensity, neutralize, protect skin tones and neutrals, the color's range along lightness "
           "and the share of color edges it may allow."));
    layout->addWidget(m_lookToggle);
    m_lookControls = new QGroupBox(tr("Color controls"));
    auto* lookForm = new QFormLayout(m_lookControls);
    QHBoxLayout* lumRow = percentSlider(this, m_luminanceIntensity, m_luminanceIntensityValue, entry("luminance"));
    lookForm->addRow(titleOf("luminance"), lumRow);
    QHBoxLayout* colorRow = percentSlider(this, m_colorIntensity, m_colorIntensityValue, entry("color-intensity"));
    lookForm->addRow(titleOf("color-intensity"), colorRow);
    m_neutralize = new QCheckBox(titleOf("neutralize"));
    lookForm->addRow(QString(), m_neutralize);
    QHBoxLayout* skinRow = percentSlider(this, m_protectSkin, m_protectSkinValue, entry("protect-skin"));
    lookForm->addRow(titleOf("protect-skin"), skinRow);
    QHBoxLayout* neutralRow = percentSlider(this, m_protectNeutrals, m_protectNeutralsValue, entry("protect-neutrals"));
    lookForm->addRow(titleOf("protect-neutrals"), neutralRow);
    // The color's range along lightness: a number of Lab units, or no bound (inf) when unbounded is checked.
    auto* rangeRow = new QHBoxLayout;
    m_colorRange = numberBox(entry("color-range"), 1, 2);
    m_colorRangeUnbounded = new QCheckBox(tr("unbounded"));
    m_colorRangeUnbounded->setToolTip(tr("No bound on the color's range along lightness (inf): the look before the bound."));
    rangeRow->addWidget(m_colorRange, 1);
    rangeRow->addWidget(m_colorRangeUnbounded);
    lookForm->addRow(titleOf("color-range"), rangeRow);
    // The share of the picture where the range may give way (per cent); no meaning without a range.
    m_colorEdges = numberBox(entry("color-edges"), 1, 0.5);
    m_colorEdges->setSuffix(tr(" %"));
    lookForm->addRow(titleOf("color-edges"), m_colorEdges);
    m_lookControls->setVisible(false);
    layout->addWidget(m_lookControls);
    connect(m_lookToggle, &QToolButton::toggled, this, [this](bool open) {
        m_lookToggle->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
        m_lookControls->setVisible(open);
    });

    m_autoRun = new QCheckBox(titleOf("auto-run"));
    layout->addWidget(m_autoRun);
    m_advancedToggle = new QToolButton;
    m_advancedToggle->setText(tr("Advanced settings"));
    m_advancedToggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_advancedToggle->setCheckable(true);
    m_advancedToggle->setArrowType(Qt::RightArrow);
    m_advancedToggle->setAutoRaise(true);
    m_advancedToggle->setToolTip(tr("Palette, color space and solver settings."));
    layout->addWidget(m_advancedToggle);
    m_advanced = new QWidget;
    auto* advancedLayout = new QVBoxLayout(m_advanced);
    advancedLayout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_advanced);
    layout->addStretch(1);

    auto* color = new QGroupBox(tr("Color"));
    auto* colorForm = new QFormLayout(color);
    m_space = new QComboBox;
    m_space->addItem(tr("CIELAB"), "lab");
    m_space->addItem(tr("Linear RGB"), "linear-rgb");
    m_space->addItem(tr("Oklab"), "oklab");
    colorForm->addRow(titleOf("space"), m_space);
    m_palette = new QSpinBox;
    setRange(m_palette, entry("palette-size"));
    m_palette->setSingleStep(256);
    colorForm->addRow(titleOf("palette-size"), m_palette);
    advancedLayout->addWidget(color);

    auto* transport = new QGroupBox(tr("Transport"));
    auto* form = new QFormLayout(transport);
    m_eps = numberBox(entry("eps"), 5, 0.0005);
    form->addRow(titleOf("eps"), m_eps);
    auto* tauRow = new QHBoxLayout;
    m_tau = numberBox(entry("adherence"), 3, 0.1);
    m_balanced = new QCheckBox(titleOf("balanced"));
    tauRow->addWidget(m_tau, 1);
    tauRow->addWidget(m_balanced);
    form->addRow(titleOf("adherence"), tauRow);
    m_reference = new QComboBox;
    m_reference->addItem(tr("uniform (ones)"), "ones");
    m_reference->addItem(tr("product of the weights"), "product");
    form->addRow(titleOf("reference-measure"), m_reference);
    m_iterations = new QSpinBox;
    setRange(m_iterations, entry("max-iter"));
    m_iterations->setSingleStep(100);
    form->addRow(titleOf("max-iter"), m_iterations);
    m_tolerance = numberBox(entry("tol"), 8, 1e-5);
    form->addRow(titleOf("tol"), m_tolerance);
    m_solver = new QComboBox;
    form->addRow(titleOf("solver"), m_solver);
    m_device = new QComboBox;
    form->addRow(titleOf("device"), m_device);
    m_threads = new QSpinBox;
    setRange(m_threads, entry("threads"));
    m_threads->setSpecialValueText(tr("all (%1)").arg(QThread::idealThreadCount()));
    form->addRow(titleOf("threads"), m_threads);
    m_precision = new QComboBox;
    m_precision->addItem(tr("float32"), "fp32");
    m_precision->addItem(tr("float64"), "fp64");
    form->addRow(titleOf("precision"), m_precision);
    m_acceleration = new QComboBox;
    m_acceleration->addItem(tr("auto"), "auto");
    m_acceleration->addItem(tr("relax (omega 1.5)"), "relax");
    m_acceleration->addItem(tr("none"), "none");
    form->addRow(titleOf("acceleration"), m_acceleration);
    auto* scalingRow = new QHBoxLayout;
    m_epsScaling = new QSpinBox;
    setRange(m_epsScaling, entry("eps-scaling"));
    m_epsScaling->setSingleStep(4);
    m_epsScaling->setPrefix(tr("from "));
    m_epsScaling->setSuffix(tr(" x eps"));
    m_epsScaling->setSpecialValueText(tr("off"));
    m_epsScalingFactor = numberBox(entry("eps-scaling-factor"), 2, 0.05);
    m_epsScalingFactor->setPrefix(tr("x "));
    scalingRow->addWidget(m_epsScaling, 3);
    scalingRow->addWidget(m_epsScalingFactor, 2);
    form->addRow(titleOf("eps-scaling"), scalingRow);
    advancedLayout->addWidget(transport);

    m_advanced->setVisible(false);
    connect(m_advancedToggle, &QToolButton::toggled, this, &ParametersPanel::setAdvancedVisible);

    m_editors = {{"space", m_space},
                 {"palette-size", m_palette},
                 {"eps", m_eps},
                 {"adherence", m_tau},
                 {"balanced", m_balanced},
                 {"reference-measure", m_reference},
                 {"max-iter", m_iterations},
                 {"tol", m_tolerance},
                 {"solver", m_solver},
                 {"device", m_device},
                 {"threads", m_threads},
                 {"precision", m_precision},
                 {"acceleration", m_acceleration},
                 {"eps-scaling", m_epsScaling},
                 {"eps-scaling-factor", m_epsScalingFactor},
                 {"fade", m_strength},
                 {"preserve-luminance", m_luminance},
                 {"luminance", m_luminanceIntensity},
                 {"color-intensity", m_colorIntensity},
                 {"neutralize", m_neutralize},
                 {"protect-skin", m_protectSkin},
                 {"protect-neutrals", m_protectNeutrals},
                 {"smoothing", m_smoothing},
                 {"residual-match", m_paletteMatch},
                 {"lightness-transfer", m_lightnessTransfer},
                 {"color-range", m_colorRange},
                 {"color-edges", m_colorEdges},
                 {"auto-run", m_autoRun}};
    for (auto it = m_editors.cbegin(); it != m_editors.cend(); ++it)  // the table's words, as --help says them
        it.value()->setToolTip(parameterToolTip(entry(it.key().toStdString().c_str())));
    fillSolvers();
    fillDevices();  // adds why there is no GPU to the device's tooltip
    setParameters(StudioParameters{});
    installDefaultReset(this);  // the values just set are the defaults a double-click brings back
    setRunning(false);
    // Wide enough for the unfolded sections too: opening Advanced settings or the
    // color controls never cuts off their fields (the dock is sized from this).
    const int margins = layout->contentsMargins().left() + layout->contentsMargins().right();
    setMinimumWidth(std::max({minimumSizeHint().width(), m_advanced->sizeHint().width() + margins,
                              m_lookControls->sizeHint().width() + margins}));

    auto changed = [this] {
        updateEnabled();
        if (!m_updating) emit parametersChanged();
    };
    for (QComboBox* box : {m_space, m_reference, m_solver, m_device, m_precision, m_acceleration})
        connect(box, &QComboBox::currentIndexChanged, this, changed);
    for (QSpinBox* box : {m_palette, m_iterations, m_threads, m_epsScaling}) connect(box, &QSpinBox::valueChanged, this, changed);
    for (QDoubleSpinBox* box : {m_eps, m_tau, m_tolerance, m_smoothing, m_epsScalingFactor, m_colorRange, m_colorEdges})
        connect(box, &QDoubleSpinBox::valueChanged, this, changed);
    for (QCheckBox* box : {m_balanced, m_luminance, m_neutralize, m_colorRangeUnbounded, m_autoRun}) connect(box, &QCheckBox::toggled, this, changed);
    for (QSlider* slider : {m_strength, m_paletteMatch, m_lightnessTransfer, m_luminanceIntensity, m_colorIntensity,
                            m_protectSkin, m_protectNeutrals})
        connect(slider, &QSlider::valueChanged, this, changed);
    connect(m_run, &QPushButton::clicked, this, &ParametersPanel::runRequested);
    connect(m_cancel, &QPushButton::clicked, this, &ParametersPanel::cancelRequested);
}

QWidget* ParametersPanel::editor(const QString& name) const { return m_editors.value(name); }

QSize ParametersPanel::sizeHint() const
{
    const QSize hint = QWidget::sizeHint();
    return {std::max(hint.width(), minimumWidth()), hint.height()};
}

void ParametersPanel::fillSolvers()
{
    const QVector<SolverChoice> variants = StudioSession::solverChoices();
    for (const std::string& name : entry("solver").choiceList()) {  // "auto" and the CPU variants
        const QString text = QString::fromStdString(name);
        m_solver->addItem(name == "auto" ? tr("auto") : text, text);
        for (const SolverChoice& choice : variants)
            if (choice.name == text && name != "auto")
                m_solver->setItemData(m_solver->count() - 1, choice.description, Qt::ToolTipRole);
    }
}

void ParametersPanel::fillDevices()
{
    m_device->addItem(tr("CPU"), "cpu");
    for (const GpuChoice& device : StudioSession::gpuChoices())
        m_device->addItem(tr("GPU %1: %2").arg(device.ordinal).arg(device.name), QStringLiteral("gpu:%1").arg(device.ordinal));
    const QString reason = StudioSession::gpuUnavailableReason();
    if (m_device->count() == 1 && !reason.isEmpty())
        m_device->setToolTip(m_device->toolTip() + "\n" + tr("No GPU: %1").arg(reason));
}

StudioParameters ParametersPanel::parameters() const
{
    StudioParameters p;
    p.setShownValue("space", m_space->currentData().toString());
    p.paletteSize = m_palette->value();
    p.eps = m_eps->value();
    p.tau = m_tau->value();
    p.balanced = m_balanced->isChecked();
    p.setShownValue("reference-measure", m_reference->currentData().toString());
    p.maxIterations = m_iterations->value();
    p.tolerance = m_tolerance->value();
    p.solver = m_solver->currentData().toString();
    p.device = m_device->currentData().toString();
    p.threads = m_threads->value();
    p.setShownValue("precision", m_precision->currentData().toString());
    p.setShownValue("acceleration", m_acceleration->currentData().toString());
    p.epsScalingRatio = m_epsScaling->value();
    p.epsScalingFactor = m_epsScalingFactor->value();
    p.strength = m_strength->value() / 100.0;
    p.preserveLuminance = m_luminance->isChecked();
    p.smoothing = m_smoothing->value();
    p.paletteMatch = m_paletteMatch->value() / 100.0;
    p.lightnessTransfer = m_lightnessTransfer->value() / 100.0;
    p.luminanceIntensity = m_luminanceIntensity->value() / 100.0;
    p.colorIntensity = m_colorIntensity->value() / 100.0;
    p.neutralize = m_neutralize->isChecked();
    p.protectSkin = m_protectSkin->value() / 100.0;
    p.protectNeutrals = m_protectNeutrals->value() / 100.0;
    p.colorRange = m_colorRangeUnbounded->isChecked() ? std::numeric_limits<double>::infinity() : m_colorRange->value();
    p.colorEdges = m_colorEdges->value();
    p.autoRun = m_autoRun->isChecked();
    return p;
}

namespace {
void selectData(QComboBox* box, const QString& value)
{
    const int index = box->findData(value);
    box->setCurrentIndex(index >= 0 ? index : 0);
}
}  // namespace

void ParametersPanel::setParameters(const StudioParameters& p)
{
    m_updating = true;
    selectData(m_space, p.shownValue("space"));
    m_palette->setValue(p.paletteSize);
    m_eps->setValue(p.eps);
    m_tau->setValue(p.tau);
    m_balanced->setChecked(p.balanced);
    selectData(m_reference, p.shownValue("reference-measure"));
    m_iterations->setValue(p.maxIterations);
    m_tolerance->setValue(p.tolerance);
    selectData(m_solver, p.solver);
    selectData(m_device, p.device);
    m_threads->setValue(p.threads);
    selectData(m_precision, p.shownValue("precision"));
    selectData(m_acceleration, p.shownValue("acceleration"));
    m_epsScaling->setValue(p.epsScalingRatio);
    m_epsScalingFactor->setValue(p.epsScalingFactor);
    m_strength->setValue(int(std::lround(p.strength * 100)));
    m_luminance->setChecked(p.preserveLuminance);
    m_smoothing->setValue(p.smoothing);
    m_paletteMatch->setValue(int(std::lround(p.paletteMatch * 100)));
    m_lightnessTransfer->setValue(int(std::lround(p.lightnessTransfer * 100)));
    m_luminanceIntensity->setValue(int(std::lround(p.luminanceIntensity * 100)));
    m_colorIntensity->setValue(int(std::lround(p.colorIntensity * 100)));
    m_neutralize->setChecked(p.neutralize);
    m_protectSkin->setValue(int(std::lround(p.protectSkin * 100)));
    m_protectNeutrals->setValue(int(std::lround(p.protectNeutrals * 100)));
    m_colorRangeUnbounded->setChecked(std::isinf(p.colorRange));
    if (std::isfinite(p.colorRange)) m_colorRange->setValue(p.colorRange);  // unbounded keeps the last number
    m_colorEdges->setValue(p.colorEdges);
    const StudioParameters defaults;
    if (p.luminanceIntensity != defaults.luminanceIntensity || p.colorIntensity != defaults.colorIntensity ||
        p.neutralize != defaults.neutralize || p.protectSkin != defaults.protectSkin ||
        p.protectNeutrals != defaults.protectNeutrals || p.colorRange != defaults.colorRange ||
        p.colorEdges != defaults.colorEdges)
        m_lookToggle->setChecked(true);  // show the controls that shape this look
    m_autoRun->setChecked(p.autoRun);
    m_updating = false;
    updateEnabled();
    emit parametersChanged();
}

void ParametersPanel::setAdvancedVisible(bool visible)
{
    if (m_advancedToggle->isChecked() != visible) m_advancedToggle->setChecked(visible);  // comes back here
    m_advancedToggle->setArrowType(visible ? Qt::DownArrow : Qt::RightArrow);
    m_advanced->setVisible(visible);
    emit advancedVisibilityChanged(visible);
}

bool ParametersPanel::advancedVisible() const { return m_advancedToggle->isChecked(); }

void ParametersPanel::setRunning(bool running)
{
    m_running = running;
    m_run->setEnabled(!running);
    m_cancel->setEnabled(running);
}

void ParametersPanel::updateEnabled()
{
    m_tau->setEnabled(!m_balanced->isChecked());
    m_threads->setEnabled(m_device->currentData().toString() == "cpu");
    m_epsScalingFactor->setEnabled(m_epsScaling->value() > 1);
    m_paletteMatch->setEnabled(m_smoothing->value() > 0);  // the match works through the smoothed field
    // The transfer moves a lightness axis, which linear RGB does not have (the working
    // space's helpers come with the parameter schema).
    const WorkingSpace space = parseWorkingSpace(m_space->currentData().toString().toStdString());
    m_lightnessTransfer->setEnabled(hasLightnessAxis(space));
    m_colorRange->setEnabled(!m_colorRangeUnbounded->isChecked());
    m_colorEdges->setEnabled(!m_colorRangeUnbounded->isChecked());
}

}  // namespace uot::ui
