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

    m_fileMenu = menuBar()->addMenu(tr("&File"));
    entry(m_fileMenu, "openSourceAction", tr("Open &Source..."), {K::Open}, [this] {
        const QString path = openDialog(tr("Open Source"), QStringLiteral("source"));
        if (!path.isEmpty()) openSource(path);
    });
    entry(m_fileMenu, "openReferenceAction", tr("Open &Reference..."), {K(tr("Ctrl+Shift+O"))}, [this] {
        const QString path = openDialog(tr("Open Reference"), QStringLiteral("reference"));
        if (!path.isEmpty()) openReference(path);
    });
    m_recentMenu = m_fileMenu->addMenu(tr("Recent Files"));
    m_fileMenu->addSeparator();
    m_saveAction = entry(m_fileMenu, "saveAction", tr("&Save Result"), {K(tr("Ctrl+S"))}, [this] { save(); });
    m_saveAsAction = entry(m_fileMenu, "saveAsAction", tr("Save Result &As..."), {K(tr("Ctrl+Shift+S"))}, [this] { saveAs(); });
    m_saveAction->setEnabled(false);
    m_saveAsAction->setEnabled(false);
    m_fileMenu->addSeparator();
    entry(m_fileMenu, "batchAction", tr("&Batch Recolor..."), {K(tr("Ctrl+B"))}, [this] { openBatchDialog(); });
    m_lut = new LutActions(this, [this](LutRequest request) {
        request.protectedPaths = {m_source.path, m_reference.path};
        return makeLutJob(m_session, m_source, m_reference, parameters(), request);
    }, m_options.interactive);
    m_fileMenu->addAction(m_lut->exportAction());
    m_fileMenu->addSeparator();
    entry(m_fileMenu, "quitAction", tr("&Quit"), {K(tr("Ctrl+Q"))}, [this] { close(); });

    m_editMenu = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_undo->createUndoAction(this, tr("&Undo"));
    undo->setObjectName("undoAction");
    undo->setShortcuts(QKeySequence::Undo);
    QAction* redo = m_undo->createRedoAction(this, tr("&Redo"));
    redo->setObjectName("redoAction");
    redo->setShortcuts({K(tr("Ctrl+Shift+Z")), K(tr("Ctrl+Y"))});
    m_editMenu->addActions({undo, redo});
    m_editMenu->addSeparator();
    entry(m_editMenu, "copySettingsAction", tr("&Copy Settings"), {K(tr("Ctrl+Shift+C"))}, [this] { copySettings(); });
    entry(m_editMenu, "pasteSettingsAction", tr("&Paste Settings"), {K(tr("Ctrl+Shift+V"))}, [this] { pasteSettings(); });
    entry(m_editMenu, "savePresetAction", tr("Save as Pr&eset..."), {}, [this] { askAndSavePreset(); });
    entry(m_editMenu, "saveReferenceAction", tr("Save Reference with Se&ttings..."), {}, [this] { askAndSaveReference(); });
    m_editMenu->addSeparator();
    entry(m_editMenu, "swapAction", tr("S&wap Source and Reference"), {K(tr("Ctrl+Shift+X"))}, [this] { swapImages(); });
    entry(m_editMenu, "resetParametersAction", tr("&Reset Parameters"), {}, [this] { resetParameters(); });

    m_runMenu = menuBar()->addMenu(tr("&Run"));
    entry(m_runMenu, "runAction", tr("&Run"), {K(tr("Ctrl+R"))}, [this] { run(); });
    entry(m_runMenu, "cancelAction", tr("&Cancel"), {K(Qt::Key_Escape)}, [this] { cancel(); });
    entry(m_runMenu, "compareAction", tr("Co&mpare Variants..."), {K(tr("Ctrl+K"))}, [this] { compare(); });
    m_runMenu->addSeparator();
    entry(m_runMenu, "simulateCachesAction", tr("&Simulate CPU Caches (cachegrind)"), {}, [this] {
        m_statisticsDock->show();
        m_statisticsDock->raise();
        m_statistics->cacheSimulation()->start();
    });

    m_viewMenu = menuBar()->addMenu(tr("&View"));
    entry(m_viewMenu, "zoomInAction", tr("Zoom &In"), {K(tr("Ctrl++")), K(tr("Ctrl+=")), K::ZoomIn},
          [this] { m_resultView->zoomBy(1.25); });
    entry(m_viewMenu, "zoomOutAction", tr("Zoom &Out"), {K(tr("Ctrl+-")), K::ZoomOut}, [this] { m_resultView->zoomBy(0.8); });
    entry(m_viewMenu, "fitAction", tr("&Fit to Window"), {K(tr("Ctrl+0"))}, [this] {
        for (ImageView* v : {m_sourceView, m_referenceView, m_resultView}) v->fit();
    });
    entry(m_viewMenu, "actualSizeAction", tr("&Actual Size"), {K(tr("Ctrl+1"))}, [this] { m_resultView->zoomActualSize(); });
    m_splitAction = entry(m_viewMenu, "splitAction", tr("&Before/After Split"), {K(tr("Ctrl+D"))}, [] {});
    m_splitAction->setCheckable(true);
    connect(m_splitAction, &QAction::toggled, m_resultView, &ImageView::setSplitEnabled);
    m_viewMenu->addAction(m_lut->previewAction());
    m_viewMenu->addSeparator();
    m_advancedAction = entry(m_viewMenu, "advancedPanelsAction", tr("A&dvanced Panels"), {K(tr("Ctrl+Shift+A"))}, [] {});
    m_advancedAction->setCheckable(true);
    m_advancedAction->setToolTip(tr("Show or hide Statistics and Charts (solver details)."));
    connect(m_advancedAction, &QAction::toggled, this, &MainWindow::setAdvancedPanelsVisible);
    for (QDockWidget* dock : {m_statisticsDock, m_chartsDock}) {
        connect(dock, &QDockWidget::visibilityChanged, this, [this] {
            // Closing both docks by hand unchecks the entry; opening one checks it.
            const QSignalBlocker block(m_advancedAction);
            m_advancedAction->setChecked(!m_statisticsDock->isHidden() || !m_chartsDock->isHidden());
        });
    }
    for (QDockWidget* dock : findChildren<QDockWidget*>()) m_viewMenu->addAction(dock->toggleViewAction());
    m_viewMenu->addSeparator();
    entry(m_viewMenu, "resetLayoutAction", tr("&Reset Layout"), {}, [this] { resetLayout(); });

    m_helpMenu = menuBar()->addMenu(tr("&Help"));
    entry(m_helpMenu, "aboutAction", tr("&About UOT Color Studio"), {}, [this] { showAbout(); });
    m_helpMenu->addAction(tr("About &Qt"), qApp, &QApplication::aboutQt);
}

QMenu* MainWindow::menu(Menu which) const
{
    switch (which) {
    case Menu::File: return m_fileMenu;
    case Menu::Edit: return m_editMenu;
    case Menu::Run: return m_runMenu;
    case Menu::View: return m_viewMenu;
    case Menu::Help: return m_helpMenu;
    }
    return nullptr;
}

QAction* MainWindow::action(const QString& objectName) const
{
    return findChild<QAction*>(objectName);
}

}  // namespace uot::ui
