#include "ui/cache_simulation.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QStandardPaths>
#include <QStringList>
#include <QTemporaryDir>
#include <QTextStream>
#include <QTimer>

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/registry/solver_registry.h"

namespace uot::ui {

namespace {

QString readLine(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text)) return {};
    return QString::fromLatin1(file.readLine()).trimmed();
}

// "48K", "2048K", "32M" or plain bytes.
qint64 parseCacheSize(QString text)
{
    qint64 scale = 1;
    if (text.endsWith('K')) scale = qint64(1) << 10;
    else if (text.endsWith('M')) scale = qint64(1) << 20;
    if (scale > 1) text.chop(1);
    bool ok = false;
    const qint64 value = text.toLongLong(&ok);
    return ok ? value * scale : 0;
}

QString bytesShort(qint64 bytes)
{
    if (bytes >= (qint64(1) << 20) && bytes % (qint64(1) << 20) == 0) return QStringLiteral("%1 MiB").arg(bytes >> 20);
    if (bytes >= 1024) return QStringLiteral("%1 KiB").arg(double(bytes) / 1024, 0, 'g', 4);
    return QStringLiteral("%1 B").arg(bytes);
}

QString countShort(double v)
{
    if (v >= 1e6) return QStringLiteral("%1 M").arg(v / 1e6, 0, 'f', 2);
    if (v >= 1e3) return QStringLiteral("%1 k").arg(v / 1e3, 0, 'f', 1);
    return QString::number(v, 'f', 0);
}

// Bytes of one stored matrix entry of `solver` at `precision`.
int entryBytes(const QString& solver, Precision precision)
{
    const auto caps = solverCapabilities(solver.toStdString());
    if (caps && caps->storedEntryBytes > 0) return caps->storedEntryBytes;
    return precision == Precision::Fp32 ? 4 : 8;
}

// A cache of `bytes` or less that valgrind accepts: a power-of-two number of sets.
CacheGeometry shrunkTo(const CacheGeometry& host, qint64 bytes)
{
    CacheGeometry c = host;
    const qint64 setBytes = qint64(c.ways) * c.lineBytes;
    const qint64 sets = std::max<qint64>(1, bytes / setBytes);
    c.bytes = std::bit_floor(quint64(sets)) * setBytes;
    return c;
}

// valgrind reports a CPU of its own (Intel) to the program it runs, so the
// solvers' choice of the interleaved row kernels would follow it rather than
// this host; pin the choice this host's CPU gets (as bench/cachegrind.sh does).
QString rowPipelineOfThisHost()
{
    QFile cpuinfo(QStringLiteral("/proc/cpuinfo"));
    if (!cpuinfo.open(QIODevice::ReadOnly | QIODevice::Text)) return QStringLiteral("off");
    return cpuinfo.readAll().contains("GenuineIntel") ? QStringLiteral("on") : QStringLiteral("off");
}

}  // namespace

QString CacheGeometry::valgrindArgument() const { return QStringLiteral("%1,%2,%3").arg(bytes).arg(ways).arg(lineBytes); }

CacheGeometry hostCache(int level)
{
    CacheGeometry best;
    int bestLevel = 0;
    const QDir dir(QStringLiteral("/sys/devices/system/cpu/cpu0/cache"));
    for (const QString& index : dir.entryList({QStringLiteral("index*")}, QDir::Dirs)) {
        const QString base = dir.filePath(index) + '/';
        const int l = readLine(base + "level").toInt();
        const QString type = readLine(base + "type");
        const bool wanted = level == 1 ? (l == 1 && type == QLatin1String("Data"))
                                       : (type == QLatin1String("Unified") && l > bestLevel);
        if (!wanted) continue;
        CacheGeometry c;
        c.bytes = parseCacheSize(readLine(base + "size"));
        c.ways = readLine(base + "ways_of_associativity").toInt();
        c.lineBytes = readLine(base + "coherency_line_size").toInt();
        if (!c.valid()) continue;
        best = c;
        bestLevel = l;
    }
    return best;
}

QString CacheSimulationResult::label() const { return QObject::tr("simulated (cachegrind, %1 x %1)").arg(size); }

QString CacheSimulationResult::summary() const
{
    QString text = QObject::tr("%1\nL1D %2 misses/iteration (%3 %)\nLL %4 misses/iteration (%5 %)")
                       .arg(label(), countShort(d1Misses))
                       .arg(100 * d1MissRate(), 0, 'f', 1)
                       .arg(countShort(llMisses))
                       .arg(100 * llMissRate(), 0, 'f', 1);
    if (matrixLines > 0) text += QObject::tr(", %1 per matrix line").arg(llMissesPerMatrixLine(), 0, 'f', 2);
    return text;
}

QString CacheSimulationResult::details() const
{
    return QObject::tr("Simulated by valgrind's cachegrind, not measured: %1 (%2) on a random %3 x %3 problem, one thread.\n"
                       "Simulated caches: L1D %4, %5-way; last level %6, %7-way (the host's, scaled with the matrix).\n"
                       "Per iteration: %8 data references, %9 L1D misses, %10 LL misses; the matrix is %11 lines of "
                       "64 bytes.\nMiss rates are misses per data reference. Set-up is excluded (two runs with "
                       "different iteration counts, differenced).")
        .arg(solver, QString::fromStdString(toString(precision)))
        .arg(size)
        .arg(bytesShort(d1.bytes))
        .arg(d1.ways)
        .arg(bytesShort(ll.bytes))
        .arg(ll.ways)
        .arg(countShort(dataReferences), countShort(d1Misses), countShort(llMisses), countShort(matrixLines));
}

CacheSimulationRequest plannedSimulation(const CacheSimulationRequest& request, QString* error)
{
    auto refuse = [&](const QString& why) {
        if (error) *error = why;
        return request;
    };
    if (error) error->clear();
    const std::string name = request.solver.toStdString();
    if (request.rows == 0 || request.cols == 0 || name.empty()) return refuse(QObject::tr("run a solve first"));
    if (!solverCapabilities(name)) return refuse(QObject::tr("unknown variant %1").arg(request.solver));
    if (runsOnGpu(name)) return refuse(QObject::tr("cachegrind simulates CPU variants; this run used the GPU"));
    CacheSimulationRequest plan = request;
    const int n = int(std::min<std::size_t>(std::max(request.rows, request.cols), std::size_t(std::max(request.maxSize, 8))));
    plan.maxSize = n;
    if (!plan.d1.valid()) plan.d1 = hostCache(1);
    if (!plan.d1.valid()) plan.d1 = {49152, 12, 64};
    if (!plan.ll.valid()) {
        CacheGeometry host = hostCache(0);
        if (!host.valid()) host = {qint64(32) << 20, 16, 64};
        // Shrink the LL by the factor the matrix shrinks by, so that the copy
        // fits the LL exactly when the real problem does; never below 4 x L1D.
        const double shrink = (double(n) * n) / (double(request.rows) * double(request.cols));
        const qint64 wanted = std::max<qint64>(qint64(double(host.bytes) * shrink), 4 * plan.d1.bytes);
        plan.ll = shrunkTo(host, std::min(wanted, host.bytes));
    }
    return plan;
}

QString findValgrind() { return QStandardPaths::findExecutable(QStringLiteral("valgrind")); }

QString findUotCli()
{
    const QString fromEnvironment = qEnvironmentVariable("UOT_CLI");
    if (!fromEnvironment.isEmpty()) return QFileInfo(fromEnvironment).isExecutable() ? fromEnvironment : QString();
    const QString here = QCoreApplication::applicationDirPath();
    for (const QString& candidate : {here + "/uot", here + "/../cli/uot", here + "/../app/cli/uot"}) {
        if (QFileInfo(candidate).isExecutable()) return QFileInfo(candidate).canonicalFilePath();
    }
    return QStandardPaths::findExecutable(QStringLiteral("uot"));
}

CacheSimulation::CacheSimulation(QObject* parent) : QObject(parent) {}

CacheSimulation::~CacheSimulation() { stopProcess(); }

void CacheSimulation::stopProcess()
{
    if (!m_process) return;
    m_process->disconnect(this);
    m_process->kill();
    m_process->waitForFinished(2000);
    m_process->deleteLater();
    m_process = nullptr;
}

void CacheSimulation::fail(const QString& message)
{
    if (!m_running) return;
    m_running = false;
    stopProcess();
    m_dir.reset();
    emit failed(message);
}

void CacheSimulation::start(const CacheSimulationRequest& request)
{
    cancel();
    ++m_generation;
    m_running = true;
    QString why;
    m_request = plannedSimulation(request, &why);
    m_valgrind = findValgrind();
    m_uot = findUotCli();
    if (why.isEmpty() && m_valgrind.isEmpty())
        why = tr("valgrind is not installed: install it (apt-get install valgrind; scripts/setup.sh does) to simulate "
                 "the caches");
    if (why.isEmpty() && m_uot.isEmpty())
        why = tr("the uot command line was not found next to the studio (set UOT_CLI to its path)");
    m_dir = std::make_unique<QTemporaryDir>();
    if (why.isEmpty() && !m_dir->isValid()) why = tr("no temporary folder for cachegrind's output");
    if (!why.isEmpty()) {
        // Delivered from the event loop, like every other outcome.
        QTimer::singleShot(0, this, [this, why, generation = m_generation] {
            if (generation == m_generation) fail(why);
        });
        return;
    }
    m_step = 0;
    runStep();
}

void CacheSimulation::cancel() { fail(tr("cancelled")); }

void CacheSimulation::runStep()
{
    const int iterations = m_step == 0 ? m_request.iterations1 : m_request.iterations2;
    const QString n = QString::number(m_request.maxSize);
    emit progress(tr("simulating %1 x %1, run %2 of 2...").arg(n).arg(m_step + 1));
    const QStringList args = {QStringLiteral("--tool=cachegrind"), QStringLiteral("--cache-sim=yes"),
                              QStringLiteral("--I1=32768,8,64"), "--D1=" + m_request.d1.valgrindArgument(),
                              "--LL=" + m_request.ll.valgrindArgument(),
                              "--cachegrind-out-file=" + m_dir->filePath(QStringLiteral("cachegrind.out")), m_uot,
                              QStringLiteral("bench"), "--solver=" + m_request.solver, "--size=" + n + 'x' + n,
                              "--precision=" + QString::fromStdString(toString(m_request.precision)),
                              QStringLiteral("--threads=1"), "--iterations=" + QString::number(iterations),
                              QStringLiteral("--single-solve"), QStringLiteral("--in-process"),
                              QStringLiteral("--no-probe")};
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!env.contains(QStringLiteral("UOT_ROW_PIPELINE"))) env.insert(QStringLiteral("UOT_ROW_PIPELINE"), rowPipelineOfThisHost());
    stopProcess();  // the previous step's, finished
    m_process = new QProcess(this);
    m_process->setProcessEnvironment(env);
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    connect(m_process, &QProcess::finished, this, &CacheSimulation::stepFinished);
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart) fail(tr("valgrind could not be started: %1").arg(m_process->errorString()));
    });
    m_process->start(m_valgrind, args);
}

void CacheSimulation::stepFinished(int exitCode, QProcess::ExitStatus status)
{
    const QString output = QString::fromLocal8Bit(m_process->readAll());
    if (status != QProcess::NormalExit || exitCode != 0) {
        const QStringList lines = output.trimmed().split('\n');
        fail(tr("cachegrind run failed (exit %1): %2").arg(exitCode).arg(lines.isEmpty() ? QString() : lines.last()));
        return;
    }
    // cachegrind's output file: "events: Ir I1mr ... Dr D1mr DLmr Dw D1mw DLmw" and "summary: <numbers>".
    QFile file(m_dir->filePath(QStringLiteral("cachegrind.out")));
    QStringList events, totals;
    if (file.open(QIODevice::ReadOnly | QIODevice::Text)) {
        QTextStream in(&file);
        while (!in.atEnd()) {
            const QString line = in.readLine();
            if (line.startsWith(QLatin1String("events:"))) events = line.mid(7).split(' ', Qt::SkipEmptyParts);
            else if (line.startsWith(QLatin1String("summary:"))) totals = line.mid(8).split(' ', Qt::SkipEmptyParts);
        }
    }
    QHash<QString, double> value;
    for (int i = 0; i < std::min(events.size(), totals.size()); ++i) value[events[i]] = totals[i].toDouble();
    for (const char* key : {"Dr", "Dw", "D1mr", "D1mw", "DLmr", "DLmw"}) {
        if (!value.contains(QLatin1String(key))) {
            fail(tr("cachegrind's output has no %1 count (%2)").arg(QLatin1String(key), file.fileName()));
            return;
        }
    }
    m_counts[m_step][0] = value["Dr"] + value["Dw"];
    m_counts[m_step][1] = value["D1mr"] + value["D1mw"];
    m_counts[m_step][2] = value["DLmr"] + value["DLmw"];
    if (m_step == 0) {
        m_step = 1;
        runStep();
        return;
    }
    CacheSimulationResult r;
    r.solver = m_request.solver;
    r.precision = m_request.precision;
    r.size = m_request.maxSize;
    r.d1 = m_request.d1;
    r.ll = m_request.ll;
    const double span = m_request.iterations2 - m_request.iterations1;
    r.dataReferences = (m_counts[1][0] - m_counts[0][0]) / span;
    r.d1Misses = std::max(0.0, (m_counts[1][1] - m_counts[0][1]) / span);
    r.llMisses = std::max(0.0, (m_counts[1][2] - m_counts[0][2]) / span);
    const auto caps = solverCapabilities(r.solver.toStdString());
    const bool storesMatrix = caps && caps->matrixSweepsPerIteration > 0;
    r.matrixLines = storesMatrix ? double(r.size) * r.size * entryBytes(r.solver, r.precision) / 64.0 : 0;
    m_running = false;
    stopProcess();
    m_dir.reset();
    emit finished(r);
}

}  // namespace uot::ui
