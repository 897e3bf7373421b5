// Linked into the ThreadSanitizer flavour's tests only (cmake/UotSanitize.cmake).
//
// LLVM's OpenMP runtime (libomp 14) under ThreadSanitizer crashes in
// __kmpc_end_critical when a thread other than the main thread is the first to
// start a parallel region with a critical section, ends, and a later thread
// starts one: the studio's worker thread of one test, then the next test's.
// Registering the main thread with the runtime first, before main() starts any
// thread, avoids it (the main thread keeps the runtime's first root slot).

#include <omp.h>

namespace {

[[maybe_unused]] const int g_openMpMainThread = omp_get_max_threads();

}  // namespace
