# Every dependency comes from Debian packages (scripts/setup) except the CUDA toolkit (/usr/local/cuda).
find_package(Threads REQUIRED)
find_package(CUDAToolkit REQUIRED)   # CUPTI and NVTX headers only: nothing links libcupti or libcuda
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(LIBUNWIND REQUIRED IMPORTED_TARGET libunwind)

find_path(GPROF_CUPTI_INCLUDE_DIR cupti_activity.h
  HINTS ${CUDAToolkit_INCLUDE_DIRS} ${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include
  REQUIRED)
find_path(GPROF_NVTX3_INCLUDE_DIR nvtx3/nvToolsExt.h HINTS ${CUDAToolkit_INCLUDE_DIRS} REQUIRED)

# CUDA headers without linking anything of CUDA.
add_library(gprof_cuda_headers INTERFACE)
target_include_directories(gprof_cuda_headers SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS} ${GPROF_CUPTI_INCLUDE_DIR})

# spdlog and fmt header-only: no libspdlog.so / libfmt.so to ship, and none to clash with an app's own copy
# once the collector is inside it.
add_library(gprof_logging INTERFACE)
target_compile_definitions(gprof_logging INTERFACE SPDLOG_FMT_EXTERNAL FMT_HEADER_ONLY)
target_include_directories(gprof_logging SYSTEM INTERFACE
  $<TARGET_PROPERTY:spdlog::spdlog_header_only,INTERFACE_INCLUDE_DIRECTORIES>
  $<TARGET_PROPERTY:fmt::fmt-header-only,INTERFACE_INCLUDE_DIRECTORIES>)
target_link_libraries(gprof_logging INTERFACE Threads::Threads)

# gprof_static_runtime: every binary we ship (gprof-run, gprof-report, the collector, examples, test apps that
# travel to the GPU machine) links libstdc++ statically, so the relocatable tree needs only glibc there.
# The glibc floor: built here on glibc 2.36 with GCC 12, two static runtime pieces would raise what the GPU
# machine needs:
#   * static libstdc++ (random.o, pulled in by any std::string user) calls arc4random  -> GLIBC_2.36
#   * static libgcc's unwinder calls _dl_find_object                                   -> GLIBC_2.35
# So libstdc++ is static with a hidden arc4random of ours (cmake/glibc-floor/arc4random.c), and libgcc_s.so.1
# comes from the system (present wherever glibc is: glibc itself loads it for thread cancellation). What is left
# is __libc_start_main@GLIBC_2.34, which every program linked against glibc >= 2.34 needs. See docs/install.md.
set(GPROF_GLIBC_FLOOR "2.34" CACHE STRING "Highest GLIBC_x.y symbol version installed binaries may require")
add_library(gprof_glibc_floor OBJECT ${CMAKE_CURRENT_LIST_DIR}/glibc-floor/arc4random.c)
set_target_properties(gprof_glibc_floor PROPERTIES POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden)
add_library(gprof_static_runtime INTERFACE)
target_sources(gprof_static_runtime INTERFACE $<TARGET_OBJECTS:gprof_glibc_floor>)
target_link_options(gprof_static_runtime INTERFACE -static-libstdc++)

if(GPROF_BUILD_TESTS)
  find_package(Catch2 2 REQUIRED)
endif()
if(GPROF_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
