# Sanitizer build flavours and the fuzz targets (see docs/BUILDING.md, "Sanitizers and fuzzing").
#
#   UOT_SANITIZE=address,undefined   AddressSanitizer + UndefinedBehaviorSanitizer
#   UOT_SANITIZE=thread              ThreadSanitizer
#   UOT_FUZZ=ON                      libFuzzer targets of tests/fuzz (clang only)
#
# Every target of the build is instrumented (flags added before any subdirectory).
# Reports are fatal (-fno-sanitize-recover=all): a test with a report fails.
# Under ThreadSanitizer OpenMP must be LLVM's libomp with its TSan tool, Archer
# (clang's -fopenmp links libomp; Archer is loaded through OMP_TOOL_LIBRARIES):
# GNU libgomp's barriers are invisible to TSan and give false reports.
set(UOT_SANITIZE "" CACHE STRING "Sanitizers for every target: '', address,undefined (or either), or thread")
option(UOT_FUZZ "Build the libFuzzer targets of tests/fuzz (clang; best with UOT_SANITIZE=address,undefined)" OFF)

# The suites each flavour runs (./test.sh: ctest -L sanitize in build-asan/ and
# build-tsan/). scripts/setup.sh builds only the target uot_sanitize_suite, which
# depends on these tests' executables and on UOT_SANITIZE_TARGETS (what they run).
# ASan + UBSan: the Qt-free suites (solvers, npy, colour, pipeline, image I/O and
# batch engine, the CLI end to end, the row blocks that move between threads) and the fuzz targets' short runs. Left out:
# test_solver_memory and test_perf, which measure the process's resident memory
# (ASan's shadow memory and quarantine change it), test_acceleration (about 2.5
# minutes under ASan on 2 cores; its solver code also runs in test_cpu_solvers and
# test_pipeline), and the GPU suites (no CUDA in these flavours).
set(UOT_SANITIZE_TESTS_ADDRESS
    test_reference_solver test_cpu_solvers test_row_kernels test_npy_io test_mapreduce_solver
    test_color test_guided_filter test_marginal_match test_quality_metrics test_cube_lut test_pipeline test_imageio
    test_compression_blocks test_gpu_traffic test_solver_registry test_cli_recolor_batch test_bench_command
    test_look_fit test_map_regularizer test_artifact_metrics test_atomic_file test_output_set test_json_text
    test_row_block_reduction)
# TSan: the batch engine's std::thread workers (test_imageio), the batched
# engine's workers taking images, with claims (test_batched_recolor_scheduling), the pipeline and
# the solvers' OpenMP loops with cancellation from another thread (test_pipeline,
# test_cpu_solvers), the studio's worker (test_solve_worker) and its
# batch dialog with QtConcurrent loads (test_batch_dialog; the flavour is built
# with the GUI for these two). Debian's Qt is not built with TSan: what that
# takes (the worker's std::condition_variable_any, QueuedSignalSpy in the tests,
# the suppressions of Qt's libraries, tests/support/openmp_main_thread.cpp) is
# in docs/sanitizers.md.
set(UOT_SANITIZE_TESTS_THREAD test_imageio test_batched_recolor_scheduling test_pipeline test_cpu_solvers
    test_solve_worker test_batch_dialog)
set(UOT_SANITIZE_TARGETS uot uot_image)

# uot_sanitize_register(TEST [TARGET]): labels TEST "sanitize" when this
# flavour's suite has it (call after its other LABELS are set), and makes
# uot_sanitize_suite build TARGET (default: TEST).
function(uot_sanitize_register test)
  if(NOT TARGET uot_sanitize_suite)
    return()
  endif()
  if(UOT_SANITIZE STREQUAL "thread")
    set(suite ${UOT_SANITIZE_TESTS_THREAD})
  else()
    set(suite ${UOT_SANITIZE_TESTS_ADDRESS})
  endif()
  if(NOT test IN_LIST suite)
    return()
  endif()
  set_property(TEST ${test} APPEND PROPERTY LABELS sanitize)
  if(UOT_SANITIZE STREQUAL "thread")
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT "OMP_TOOL_LIBRARIES=${UOT_ARCHER_LIBRARY}"
                 "TSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/cmake/tsan-suppressions.txt")
  endif()
  set(target ${test})
  if(ARGC GREATER 1)
    set(target ${ARGV1})
  endif()
  if(TARGET ${target})
    add_dependencies(uot_sanitize_suite ${target})
    if(UOT_SANITIZE STREQUAL "thread")
      # libomp under TSan: the main thread must be OpenMP's first root thread
      # (tests/support/openmp_main_thread.cpp says why).
      target_sources(${target} PRIVATE "${PROJECT_SOURCE_DIR}/tests/support/openmp_main_thread.cpp")
      target_link_libraries(${target} PRIVATE OpenMP::OpenMP_CXX)
    endif()
  endif()
endfunction()

if(UOT_SANITIZE STREQUAL "" AND NOT UOT_FUZZ)
  function(uot_sanitize_finish)
  endfunction()
  return()
endif()
add_custom_target(uot_sanitize_suite)

if(NOT UOT_SANITIZE MATCHES "^(address,undefined|undefined,address|address|undefined|thread)?$")
  message(FATAL_ERROR "UOT_SANITIZE=${UOT_SANITIZE}: use address,undefined, address, undefined or thread")
endif()
if(UOT_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "UOT_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang")
endif()
if(UOT_FUZZ AND UOT_SANITIZE STREQUAL "thread")
  message(FATAL_ERROR "UOT_FUZZ goes with UOT_SANITIZE=address,undefined (or empty), not thread")
endif()

if(NOT UOT_SANITIZE STREQUAL "")
  # Line tables are enough for symbolized reports and keep the build fast.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    set(uot_sanitize_debug -gline-tables-only)
  else()
    set(uot_sanitize_debug -g1)
  endif()
  add_compile_options(-fsanitize=${UOT_SANITIZE} -fno-sanitize-recover=all -fno-omit-frame-pointer ${uot_sanitize_debug})
  add_link_options(-fsanitize=${UOT_SANITIZE})
  message(STATUS "UOT: sanitizers ${UOT_SANITIZE}")
endif()

if(UOT_FUZZ)
  # Coverage feedback from the project's code, not only from the fuzz entry points.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

if(UOT_SANITIZE STREQUAL "thread")
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "UOT_SANITIZE=thread needs clang with LLVM's libomp and Archer (libomp-dev): "
                        "-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang")
  endif()
  # Archer, libomp's ThreadSanitizer tool: it tells TSan about OpenMP's barriers,
  # locks and tasks, so that the solvers' parallel loops are checked, not reported
  # falsely. Loaded by libomp from OMP_TOOL_LIBRARIES, set on the suite's tests
  # (uot_sanitize_register) with TSAN_OPTIONS naming cmake/tsan-suppressions.txt.
  get_filename_component(uot_clang_dir "${CMAKE_CXX_COMPILER}" REALPATH)
  get_filename_component(uot_clang_dir "${uot_clang_dir}" DIRECTORY)
  find_library(UOT_ARCHER_LIBRARY NAMES archer HINTS "${uot_clang_dir}/../lib" NO_DEFAULT_PATH)
  find_library(UOT_ARCHER_LIBRARY NAMES archer)
  if(NOT UOT_ARCHER_LIBRARY)
    message(FATAL_ERROR "Archer (libarcher.so, from libomp-dev) not found: ThreadSanitizer would report "
                        "OpenMP's own synchronisation falsely")
  endif()
  message(STATUS "UOT: OpenMP under ThreadSanitizer through Archer (${UOT_ARCHER_LIBRARY})")
endif()

# uot_sanitize_finish(): called once every target exists (end of the top-level
# CMakeLists). Under ThreadSanitizer, the files with target_clones functions get
# no function entry/exit hooks: the ifunc resolver of such a function runs while
# the program is loaded, before the TSan runtime is up, and would crash there
# (their memory accesses are still checked; only their own stack frames are
# missing from reports).
function(uot_sanitize_finish)
  foreach(target ${UOT_SANITIZE_TARGETS})
    if(TARGET ${target})
      add_dependencies(uot_sanitize_suite ${target})
    endif()
  endforeach()
  if(UOT_SANITIZE STREQUAL "thread")
    file(GLOB_RECURSE sources CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/core/*.cpp" "${PROJECT_SOURCE_DIR}/app/*.cpp"
                                                 "${PROJECT_SOURCE_DIR}/ui/*.cpp" "${PROJECT_SOURCE_DIR}/gpu/*.cpp")
    foreach(source ${sources})
      file(STRINGS "${source}" clones REGEX "target_clones")
      if(clones)
        get_filename_component(dir "${source}" DIRECTORY)
        set_property(SOURCE "${source}" DIRECTORY "${dir}" APPEND PROPERTY COMPILE_OPTIONS
                     -fno-sanitize-thread-func-entry-exit)
      endif()
    endforeach()
  endif()
endfunction()
