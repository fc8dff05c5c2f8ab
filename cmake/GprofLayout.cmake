# The build tree is laid out like the install tree, so every binary finds its siblings by a path relative to
# itself: bin/gprof-run -> ../lib/gprof-run/libgprof-collector.so, from a build, an install or a relocated copy.
set(GPROF_PKGLIBDIR "lib/gprof-run")   # relative to the prefix; the collector and bundled libraries
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/${GPROF_PKGLIBDIR})
set(CMAKE_ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/archive)
# Test programs and test doubles go to their own folder, never into bin/ or lib/, and are never installed.
set(GPROF_TEST_BINARY_DIR ${CMAKE_BINARY_DIR}/tests)
