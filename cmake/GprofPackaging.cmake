# Install rules and CPack TGZ: a relocatable tree that needs only glibc (>= GPROF_GLIBC_FLOOR) and, to profile
# anything, the CUDA driver. See docs/install.md.
#
#   bin/gprof-run, bin/gprof-report             (each component adds install(TARGETS) for its own target)
#   lib/gprof-run/libgprof-collector.so          (+ any bundled shared library, found through RPATH $ORIGIN)
#   share/doc/gprof-run/                         README, LICENSE, docs, examples
#
# Nothing is found through absolute paths: binaries find their siblings relative to themselves (GprofLayout.cmake),
# so the tree works from any prefix and can be moved after installation.

# The glibc floor (gprof_static_runtime) is set up in GprofDependencies.cmake.

# ----- install rules ------------------------------------------------------------------------------------------
# RPATH: installed binaries look next to themselves and in lib/gprof-run, never in the build tree.
set(GPROF_INSTALL_RPATH_BIN "\$ORIGIN/../${GPROF_PKGLIBDIR}")
set(GPROF_INSTALL_RPATH_LIB "\$ORIGIN")
set_target_properties(gprof-run gprof-report PROPERTIES INSTALL_RPATH "${GPROF_INSTALL_RPATH_BIN}")
set_target_properties(gprof-collector PROPERTIES INSTALL_RPATH "${GPROF_INSTALL_RPATH_LIB}")

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR}
  COMPONENT doc)
# User documentation.
file(GLOB _gprof_user_docs ${PROJECT_SOURCE_DIR}/docs/*.md)
if(_gprof_user_docs)
  install(FILES ${_gprof_user_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs COMPONENT doc)
endif()

# Bundling: after every component's install rules (CMP0082: rules run in declaration order, and this file is
# included last), copy each shared library the installed binaries need, other than glibc, libgcc_s and the CUDA
# driver/CUPTI, into lib/gprof-run/, where their RPATH finds it (e.g. libz.so.1 when a component links zlib).
#
# Each bundled library gets a RUNPATH of $ORIGIN (patchelf, scripts/setup installs it): an executable's RUNPATH covers
# only what it needs itself, so libdw's own liblzma and libbz2, bundled beside it, would otherwise be looked for on the
# machine, where they may not be; auditwheel then also finds the wheel's tree complete and copies nothing in.
find_program(GPROF_PATCHELF patchelf)
install(CODE "set(_gprof_patchelf \"${GPROF_PATCHELF}\")")
install(CODE [=[
  set(_gprof_root "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
  set(_gprof_exes "")
  set(_gprof_libs "")
  foreach(_f bin/gprof-run bin/gprof-report)
    if(EXISTS "${_gprof_root}/${_f}")
      list(APPEND _gprof_exes "${_gprof_root}/${_f}")
    endif()
  endforeach()
  if(EXISTS "${_gprof_root}/lib/gprof-run/libgprof-collector.so")
    list(APPEND _gprof_libs "${_gprof_root}/lib/gprof-run/libgprof-collector.so")
  endif()
  if(_gprof_exes OR _gprof_libs)
    file(GET_RUNTIME_DEPENDENCIES
      EXECUTABLES ${_gprof_exes} LIBRARIES ${_gprof_libs}
      RESOLVED_DEPENDENCIES_VAR _gprof_deps UNRESOLVED_DEPENDENCIES_VAR _gprof_unresolved
      DIRECTORIES "${_gprof_root}/lib/gprof-run"
      PRE_EXCLUDE_REGEXES "^linux-vdso" "^ld-linux" "^libc\\.so" "^libm\\.so" "^libdl\\.so" "^libpthread\\.so"
                          "^librt\\.so" "^libutil\\.so" "^libresolv\\.so" "^libgcc_s\\.so" "^libcuda\\.so"
                          "^libcupti\\.so" "^libnvidia-"
      POST_EXCLUDE_REGEXES "/lib/gprof-run/")
    # One file per library, under the name the binaries ask for (libdw.so.1): the loader needs no other, and a
    # wheel, which cannot hold symbolic links, would carry a second copy of each.
    foreach(_d IN LISTS _gprof_deps)
      get_filename_component(_name "${_d}" NAME)
      file(REAL_PATH "${_d}" _real)
      message(STATUS "Bundling ${_d} into lib/gprof-run")
      # file(INSTALL) puts $DESTDIR in front of the destination itself (cpack -G DEB installs with one).
      file(INSTALL "${_real}" DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/gprof-run" RENAME "${_name}")
      if(_gprof_patchelf)
        execute_process(COMMAND "${_gprof_patchelf}" --set-rpath "$ORIGIN" "${_gprof_root}/lib/gprof-run/${_name}"
                        RESULT_VARIABLE _rc)
        if(NOT _rc EQUAL 0)
          message(FATAL_ERROR "patchelf could not set the RUNPATH of lib/gprof-run/${_name}")
        endif()
      else()
        message(WARNING "no patchelf: lib/gprof-run/${_name} finds its own dependencies on the system only")
      endif()
    endforeach()
    if(_gprof_unresolved)
      message(WARNING "gprof-run install: unresolved shared libraries: ${_gprof_unresolved}")
    endif()
  endif()
]=])

# ----- CPack --------------------------------------------------------------------------------------------------
set(CPACK_GENERATOR TGZ)
set(CPACK_STRIP_FILES ON)  # RelWithDebInfo binaries are ~5x larger with their debug info
set(CPACK_PACKAGE_NAME gprof-run)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "gprof-run")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_FILE_NAME gprof-run-${PROJECT_VERSION}-linux-x86_64)
set(CPACK_INCLUDE_TOPLEVEL_DIRECTORY ON)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/dist)
set(CPACK_SOURCE_GENERATOR "")
# The .deb (cpack -G DEB): the same tree under /usr -- /usr/bin/gprof-run, /usr/lib/gprof-run/ (the collector and the
# libraries bundled beside it, private to gprof-run, never on the loader's path), /usr/share/doc/gprof-run/. Its only
# dependencies are glibc at the floor and libgcc_s (docs/install.md); the CUDA driver and CUPTI are found at run time.
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # gprof-run_<version>_amd64.deb
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "gprof-run developers")
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= ${GPROF_GLIBC_FLOOR}), libgcc-s1")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "${PROJECT_DESCRIPTION}
 gprof-run records CUDA kernels, memory copies, CUDA API calls and NVTX ranges of a
 program it starts, without changing or rebuilding it; gprof-report turns the
 recording into nvprof/nsys-style summaries, timelines and JSON for CI.")
include(CPack)
