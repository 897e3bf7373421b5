#pragma once
// A large host buffer of floats for per-pixel data: not zero-filled (a 12 MP
// image would spend a whole pass zeroing 144 MB) and, on Linux, backed by
// transparent huge pages where the system allows them on request (fewer page
// faults on first touch).

#include <cstddef>
#include <memory>

namespace uot {

class FloatBuffer {
public:
    FloatBuffer() = default;
    // Allocates n floats (contents undefined). Throws uot::Error(OutOfMemory).
    explicit FloatBuffer(std::size_t n);

    float* data() { return m_data.get(); }
    const float* data() const { return m_data.get(); }
    std::size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    void reset() { m_data.reset(), m_size = 0; }

private:
    struct Free {
        void operator()(float* p) const;
    };
    std::unique_ptr<float, Free> m_data;
    std::size_t m_size = 0;
};

}  // namespace uot
