#pragma once
// The two checks Qt Test lacks, shared by every Qt Test of the project:
//
//   UOT_QCOMPARE_CLOSE(actual, expected, tol)
//       |actual - expected| <= tol (NaN fails); the failure message prints
//       actual, expected and the tolerance.
//   UOT_QVERIFY_THROWS_WITH(expr, fragment)
//       expr throws a std::exception whose what() contains fragment.
//   UOT_QVERIFY_MSG(cond, a << " " << b)
//       QVERIFY2 whose message is streamed (numbers printed with operator<<).
//
// Both end the current test function on failure, like QVERIFY.

#include <QtTest/QtTest>

#include <cmath>
#include <exception>
#include <sstream>
#include <string>

#define UOT_QCOMPARE_CLOSE(actual, expected, tol)                                              \
    do {                                                                                       \
        const double uot_a = (actual), uot_e = (expected), uot_t = (tol);                      \
        if (!(std::abs(uot_a - uot_e) <= uot_t)) {                                             \
            std::ostringstream uot_msg;                                                        \
            uot_msg.precision(17);                                                             \
            uot_msg << #actual " = " << uot_a << ", expected " << uot_e << " within " << uot_t; \
            QFAIL(uot_msg.str().c_str());                                                      \
        }                                                                                      \
    } while (0)

#define UOT_QVERIFY_THROWS_WITH(expr, fragment)                                                \
    do {                                                                                       \
        std::string uot_what;                                                                  \
        bool uot_threw = false;                                                                \
        try {                                                                                  \
            (void)(expr);                                                                      \
        } catch (const std::exception& uot_ex) {                                               \
            uot_threw = true;                                                                  \
            uot_what = uot_ex.what();                                                          \
        }                                                                                      \
        QVERIFY2(uot_threw, "no exception from " #expr);                                       \
        QVERIFY2(uot_what.find(fragment) != std::string::npos,                                 \
                 (std::string("message '") + uot_what + "' lacks '" + (fragment) + "'").c_str()); \
    } while (0)

#define UOT_QVERIFY_MSG(cond, stream)                                  \
    do {                                                               \
        if (!(cond)) {                                                 \
            std::ostringstream uot_msg;                                \
            uot_msg.precision(17);                                     \
            uot_msg << "check failed: " #cond " -- " << stream;        \
            QFAIL(uot_msg.str().c_str());                              \
        }                                                              \
    } while (0)
