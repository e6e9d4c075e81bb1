#pragma once

// A small run recorded through the TraceSink interface, shared by the writer tests so
// each format is checked against the same calls.

#include "traces/trace_sink.h"

namespace tpusim::traces::testing {

struct SampleTracks {
  TrackId chip0 = 0;
  TrackId core0 = 0;
  TrackId dma0 = 0;
  TrackId dma0_queue = 0;  // a grandchild track: chip 0/dma 0/queue
  TrackId hbm_bandwidth = 0;
  TrackId chip1 = 0;
  TrackId chip1_core0 = 0;
  TrackId chip1_semaphore = 0;
};

// Two chips; chip 0's core runs "kernel" with steps "step 0" and "step 1" (the second
// begins at the very picosecond the first ends), its DMA sends "remote copy" with flow 1,
// which arrives as the instant "arrive" on chip 1. Times are picoseconds chosen so that
// flooring to nanoseconds matters (9999 ps becomes 9 ns).
SampleTracks RecordSampleRun(TraceSink& sink);

}  // namespace tpusim::traces::testing
