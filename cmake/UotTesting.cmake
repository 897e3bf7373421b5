# uot_add_test(NAME name SOURCES ... LIBS ... [LABELS ...] [QT])
# Every test executable uses Qt Test (linked here, with tests/support/qt_checks.h
# on the include path); the QT keyword is still accepted and changes nothing.
# Library targets stay Qt-free: only the test executables link Qt6::Test.
# A test case that skips in initTestCase() because no GPU is usable
# (UOT_QSKIP_WITHOUT_GPU in tests/gpu/gpu_test_support.h) is reported skipped.
function(uot_add_test)
  cmake_parse_arguments(T "QT" "NAME" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} uot::solvers Qt6::Test uot::test_support)
  set_target_properties(${T_NAME} PROPERTIES AUTOMOC ON)
  uot_set_warnings(${T_NAME})
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  set_tests_properties(${T_NAME} PROPERTIES ENVIRONMENT "QT_QPA_PLATFORM=offscreen"
                       SKIP_REGULAR_EXPRESSION "SKIP   : [A-Za-z0-9_]+::initTestCase\\(\\) no GPU")
  if(T_LABELS)
    set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}")
  endif()
  uot_sanitize_register(${T_NAME})  # cmake/UotSanitize.cmake
endfunction()
