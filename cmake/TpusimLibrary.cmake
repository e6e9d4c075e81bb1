include(GNUInstallDirs)

# libtpusim: every layer (topologies, traces, sim, dsl, kernels, programs, hlo and its
# reference evaluator) in one shared library, exported as tpusim::tpusim.
#
# Why shared: kernels register themselves from static initialisers into one Registry.
# A shared library keeps every registration (no archive member is dropped, so no
# whole-archive flags for users), and it gives the process exactly one Registry: the CLI,
# a user's binary and every plugin the CLI dlopens all resolve Registry::Get() to this
# library's copy. A static package would give each plugin its own copy, and its kernels
# would register where the CLI never looks.
# Executables and plugins link this target, never the layer OBJECT libraries as well: that
# would put a second copy of the registry and of the protobuf descriptors in the process.
# The one exception is the `tpusim` executable, which links the layers' objects instead of
# this library (never both), and hands every run that loads a plugin to a CLI linked with
# this library (tools/tpusim/CMakeLists.txt says why and how).
set(TPUSIM_LAYERS tpusim_topologies tpusim_traces tpusim_base tpusim_sim tpusim_dsl
    tpusim_kernels tpusim_programs tpusim_hlo tpusim_hlo_run tpusim_hlo_reference)
add_library(tpusim_library SHARED)
set_target_properties(tpusim_library PROPERTIES
  OUTPUT_NAME tpusim
  EXPORT_NAME tpusim
  VERSION ${PROJECT_VERSION}
  # Pre-1.0: a minor release may break the ABI.
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
# Object libraries linked directly contribute their objects.
target_link_libraries(tpusim_library PRIVATE ${TPUSIM_LAYERS})
# What the public headers need (dsl/dtype.h uses Eigen; topology.pb.h protobuf). SystemC is
# a link dependency only: no public header includes it.
target_link_libraries(tpusim_library PUBLIC protobuf::libprotobuf Eigen3::Eigen
                      PkgConfig::SYSTEMC)
# hlo/module.h holds nlohmann::json (decoded backend configs). The hlo/ headers are not
# installed yet, so only the build tree's users need it.
target_link_libraries(tpusim_library PUBLIC $<BUILD_INTERFACE:nlohmann_json::nlohmann_json>)
target_include_directories(tpusim_library PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
  $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}>  # generated topologies/topology.pb.h
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/tpusim>)
target_compile_features(tpusim_library PUBLIC cxx_std_20)
# Every symbol the library needs is resolved when it is linked, not when a plugin loads.
# Except under the sanitizers: clang puts the ASan/UBSan runtime (and libFuzzer's coverage
# callbacks) into the executable only, never into a shared library, so the library's
# __asan_*, __ubsan_* and __sanitizer_cov_* references stay open until the executable that
# loads it supplies them. The executable then must be built with the same flags: the
# exported target says so (INTERFACE link options below), for users of a sanitized package.
if(NOT TPUSIM_SANITIZE)
  target_link_options(tpusim_library PRIVATE LINKER:--no-undefined)
else()
  target_link_options(tpusim_library INTERFACE -fsanitize=address,undefined)
endif()
target_link_options(tpusim_library PRIVATE
  # Calls inside the library bind to its own functions directly, not through the PLT: the
  # simulator's hot paths cost what they cost in a static build. Plugins still resolve
  # Registry::Get() and the rest to this library (they define no such symbols).
  LINKER:-Bsymbolic-functions)
target_link_libraries(tpusim_library PRIVATE ${CMAKE_DL_LIBS})  # dlopen, for plugins
add_library(tpusim::tpusim ALIAS tpusim_library)

# What compiling and linking against the layers' objects needs, without the library: for the
# `tpusim` executable, which links the objects themselves (TPUSIM_LINKS_LAYERS below). Their
# objects come only from a direct link; this carries their usage requirements.
add_library(tpusim_layers INTERFACE)
target_link_libraries(tpusim_layers INTERFACE ${TPUSIM_LAYERS} Eigen3::Eigen PkgConfig::SYSTEMC
                      nlohmann_json::nlohmann_json ${CMAKE_DL_LIBS})
target_include_directories(tpusim_layers INTERFACE ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
target_compile_features(tpusim_layers INTERFACE cxx_std_20)
