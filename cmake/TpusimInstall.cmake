# `cmake --install build --prefix P`: the CLI, libtpusim, the public headers (under
# include/tpusim, so user code writes the same #include "dsl/..." paths as the repo), the
# topology presets and schema, and a CMake package: find_package(tpusim CONFIG) gives
# tpusim::tpusim (the library) and tpusim::cli (the executable).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TPUSIM_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tpusim)
set(TPUSIM_INSTALL_TOPOLOGIESDIR ${CMAKE_INSTALL_DATADIR}/tpusim/topologies)

install(TARGETS tpusim_library tpusim EXPORT tpusimTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The shared-linked CLI that runs plugins for the `tpusim` executable, where that one links
# libtpusim in (tools/tpusim/CMakeLists.txt). A helper, not part of the package's API.
set(TPUSIM_SHARED_CLI_DESTINATION ${CMAKE_INSTALL_BINDIR})
if(NOT TPUSIM_SHARED_CLI STREQUAL "tpusim")
  set(TPUSIM_SHARED_CLI_DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/tpusim)
  install(TARGETS ${TPUSIM_SHARED_CLI} RUNTIME DESTINATION ${TPUSIM_SHARED_CLI_DESTINATION})
endif()

# The shared-linked CLI's RUNPATH: libtpusim relative to the binary ($ORIGIN), in the build
# tree and once installed, wherever either lives. Not CMake's own scheme: it links the build
# tree's binary with its absolute build RPATH and a ':' appended (room for the install RPATH,
# which `cmake --install` writes in place), and ld.so reads that empty last entry as the
# current directory, where it looks for every library the CLI needs, in every hwcaps
# subdirectory: about 150 failed opens a run (docs/performance-start-up.md). So the
# binary is linked with its build-tree path, padded with '/' (which ld.so ignores at the end
# of a directory) to the length of the installed one, and install rewrites it in place.
file(RELATIVE_PATH library_from_installed_cli /PREFIX/${TPUSIM_SHARED_CLI_DESTINATION}
     /PREFIX/${CMAKE_INSTALL_LIBDIR})
set(TPUSIM_CLI_INSTALL_RPATH "$ORIGIN/${library_from_installed_cli}")
get_target_property(cli_dir ${TPUSIM_SHARED_CLI} RUNTIME_OUTPUT_DIRECTORY)
if(NOT cli_dir)
  get_target_property(cli_dir ${TPUSIM_SHARED_CLI} BINARY_DIR)
endif()
get_target_property(library_dir tpusim_library BINARY_DIR)
file(RELATIVE_PATH library_from_cli ${cli_dir} ${library_dir})
set(TPUSIM_CLI_BUILD_RPATH "$ORIGIN/${library_from_cli}")
string(LENGTH "${TPUSIM_CLI_INSTALL_RPATH}" install_rpath_length)
string(LENGTH "${TPUSIM_CLI_BUILD_RPATH}" build_rpath_length)
if(build_rpath_length LESS install_rpath_length)
  math(EXPR padding "${install_rpath_length} - ${build_rpath_length}")
  string(REPEAT "/" ${padding} slashes)
  string(APPEND TPUSIM_CLI_BUILD_RPATH "${slashes}")
endif()
# BUILD_WITH_INSTALL_RPATH turns CMake's rewriting off: the binary is linked with
# INSTALL_RPATH, here the build tree's, and the rule below rewrites the installed copy.
set_target_properties(${TPUSIM_SHARED_CLI} PROPERTIES
  BUILD_WITH_INSTALL_RPATH ON
  INSTALL_RPATH "${TPUSIM_CLI_BUILD_RPATH}")
# A build that skips RPATHs has none to rewrite.
if(NOT CMAKE_SKIP_RPATH AND NOT CMAKE_SKIP_INSTALL_RPATH)
  install(CODE "file(RPATH_CHANGE
    FILE \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${TPUSIM_SHARED_CLI_DESTINATION}/tpusim\"
    OLD_RPATH \"${TPUSIM_CLI_BUILD_RPATH}\" NEW_RPATH \"${TPUSIM_CLI_INSTALL_RPATH}\")")
endif()

# Everything a kernel's or a host program's #includes reach (the DSL, the registry, the
# kernel helpers, base/ and the parts of traces/ and topologies/ the DSL headers name).
# No sim/ or SystemC header is among them.
# The DSL, program and kernel headers are globbed so a new one cannot be left out; the
# test that compiles every installed header alone catches what they reach beyond these.
file(GLOB TPUSIM_PUBLIC_HEADERS RELATIVE ${PROJECT_SOURCE_DIR} CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/dsl/*.h ${PROJECT_SOURCE_DIR}/dsl/program/*.h
  ${PROJECT_SOURCE_DIR}/kernels/*.h ${PROJECT_SOURCE_DIR}/kernels/lax/*.h
  ${PROJECT_SOURCE_DIR}/base/*.h)
list(APPEND TPUSIM_PUBLIC_HEADERS
  programs/host_reference.h
  topologies/topology_loader.h
  traces/trace_sink.h)
foreach(header ${TPUSIM_PUBLIC_HEADERS})
  get_filename_component(dir ${header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${header}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tpusim/${dir})
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/topologies/topology.pb.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tpusim/topologies)

file(GLOB TPUSIM_PRESETS ${PROJECT_SOURCE_DIR}/topologies/*.textproto)
install(FILES ${TPUSIM_PRESETS} ${PROJECT_SOURCE_DIR}/topologies/topology.proto
        DESTINATION ${TPUSIM_INSTALL_TOPOLOGIESDIR})
# The schema our traces are written in, for decoding them without tpusim.
install(FILES ${PROJECT_SOURCE_DIR}/traces/perfetto_trace.proto
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tpusim)

install(EXPORT tpusimTargets NAMESPACE tpusim:: DESTINATION ${TPUSIM_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tpusimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tpusimConfig.cmake
  INSTALL_DESTINATION ${TPUSIM_INSTALL_CMAKEDIR}
  PATH_VARS TPUSIM_INSTALL_TOPOLOGIESDIR)
# Before 1.0 a minor release may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tpusimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tpusimConfig.cmake
        ${PROJECT_BINARY_DIR}/tpusimConfigVersion.cmake
        DESTINATION ${TPUSIM_INSTALL_CMAKEDIR})
