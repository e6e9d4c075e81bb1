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
if(hlo_violations)
  message(FATAL_ERROR "these hlo/ files include another layer; hlo/ needs base/ only:${hlo_violations}")
endif()
