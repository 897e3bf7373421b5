#include "app/cli/thread_check.h"

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "core/transport/uot_error.h"

namespace uot::cli {

void requireThreadsCanStart(int threads)
{
    if (threads <= 1) return;
    std::mutex mutex;
    std::condition_variable released;
    bool release = false;
    std::vector<std::thread> started;
    started.reserve(static_cast<std::size_t>(threads - 1));
    std::string refusal;
    try {
        for (int i = 1; i < threads; ++i)
            started.emplace_back([&] {
                std::unique_lock<std::mutex> lock(mutex);
                released.wait(lock, [&] { return release; });
            });
    } catch (const std::system_error& e) {
        refusal = e.what();
    }
    {
        std::lock_guard<std::mutex> lock(mutex);
        release = true;
    }
    released.notify_all();
    for (std::thread& t : started) t.join();
    if (refusal.empty()) return;
    const std::size_t ran = started.size() + 1;  // the calling thread too
    const unsigned cores = std::thread::hardware_concurrency();
    throw Error(ErrorCode::OutOfMemory,
                "cannot run " + std::to_string(threads) + " threads here: the system refused to start more than " +
                    std::to_string(ran) + " (" + refusal +
                    "; a limit such as ulimit -u or ulimit -v); pass --threads 0 (one a core" +
                    (cores > 0 ? ", " + std::to_string(cores) + " here" : std::string()) + ") or a count well under " +
                    std::to_string(ran) + ": each thread needs memory for its stack, and the work for its own");
}

}  // namespace uot::cli
