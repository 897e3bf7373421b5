#pragma once
// Hardware cache statistics for a solve: L1D read misses, last-level-cache
// misses, instructions and cycles, read through the Linux perf_event_open
// interface for the solving threads. Where the kernel or the VM does not expose
// the PMU (e.g. the development VM, where `perf stat` says "not supported") the
// facility reports available() == false with a reason a person understands,
// and every sample is marked invalid; it never throws for that.
//
//   CacheCounters counters;            // opens nothing yet
//   counters.start();                  // right before solver->solve(...)
//   ... at each check: auto s = counters.read();   (totals since start)
//   auto total = counters.stop();
//   if (!total.anyValid()) show(counters.unavailableReason());

#include <cstdint>
#include <string>
#include <vector>

namespace uot::perf {

// One counter's value. valid is false when the event could not be opened or read.
struct CounterValue {
    std::uint64_t value = 0;
    bool valid = false;
    bool scaled = false;  // the PMU was multiplexed; value is extrapolated from the time it ran
};

struct CacheCounterSample {
    CounterValue l1dReadMisses;  // L1 data cache read misses
    CounterValue llcMisses;      // last-level cache misses (LL read misses, or the generic "cache misses")
    CounterValue instructions;   // instructions retired (user space)
    CounterValue cycles;         // core cycles (user space)
    double seconds = 0;          // wall time since start()

    bool anyValid() const;
    // Derived figures; NaN when an input is invalid or zero.
    double instructionsPerCycle() const;
    double l1dMissesPerKiloInstruction() const;
    double llcMissesPerKiloInstruction() const;
    // Component-wise a - b (validity is the AND of both), for per-interval values.
    friend CacheCounterSample operator-(const CacheCounterSample& a, const CacheCounterSample& b);
};

// Which threads are counted.
enum class CounterScope {
    // Every thread of the process that exists at start() (OpenMP pool threads
    // included) and every thread they create afterwards. The default: the
    // OpenMP team of a solve is always covered, whichever thread created it.
    Process,
    // The thread that calls start() and the threads it creates afterwards only.
    CallingThread
};

class CacheCounters {
public:
    // Probes availability (opens and closes one counter on the calling thread).
    explicit CacheCounters(CounterScope scope = CounterScope::Process);
    ~CacheCounters();
    CacheCounters(const CacheCounters&) = delete;
    CacheCounters& operator=(const CacheCounters&) = delete;

    // True when at least instructions and cycles can be counted.
    bool available() const { return m_available; }
    // Empty when every event is available; otherwise why not (whole facility or
    // the events that are missing), for a person.
    const std::string& unavailableReason() const { return m_reason; }
    // The same in a few words for one line of a panel (e.g. "no PMU in this VM
    // or container"); empty when every event is available.
    const std::string& unavailableSummary() const { return m_summary; }

    // Opens the counters on the threads of the scope, zeroes and enables them.
    // Calling start() again restarts from zero. No-op when unavailable.
    void start();
    // Totals since start() while still counting (cheap: one read per counter).
    CacheCounterSample read() const;
    // Disables the counters and returns the totals since start().
    CacheCounterSample stop();
    bool running() const { return m_running; }

private:
    struct Event {
        int kind;
        int fd;
    };
    struct EventEncoding {
        std::uint32_t type = 0;
        std::uint64_t config = 0;
    };
    void closeAll();
    CounterScope m_scope;
    bool m_available = false;
    bool m_running = false;
    std::string m_reason;
    std::string m_summary;
    std::vector<Event> m_events;  // one per (event kind, thread)
    std::vector<EventEncoding> m_configs;  // working encoding per event kind
    std::vector<bool> m_opened;            // per event kind: can be counted here
    double m_startSeconds = 0;
};

// The value of /proc/sys/kernel/perf_event_paranoid, or INT32_MIN when it cannot be read.
int perfEventParanoid();

// A sentence explaining why perf_event_open failed with errnoValue for eventName,
// mentioning the paranoid level where it matters (EACCES/EPERM). Used by
// CacheCounters; public so that the wording can be tested on every machine.
std::string describePerfEventFailure(int errnoValue, const std::string& eventName, int paranoid);

// The cause of that failure in a few words, without the event (e.g. "not
// permitted (perf_event_paranoid 3)"), for a one-line display.
std::string summarizePerfEventFailure(int errnoValue, int paranoid);

}  // namespace uot::perf
