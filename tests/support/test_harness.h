#pragma once
// A minimal test harness for the Qt-free tests (they must also build and run
// on the headless GPU machine, which has no test framework installed).
//
//   UOT_TEST(name) { UOT_CHECK(x == 1); UOT_CHECK_CLOSE(a, b, 1e-9); }
//
// main() (in test_harness.cpp) runs every test, or those whose name contains
// argv[1], prints "N passed, N failed" and returns 1 on failure. A test may
// call uot::test::skip("why") to mark the whole executable skipped (exit 77)
// when nothing else failed, e.g. when no GPU is present.

#include <cmath>
#include <functional>
#include <sstream>
#include <string>

namespace uot::test {

void registerTest(const char* name, std::function<void()> body);
void recordFailure(const char* file, int line, const std::string& what);
void skip(const std::string& why);

struct Registrar {
    Registrar(const char* name, std::function<void()> body) { registerTest(name, std::move(body)); }
};

}  // namespace uot::test

#define UOT_TEST(name)                                                       \
    static void name();                                                      \
    static const ::uot::test::Registrar name##_registrar(#name, &name);     \
    static void name()

#define UOT_CHECK(cond)                                                               \
    do {                                                                              \
        if (!(cond)) ::uot::test::recordFailure(__FILE__, __LINE__, "check failed: " #cond); \
    } while (0)

#define UOT_CHECK_MSG(cond, msg)                                                   \
    do {                                                                           \
        if (!(cond)) {                                                             \
            std::ostringstream uot_check_stream;                                   \
            uot_check_stream << "check failed: " #cond " -- " << msg;              \
            ::uot::test::recordFailure(__FILE__, __LINE__, uot_check_stream.str()); \
        }                                                                          \
    } while (0)

#define UOT_CHECK_CLOSE(actual, expected, tol)                                                  \
    do {                                                                                        \
        const double uot_a = (actual), uot_e = (expected), uot_t = (tol);                       \
        if (!(std::abs(uot_a - uot_e) <= uot_t)) {                                              \
            std::ostringstream uot_check_stream;                                                \
            uot_check_stream << #actual " = " << uot_a << ", expected " << uot_e << " within " << uot_t; \
            ::uot::test::recordFailure(__FILE__, __LINE__, uot_check_stream.str());             \
        }                                                                                       \
    } while (0)

#define UOT_CHECK_THROWS_WITH(expr, fragment)                                                   \
    do {                                                                                        \
        bool uot_threw = false;                                                                 \
        try {                                                                                   \
            (void)(expr);                                                                       \
        } catch (const std::exception& uot_e) {                                                 \
            uot_threw = true;                                                                   \
            if (std::string(uot_e.what()).find(fragment) == std::string::npos)                  \
                ::uot::test::recordFailure(__FILE__, __LINE__,                                  \
                                           std::string("message '") + uot_e.what() +            \
                                               "' lacks '" + (fragment) + "'");                 \
        }                                                                                       \
        if (!uot_threw) ::uot::test::recordFailure(__FILE__, __LINE__, "no exception from " #expr); \
    } while (0)
