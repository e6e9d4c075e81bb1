# scan_sources(RESULT REGEX LAYERS...): for every .h and .cc file under the source
# directories LAYERS of SOURCE_DIR, the lines matching REGEX, one "  path: lines" entry per
# file that has any, appended to RESULT. Shared by the layering checks.
function(scan_sources result regex)
  set(found "")
  foreach(layer ${ARGN})
    file(GLOB_RECURSE files ${SOURCE_DIR}/${layer}/*.h ${SOURCE_DIR}/${layer}/*.cc)
    foreach(file ${files})
      file(STRINGS ${file} lines REGEX "${regex}")
      if(lines)
        file(RELATIVE_PATH relative ${SOURCE_DIR} ${file})
        string(APPEND found "\n  ${relative}: ${lines}")
      endif()
    endforeach()
  endforeach()
  set(${result} "${found}" PARENT_SCOPE)
endfunction()
