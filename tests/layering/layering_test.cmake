# cmake -DSOURCE_DIR=.. -P this
# The layering of docs/model.md: kernels, programs, the DSL and the HLO layers reach the
# model only through base/ (CorePort, Engine). None of their files may include a sim/ header
# or SystemC, directly; indirectly they cannot either, since no base/ header does (checked
# here too).
include(${CMAKE_CURRENT_LIST_DIR}/scan_sources.cmake)
scan_sources(violations "#include *[<\"](sim/|systemc|tlm)" dsl kernels programs examples base hlo)
if(violations)
  message(FATAL_ERROR "these files include the model or SystemC; use base/ instead:${violations}")
endif()
# The HLO reader stands alone: base/ and nlohmann_json, no model, DSL, kernel or program.
# Running a module (hlo/run/) is the layer above it, on the program layer.
scan_sources(hlo_violations "#include *[<\"](sim/|dsl/|kernels/|programs/|tools/|systemc|tlm)" hlo)
string(REGEX REPLACE "\n  hlo/run/[^\n]*" "" hlo_violations "${hlo_violations}")
# (hlo/reference/, the evaluator, is checked on its own below.)
string(REGEX REPLACE "\n  hlo/reference/[^\n]*" "" hlo_violations "${hlo_violations}")
if(hlo_violations)
  message(FATAL_ERROR "these hlo/ files include another layer; hlo/ needs base/ only:${hlo_violations}")
endif()
# The reference evaluator (hlo/reference/) is the independent check of the simulated ops, so
# it shares no code with them: of tpusim it includes base/, the HLO reader (hlo/) and the
# data container (dsl/array.h, dsl/dtype.h), nothing of dsl/program/, the MXU numerics, the
# kernels, hlo/run/ or the model.
file(GLOB_RECURSE reference_files ${SOURCE_DIR}/hlo/reference/*.h ${SOURCE_DIR}/hlo/reference/*.cc)
set(reference_violations "")
foreach(file ${reference_files})
  file(STRINGS ${file} includes REGEX "^#include *\"")
  foreach(line ${includes})
    if(NOT line MATCHES "^#include *\"(base/|hlo/|dsl/array\\.h|dsl/dtype\\.h)" OR
       line MATCHES "hlo/run/")
      file(RELATIVE_PATH relative ${SOURCE_DIR} ${file})
      string(APPEND reference_violations "\n  ${relative}: ${line}")
    endif()
  endforeach()
endforeach()
if(reference_violations)
  message(FATAL_ERROR "the reference evaluator must not share code with the simulated ops; "
                      "these hlo/reference/ includes are not base/, hlo/ or dsl/array.h, "
                      "dsl/dtype.h:${reference_violations}")
endif()
