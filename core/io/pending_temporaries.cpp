#include "core/io/pending_temporaries.h"

#include <fcntl.h>
#include <sys/syscall.h>
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
    bool folder = false;
    char path[kPathBytes];
};
Slot g_slots[kSlots];

// Removes a folder of files with system calls only (async-signal-safe): its entries
// are listed with getdents64 and unlinked, a few rounds in case another thread
// adds a file meanwhile, then the folder itself.
void removeFolderOfFiles(const char* path)
{
    static char entries[8192];
    for (int round = 0; round < 8; ++round) {
        const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) return;
        long n;
        while ((n = ::syscall(SYS_getdents64, fd, entries, sizeof entries)) > 0) {
            for (long at = 0; at < n;) {
                const char* entry = entries + at;
                unsigned short length;
                std::memcpy(&length, entry + 16, sizeof length);  // d_reclen after d_ino and d_off
                const char* name = entry + 19;                     // d_name after d_type
                if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) ::unlinkat(fd, name, 0);
                at += length;
            }
        }
        ::close(fd);
        if (::rmdir(path) == 0) return;
    }
}

extern "C" void removeAndReraise(int signal)
{
    for (Slot& slot : g_slots) {  // files first: a pending file may lie in a pending folder
        if (slot.used.load(std::memory_order_acquire) && !slot.folder) ::unlink(slot.path);  // async-signal-safe
    }
    for (Slot& slot : g_slots)
        if (slot.used.load(std::memory_order_acquire) && slot.folder) removeFolderOfFiles(slot.path);
    std::signal(signal, SIG_DFL);
    std::raise(signal);
}

}  // namespace

PendingTemporary::PendingTemporary(const std::string& path, PendingKind kind)
{
    if (path.size() >= kPathBytes) return;
    for (int i = 0; i < kSlots; ++i) {
        bool expected = false;
        if (!g_slots[i].claimed.compare_exchange_strong(expected, true)) continue;
        std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
        g_slots[i].folder = kind == PendingKind::FolderOfFiles;
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
