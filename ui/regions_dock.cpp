#include "ui/regions_dock.h"

#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QListWidget>
#include <QPushButton>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

#include "ui/studio_session.h"

namespace uot::ui {

namespace {

constexpr int kThumbnail = 56;

QIcon thumbnail(const LoadedImage& image)
{
    if (!image.image) return {};
    return QIcon(QPixmap::fromImage(toQImage(*image.image).scaled(kThumbnail, kThumbnail, Qt::KeepAspectRatio,
                                                                    Qt::SmoothTransformation)));
}

QString openImage(QWidget* parent, const QString& title)
{
    return QFileDialog::getOpenFileName(parent, title, {}, QObject::tr("Images (*.png *.tif *.tiff *.jpg *.jpeg *.webp *.bmp)"));
}

QListWidget* thumbnailList()
{
    auto* list = new QListWidget;
    list->setIconSize(QSize(kThumbnail, kThumbnail));
    list->setMinimumHeight(2 * kThumbnail + 12);
    return list;
}

}  // namespace

RegionsDock::RegionsDock(StudioSession* session, QWidget* parent) : QWidget(parent), m_session(session)
{
    auto* layout = new QVBoxLayout(this);
    auto* regions = new QGroupBox(tr("Regions (each mask with its own reference)"));
    auto* regionsLayout = new QVBoxLayout(regions);
    m_regions = thumbnailList();
    m_regions->setObjectName("regionList");
    regionsLayout->addWidget(m_regions);
    auto* regionButtons = new QHBoxLayout;
    auto* addRegion = new QPushButton(tr("Mask to Region..."));
    addRegion->setToolTip(tr("The current mask becomes a region; choose the reference its colors come from."));
    auto* removeRegion = new QPushButton(tr("Remove"));
    regionButtons->addWidget(addRegion);
    regionButtons->addWidget(removeRegion);
    regionsLayout->addLayout(regionButtons);
    auto* useSettings = new QPushButton(tr("Use Current Settings"));
    useSettings->setObjectName("regionSettingsButton");
    useSettings->setToolTip(tr("Give the selected region the settings of the Parameters panel. Each region keeps its own "
                               "settings (those of the moment it was made); while there are regions, Run uses them."));
    regionsLayout->addWidget(useSettings);
    connect(useSettings, &QPushButton::clicked, this,
            [this] { m_session->setRegionParameters(m_regions->currentRow(), m_session->parameters()); });
    layout->addWidget(regions);
    connect(addRegion, &QPushButton::clicked, this, [this] {
        const QString path = openImage(this, tr("Reference of the Region"));
        if (!path.isEmpty()) m_session->addRegion(path);
    });
    connect(removeRegion, &QPushButton::clicked, this, [this] { m_session->removeRegion(m_regions->currentRow()); });

    auto* references = new QGroupBox(tr("References (pooled into one palette)"));
    auto* referencesLayout = new QVBoxLayout(references);
    m_references = thumbnailList();
    m_references->setObjectName("referenceList");
    referencesLayout->addWidget(m_references);
    auto* weightForm = new QFormLayout;
    m_weight = new QDoubleSpinBox;
    m_weight->setRange(0.05, 100.0);
    m_weight->setDecimals(2);
    m_weight->setSingleStep(0.25);
    m_weight->setValue(1.0);
    m_weight->setToolTip(tr("The selected reference's share of the pooled palette, relative to the others."));
    weightForm->addRow(tr("Weight"), m_weight);
    referencesLayout->addLayout(weightForm);
    auto* referenceButtons = new QHBoxLayout;
    auto* addReference = new QPushButton(tr("Add Reference..."));
    auto* removeReference = new QPushButton(tr("Remove"));
    referenceButtons->addWidget(addReference);
    referenceButtons->addWidget(removeReference);
    referencesLayout->addLayout(referenceButtons);
    layout->addWidget(references);
    layout->addStretch(1);
    connect(addReference, &QPushButton::clicked, this, [this] {
        const QString path = openImage(this, tr("Add Reference"));
        if (!path.isEmpty()) m_session->addReference(path);
    });
    connect(removeReference, &QPushButton::clicked, this,
            [this] { m_session->removeReference(m_references->currentRow()); });
    connect(m_weight, &QDoubleSpinBox::valueChanged, this, [this](double weight) {
        if (m_references->currentRow() >= 0) m_session->setReferenceWeight(m_references->currentRow(), weight);
    });
    connect(m_references, &QListWidget::currentRowChanged, this, &RegionsDock::showWeight);

    connect(m_session, &StudioSession::regionsChanged, this, &RegionsDock::showRegions);
    connect(m_session, &StudioSession::referencesChanged, this, &RegionsDock::showReferences);
    connect(m_session, &StudioSession::referenceChanged, this, &RegionsDock::showReferences);
    showRegions();
    showReferences();
}

void RegionsDock::showRegions()
{
    m_regions->clear();
    const int row = m_regions->currentRow();
    for (const StudioRegion& region : m_session->regions())
        m_regions->addItem(new QListWidgetItem(thumbnail(region.reference),
                                               tr("%1: %2\nfade %3 %, %4 colors")
                                                   .arg(region.name, QFileInfo(region.reference.path).fileName())
                                                   .arg(std::lround(region.parameters.strength * 100))
                                                   .arg(region.parameters.paletteSize)));
    m_regions->setCurrentRow(std::min(row, m_regions->count() - 1));
}

void RegionsDock::showReferences()
{
    const int row = m_references->currentRow();
    m_references->clear();
    if (!m_session->hasReference()) return;
    auto item = [this](const LoadedImage& image, double weight) {
        m_references->addItem(new QListWidgetItem(
            thumbnail(image), tr("%1  (weight %2)").arg(QFileInfo(image.path).fileName()).arg(weight, 0, 'g', 3)));
    };
    item(m_session->reference(), m_session->mainReferenceWeight());
    for (const ExtraReference& extra : m_session->extraReferences()) item(extra.image, extra.weight);
    m_references->setCurrentRow(std::min(row, m_references->count() - 1));
}

void RegionsDock::showWeight()
{
    const int row = m_references->currentRow();
    if (row < 0) return;
    const QSignalBlocker block(m_weight);
    m_weight->setValue(row == 0 ? m_session->mainReferenceWeight() : m_session->extraReferences()[row - 1].weight);
}

}  // namespace uot::ui
