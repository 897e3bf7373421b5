// The backend's cache of GPU engines (gpu/engine_cache.h).

#include "gpu/engine_cache.h"

namespace uot::gpu::detail {

EngineCache& EngineCache::instance()
{
    static EngineCache cache;
    return cache;
}

EngineCache::~EngineCache() { clear(); }

std::unique_ptr<EngineBase> EngineCache::take(const std::string& key)
{
    std::lock_guard lock(m_mutex);
    for (auto it = m_parked.begin(); it != m_parked.end(); ++it) {
        if (it->first != key) continue;
        std::unique_ptr<EngineBase> engine = std::move(it->second);
        m_parked.erase(it);
        ++m_stats.reused;
        return engine;
    }
    return nullptr;
}

void EngineCache::park(const std::string& key, std::unique_ptr<EngineBase> engine)
{
    if (!engine) return;
    std::vector<std::unique_ptr<EngineBase>> freed;  // freed outside the lock
    {
        std::lock_guard lock(m_mutex);
        for (auto it = m_parked.begin(); it != m_parked.end();) {
            if (it->first == key) {
                freed.push_back(std::move(it->second));
                it = m_parked.erase(it);
            } else {
                ++it;
            }
        }
        m_parked.emplace_back(key, std::move(engine));
        while (m_parked.size() > kCapacity) {
            freed.push_back(std::move(m_parked.front().second));
            m_parked.erase(m_parked.begin());
        }
    }
}

void EngineCache::noteCreated()
{
    std::lock_guard lock(m_mutex);
    ++m_stats.created;
}

void EngineCache::noteDiscarded()
{
    std::lock_guard lock(m_mutex);
    ++m_stats.discarded;
}

void EngineCache::clear()
{
    std::vector<std::pair<std::string, std::unique_ptr<EngineBase>>> freed;
    {
        std::lock_guard lock(m_mutex);
        freed.swap(m_parked);
    }
}

DeviceContextStats EngineCache::stats() const
{
    std::lock_guard lock(m_mutex);
    DeviceContextStats s = m_stats;
    s.parked = m_parked.size();
    s.parkedDeviceBytes = 0;
    for (const auto& entry : m_parked) s.parkedDeviceBytes += entry.second->deviceBytes();
    return s;
}

}  // namespace uot::gpu::detail
