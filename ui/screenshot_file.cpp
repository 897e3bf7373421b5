#include "ui/screenshot_file.h"

#include <QBuffer>
#include <QFileInfo>
#include <QImage>
#include <QImageWriter>

#include "core/io/atomic_file.h"
#include "core/transport/uot_error.h"

namespace uot::ui {

namespace {

AtomicWriteOptions writeOptions(const QStringList& protectedPaths)
{
    AtomicWriteOptions options;
    for (const QString& path : protectedPaths)
        if (!path.isEmpty()) options.protectedPaths.push_back(path.toStdString());
    options.protectedHint = "choose another name for the screenshot";
    return options;
}

QByteArray imageTypeOf(const QString& path) { return QFileInfo(path).suffix().toLower().toLatin1(); }

}  // namespace

QString screenshotFileProblem(const QString& path, const QStringList& protectedPaths)
{
    const QByteArray type = imageTypeOf(path);
    if (type.isEmpty()) return "the name has no extension to tell the image type: end it with .png or .jpg";
    if (!QImageWriter::supportedImageFormats().contains(type))
        return QString("'.%1' is not an image type this build can write: end the name with .png or .jpg")
            .arg(QString::fromLatin1(type));
    try {
        checkWritableDestination(path.toStdString(), writeOptions(protectedPaths));
    } catch (const Error& error) {
        return QString::fromStdString(error.what());
    }
    return {};
}

QString writeScreenshotFile(const QImage& image, const QString& path, const QStringList& protectedPaths)
{
    if (image.isNull()) return "the window could not be grabbed";
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QImageWriter writer(&buffer, imageTypeOf(path));
    if (!writer.write(image)) return writer.errorString();
    try {
        writeFileAtomically(path.toStdString(), bytes.constData(), static_cast<std::size_t>(bytes.size()),
                            writeOptions(protectedPaths));
    } catch (const Error& error) {
        return QString::fromStdString(error.what());
    }
    return {};
}

}  // namespace uot::ui
