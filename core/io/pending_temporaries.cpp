#include "core/io/pending_temporaries.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>

namespace uot {

namespace {

constexpr int kSlots = 64;
constexpr std::size_t kPathBytes = 4096;

// A slot's path is written before its flag is set and read only after the flag
// is seen set, so the handler never reads a half-written path.
struct Slot {
    std::atomic<bool> used{false};
    std::atomic<bool> claimed{false};
    char path[kPathBytes];
};
Slot g_slots[kSlots];

extern "C" void removeAndReraise(int signal)
{
    for (Slot& slot : g_slots)
        if (slot.used.load(std::memory_order_acquire)) ::unlink(slot.path);  // async-signal-safe
    std::signal(signal, SIG_DFL);
    std::raise(signal);
}

}  // namespace

PendingTemporary::PendingTemporary(const std::string& path)
{
    if (path.size() >= kPathBytes) return;
    for (int i = 0; i < kSlots; ++i) {
        bool expected = false;
        if (!g_slots[i].claimed.compare_exchange_strong(expected, true)) continue;
        std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
        g_slots[i].used.store(true, std::memory_order_release);
        m_slot = i;
        return;
    }
}

PendingTemporary::~PendingTemporary()
{
    if (m_slot < 0) return;
    g_slots[m_slot].used.store(false, std::memory_order_release);
    g_slots[m_slot].claimed.store(false, std::memory_order_release);
}

void removeTemporariesOnSignals()
{
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction current {};
        if (::sigaction(signal, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
        struct sigaction action {};
        action.sa_handler = removeAndReraise;
        sigemptyset(&action.sa_mask);
        ::sigaction(signal, &action, nullptr);
    }
}

}  // namespace uot
