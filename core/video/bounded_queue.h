#pragma once
// A first-in first-out queue of bounded length between two threads (the clip
// pipeline's decode -> map -> encode stages): push() waits while it is full,
// pop() while it is empty; close() ends it for both sides.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>

namespace uot {

template <typename T>
class BoundedQueue {
public:
    explicit BoundedQueue(std::size_t capacity) : m_capacity(capacity ? capacity : 1) {}

    // Waits for room; false (item not taken) once the queue is closed.
    bool push(T item)
    {
        std::unique_lock lock(m_mutex);
        m_notFull.wait(lock, [&] { return m_closed || m_items.size() < m_capacity; });
        if (m_closed) return false;
        m_items.push_back(std::move(item));
        m_notEmpty.notify_one();
        return true;
    }

    // Waits for an item; false when the queue is closed and empty.
    bool pop(T& item)
    {
        std::unique_lock lock(m_mutex);
        m_notEmpty.wait(lock, [&] { return m_closed || !m_items.empty(); });
        if (m_items.empty()) return false;
        item = std::move(m_items.front());
        m_items.pop_front();
        m_notFull.notify_one();
        return true;
    }

    // No more pushes; pop() still returns what is queued.
    void close()
    {
        std::lock_guard lock(m_mutex);
        m_closed = true;
        m_notEmpty.notify_all();
        m_notFull.notify_all();
    }

    // close() and drop what is queued (the consumer stops at once).
    void abort()
    {
        std::lock_guard lock(m_mutex);
        m_closed = true;
        m_items.clear();
        m_notEmpty.notify_all();
        m_notFull.notify_all();
    }

private:
    std::size_t m_capacity;
    std::deque<T> m_items;
    bool m_closed = false;
    std::mutex m_mutex;
    std::condition_variable m_notEmpty, m_notFull;
};

}  // namespace uot
