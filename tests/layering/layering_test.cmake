# cmake -DSOURCE_DIR=.. -P this
# DESIGN.md's layering: kernels, programs and the DSL reach the model only through base/
# (CorePort, Engine). None of their files may include a sim/ header or SystemC, directly;
# indirectly they cannot either, since no base/ header does (checked here too).
set(violations "")
foreach(layer dsl kernels programs examples base)
  file(GLOB_RECURSE files ${SOURCE_DIR}/${layer}/*.h ${SOURCE_DIR}/${layer}/*.cc)
  foreach(file ${files})
    file(STRINGS ${file} includes REGEX "#include *[<\"](sim/|systemc|tlm)")
    if(includes)
      file(RELATIVE_PATH relative ${SOURCE_DIR} ${file})
      string(APPEND violations "\n  ${relative}: ${includes}")
    endif()
  endforeach()
endforeach()
if(violations)
  message(FATAL_ERROR "these files include the model or SystemC; use base/ instead:${violations}")
endif()
