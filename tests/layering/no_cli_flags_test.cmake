# cmake -DSOURCE_DIR=.. -P this
# The library speaks in parameter names ('bytes', 'm'); only the CLI knows flags and maps
# the names in an error to them. No string literal in kernels/, programs/, dsl/ or the user
# example may spell a flag ("--bytes", "(--m)", "run with --timing-only"): a literal holding
# -- before a letter.
include(${CMAKE_CURRENT_LIST_DIR}/scan_sources.cmake)
scan_sources(violations "\"[^\"]*--[a-z][^\"]*\"" dsl kernels programs examples hlo)
if(violations)
  message(FATAL_ERROR "these strings spell a CLI flag; name the parameter instead and let the "
                      "CLI map it (tools/tpusim/param_flags.h):${violations}")
endif()
