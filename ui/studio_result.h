#pragma once
// The picture in the result pane together with the inputs it was made from:
// the source and reference images (with their files) and the parameters. The
// window compares these with its current inputs to tell whether the result is
// out of date, and saves take the file name, the metadata source and the
// protected files from here, never from the panes (which may show newer
// inputs).

#include <QImage>
#include <QString>
#include <QStringList>

#include <memory>

#include "ui/pipeline_jobs.h"
#include "ui/studio_parameters.h"

namespace uot::ui {

// What a run was started with.
struct ResultInputs {
    LoadedImage source;
    LoadedImage reference;
    StudioParameters parameters;

    // What differs from the given current inputs, in words ("the source",
    // "the settings"); empty when the result of these inputs would be the same
    // picture. Images are compared by load identity, parameters by
    // StudioParameters::sameLookAs.
    QStringList differencesFrom(const ResultInputs& current) const;
    // The same as one phrase: "the source and the settings".
    static QString inWords(const QStringList& differences);
};

struct StudioResult {
    QImage image;                          // shown in the result pane
    std::shared_ptr<const Image> pixels;   // the same at the source's depth, for saving
    ResultInputs inputs;

    bool empty() const { return !pixels; }
    // The file the result's metadata (EXIF, XMP, IPTC) is copied from: the
    // source it was made from; empty for a bundled sample.
    QString metadataSource() const;
    // "home" for a result made from .../home.jpg; "result" when the source has no file.
    QString baseName() const;
};

}  // namespace uot::ui
