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
