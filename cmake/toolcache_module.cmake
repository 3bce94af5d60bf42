# toolcache_module(NAME DEPS <libs...> TEST_DEPS <libs...>)
#
# Builds every non-test .cc file of the calling directory into the static
# library toolcache_<NAME>, and every *_test.cc beside them into the test
# binary toolcache_<NAME>_test, registered with CTest. Files are globbed, so
# adding a source or a test to a module touches no CMake file.
#
# Each library is also toolcache::<NAME> (its installed, exported name; see
# cmake/toolcache_install.cmake) and is listed in the global property
# TOOLCACHE_LIBRARIES for the install rules.
include(GNUInstallDirs)
function(toolcache_module name)
  cmake_parse_arguments(ARG "" "" "DEPS;TEST_DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cc)
  list(FILTER srcs EXCLUDE REGEX "_test\\.cc$")
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cc)
  if(srcs)
    add_library(toolcache_${name} STATIC ${srcs})
    target_include_directories(toolcache_${name}
      PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
             $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
      PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(toolcache_${name} PUBLIC ${ARG_DEPS} Threads::Threads)
  else()
    # A module with no sources yet: headers and dependencies only.
    add_library(toolcache_${name} INTERFACE)
    target_include_directories(toolcache_${name} INTERFACE
      $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
      $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
    target_link_libraries(toolcache_${name} INTERFACE ${ARG_DEPS} Threads::Threads)
  endif()
  set_target_properties(toolcache_${name} PROPERTIES EXPORT_NAME ${name})
  add_library(toolcache::${name} ALIAS toolcache_${name})
  set_property(GLOBAL APPEND PROPERTY TOOLCACHE_LIBRARIES toolcache_${name})
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
