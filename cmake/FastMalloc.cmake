# jemalloc as the executables' allocator. The model allocates and frees small objects on
# every DMA (kernel refs, routes, semaphore waiters); glibc's allocator spent a third of a
# pod-scale run on them (docs/performance-at-scale.md, "Pod scale: the allocator, one-lattice
# overlaps and shared labels"). Linking jemalloc into an executable replaces malloc for the
# whole process, libtpusim included; a shared library cannot do that for its host, so the
# Python module keeps the interpreter's allocator.
# Its position-independent archive where installed, else the shared library: linked into the
# executable, it is one shared object fewer to map and relocate at start-up, and one fewer in
# the scope of every symbol lookup ld.so does (docs/performance-start-up.md). The
# executable's malloc and operator new serve every library, as the shared one's did.
# Not under the sanitizers: ASan brings its own allocator.
if(NOT TPUSIM_SANITIZE)
  find_library(TPUSIM_JEMALLOC_LIBRARY NAMES libjemalloc_pic.a jemalloc)
  set(TPUSIM_JEMALLOC ${TPUSIM_JEMALLOC_LIBRARY})
endif()
if(TPUSIM_JEMALLOC MATCHES "[.]a$")
  find_package(Threads REQUIRED)
  # jemalloc defines every form of operator new and delete in one object of the archive. An
  # executable that replaces the array forms itself (tools/tpusim/systemc_scratch.cc) links a
  # copy in which jemalloc's array new and delete are weak, so its own are the ones linked.
  if(CMAKE_OBJCOPY)
    set(TPUSIM_JEMALLOC_OWN_ARRAY_NEW ${PROJECT_BINARY_DIR}/libjemalloc_own_array_new.a)
    add_custom_command(OUTPUT ${TPUSIM_JEMALLOC_OWN_ARRAY_NEW}
      COMMAND ${CMAKE_OBJCOPY} --weaken-symbol=_Znam --weaken-symbol=_ZdaPv
              --weaken-symbol=_ZdaPvm ${TPUSIM_JEMALLOC} ${TPUSIM_JEMALLOC_OWN_ARRAY_NEW}
      DEPENDS ${TPUSIM_JEMALLOC}
      COMMENT "jemalloc's archive with its array new and delete weak"
      VERBATIM)
    add_custom_target(tpusim_jemalloc_own_array_new DEPENDS ${TPUSIM_JEMALLOC_OWN_ARRAY_NEW})
  endif()
endif()
if(TPUSIM_JEMALLOC)
  message(STATUS "Allocator: jemalloc (${TPUSIM_JEMALLOC})")
elseif(NOT TPUSIM_SANITIZE)
  message(STATUS "Allocator: glibc's (install libjemalloc-dev for faster runs; "
                 "scripts/bootstrap does)")
endif()

# tpusim_use_fast_malloc(target [OWN_ARRAY_NEW]): link jemalloc into an executable.
# OWN_ARRAY_NEW: the executable defines operator new[] and delete[] itself; it links the copy
# of the archive above, or without objcopy the shared jemalloc, which its own interpose.
function(tpusim_use_fast_malloc target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "OWN_ARRAY_NEW" "" "")
  if(NOT TPUSIM_JEMALLOC)
    return()
  endif()
  if(NOT TPUSIM_JEMALLOC MATCHES "[.]a$")
    target_link_libraries(${target} PRIVATE ${TPUSIM_JEMALLOC})
  elseif(NOT arg_OWN_ARRAY_NEW)
    target_link_libraries(${target} PRIVATE ${TPUSIM_JEMALLOC} Threads::Threads ${CMAKE_DL_LIBS})
  elseif(TPUSIM_JEMALLOC_OWN_ARRAY_NEW)
    add_dependencies(${target} tpusim_jemalloc_own_array_new)
    target_link_libraries(${target} PRIVATE ${TPUSIM_JEMALLOC_OWN_ARRAY_NEW} Threads::Threads
                          ${CMAKE_DL_LIBS})
  else()
    find_library(TPUSIM_JEMALLOC_SHARED NAMES jemalloc)
    if(TPUSIM_JEMALLOC_SHARED)
      target_link_libraries(${target} PRIVATE ${TPUSIM_JEMALLOC_SHARED})
    endif()
  endif()
  # Its options (2 MiB pages for the heap): base/jemalloc_conf.cc says why. Compiled once
  # for every executable that links jemalloc.
  if(NOT TARGET tpusim_jemalloc_conf)
    add_library(tpusim_jemalloc_conf OBJECT ${PROJECT_SOURCE_DIR}/base/jemalloc_conf.cc)
  endif()
  target_link_libraries(${target} PRIVATE tpusim_jemalloc_conf)
endfunction()
