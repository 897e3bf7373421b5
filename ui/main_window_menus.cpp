// MainWindow: the menus. Each entry is one line of createActions(): menu,
// object name (tests and the toolbar find actions by it), text, shortcuts and
// what it does. To add an entry, add one such line where it belongs.
#include "ui/main_window.h"
#include "ui/lut_actions.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QKeySequence>
#include <QMenu>
#include <QMenuBar>
#include <QSignalBlocker>
#include <QToolBar>
#include <QUndoStack>

#include "ui/cache_simulation_row.h"
#include "ui/image_view.h"
#include "ui/statistics_panel.h"

namespace uot::ui {

void MainWindow::createActions()
{
    // One menu entry: its shortcuts are shown in the menu (the first one) and all work.
    auto entry = [this](QMenu* menu, const char* name, const QString& text, const QList<QKeySequence>& keys,
                        auto&& slot) -> QAction* {
        QAction* a = menu->addAction(text, this, std::forward<decltype(slot)>(slot));
        a->setObjectName(QString::fromLatin1(name));
        QList<QKeySequence> unique;  // a platform's standard key may repeat one given: that would be ambiguous
        for (const QKeySequence& key : keys)
            if (!key.isEmpty() && !unique.contains(key)) unique << key;
        a->setShortcuts(unique);
        return a;
    };
    using K = QKeySequence;

    auto addMenu = [this](const QString& title, const char* name) {
        QMenu* menu = menuBar()->addMenu(title);
        menu->setObjectName(QString::fromLatin1(name));
        return menu;
    };
    QMenu* fileMenu = addMenu(tr("&File"), "fileMenu");
    entry(fileMenu, "openSourceAction", tr("Open &Source..."), {K::Open}, [this] {
        const QString path = openDialog(tr("Open Source"), QStringLiteral("source"));
        if (!path.isEmpty()) openSource(path);
    });
    entry(fileMenu, "openReferenceAction", tr("Open &Reference..."), {K(tr("Ctrl+Shift+O"))}, [this] {
        const QString path = openDialog(tr("Open Reference"), QStringLiteral("reference"));
        if (!path.isEmpty()) openReference(path);
    });
    createClipActions(fileMenu);
    fileMenu->addMenu(tr("Recent Files"))->setObjectName("recentMenu");
    fileMenu->addSeparator();
    entry(fileMenu, "saveAction", tr("&Save Result"), {K(tr("Ctrl+S"))}, [this] { save(); })->setEnabled(false);
    entry(fileMenu, "saveAsAction", tr("Save Result &As..."), {K(tr("Ctrl+Shift+S"))}, [this] { saveAs(); })
        ->setEnabled(false);
    fileMenu->addSeparator();
    entry(fileMenu, "batchAction", tr("&Batch Recolor..."), {K(tr("Ctrl+B"))}, [this] { openBatchDialog(); });
    m_lut = new LutActions(m_session, m_resultView, m_options.interactive, this);
    fileMenu->addAction(m_lut->exportAction());
    fileMenu->addSeparator();
    entry(fileMenu, "quitAction", tr("&Quit"), {K(tr("Ctrl+Q"))}, [this] { close(); });

    QMenu* editMenu = addMenu(tr("&Edit"), "editMenu");
    QAction* undo = undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setObjectName("undoAction");
    undo->setShortcuts(QKeySequence::Undo);
    QAction* redo = undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setObjectName("redoAction");
    redo->setShortcuts({K(tr("Ctrl+Shift+Z")), K(tr("Ctrl+Y"))});
    editMenu->addActions({undo, redo});
    editMenu->addSeparator();
    entry(editMenu, "copySettingsAction", tr("&Copy Settings"), {K(tr("Ctrl+Shift+C"))}, [this] { copySettings(); });
    entry(editMenu, "pasteSettingsAction", tr("&Paste Settings"), {K(tr("Ctrl+Shift+V"))}, [this] { pasteSettings(); });
    entry(editMenu, "savePresetAction", tr("Save as Pr&eset..."), {}, [this] { askAndSavePreset(); });
    entry(editMenu, "saveReferenceAction", tr("Save Reference with Se&ttings..."), {}, [this] { askAndSaveReference(); });
    editMenu->addSeparator();
    entry(editMenu, "swapAction", tr("S&wap Source and Reference"), {K(tr("Ctrl+Shift+X"))}, [this] { swapImages(); });
    entry(editMenu, "resetParametersAction", tr("&Reset Parameters"), {}, [this] { m_session->resetParameters(); });

    QMenu* runMenu = addMenu(tr("&Run"), "runMenu");
    entry(runMenu, "runAction", tr("&Run"), {K(tr("Ctrl+R"))}, [this] { run(); });
    entry(runMenu, "cancelAction", tr("&Cancel"), {K(Qt::Key_Escape)}, [this] { cancel(); });
    entry(runMenu, "compareAction", tr("Co&mpare Variants..."), {K(tr("Ctrl+K"))}, [this] { compare(); });
    runMenu->addSeparator();
    entry(runMenu, "simulateCachesAction", tr("&Simulate CPU Caches (cachegrind)"), {}, [this] {
        QDockWidget* statistics = dock(QStringLiteral("statisticsDock"));
        statistics->show();
        statistics->raise();
        statisticsPanel()->cacheSimulation()->start();
    });

    QMenu* viewMenu = addMenu(tr("&View"), "viewMenu");
    entry(viewMenu, "zoomInAction", tr("Zoom &In"), {K(tr("Ctrl++")), K(tr("Ctrl+=")), K::ZoomIn},
          [this] { m_resultView->zoomBy(1.25); });
    entry(viewMenu, "zoomOutAction", tr("Zoom &Out"), {K(tr("Ctrl+-")), K::ZoomOut}, [this] { m_resultView->zoomBy(0.8); });
    entry(viewMenu, "fitAction", tr("&Fit to Window"), {K(tr("Ctrl+0"))}, [this] {
        for (ImageView* v : {m_sourceView, m_referenceView, m_resultView}) v->fit();
    });
    entry(viewMenu, "actualSizeAction", tr("&Actual Size"), {K(tr("Ctrl+1"))}, [this] { m_resultView->zoomActualSize(); });
    QAction* split = entry(viewMenu, "splitAction", tr("&Before/After Split"), {K(tr("Ctrl+D"))}, [] {});
    split->setCheckable(true);
    connect(split, &QAction::toggled, m_resultView, &ImageView::setSplitEnabled);
    viewMenu->addAction(m_lut->previewAction());
    QAction* link = entry(viewMenu, "linkZoomAction", tr("&Link Source and Result Zoom"), {}, [] {});
    link->setCheckable(true);
    link->setChecked(true);
    link->setToolTip(tr("Zoom and pan the source and the result together."));
    // Each pane passes its zoom and pan on to the other (setTransform does not echo it back).
    for (const auto& pane : {std::pair{m_sourceView, m_resultView}, std::pair{m_resultView, m_sourceView}}) {
        ImageView* from = pane.first;
        ImageView* to = pane.second;
        connect(from, &ImageView::transformChanged, this, [this, from, to] {
            if (zoomLinked()) to->setTransform(from->transform());
        });
    }
    viewMenu->addSeparator();
    QAction* advanced = entry(viewMenu, "advancedPanelsAction", tr("A&dvanced Panels"), {K(tr("Ctrl+Shift+A"))}, [] {});
    advanced->setCheckable(true);
    advanced->setToolTip(tr("Show or hide Statistics and Charts (solver details)."));
    connect(advanced, &QAction::toggled, this, &MainWindow::setAdvancedPanelsVisible);
    QDockWidget* statistics = dock(QStringLiteral("statisticsDock"));
    QDockWidget* charts = dock(QStringLiteral("chartsDock"));
    for (QDockWidget* d : {statistics, charts}) {
        connect(d, &QDockWidget::visibilityChanged, this, [advanced, statistics, charts] {
            // Closing both docks by hand unchecks the entry; opening one checks it.
            const QSignalBlocker block(advanced);
            advanced->setChecked(!statistics->isHidden() || !charts->isHidden());
        });
    }
    for (QDockWidget* dock : findChildren<QDockWidget*>()) viewMenu->addAction(dock->toggleViewAction());
    viewMenu->addSeparator();
    entry(viewMenu, "resetLayoutAction", tr("&Reset Layout"), {}, [this] { resetLayout(); });

    QMenu* helpMenu = addMenu(tr("&Help"), "helpMenu");
    entry(helpMenu, "aboutAction", tr("&About UOT Color Studio"), {}, [this] { showAbout(); });
    helpMenu->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

void MainWindow::setZoomLinked(bool linked) { action(QStringLiteral("linkZoomAction"))->setChecked(linked); }
bool MainWindow::zoomLinked() const { return action(QStringLiteral("linkZoomAction"))->isChecked(); }

QMenu* MainWindow::menu(Menu which) const
{
    switch (which) {
    case Menu::File: return part<QMenu>("fileMenu");
    case Menu::Edit: return part<QMenu>("editMenu");
    case Menu::Run: return part<QMenu>("runMenu");
    case Menu::View: return part<QMenu>("viewMenu");
    case Menu::Help: return part<QMenu>("helpMenu");
    }
    return nullptr;
}

QAction* MainWindow::action(const QString& objectName) const
{
    return findChild<QAction*>(objectName);
}

}  // namespace uot::ui
