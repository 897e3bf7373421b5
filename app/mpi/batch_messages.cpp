#include "app/mpi/batch_messages.h"

#include <cstring>
#include <stdexcept>

namespace uot::mpi {

namespace {

class Writer {
public:
    template <typename T>
    void put(const T& value)
    {
        const char* p = reinterpret_cast<const char*>(&value);
        m_bytes.insert(m_bytes.end(), p, p + sizeof(T));
    }
    void put(const std::string& text)
    {
        put(static_cast<std::uint64_t>(text.size()));
        m_bytes.insert(m_bytes.end(), text.begin(), text.end());
    }
    Bytes take() { return std::move(m_bytes); }

private:
    Bytes m_bytes;
};

class Reader {
public:
    explicit Reader(const Bytes& bytes) : m_bytes(bytes) {}
    template <typename T>
    T get()
    {
        need(sizeof(T));
        T value;
        std::memcpy(&value, m_bytes.data() + m_at, sizeof(T));
        m_at += sizeof(T);
        return value;
    }
    std::string text()
    {
        const auto size = get<std::uint64_t>();
        need(size);
        std::string out(m_bytes.data() + m_at, size);
        m_at += size;
        return out;
    }
    bool atEnd() const { return m_at == m_bytes.size(); }

private:
    void need(std::uint64_t size) const
    {
        if (size > m_bytes.size() - m_at) throw std::runtime_error("uot-mpi batch: a message between ranks is cut short");
    }
    const Bytes& m_bytes;
    std::size_t m_at = 0;
};

void putTimings(Writer& w, const PhaseTimings& t)
{
    for (const double v : {t.decode, t.palette, t.cost, t.solve, t.map, t.encode}) w.put(v);
}

PhaseTimings getTimings(Reader& r)
{
    PhaseTimings t;
    for (double* v : {&t.decode, &t.palette, &t.cost, &t.solve, &t.map, &t.encode}) *v = r.get<double>();
    return t;
}

}  // namespace

Bytes packItem(std::uint64_t index, const BatchItemResult& item)
{
    Writer w;
    w.put(index);
    w.put(static_cast<std::int32_t>(item.status));
    w.put(item.input);
    w.put(item.output);
    w.put(item.message);
    w.put(item.note);
    putTimings(w, item.timings);
    return w.take();
}

BatchItemResult unpackItem(const Bytes& bytes, std::uint64_t& index)
{
    Reader r(bytes);
    index = r.get<std::uint64_t>();
    BatchItemResult item;
    const auto status = r.get<std::int32_t>();
    if (status < 0 || status > static_cast<std::int32_t>(BatchItemStatus::Cancelled))
        throw std::runtime_error("uot-mpi batch: a message between ranks has an unknown status");
    item.status = static_cast<BatchItemStatus>(status);
    item.input = r.text();
    item.output = r.text();
    item.message = r.text();
    item.note = r.text();
    item.timings = getTimings(r);
    return item;
}

Bytes packShareEnd(const ShareEnd& end)
{
    Writer w;
    w.put(static_cast<std::int32_t>(end.kind));
    w.put(static_cast<std::int32_t>(end.code));
    w.put(end.message);
    return w.take();
}

Bytes packClaim(std::uint64_t index)
{
    Writer w;
    w.put(index);
    return w.take();
}

std::uint64_t unpackClaim(const Bytes& bytes)
{
    Reader r(bytes);
    return r.get<std::uint64_t>();
}

ShareEnd unpackShareEnd(const Bytes& bytes)
{
    Reader r(bytes);
    ShareEnd end;
    end.kind = r.get<std::int32_t>();
    end.code = r.get<std::int32_t>();
    end.message = r.text();
    return end;
}

Bytes packShares(std::uint64_t total, const std::vector<SharedInput>& inputs)
{
    Writer w;
    w.put(total);
    w.put(static_cast<std::uint64_t>(inputs.size()));
    for (const SharedInput& s : inputs) {
        w.put(s.index);
        w.put(static_cast<std::uint8_t>((s.input.fromFolder ? 1 : 0) | (s.clip ? 2 : 0)));
        w.put(s.input.path);
    }
    return w.take();
}

std::vector<SharedInput> unpackShares(const Bytes& bytes, std::uint64_t& total)
{
    Reader r(bytes);
    total = r.get<std::uint64_t>();
    const auto count = r.get<std::uint64_t>();
    std::vector<SharedInput> out;
    for (std::uint64_t i = 0; i < count; ++i) {
        SharedInput s;
        s.index = r.get<std::uint64_t>();
        const auto kinds = r.get<std::uint8_t>();
        s.input.fromFolder = (kinds & 1) != 0;
        s.clip = (kinds & 2) != 0;
        s.input.path = r.text();
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace uot::mpi
