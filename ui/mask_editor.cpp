#include "ui/mask_editor.h"

#include <QButtonGroup>
#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include "ui/image_view.h"
#include "ui/studio_session.h"

namespace uot::ui {

namespace {

QDoubleSpinBox* unitSpin(double value, double step = 0.05)
{
    auto* spin = new QDoubleSpinBox;
    spin->setRange(0.0, 1.0);
    spin->setDecimals(2);
    spin->setSingleStep(step);
    spin->setValue(value);
    return spin;
}

QSpinBox* intSpin(int low, int high, int value, const QString& suffix)
{
    auto* spin = new QSpinBox;
    spin->setRange(low, high);
    spin->setValue(value);
    spin->setSuffix(suffix);
    return spin;
}

}  // namespace

MaskEditor::MaskEditor(StudioSession* session, ImageView* canvas, QWidget* parent)
    : QWidget(parent), m_session(session), m_canvas(canvas)
{
    auto* layout = new QVBoxLayout(this);

    auto* toolRow = new QHBoxLayout;
    m_tools = new QButtonGroup(this);
    const std::pair<Tool, QString> tools[] = {{Tool::Pan, tr("Pan")}, {Tool::Brush, tr("Brush")},
                                              {Tool::Eraser, tr("Eraser")}, {Tool::Eyedropper, tr("Pick")}};
    for (const auto& [tool, text] : tools) {
        auto* button = new QToolButton;
        button->setText(text);
        button->setCheckable(true);
        button->setObjectName(QStringLiteral("maskTool%1").arg(int(tool)));
        m_tools->addButton(button, int(tool));
        toolRow->addWidget(button);
    }
    m_tools->button(int(Tool::Pan))->setChecked(true);
    m_tools->button(int(Tool::Brush))->setToolTip(tr("Paint the mask on the source pane (white: the transfer)."));
    m_tools->button(int(Tool::Eraser))->setToolTip(tr("Erase from the mask (black: the source is kept)."));
    m_tools->button(int(Tool::Eyedropper))->setToolTip(tr("Pick the color of the color range on the source pane."));
    connect(m_tools, &QButtonGroup::idClicked, this, [this](int id) { setTool(Tool(id)); });
    layout->addLayout(toolRow);

    auto* brushForm = new QFormLayout;
    m_size = intSpin(1, 4000, 120, tr(" px"));
    m_hardness = intSpin(0, 100, 50, tr(" %"));
    m_opacity = intSpin(1, 100, 100, tr(" %"));
    brushForm->addRow(tr("Size"), m_size);
    m_canvas->setBrushDiameter(m_size->value());
    connect(m_size, &QSpinBox::valueChanged, m_canvas, [this](int size) { m_canvas->setBrushDiameter(size); });
    brushForm->addRow(tr("Hardness"), m_hardness);
    brushForm->addRow(tr("Opacity"), m_opacity);
    layout->addLayout(brushForm);

    auto* luma = new QGroupBox(tr("Luminance range"));
    auto* lumaForm = new QFormLayout(luma);
    m_low = unitSpin(0.6);
    m_high = unitSpin(1.0);
    m_lumaSoftness = unitSpin(0.1);
    lumaForm->addRow(tr("From"), m_low);
    lumaForm->addRow(tr("To"), m_high);
    lumaForm->addRow(tr("Softness"), m_lumaSoftness);
    auto* lumaButton = new QPushButton(tr("Mask Luminance"));
    lumaButton->setObjectName("maskLuminanceButton");
    lumaForm->addRow(lumaButton);
    connect(lumaButton, &QPushButton::clicked, this,
            [this] { m_session->maskFromLuminance(m_low->value(), m_high->value(), m_lumaSoftness->value()); });
    layout->addWidget(luma);

    auto* color = new QGroupBox(tr("Color range"));
    auto* colorForm = new QFormLayout(color);
    m_swatch = new QLabel;
    m_swatch->setMinimumSize(48, 18);
    m_swatch->setToolTip(tr("The color picked with Pick on the source pane."));
    m_tolerance = unitSpin(0.15, 0.01);
    m_colorSoftness = unitSpin(0.1, 0.01);
    colorForm->addRow(tr("Color"), m_swatch);
    colorForm->addRow(tr("Tolerance"), m_tolerance);
    colorForm->addRow(tr("Softness"), m_colorSoftness);
    auto* colorButton = new QPushButton(tr("Mask Color"));
    colorButton->setObjectName("maskColorButton");
    colorForm->addRow(colorButton);
    connect(colorButton, &QPushButton::clicked, this,
            [this] { m_session->maskFromColor(m_color, m_tolerance->value(), m_colorSoftness->value()); });
    layout->addWidget(color);

    auto* featherRow = new QHBoxLayout;
    m_feather = intSpin(1, 256, 12, tr(" px"));
    auto* feather = new QPushButton(tr("Feather"));
    feather->setObjectName("maskFeatherButton");
    feather->setToolTip(tr("Soften the mask's edges along the source's color edges (as uot recolor --mask-feather)."));
    featherRow->addWidget(m_feather);
    featherRow->addWidget(feather, 1);
    connect(feather, &QPushButton::clicked, this, [this] { m_session->featherMask(m_feather->value()); });
    layout->addLayout(featherRow);

    auto* row = new QHBoxLayout;
    auto* sky = new QPushButton(tr("Sky"));
    sky->setToolTip(tr("The automatic sky mask: bright, bluish or neutral pixels reached from the top edge without "
                       "crossing an edge."));
    auto* open = new QPushButton(tr("Open..."));
    auto* save = new QPushButton(tr("Save..."));
    auto* clear = new QPushButton(tr("Clear"));
    for (QPushButton* b : {sky, open, save, clear}) row->addWidget(b);
    connect(sky, &QPushButton::clicked, m_session, &StudioSession::maskFromSky);
    connect(open, &QPushButton::clicked, this, &MaskEditor::openMask);
    connect(save, &QPushButton::clicked, this, &MaskEditor::saveMask);
    connect(clear, &QPushButton::clicked, m_session, &StudioSession::clearMask);
    layout->addLayout(row);
    m_overlay = new QCheckBox(tr("Show the mask on the source"));
    m_overlay->setObjectName("maskOverlayCheck");
    m_overlay->setChecked(true);
    connect(m_overlay, &QCheckBox::toggled, this, &MaskEditor::showMask);
    layout->addWidget(m_overlay);
    layout->addStretch(1);

    connect(m_session, &StudioSession::maskChanged, this, &MaskEditor::showMask);
    connect(m_session, &StudioSession::sourceChanged, this, &MaskEditor::showMask);
    connect(m_canvas, &ImageView::strokePainted, this,
            [this](const QVector<QPointF>& points) { m_session->paintMask(points, brush()); });
    connect(m_canvas, &ImageView::pixelPicked, this, &MaskEditor::pick);
    pick(QPointF(-1, -1));  // the swatch of the default color
}

void MaskEditor::setTool(Tool tool)
{
    if (QAbstractButton* b = m_tools->button(int(tool))) b->setChecked(true);
    m_canvas->setTool(tool == Tool::Pan          ? ImageView::Tool::Pan
                      : tool == Tool::Eyedropper ? ImageView::Tool::Pick
                                                 : ImageView::Tool::Paint);
}

MaskBrush MaskEditor::brush() const
{
    MaskBrush b;
    b.size = m_size->value();
    b.hardness = m_hardness->value() / 100.0;
    b.opacity = m_opacity->value() / 100.0;
    b.erase = m_tools->checkedId() == int(Tool::Eraser);
    return b;
}

void MaskEditor::setOverlayVisible(bool visible) { m_overlay->setChecked(visible); }

QImage MaskEditor::overlayFor(const QImage& mask)
{
    if (mask.isNull()) return {};
    const QImage gray = mask.convertToFormat(QImage::Format_Grayscale8);
    QImage out(gray.size(), QImage::Format_ARGB32_Premultiplied);
    for (int y = 0; y < gray.height(); ++y) {
        const uchar* in = gray.constScanLine(y);
        auto* px = reinterpret_cast<QRgb*>(out.scanLine(y));
        for (int x = 0; x < gray.width(); ++x) {
            const int a = in[x] * 110 / 255;  // at most about 43 % red over the photo
            px[x] = qRgba(a * 255 / 255, a * 40 / 255, a * 40 / 255, a);
        }
    }
    return out;
}

void MaskEditor::showMask()
{
    m_canvas->setOverlay(m_overlay->isChecked() ? overlayFor(m_session->maskImage()) : QImage());
}

void MaskEditor::pick(const QPointF& point)
{
    const QColor picked = m_session->sourceColorAt(point);
    if (picked.isValid()) m_color = picked;
    m_swatch->setStyleSheet(QStringLiteral("background: %1; border: 1px solid palette(mid);").arg(m_color.name()));
    m_swatch->setToolTip(tr("Picked color %1").arg(m_color.name()));
}

void MaskEditor::openMask()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Open Mask"), {}, tr("Images (*.png *.tif *.tiff *.jpg *.jpeg *.webp *.bmp)"));
    if (!path.isEmpty()) m_session->loadMask(path);
}

void MaskEditor::saveMask()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Save Mask"), QStringLiteral("mask.png"), tr("PNG (*.png);;TIFF (*.tif)"));
    if (!path.isEmpty()) m_session->saveMask(path);
}

}  // namespace uot::ui
