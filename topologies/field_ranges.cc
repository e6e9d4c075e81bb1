// The ranges of a topology's numeric fields (topologies/topology_loader.h), declared as
// base::Params: the loader checks each field against one and quotes it in the error.

#include "topologies/topology_loader.h"

namespace tpusim::topologies {

const std::vector<base::Param>& FieldRanges() {
  using base::Param;
  // Each description says which bound matters; the errors quote it.
  static const std::vector<Param> ranges = {
      Param::Double("clock", "1 MHz to 100 GHz spans every chip, real or planned")
          .Unit("Hz")
          .Range(1e6, 1e11),
      Param::Double("bandwidth",
                    "below 1 MB/s no chip's port runs, and a large transfer's time would "
                    "outgrow the simulated clock")
          .Unit("bytes per second")
          .Range(1e6, 1e16),
      Param::Bytes("capacity", "a functional run holds what a memory stores in host memory")
          .Unit("bytes")
          .Range(1, 1ull << 40),
      Param::Int("tensor_cores", "room above every chip's 1 or 2 (sim/chunk.h kMaxTensorCores)")
          .Unit("cores")
          .Range(1, 4),
      Param::Int("mxu_count", "room above every chip's count").Unit("MXUs").Range(1, 64),
      Param::Int("mxu_size", "room above every chip's 128 or 256")
          .Unit("rows of the square systolic array")
          .Range(1, 4096),
      Param::Int("vpu_shape", "room above every chip's 8 x 128")
          .Unit("sublanes or lanes")
          .Range(1, 4096),
      Param::Int("dma_engines", "each engine has host state and a trace track on every chip")
          .Unit("concurrent DMAs")
          .Range(1, 64),
      Param::Bytes("chunk_bytes", "smaller chunks would cost an event per few bytes")
          .Unit("bytes")
          .Range(4096, 1ull << 30),
      Param::Double("hop_latency", "up to a second per hop").Unit("ns").Range(0.0, 1e9),
      Param::Double("latency", "up to a second per DMA issue or remote signal")
          .Unit("ns")
          .Range(0.0, 1e9),
      Param::Int("axis_length", "above the largest pods").Unit("chips").Range(1, kMaxChips),
      Param::Int("chip_count", "above the largest pods").Unit("chips").Range(1, kMaxChips),
      Param::Int("device_count", "above the largest pods of two-chiplet chips")
          .Unit("devices")
          .Range(1, kMaxDevices),
      Param::Int("chiplets", "room above TPU7x's 2 chiplets per chip").Unit("devices").Range(2, 8),
      Param::Double("grid_step_cycles", "up to a simulated second per grid step")
          .Unit("cycles")
          .Range(0.0, 1e9),
      Param::Double("mxu_efficiency",
                    "a chip whose dots reach less than 1% of its peak is no chip, and its dot "
                    "times would outgrow the simulated clock")
          .Unit("fraction of the MXU peak a dot sustains")
          .Range(0.01, 1.0),
      Param::Double("int8_mxu_rate",
                    "every chip runs int8 at a small multiple of its bf16 rate (1 or 2 on the "
                    "presets)")
          .Unit("multiples of the bf16 MXU rate")
          .Range(1.0 / 64, 64.0),
      Param::Double("int32_dot_passes", "an int32 dot is at least one bf16 pass (8 on the presets)")
          .Unit("bf16 MXU passes")
          .Range(1.0, 64.0),
      Param::Double("xla_efficiency",
                    "below 1% of a peak no compiled op runs, and its times would outgrow the "
                    "simulated clock")
          .Unit("fraction of the peak an XLA op sustains")
          .Range(0.01, 1.0),
      Param::Int("slices", "each slice's chips count towards the chip count")
          .Unit("slices")
          .Range(1, 64),
      Param::Int("chips_per_host", "room above every host's 4 or 8 chips")
          .Unit("chips")
          .Range(1, 64),
      Param::Bytes("step_bytes", "more than any op moves").Unit("bytes").Range(0, 1ull << 40),
  };
  return ranges;
}

}  // namespace tpusim::topologies
