#pragma once
// The main window as the UI tests drive it: no dialogs (errors go to stderr and
// lastError()), no bandwidth measurement at start-up, no images loaded by itself.

#include <QCoreApplication>
#include <QImage>
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

// A small photo-like image written to `path`: a smooth gradient in three
// channels, so that its palette has as many colours as the tests ask for.
inline QString writeGradient(const QString& path, int width, int height, int seed)
{
    QImage image(width, height, QImage::Format_RGB32);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            image.setPixel(x, y, qRgb((x * 255 / width + seed * 40) % 256, (y * 255 / height + seed * 90) % 256,
                                      ((x + y) * 127 / (width + height) + seed * 60) % 256));
    image.save(path);
    return path;
}

// quickParameters with 64-colour palettes and no auto-run: the session tests'.
inline uot::ui::StudioParameters smallParameters()
{
    uot::ui::StudioParameters p = quickParameters();
    p.paletteSize = 64;
    p.autoRun = false;
    return p;
}
