#pragma once
// The scripted screenshot's file (uot-studio --screenshot FILE): checked before
// anything runs, then encoded by its name's image type and written atomically
// (core/io/atomic_file.h: a temporary file, then a rename), replacing an old
// screenshot but never one of `protectedPaths` (the images the script opens).

#include <QString>
#include <QStringList>

class QImage;

namespace uot::ui {

// What is wrong with writing an image to `path` (its image type, its folder, its
// name, a protected file), or empty.
QString screenshotFileProblem(const QString& path, const QStringList& protectedPaths);

// Writes `image` to `path`; the reason when it fails, or empty.
QString writeScreenshotFile(const QImage& image, const QString& path, const QStringList& protectedPaths);

}  // namespace uot::ui
