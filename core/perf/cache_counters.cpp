#include "core/perf/cache_counters.h"

#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>

namespace uot::perf {
namespace {

enum Kind { kL1dReadMisses = 0, kLlcMisses, kInstructions, kCycles, kKindCount };

const char* kindName(int kind)
{
    switch (kind) {
    case kL1dReadMisses: return "L1D read misses";
    case kLlcMisses: return "last-level cache misses";
    case kInstructions: return "instructions";
    default: return "cycles";
    }
}

struct EventConfig {
    std::uint32_t type;
    std::uint64_t config;
};

constexpr std::uint64_t cacheConfig(std::uint64_t cache, std::uint64_t op, std::uint64_t result)
{
    return cache | (op << 8) | (result << 16);
}

// Candidate encodings per kind, tried in order.
std::vector<EventConfig> candidates(int kind)
{
    switch (kind) {
    case kL1dReadMisses:
        return {{PERF_TYPE_HW_CACHE,
                 cacheConfig(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)}};
    case kLlcMisses:
        return {{PERF_TYPE_HW_CACHE,
                 cacheConfig(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)},
                {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES}};
    case kInstructions: return {{PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS}};
    default: return {{PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES}};
    }
}

int openEvent(const EventConfig& c, pid_t tid)
{
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = c.type;
    attr.config = c.config;
    attr.disabled = 1;
    attr.inherit = 1;         // threads created later by a counted thread are counted too
    attr.exclude_kernel = 1;  // user space only: allowed at perf_event_paranoid <= 2
    attr.exclude_hv = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    const long fd = syscall(SYS_perf_event_open, &attr, tid, -1, -1, 0UL);
    return fd < 0 ? -1 : int(fd);
}

double nowSeconds()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<pid_t> processThreads()
{
    std::vector<pid_t> tids;
    if (DIR* dir = opendir("/proc/self/task")) {
        while (const dirent* entry = readdir(dir)) {
            const long tid = std::strtol(entry->d_name, nullptr, 10);
            if (tid > 0) tids.push_back(pid_t(tid));
        }
        closedir(dir);
    }
    if (tids.empty()) tids.push_back(0);
    return tids;
}

double ratio(const CounterValue& a, const CounterValue& b, double scale)
{
    if (!a.valid || !b.valid || b.value == 0) return std::numeric_limits<double>::quiet_NaN();
    return scale * double(a.value) / double(b.value);
}

CounterValue minus(const CounterValue& a, const CounterValue& b)
{
    CounterValue r;
    r.valid = a.valid && b.valid;
    r.scaled = a.scaled || b.scaled;
    r.value = (r.valid && a.value >= b.value) ? a.value - b.value : 0;
    return r;
}

}  // namespace

// Working encoding per kind, found by the probe in the constructor.
namespace {
struct Probe {
    bool ok[kKindCount] = {};
    EventConfig config[kKindCount] = {};
    int firstErrno[kKindCount] = {};
};
Probe probeEvents()
{
    Probe p;
    for (int k = 0; k < kKindCount; ++k) {
        for (const EventConfig& c : candidates(k)) {
            errno = 0;
            const int fd = openEvent(c, 0);
            if (fd >= 0) {
                close(fd);
                p.ok[k] = true;
                p.config[k] = c;
                break;
            }
            if (p.firstErrno[k] == 0) p.firstErrno[k] = errno;
        }
    }
    return p;
}
}  // namespace

bool CacheCounterSample::anyValid() const
{
    return l1dReadMisses.valid || llcMisses.valid || instructions.valid || cycles.valid;
}

double CacheCounterSample::instructionsPerCycle() const { return ratio(instructions, cycles, 1.0); }
double CacheCounterSample::l1dMissesPerKiloInstruction() const { return ratio(l1dReadMisses, instructions, 1000.0); }
double CacheCounterSample::llcMissesPerKiloInstruction() const { return ratio(llcMisses, instructions, 1000.0); }

CacheCounterSample operator-(const CacheCounterSample& a, const CacheCounterSample& b)
{
    CacheCounterSample r;
    r.l1dReadMisses = minus(a.l1dReadMisses, b.l1dReadMisses);
    r.llcMisses = minus(a.llcMisses, b.llcMisses);
    r.instructions = minus(a.instructions, b.instructions);
    r.cycles = minus(a.cycles, b.cycles);
    r.seconds = a.seconds - b.seconds;
    return r;
}

int perfEventParanoid()
{
    std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
    int value = 0;
    if (in >> value) return value;
    return INT_MIN;
}

std::string describePerfEventFailure(int errnoValue, const std::string& eventName, int paranoid)
{
    const std::string call = "(perf_event_open: " + std::string(std::strerror(errnoValue)) + ")";
    const std::string level =
        paranoid == INT_MIN ? std::string("/proc/sys/kernel/perf_event_paranoid could not be read")
                            : "/proc/sys/kernel/perf_event_paranoid is " + std::to_string(paranoid);
    switch (errnoValue) {
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
        return eventName + " unavailable: the kernel/VM does not expose the PMU (hardware performance counters), or "
                           "the CPU has no such event " + call;
    case EACCES:
    case EPERM:
        return eventName + " unavailable: not permitted; " + level +
               " (user-space counting of one's own process needs <= 2; run as root or lower it with "
               "`sysctl kernel.perf_event_paranoid=2`) " + call;
    case ENOSYS:
        return eventName + " unavailable: the kernel has no perf_event support " + call;
    case EMFILE:
    case ENFILE:
        return eventName + " unavailable: too many open files " + call;
    case EINVAL:
        return eventName + " unavailable: the kernel rejected the counter configuration " + call;
    default:
        return eventName + " unavailable " + call;
    }
}

std::string summarizePerfEventFailure(int errnoValue, int paranoid)
{
    switch (errnoValue) {
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV: return "no PMU in this VM or container";
    case EACCES:
    case EPERM:
        return paranoid == INT_MIN ? std::string("not permitted")
                                   : "not permitted (perf_event_paranoid " + std::to_string(paranoid) + ")";
    case ENOSYS: return "kernel without perf events";
    case EMFILE:
    case ENFILE: return "too many open files";
    default: return std::string("perf_event_open: ") + std::strerror(errnoValue);
    }
}

CacheCounters::CacheCounters(CounterScope scope) : m_scope(scope)
{
    const Probe p = probeEvents();
    m_available = p.ok[kInstructions] && p.ok[kCycles];
    const int paranoid = perfEventParanoid();
    bool none = true;
    for (int k = 0; k < kKindCount; ++k) none = none && !p.ok[k];
    if (none) {
        // One sentence for the whole facility, from the first event's failure.
        const int failure = p.firstErrno[kCycles] ? p.firstErrno[kCycles] : ENOENT;
        m_reason = describePerfEventFailure(failure, "hardware cache counters", paranoid);
        m_summary = summarizePerfEventFailure(failure, paranoid);
        return;
    }
    for (int k = 0; k < kKindCount; ++k) {
        if (p.ok[k]) continue;
        if (!m_reason.empty()) m_reason += "; ";
        m_reason += describePerfEventFailure(p.firstErrno[k] ? p.firstErrno[k] : ENOENT, kindName(k), paranoid);
        m_summary += (m_summary.empty() ? "no " : ", no ") + std::string(kindName(k));
    }
    for (int k = 0; k < kKindCount; ++k) {
        m_configs.push_back({p.config[k].type, p.config[k].config});
        m_opened.push_back(p.ok[k]);
    }
}

CacheCounters::~CacheCounters() { closeAll(); }

void CacheCounters::closeAll()
{
    for (const Event& e : m_events) close(e.fd);
    m_events.clear();
    m_running = false;
}

void CacheCounters::start()
{
    closeAll();
    m_startSeconds = nowSeconds();
    if (m_opened.empty()) return;
    const std::vector<pid_t> tids = m_scope == CounterScope::Process ? processThreads() : std::vector<pid_t>{0};
    for (int k = 0; k < kKindCount; ++k) {
        if (!m_opened[k]) continue;
        for (pid_t tid : tids) {
            const int fd = openEvent({m_configs[k].type, m_configs[k].config}, tid);
            if (fd >= 0) m_events.push_back({k, fd});  // a thread that just exited is simply skipped
        }
    }
    for (const Event& e : m_events) ioctl(e.fd, PERF_EVENT_IOC_RESET, 0);
    for (const Event& e : m_events) ioctl(e.fd, PERF_EVENT_IOC_ENABLE, 0);
    m_running = true;
}

CacheCounterSample CacheCounters::read() const
{
    CacheCounterSample sample;
    sample.seconds = nowSeconds() - m_startSeconds;
    CounterValue* slots[kKindCount] = {&sample.l1dReadMisses, &sample.llcMisses, &sample.instructions, &sample.cycles};
    for (const Event& e : m_events) {
        std::uint64_t buf[3] = {};
        if (::read(e.fd, buf, sizeof(buf)) != ssize_t(sizeof(buf))) continue;
        const std::uint64_t value = buf[0], enabled = buf[1], running = buf[2];
        CounterValue& slot = *slots[e.kind];
        if (enabled != 0 && running == 0) continue;  // never scheduled on the PMU: no information
        slot.valid = true;
        if (running < enabled && running != 0) {
            slot.scaled = true;
            slot.value += std::uint64_t(std::llround(double(value) * double(enabled) / double(running)));
        } else {
            slot.value += value;
        }
    }
    return sample;
}

CacheCounterSample CacheCounters::stop()
{
    for (const Event& e : m_events) ioctl(e.fd, PERF_EVENT_IOC_DISABLE, 0);
    CacheCounterSample sample = read();
    closeAll();
    return sample;
}

}  // namespace uot::perf
