# cmake -DSOURCE_DIR=.. -P this
# DESIGN.md's layering: kernels, programs and the DSL reach the model only through base/
# (CorePort, Engine). None of their files may include a sim/ header or SystemC, directly;
# indirectly they cannot either, since no base/ header does (checked here too).
include(${CMAKE_CURRENT_LIST_DIR}/scan_sources.cmake)
scan_sources(violations "#include *[<\"](sim/|systemc|tlm)" dsl kernels programs examples base)
if(violations)
  message(FATAL_ERROR "these files include the model or SystemC; use base/ instead:${violations}")
endif()
# The HLO reader stands alone: base/ and nlohmann_json, no model, DSL, kernel or program.
scan_sources(hlo_violations "#include *[<\"](sim/|dsl/|kernels/|programs/|tools/|systemc|tlm)" hlo)
if(hlo_violations)
  message(FATAL_ERROR "these hlo/ files include another layer; hlo/ needs base/ only:${hlo_violations}")
endif()
