#include "ui/library_panel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QPushButton>
#include <QVBoxLayout>

#include "ui/settings_library.h"

namespace uot::ui {

namespace {

// A list that says what it is for while it is empty (so that a blank box does not
// leave a newcomer guessing), drawn inside it: the panel does not grow.
class HintedList final : public QListWidget {
public:
    explicit HintedList(const QString& hint) : m_hint(hint) {}

protected:
    void paintEvent(QPaintEvent* event) override
    {
        QListWidget::paintEvent(event);
        if (count() > 0) return;
        QPainter painter(viewport());
        painter.setPen(palette().color(QPalette::PlaceholderText));
        painter.drawText(viewport()->rect().adjusted(6, 4, -6, -4), Qt::AlignTop | Qt::AlignLeft | Qt::TextWordWrap, m_hint);
    }

private:
    QString m_hint;
};

// One list with its title and Save/Delete buttons.
QListWidget* addSection(QVBoxLayout* layout, const QString& title, const QString& tip, const QString& emptyHint,
                        QPushButton*& save, QPushButton*& remove)
{
    layout->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped())));
    auto* list = new HintedList(emptyHint);
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
                              tr("None yet. When you like a look, Save Current keeps this reference image and its "
                                 "settings under a name."),
                              saveReference, removeReference);
    saveReference->setToolTip(tr("Save the current reference image and settings under a name."));
    m_presets = addSection(layout, tr("Presets"), tr("Saved settings. Click a name to apply them."),
                           tr("None yet. Save Current keeps the settings (not the images) under a name."), savePreset,
                           removePreset);
    m_removeReference = removeReference;
    m_removePreset = removePreset;
    connect(m_references, &QListWidget::currentItemChanged, this, [this] { refreshButtons(); });
    connect(m_presets, &QListWidget::currentItemChanged, this, [this] { refreshButtons(); });
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
    refreshButtons();
}

void LibraryPanel::refreshButtons()
{
    m_removeReference->setEnabled(m_references->currentItem() != nullptr);
    m_removePreset->setEnabled(m_presets->currentItem() != nullptr);
}

}  // namespace uot::ui
