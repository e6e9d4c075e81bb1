# jemalloc as the executables' allocator. The model allocates and frees small objects on
# every DMA (kernel refs, routes, semaphore waiters); glibc's allocator spent a third of a
# pod-scale run on them (docs/performance-at-scale.md, "Pod scale: the allocator, one-lattice
# overlaps and shared labels"). Linking jemalloc into an executable replaces malloc for the
# whole process, libtpusim included; a shared library cannot do that for its host, so the
# Python module keeps the interpreter's allocator.
# Not under the sanitizers: ASan brings its own allocator.
if(NOT TPUSIM_SANITIZE)
  find_library(TPUSIM_JEMALLOC NAMES jemalloc)
endif()
if(TPUSIM_JEMALLOC)
  message(STATUS "Allocator: jemalloc (${TPUSIM_JEMALLOC})")
elseif(NOT TPUSIM_SANITIZE)
  message(STATUS "Allocator: glibc's (install libjemalloc-dev for faster runs; "
                 "scripts/bootstrap does)")
endif()

function(tpusim_use_fast_malloc target)
  if(TPUSIM_JEMALLOC)
    target_link_libraries(${target} PRIVATE ${TPUSIM_JEMALLOC})
    # Its options (2 MiB pages for the heap): base/jemalloc_conf.cc says why.
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/base/jemalloc_conf.cc)
  endif()
endfunction()
