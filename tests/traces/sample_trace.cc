#include "tests/traces/sample_trace.h"

#include <string>

namespace tpusim::traces::testing {

SampleTracks RecordSampleRun(TraceSink& sink) {
  SampleTracks t;
  t.chip0 = sink.AddProcessTrack("chip 0", 0);
  t.core0 = sink.AddTrack(t.chip0, "core 0", 0);
  t.dma0 = sink.AddTrack(t.chip0, "dma 0", 1);
  t.dma0_queue = sink.AddTrack(t.dma0, "queue", 0);
  t.hbm_bandwidth = sink.AddCounterTrack(t.chip0, "hbm bandwidth", CounterUnit::kBytesPerSecond, 2);
  t.chip1 = sink.AddProcessTrack("chip 1", 1);
  t.chip1_core0 = sink.AddTrack(t.chip1, "core 0", 0);
  t.chip1_semaphore = sink.AddCounterTrack(t.chip1, "semaphore recv", CounterUnit::kCount, 1);

  sink.Begin(t.core0, 0, "kernel", {{"grid", int64_t{4}}});
  sink.Begin(t.core0, 1500, "step 0", {{"i", uint64_t{0}}});
  sink.Begin(t.dma0, 2000, "remote copy",
             {{"bytes", uint64_t{4096}}, {"dst", std::string("chip 1")}, {"ratio", 0.5}},
             /*flow_out=*/1);
  sink.Instant(t.dma0_queue, 2000, "enqueue");
  sink.Counter(t.hbm_bandwidth, 2000, 1.5e9);
  sink.End(t.dma0, 9999);
  sink.Counter(t.hbm_bandwidth, 9999, 0);
  sink.Instant(t.chip1_core0, 10000, "arrive", {{"ok", true}}, /*flow_out=*/0, /*flow_in=*/1);
  sink.Counter(t.chip1_semaphore, 10000, 1);
  sink.End(t.core0, 12000);
  sink.Begin(t.core0, 12000, "step 1");
  sink.End(t.core0, 20000);
  sink.End(t.core0, 20000);
  sink.Finish();
  return t;
}

}  // namespace tpusim::traces::testing
