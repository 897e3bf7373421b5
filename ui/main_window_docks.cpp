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
    m_parametersDock = makeDock(this, tr("Parameters"), "parametersDock", scroll);
    addDockWidget(Qt::LeftDockWidgetArea, m_parametersDock);

    m_library = new LibraryPanel;
    m_libraryDock = makeDock(this, tr("Library"), "libraryDock", verticallyScrolled(m_library));
    addDockWidget(Qt::LeftDockWidgetArea, m_libraryDock);
    connect(m_library, &LibraryPanel::presetChosen, this, &MainWindow::applyPreset);
    connect(m_library, &LibraryPanel::referenceChosen, this, &MainWindow::applyNamedReference);
    connect(m_library, &LibraryPanel::savePresetRequested, this, &MainWindow::askAndSavePreset);
    connect(m_library, &LibraryPanel::saveReferenceRequested, this, &MainWindow::askAndSaveReference);

    m_histogram = new HistogramView;
    m_histogramDock = makeDock(this, tr("Histogram"), "histogramDock", m_histogram);
    m_histogramDock->toggleViewAction()->setObjectName("histogramAction");
    addDockWidget(Qt::RightDockWidgetArea, m_histogramDock);

    m_statistics = new StatisticsPanel;
    m_statisticsDock = makeDock(this, tr("Statistics"), "statisticsDock", verticallyScrolled(m_statistics));
    addDockWidget(Qt::RightDockWidgetArea, m_statisticsDock);

    m_charts = new LiveCharts(LiveCharts::Layout::Row);
    m_chartsDock = makeDock(this, tr("Charts"), "chartsDock", m_charts);
    addDockWidget(Qt::BottomDockWidgetArea, m_chartsDock);

    m_comparison = new ComparisonView(m_worker.get());
    m_comparison->setJobFactory([this](const QString& a, const QString& b, bool concurrent) {
        return makeComparisonJob(m_source, m_reference, parameters(), a, b, concurrent);
    });
    m_comparisonDock = makeDock(this, tr("Comparison"), "comparisonDock", m_comparison);
    addDockWidget(Qt::BottomDockWidgetArea, m_comparisonDock);
    tabifyDockWidget(m_chartsDock, m_comparisonDock);
    m_chartsDock->raise();
    // The bottom docks open at about a third of the window the first time after start
    // or Reset Layout, however they are opened (Compare, View menu, toolbar), instead of
    // the half Qt gives a new dock; after that they keep the height the user gave them.
    for (QDockWidget* dock : {m_chartsDock, m_comparisonDock}) {
        connect(dock, &QDockWidget::visibilityChanged, this, [this, dock](bool visible) {
            if (!visible || dock->property("sized").toBool()) return;
            dock->setProperty("sized", true);
            QTimer::singleShot(0, this, [this, dock] {
                if (dock->isVisible()) resizeDocks({dock}, {height() / 3}, Qt::Vertical);
            });
        });
    }

    // Advanced: hidden at first start, one click away (toolbar, View menu).
    for (QDockWidget* dock : {m_statisticsDock, m_chartsDock, m_comparisonDock, m_histogramDock}) dock->hide();
    resizeDocks({m_parametersDock}, {300}, Qt::Horizontal);
}

void MainWindow::createToolBar()
{
    m_toolBar = addToolBar(tr("Main"));
    m_toolBar->setObjectName("mainToolBar");
    m_toolBar->setMovable(false);
    m_toolBar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    for (const char* name : std::initializer_list<const char*>{"openSourceAction", "openReferenceAction", "saveAction",
                                                               nullptr, "runAction",
                                                               "splitAction", "histogramAction", nullptr,
                                                               "advancedPanelsAction"}) {
        if (!name) m_toolBar->addSeparator();
        else m_toolBar->addAction(action(QString::fromLatin1(name)));
    }
}

void MainWindow::createStatusBar()
{
    m_phase = new QLabel(tr("Ready"));
    m_phase->setMinimumWidth(1);  // long messages must not widen the window
    m_imageInfo = new QLabel;
    m_imageInfo->setToolTip(tr("Bit depth and color profile of the source image. Images are converted from their\n"
                               "profile to sRGB when read; results are saved in the profile chosen in Save Options (sRGB by default)."));
    m_zoomLabel = new QLabel;
    m_zoomLabel->setObjectName("zoomLabel");
    m_zoomLabel->setToolTip(tr("Zoom of the result (View > Zoom In: Ctrl++ or Ctrl+=)."));
    m_progress = new QProgressBar;
    m_progress->setMinimumWidth(340);
    m_progress->setRange(0, 0);
    m_progress->setVisible(false);
    statusBar()->addWidget(m_phase, 1);
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_imageInfo);
    statusBar()->addPermanentWidget(m_zoomLabel);
    connect(m_resultView, &ImageView::zoomChanged, this, [this] { m_zoomLabel->setText(m_resultView->zoomText()); });
}

QDockWidget* MainWindow::dock(const QString& objectName) const
{
    return findChild<QDockWidget*>(objectName, Qt::FindDirectChildrenOnly);
}

void MainWindow::setAdvancedPanelsVisible(bool visible)
{
    const bool firstTime = visible && m_statisticsDock->isHidden() && !m_statisticsDock->property("sized").toBool();
    m_statisticsDock->setVisible(visible);
    m_chartsDock->setVisible(visible);
    if (firstTime) {
        // Wide enough for the statistics' values (they elide past that) the first time it opens.
        m_statisticsDock->setProperty("sized", true);
        QTimer::singleShot(0, this, [this] {
            if (m_statisticsDock->isVisible() && m_statisticsDock->width() < kStatisticsWidth)
                resizeDocks({m_statisticsDock}, {kStatisticsWidth}, Qt::Horizontal);
        });
    }
    if (!visible) m_comparisonDock->hide();
    if (m_advancedAction->isChecked() != visible) m_advancedAction->setChecked(visible);
}

void MainWindow::resetLayout()
{
    restoreState(m_defaultLayout);
    for (QDockWidget* dock : {m_statisticsDock, m_chartsDock, m_comparisonDock}) dock->setProperty("sized", false);
    for (QDockWidget* dock : {m_statisticsDock, m_chartsDock, m_comparisonDock, m_histogramDock}) dock->hide();
    m_parametersDock->show();
    m_libraryDock->show();
    m_toolBar->show();
    resizeDocks({m_parametersDock}, {300}, Qt::Horizontal);
    m_parameters->setAdvancedVisible(false);
    m_advancedAction->setChecked(false);
    for (ImageView* view : {m_sourceView, m_referenceView, m_resultView}) view->fit();
}

}  // namespace uot::ui
