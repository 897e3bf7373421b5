#include "tests/support/test_harness.h"

#include <cstdio>
#include <cstring>
#include <vector>

namespace uot::test {

namespace {
struct Entry {
    const char* name;
    std::function<void()> body;
};
std::vector<Entry>& registry()
{
    static std::vector<Entry> entries;
    return entries;
}
int g_failuresInCurrent = 0;
std::string g_skipReason;
}  // namespace

void registerTest(const char* name, std::function<void()> body) { registry().push_back({name, std::move(body)}); }

void recordFailure(const char* file, int line, const std::string& what)
{
    ++g_failuresInCurrent;
    std::fprintf(stderr, "  FAIL %s:%d: %s\n", file, line, what.c_str());
}

void skip(const std::string& why) { g_skipReason = why; }

}  // namespace uot::test

int main(int argc, char** argv)
{
    using namespace uot::test;
    const char* filter = argc > 1 ? argv[1] : nullptr;
    int passed = 0, failed = 0;
    for (const Entry& entry : registry()) {
        if (filter && !std::strstr(entry.name, filter)) continue;
        g_failuresInCurrent = 0;
        std::fprintf(stderr, "[ RUN  ] %s\n", entry.name);
        try {
            entry.body();
        } catch (const std::exception& e) {
            recordFailure(__FILE__, __LINE__, std::string("unexpected exception: ") + e.what());
        }
        if (!g_skipReason.empty() && g_failuresInCurrent == 0) {
            std::fprintf(stderr, "[ SKIP ] %s: %s\n", entry.name, g_skipReason.c_str());
            std::printf("0 passed, 0 failed, 1 skipped\n");
            return 77;
        }
        std::fprintf(stderr, "[ %s ] %s\n", g_failuresInCurrent ? "FAIL" : " OK ", entry.name);
        (g_failuresInCurrent ? failed : passed)++;
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
