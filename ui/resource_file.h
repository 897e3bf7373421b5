#pragma once
// A path that other programs and the batch can open: files compiled into the
// executable (":/samples/...", the bundled sample pair) are copied once into
// the cache folder; other paths are returned unchanged.

#include <QString>

namespace uot::ui {

// The path itself, or for a Qt resource a copy of it on disk (written
// atomically, reused while its size matches). Empty with `error` set when the
// copy cannot be written.
QString diskPathFor(const QString& path, QString* error = nullptr);

}  // namespace uot::ui
