#include "ui/library_panel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QVBoxLayout>

#include "ui/settings_library.h"

namespace uot::ui {

namespace {

// One list with its title and Save/Delete buttons.
QListWidget* addSection(QVBoxLayout* layout, const QString& title, const QString& tip, QPushButton*& save,
                        QPushButton*& remove)
{
    layout->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped())));
    auto* list = new QListWidget;
    list->setToolTip(tip);
    list->setMinimumHeight(48);
    list->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Expanding);
    layout->addWidget(list, 1);
    auto* row = new QHBoxLayout;
    save = new QPushButton(QObject::tr("Save Current..."));
    remove = new QPushButton(QObject::tr("Delete"));
    row->addWidget(save);
    row->addWidget(remove);
    layout->addLayout(row);
    return list;
}

}  // namespace

LibraryPanel::LibraryPanel(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 6);
    QPushButton *saveReference = nullptr, *removeReference = nullptr, *savePreset = nullptr, *removePreset = nullptr;
    m_references = addSection(layout, tr("References"),
                              tr("A reference image with its settings. Click a name to use both again."),
                              saveReference, removeReference);
    saveReference->setToolTip(tr("Save the current reference image and settings under a name."));
    m_presets = addSection(layout, tr("Presets"), tr("Saved settings. Click a name to apply them."), savePreset,
                           removePreset);
    savePreset->setToolTip(tr("Save the current settings under a name."));

    connect(m_references, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) { emit referenceChosen(item->text()); });
    connect(m_presets, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) { emit presetChosen(item->text()); });
    connect(saveReference, &QPushButton::clicked, this, &LibraryPanel::saveReferenceRequested);
    connect(savePreset, &QPushButton::clicked, this, &LibraryPanel::savePresetRequested);
    connect(removeReference, &QPushButton::clicked, this, [this] {
        if (auto* item = m_references->currentItem()) settings_library::removeReference(item->text());
        refresh();
    });
    connect(removePreset, &QPushButton::clicked, this, [this] {
        if (auto* item = m_presets->currentItem()) settings_library::removePreset(item->text());
        refresh();
    });
    refresh();
}

void LibraryPanel::refresh()
{
    m_references->clear();
    for (const QString& name : settings_library::referenceNames()) {
        m_references->addItem(name);
        if (const auto r = settings_library::reference(name)) m_references->item(m_references->count() - 1)->setToolTip(r->imagePath);
    }
    m_presets->clear();
    m_presets->addItems(settings_library::presetNames());
}

}  // namespace uot::ui
