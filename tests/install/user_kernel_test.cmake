# cmake -DBUILD_DIR=.. -DSOURCE_DIR=.. -DWORK_DIR=.. [-DCXX=..] [-DLAUNCHER=..] [-DPYTHON=..] -P this
# The package from a clean prefix: install the build into WORK_DIR/prefix, build
# examples/user_kernel against it alone, run its binary (the kernel and the program), then
# the installed CLI on its plugin (list both, compare the kernel against the built-in ring).
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
set(example ${WORK_DIR}/example)

function(step name)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  message(STATUS "${name}:\n${out}")
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${name} failed (${status}): ${ARGN}\n${out}\n${err}")
  endif()
  set(output "${out}" PARENT_SCOPE)
endfunction()

function(expect_in text what)
  string(FIND "${text}" "${what}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "expected '${what}' in:\n${text}")
  endif()
endfunction()

step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(installed bin/tpusim include/tpusim/dsl/shard_map.h include/tpusim/kernels/registry.h
        include/tpusim/topologies/topology.pb.h share/tpusim/topologies/v5e.textproto
        share/tpusim/topologies/topology.proto include/tpusim/programs/host_reference.h
        share/tpusim/perfetto_trace.proto)
  if(NOT EXISTS ${prefix}/${installed})
    message(FATAL_ERROR "cmake --install did not install ${installed}")
  endif()
endforeach()

# Kernel code must never see SystemC: no installed header may include it.
file(GLOB_RECURSE headers ${prefix}/include/tpusim/*.h)
foreach(header ${headers})
  file(STRINGS ${header} systemc_includes REGEX "#include *<(systemc|tlm)")
  if(systemc_includes)
    message(FATAL_ERROR "${header} includes SystemC: ${systemc_includes}")
  endif()
endforeach()

set(configure_args -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
if(CXX)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER=${CXX})
endif()
if(LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
endif()

# Every installed header compiles on its own against the package: none includes a header
# that was not installed (a new public header must join TPUSIM_PUBLIC_HEADERS).
set(headers_project ${WORK_DIR}/headers)
set(includes "")
foreach(header ${headers})
  file(RELATIVE_PATH relative ${prefix}/include/tpusim ${header})
  string(APPEND includes "#include \"${relative}\"\n")
endforeach()
file(WRITE ${headers_project}/all_headers.cc "${includes}")
file(WRITE ${headers_project}/CMakeLists.txt
  "cmake_minimum_required(VERSION 3.25)\nproject(headers LANGUAGES CXX)\n"
  "find_package(tpusim CONFIG REQUIRED)\nadd_library(all_headers OBJECT all_headers.cc)\n"
  "target_link_libraries(all_headers PRIVATE tpusim::tpusim)\n")
step("configure the header check" ${CMAKE_COMMAND} -S ${headers_project}
     -B ${headers_project}/build ${configure_args})
step("compile every installed header" ${CMAKE_COMMAND} --build ${headers_project}/build)

step("configure the example" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/user_kernel
     -B ${example} ${configure_args})
step("build the example" ${CMAKE_COMMAND} --build ${example} -j2)

step("run the example binary" ${example}/user_kernel_demo v5e-4x4 1048576)
foreach(name all_gather_ring_left_chunked gather_sum)
  if(NOT output MATCHES "${name} on v5e-4x4[^\n]* data correct")
    message(FATAL_ERROR "the example binary did not run ${name} correctly:\n${output}")
  endif()
endforeach()

set(plugin ${example}/libuser_kernel_plugin.so)
step("tpusim list --load" ${prefix}/bin/tpusim list --load ${plugin})
expect_in("${output}" "all_gather_ring_left_chunked")
expect_in("${output}" "gather_sum")
expect_in("${output}" "all_gather_bidi")
step("tpusim compare --load" ${prefix}/bin/tpusim compare all_gather_ring
     all_gather_ring_left_chunked --load ${plugin} --topology v5e-4x4 --bytes 1M)
if(NOT output MATCHES "\nall_gather_ring_left_chunked [^\n]* correct")
  message(FATAL_ERROR "compare has no correct row for the plugin's kernel:\n${output}")
endif()

# A trace decodes with the installed schema alone, as README says (protoc --decode).
step("trace a run" ${prefix}/bin/tpusim run all_gather_ring --topology v5e-2x2 --bytes 4K
     --trace ${WORK_DIR}/ring.pftrace)
execute_process(COMMAND protoc --decode=perfetto.protos.Trace -I ${prefix}/share/tpusim
                perfetto_trace.proto INPUT_FILE ${WORK_DIR}/ring.pftrace
                RESULT_VARIABLE status OUTPUT_VARIABLE decoded ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "protoc could not decode the trace with the installed schema: ${err}")
endif()
expect_in("${decoded}" "track_descriptor {")

# The Python module from the prefix alone (PYTHON: the interpreter it was built for; unset
# when the build has no module).
if(PYTHON)
  step("run the installed Python module" ${CMAKE_COMMAND} -E env
       PYTHONPATH=${prefix}/lib/python3/dist-packages ${PYTHON} -c
       "import tpusim\nr = tpusim.run('ppermute', topology='v5e-2x2', axis='x', bytes='4K')\nprint(tpusim.__file__, r.correct)")
  expect_in("${output}" "${prefix}/lib/python3/dist-packages/tpusim/__init__.py True")
endif()
