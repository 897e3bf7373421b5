#pragma once
// The Regions dock: the session's regions (up to four masks, each with its own
// reference; the current mask becomes a region with Add) and the references
// pooled into one palette, with their weights, as thumbnails.

#include <QWidget>

QT_BEGIN_NAMESPACE
class QDoubleSpinBox;
class QListWidget;
QT_END_NAMESPACE

namespace uot::ui {

class StudioSession;

class RegionsDock final : public QWidget {
    Q_OBJECT
public:
    explicit RegionsDock(StudioSession* session, QWidget* parent = nullptr);
    Q_DISABLE_COPY_MOVE(RegionsDock)

    QListWidget* regionList() const { return m_regions; }
    QListWidget* referenceList() const { return m_references; }

private:
    void showRegions();
    void showReferences();
    void showWeight();

    StudioSession* m_session;
    QListWidget* m_regions = nullptr;
    QListWidget* m_references = nullptr;
    QDoubleSpinBox* m_weight = nullptr;
};

}  // namespace uot::ui
