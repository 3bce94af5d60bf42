# toolcache_module(NAME DEPS <libs...> TEST_DEPS <libs...>)
#
# Builds every non-test .cc file of the calling directory into the static
# library toolcache_<NAME>, and every *_test.cc beside them into the test
# binary toolcache_<NAME>_test, registered with CTest. Files are globbed, so
# adding a source or a test to a module touches no CMake file.
function(toolcache_module name)
  cmake_parse_arguments(ARG "" "" "DEPS;TEST_DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  list(FILTER srcs EXCLUDE REGEX "_test\\.cc$")
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  if(srcs)
    add_library(toolcache_${name} STATIC ${srcs})
    target_include_directories(toolcache_${name}
      PUBLIC ${PROJECT_SOURCE_DIR}/include
      PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(toolcache_${name} PUBLIC ${ARG_DEPS} Threads::Threads)
    target_compile_definitions(toolcache_${name} PRIVATE
      TOOLCACHE_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  else()
    # A module with no sources yet: headers and dependencies only.
    add_library(toolcache_${name} INTERFACE)
    target_include_directories(toolcache_${name} INTERFACE ${PROJECT_SOURCE_DIR}/include)
    target_link_libraries(toolcache_${name} INTERFACE ${ARG_DEPS} Threads::Threads)
  endif()
  if(TOOLCACHE_BUILD_TESTS AND tests)
    add_executable(toolcache_${name}_test ${tests})
    target_include_directories(toolcache_${name}_test PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(toolcache_${name}_test PRIVATE toolcache_${name}
      ${ARG_TEST_DEPS} GTest::gmock GTest::gtest_main)
    target_compile_definitions(toolcache_${name}_test PRIVATE
      TOOLCACHE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
      TOOLCACHE_BINARY_DIR="${PROJECT_BINARY_DIR}")
    add_test(NAME ${name} COMMAND toolcache_${name}_test --gtest_brief=1)
  endif()
endfunction()
