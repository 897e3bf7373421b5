#pragma once
// The main window as the UI tests drive it: no dialogs (errors go to stderr and
// lastError()), no bandwidth measurement at start-up, no images loaded by itself.

#include "ui/main_window.h"

inline uot::ui::MainWindowOptions testOptions()
{
    uot::ui::MainWindowOptions options;
    options.interactive = false;
    options.measureBandwidth = false;
    options.loadSamplesIfEmpty = false;
    return options;
}
