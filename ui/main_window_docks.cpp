// MainWindow: the docks, the toolbar and the status bar, and the layout a
// first start shows (images and the short parameters panel; the engineering
// docks hidden, one click away).
#include "ui/main_window.h"

#include <QAction>
#include <QDockWidget>
#include <QLabel>
#include <QProgressBar>
#include <QScrollArea>
#include <QScrollBar>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>

#include "ui/comparison_view.h"
#include "ui/histogram_view.h"
#include "ui/image_view.h"
#include "ui/library_panel.h"
#include "ui/live_charts.h"
#include "ui/mask_editor.h"
#include "ui/regions_dock.h"
#include "ui/scopes_dock.h"
#include "ui/parameters_panel.h"
#include "ui/statistics_panel.h"
#include "ui/wheel_guard.h"

namespace uot::ui {

namespace {

// Width the Statistics dock opens at, so that its values show whole at 1280 pixels.
constexpr int kStatisticsWidth = 400;
// A panel in a vertical scroll area, so that its dock can be shorter than the
// panel (at 1280x720 the Statistics panel is taller than its share).
QScrollArea* verticallyScrolled(QWidget* panel)
{
    auto* scroll = new QScrollArea;
    scroll->setWidget(panel);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    scroll->setMinimumWidth(panel->minimumSizeHint().width() + scroll->verticalScrollBar()->sizeHint().width());
    return scroll;
}

template <class Widget>
Widget* named(Widget* widget, const char* name)
{
    widget->setObjectName(QString::fromLatin1(name));
    return widget;
}

QDockWidget* makeDock(QMainWindow* window, const QString& title, const char* name, QWidget* content)
{
    auto* dock = new QDockWidget(title, window);
    dock->setObjectName(QString::fromLatin1(name));
    dock->setWidget(content);
    return dock;
}

}  // namespace

void MainWindow::createDocks()
{
    m_parameters = new ParametersPanel;
    installWheelGuard(m_parameters);
    QScrollArea* scroll = verticallyScrolled(m_parameters);
    scroll->setMinimumWidth(m_parameters->sizeHint().width() + scroll->verticalScrollBar()->sizeHint().width());
    // The short panel (advanced settings folded) always fits without scrolling.
    scroll->setMinimumHeight(m_parameters->sizeHint().height());
    QDockWidget* parametersDock = makeDock(this, tr("Parameters"), "parametersDock", scroll);
    addDockWidget(Qt::LeftDockWidgetArea, parametersDock);

    auto* library = named(new LibraryPanel, "library");
    addDockWidget(Qt::LeftDockWidgetArea, makeDock(this, tr("Library"), "libraryDock", verticallyScrolled(library)));
    connect(library, &LibraryPanel::presetChosen, this, &MainWindow::applyPreset);
    connect(library, &LibraryPanel::referenceChosen, this, &MainWindow::applyNamedReference);
    connect(library, &LibraryPanel::savePresetRequested, this, &MainWindow::askAndSavePreset);
    connect(library, &LibraryPanel::saveReferenceRequested, this, &MainWindow::askAndSaveReference);

    QDockWidget* histogramDock = makeDock(this, tr("Histogram"), "histogramDock", named(new HistogramView, "histogram"));
    histogramDock->toggleViewAction()->setObjectName("histogramAction");
    addDockWidget(Qt::RightDockWidgetArea, histogramDock);

    QDockWidget* statisticsDock = makeDock(this, tr("Statistics"), "statisticsDock", verticallyScrolled(named(new StatisticsPanel, "statistics")));
    addDockWidget(Qt::RightDockWidgetArea, statisticsDock);

    QDockWidget* chartsDock = makeDock(this, tr("Charts"), "chartsDock", named(new LiveCharts(LiveCharts::Layout::Row), "charts"));
    addDockWidget(Qt::BottomDockWidgetArea, chartsDock);

    auto* comparison = named(new ComparisonView(m_session->worker()), "comparison");
    comparison->setJobFactory([this](const QString& a, const QString& b, bool concurrent) {
        return m_session->comparisonJob(a, b, concurrent);
    });
    QDockWidget* comparisonDock = makeDock(this, tr("Comparison"), "comparisonDock", comparison);
    addDockWidget(Qt::BottomDockWidgetArea, comparisonDock);
    tabifyDockWidget(chartsDock, comparisonDock);
    chartsDock->raise();
    // The bottom docks open at about a third of the window the first time after start
    // or Reset Layout, however they are opened (Compare, View menu, toolbar), instead of
    // the half Qt gives a new dock; after that they keep the height the user gave them.
    for (QDockWidget* dock : {chartsDock, comparisonDock}) {
        connect(dock, &QDockWidget::visibilityChanged, this, [this, dock](bool visible) {
            if (!visible || dock->property("sized").toBool()) return;
            dock->setProperty("sized", true);
            QTimer::singleShot(0, this, [this, dock] {
                if (dock->isVisible()) resizeDocks({dock}, {height() / 3}, Qt::Vertical);
            });
        });
    }

    // Masks, regions and scopes: on the right, hidden at first start (View menu).
    QDockWidget* maskDock = makeDock(this, tr("Mask"), "maskDock",
                                     verticallyScrolled(named(new MaskEditor(m_session, m_sourceView), "maskEditor")));
    addDockWidget(Qt::RightDockWidgetArea, maskDock);
    QDockWidget* regionsDock = makeDock(this, tr("Regions and References"), "regionsDock",
                                        verticallyScrolled(named(new RegionsDock(m_session), "regions")));
    addDockWidget(Qt::RightDockWidgetArea, regionsDock);
    QDockWidget* scopesDock = makeDock(this, tr("Scopes"), "scopesDock", named(new ScopesDock(m_session), "scopes"));
    addDockWidget(Qt::RightDockWidgetArea, scopesDock);

    // Advanced: hidden at first start, one click away (toolbar, View menu).
    for (QDockWidget* dock : {statisticsDock, chartsDock, comparisonDock, histogramDock, maskDock, regionsDock, scopesDock})
        dock->hide();
    resizeDocks({parametersDock}, {300}, Qt::Horizontal);
}

void MainWindow::createToolBar()
{
    QToolBar* toolBar = addToolBar(tr("Main"));
    toolBar->setObjectName("mainToolBar");
    toolBar->setMovable(false);
    toolBar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    for (const char* name : std::initializer_list<const char*>{"openSourceAction", "openReferenceAction", "saveAction",
                                                               nullptr, "runAction",
                                                               "splitAction", "histogramAction", nullptr,
                                                               "advancedPanelsAction"}) {
        if (!name) toolBar->addSeparator();
        else toolBar->addAction(action(QString::fromLatin1(name)));
    }
}

void MainWindow::createStatusBar()
{
    m_phase = new QLabel(tr("Ready"));
    m_phase->setMinimumWidth(1);  // long messages must not widen the window
    auto* imageInfo = new QLabel;
    imageInfo->setObjectName("imageInfoLabel");
    imageInfo->setToolTip(tr("Bit depth and color profile of the source image. Images are converted from their\n"
                          "profile to sRGB when read; results are saved in the profile chosen in Save Options (sRGB by default)."));
    auto* zoomLabel = new QLabel;
    zoomLabel->setObjectName("zoomLabel");
    zoomLabel->setToolTip(tr("Zoom of the result (View > Zoom In: Ctrl++ or Ctrl+=)."));
    m_progress = new QProgressBar;
    m_progress->setMinimumWidth(340);
    m_progress->setRange(0, 0);
    m_progress->setVisible(false);
    statusBar()->addWidget(m_phase, 1);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(imageInfo);
    statusBar()->addPermanentWidget(zoomLabel);
    connect(m_resultView, &ImageView::zoomChanged, this, [this, zoomLabel] { zoomLabel->setText(m_resultView->zoomText()); });
}

// The panels in the docks, found by the names createDocks gives them.
StatisticsPanel* MainWindow::statisticsPanel() const { return part<StatisticsPanel>("statistics"); }
LiveCharts* MainWindow::charts() const { return part<LiveCharts>("charts"); }
ComparisonView* MainWindow::comparisonView() const { return part<ComparisonView>("comparison"); }
LibraryPanel* MainWindow::libraryPanel() const { return part<LibraryPanel>("library"); }
HistogramView* MainWindow::histogramView() const { return part<HistogramView>("histogram"); }
MaskEditor* MainWindow::maskEditor() const { return part<MaskEditor>("maskEditor"); }
RegionsDock* MainWindow::regionsDock() const { return part<RegionsDock>("regions"); }
ScopesDock* MainWindow::scopesDock() const { return part<ScopesDock>("scopes"); }
QLabel* MainWindow::imageInfoLabel() const { return part<QLabel>("imageInfoLabel"); }

QDockWidget* MainWindow::dock(const QString& objectName) const
{
    return findChild<QDockWidget*>(objectName, Qt::FindDirectChildrenOnly);
}

void MainWindow::setAdvancedPanelsVisible(bool visible)
{
    QDockWidget* statistics = dock(QStringLiteral("statisticsDock"));
    const bool firstTime = visible && statistics->isHidden() && !statistics->property("sized").toBool();
    statistics->setVisible(visible);
    dock(QStringLiteral("chartsDock"))->setVisible(visible);
    if (firstTime) {
        // Wide enough for the statistics' values (they elide past that) the first time it opens.
        statistics->setProperty("sized", true);
        QTimer::singleShot(0, this, [this, statistics] {
            if (statistics->isVisible() && statistics->width() < kStatisticsWidth)
                resizeDocks({statistics}, {kStatisticsWidth}, Qt::Horizontal);
        });
    }
    if (!visible) dock(QStringLiteral("comparisonDock"))->hide();
    QAction* advanced = action(QStringLiteral("advancedPanelsAction"));
    if (advanced->isChecked() != visible) advanced->setChecked(visible);
}

void MainWindow::resetLayout()
{
    restoreState(m_defaultLayout);
    QDockWidget* parameters = dock(QStringLiteral("parametersDock"));
    const QList<QDockWidget*> advanced = {dock(QStringLiteral("statisticsDock")), dock(QStringLiteral("chartsDock")),
                                          dock(QStringLiteral("comparisonDock"))};
    for (QDockWidget* d : advanced) d->setProperty("sized", false);
    for (QDockWidget* d : advanced) d->hide();
    for (const char* name : {"histogramDock", "maskDock", "regionsDock", "scopesDock"}) dock(QString::fromLatin1(name))->hide();
    parameters->show();
    dock(QStringLiteral("libraryDock"))->show();
    part<QToolBar>("mainToolBar")->show();
    resizeDocks({parameters}, {300}, Qt::Horizontal);
    m_parameters->setAdvancedVisible(false);
    action(QStringLiteral("advancedPanelsAction"))->setChecked(false);
    for (ImageView* view : {m_sourceView, m_referenceView, m_resultView}) view->fit();
}

}  // namespace uot::ui
