#pragma once
// The main window as the UI tests drive it: no dialogs (errors go to stderr and
// lastError()), no bandwidth measurement at start-up, no images loaded by itself.

#include <QCoreApplication>
#include <QSettings>
#include <QString>

#include "ui/main_window.h"
#include "ui/studio_parameters.h"

inline uot::ui::MainWindowOptions testOptions()
{
    uot::ui::MainWindowOptions options;
    options.interactive = false;
    options.measureBandwidth = false;
    options.loadSamplesIfEmpty = false;
    return options;
}

// Small, fast settings for tests that run the pipeline: 128-colour palettes, fp64,
// eps 0.01, at most 200 iterations to 1e-4, no smoothing.
inline uot::ui::StudioParameters quickParameters()
{
    uot::ui::StudioParameters p;
    p.paletteSize = 128;
    p.maxIterations = 200;
    p.tolerance = 1e-4;
    p.eps = 0.01;
    p.precision = uot::Precision::Fp64;
    p.smoothing = 0;
    return p;
}

// QSettings of this test process in `folder` (INI files), under its own
// application name, so that no test reads or writes the user's settings.
inline void useIsolatedSettings(const QString& folder, const char* applicationName)
{
    QCoreApplication::setOrganizationName("UOT-test");
    QCoreApplication::setApplicationName(applicationName);
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, folder);
}
