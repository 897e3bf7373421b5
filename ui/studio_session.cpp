// StudioSession: images, parameters, the undo history, presets and named
// references. Runs, results and saving are in studio_session_run.cpp.
#include "ui/studio_session.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QUndoStack>
#include <QtConcurrent/QtConcurrentRun>

#include <atomic>

#include "core/transport/uot_error.h"
#include "ui/settings_library.h"
#include "ui/undo_commands.h"

namespace uot::ui {

LoadedImage StudioSession::loadAnyImage(const QString& path)
{
    if (!path.startsWith(":/")) return loadImageFile(path);
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw uot::Error(ErrorCode::Io, "the bundled sample " + path.toStdString() + " is missing from this build");
    const QByteArray bytes = file.readAll();
    LoadedImage loaded;
    loaded.image = std::make_shared<const Image>(
        decodeImage(std::vector<std::uint8_t>(bytes.begin(), bytes.end()), QFileInfo(path).fileName().toStdString()));
    static std::atomic<quint64> bundledIds{1ull << 62};
    loaded.id = bundledIds.fetch_add(1);
    loaded.path = path;
    return loaded;
}

StudioSession::StudioSession(QObject* parent)
    : QObject(parent), m_worker(std::make_unique<SolveWorker>()), m_pipeline(std::make_shared<PipelineSession>()),
      m_undo(new QUndoStack(this))
{
    qRegisterMetaType<uot::ui::ResultValidity>("uot::ui::ResultValidity");
    qRegisterMetaType<uot::ui::StudioParameters>("uot::ui::StudioParameters");
    m_undo->setUndoLimit(200);
    m_recordedParameters = m_parameters;
    m_autoRunTimer.setSingleShot(true);
    m_autoRunTimer.setInterval(400);
    connect(&m_autoRunTimer, &QTimer::timeout, this, &StudioSession::run);
    connectWorker();
    m_clip = new ClipModel(this);
    connectClip();
}

StudioSession::~StudioSession()
{
    m_worker->shutdown();  // cancels a running job and joins, before the receivers go
}

// --- images ---

bool StudioSession::isLoading() const
{
    for (const auto* watcher : m_loads)
        if (watcher && watcher->isRunning()) return true;
    return m_clip->isOpening() || m_clipFirstFrame;  // a clip loads until its first frame is shown
}

void StudioSession::openSource(const QString& path) { loadFile(path, true); }
void StudioSession::openReference(const QString& path) { loadFile(path, false); }

void StudioSession::loadFile(const QString& path, bool source)
{
    if (source && ClipModel::isClipPath(path)) return openClip(path);
    // Decoding a real photo takes long enough to stall the window: off the GUI thread.
    QFutureWatcher<LoadedImage>*& slot = m_loads[source ? 0 : 1];
    if (slot) slot->disconnect(this);  // a newer load of the same side wins
    auto* watcher = new QFutureWatcher<LoadedImage>(this);
    slot = watcher;
    connect(watcher, &QFutureWatcher<LoadedImage>::finished, this, [this, source, watcher, path] {
        LoadedImage loaded = watcher->result();
        watcher->deleteLater();
        m_loads[source ? 0 : 1] = nullptr;
        if (!loaded.image) {
            const QString message = tr("Could not open %1:\n%2\n\nChoose a JPEG, PNG, TIFF, WebP or BMP file.")
                                        .arg(QDir::toNativeSeparators(path), loaded.path);
            if (!source) m_runWhenReferenceLoads = false;
            reportError(tr("Open image"), message);
            emit loadFailed(message);
            return;
        }
        // One undo step: back to the image shown before.
        const LoadedImage previous = source ? m_source : m_reference;
        applyImage(source, loaded);
        m_undo->push(new FunctionCommand(
            (source ? tr("open source %1") : tr("open reference %1")).arg(QFileInfo(path).fileName()),
            [this, source, loaded] { applyImage(source, loaded); },
            [this, source, previous] { applyImage(source, previous); }, true));
        emit status(tr("Loaded %1 (%2 x %3)").arg(QFileInfo(path).fileName()).arg(loaded.image->width).arg(loaded.image->height));
        if (source) emit sourceLoaded(path);
        else emit referenceLoaded(path);
        const bool runNow = !source && m_runWhenReferenceLoads && hasSource();
        if (!source) m_runWhenReferenceLoads = false;
        if (runNow) run();
        else scheduleAutoRun();
    });
    emit status(tr("Loading %1...").arg(QFileInfo(path).fileName()));
    watcher->setFuture(QtConcurrent::run([path]() -> LoadedImage {
        try {
            return loadAnyImage(path);
        } catch (const std::exception& e) {
            LoadedImage failed;
            failed.path = QString::fromStdString(e.what());  // carries the message back
            return failed;
        }
    }));
}

void StudioSession::applyImage(bool source, const LoadedImage& image, bool clipFrame)
{
    if (source && !clipFrame) m_clip->close();  // a photo (a load, an undo, a swap) replaces the clip
    if (source) {
        m_source = image;
        m_savePath.clear();  // another picture: Ctrl+S must not write over the last one's file
    } else {
        m_reference = image;
    }
    rememberImages();
    if (source) emit sourceChanged();
    else emit referenceChanged();
    announceResult();
}

void StudioSession::rememberImages() const
{
    auto stored = [](const QString& path) { return path.startsWith(":/") ? QString() : QFileInfo(path).absoluteFilePath(); };
    QSettings settings;
    settings.setValue("session/source", stored(m_source.path));
    settings.setValue("session/reference", stored(m_reference.path));
}

void StudioSession::exchangeImages()
{
    const LoadedImage source = m_source, reference = m_reference;
    applyImage(true, reference);
    applyImage(false, source);
    scheduleAutoRun();
}

void StudioSession::swapImages()
{
    m_undo->push(new FunctionCommand(tr("swap source and reference"), [this] { exchangeImages(); },
                                     [this] { exchangeImages(); }, false));
}

// --- parameters ---

void StudioSession::setParameters(const StudioParameters& parameters) { changeParameters(parameters, true); }
void StudioSession::editParameters(const StudioParameters& parameters) { changeParameters(parameters, false); }

void StudioSession::changeParameters(const StudioParameters& parameters, bool whole)
{
    if (parameters == m_parameters) return;
    m_parameters = parameters;
    if (!m_restoringHistory && m_parameters != m_recordedParameters) {
        m_undo->push(new ParametersCommand(m_recordedParameters, m_parameters,
                                           [this](const StudioParameters& p) { restoreParameters(p); }, whole));
        m_recordedParameters = m_parameters;
    }
    parametersApplied();
}

void StudioSession::restoreParameters(const StudioParameters& parameters)
{
    m_restoringHistory = true;
    changeParameters(parameters, true);
    m_restoringHistory = false;
    m_recordedParameters = parameters;
}

void StudioSession::parametersApplied()
{
    QSettings settings;
    m_parameters.save(settings);
    emit parametersChanged(m_parameters);
    announceResult();
    scheduleAutoRun();
}

void StudioSession::resetParameters()
{
    StudioParameters defaults;
    defaults.autoRun = m_parameters.autoRun;
    setParameters(defaults);
}

QStringList StudioSession::restoreSavedParameters()
{
    QSettings settings;
    QStringList problems;
    m_parameters = StudioParameters::load(settings, &problems);
    m_recordedParameters = m_parameters;  // the undo history starts here
    emit parametersChanged(m_parameters);
    announceResult();
    return problems;
}

void StudioSession::scheduleAutoRun()
{
    if (m_parameters.autoRun && hasSource() && hasReference()) m_autoRunTimer.start();
}

// --- presets, named references, copy and paste ---

void StudioSession::savePreset(const QString& name)
{
    if (name.trimmed().isEmpty()) return;
    settings_library::savePreset(name, m_parameters);
    emit libraryChanged();
    emit status(tr("Saved the preset %1").arg(name.trimmed()));
}

template <class Entry>
bool StudioSession::usableEntry(const std::optional<Entry>& entry, const QStringList& problems, const QString& title,
                                const QString& gone, const QString& invalid)
{
    if (!entry) {
        reportError(title, gone);
        emit libraryChanged();
        return false;
    }
    if (!problems.isEmpty()) {
        reportError(title, QString(invalid).arg(problems.join('\n')));
        return false;
    }
    return true;
}

bool StudioSession::applyPreset(const QString& name)
{
    QStringList problems;
    auto preset = settings_library::preset(name, &problems);
    if (!usableEntry(preset, problems, tr("Preset"), tr("There is no preset named %1 any more.").arg(name),
                     tr("The preset %1 was not applied: it holds values that are not valid.\n%2").arg(name)))
        return false;
    preset->autoRun = m_parameters.autoRun;
    setParameters(*preset);  // one undo step
    emit status(tr("Applied the preset %1").arg(name));
    return true;
}

void StudioSession::saveNamedReference(const QString& name)
{
    if (name.trimmed().isEmpty()) return;
    if (!hasReference()) {
        reportError(tr("Save Reference"),
                    tr("Open a reference image first: a named reference keeps the image and the settings."));
        return;
    }
    settings_library::saveReference({name, m_reference.path, m_parameters});
    emit libraryChanged();
    emit status(tr("Saved the reference %1").arg(name.trimmed()));
}

bool StudioSession::applyNamedReference(const QString& name)
{
    QStringList problems;
    auto reference = settings_library::reference(name, &problems);
    if (!usableEntry(reference, problems, tr("Reference"), tr("There is no reference named %1 any more.").arg(name),
                     tr("The reference %1 was not applied: its settings hold values that are not valid.\n%2").arg(name)))
        return false;
    const QString path = reference->imagePath;
    if (!path.startsWith(":/") && !QFileInfo::exists(path)) {
        reportError(tr("Reference"), tr("The image of %1 is no longer at %2.\nOpen it again (File > Open Reference...) "
                                        "and save the reference anew.").arg(name, QDir::toNativeSeparators(path)));
        return false;
    }
    reference->parameters.autoRun = m_parameters.autoRun;
    setParameters(reference->parameters);
    // One click gives the result: run once the image is in.
    if (hasReference() && QFileInfo(m_reference.path) == QFileInfo(path)) {
        if (hasSource()) run();
    } else {
        m_runWhenReferenceLoads = true;
        openReference(path);
    }
    return true;
}

QString StudioSession::settingsText() const { return settings_library::toText(m_parameters); }

bool StudioSession::pasteSettings(const QString& text)
{
    QStringList problems;
    auto pasted = settings_library::fromText(text, &problems);
    if (!problems.isEmpty()) {
        // Nothing is applied: half a set of settings would give a look nobody chose.
        reportError(tr("Paste Settings"), tr("The settings were not pasted: %n value(s) not valid.\n%1", "",
                                             int(problems.size())).arg(problems.join('\n')));
        return false;
    }
    if (!pasted) {
        reportError(tr("Paste Settings"),
                    tr("The clipboard holds no studio settings. Copy them first (Edit > Copy Settings)."));
        return false;
    }
    pasted->autoRun = m_parameters.autoRun;
    setParameters(*pasted);
    emit status(tr("Pasted the settings."));
    return true;
}

void StudioSession::reportError(const QString& title, const QString& message)
{
    m_lastError = message;
    emit failed(title, message);
}

}  // namespace uot::ui
