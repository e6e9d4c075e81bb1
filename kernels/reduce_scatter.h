#pragma once

// What the reduction kernels share: one direction of a chunked ring reduce-scatter that
// adds on the VPU in VMEM (RingReducer), the workloads around it with their host
// references and tolerances, and the bounds of docs/references.md §3.
//
// The ring: at step t (0 .. X-2) every device sends the partial sum of block
// (me - dir (t+1)) mod X to its neighbour `me + dir`, which adds its own copy of that
// block and passes the sum on; after X-1 steps device i holds the sum of block i. Partial
// sums travel; inputs stay local.
//
// The chunks: each block is cut into chunks small enough for VMEM, and the chunks are
// grouped into rounds of C; a round runs all X-1 steps. Within a round the chunks of one
// step stream back to back, so while chunk j of step t is added, chunk j+1 is still
// arriving and chunk j-1 of step t+1 is already leaving: the link stays busy and the VPU
// adds hide behind it. Every VMEM slot (receive, sum, local input) is double-buffered by
// step parity, and a REGULAR "credit" semaphore stops a sender from refilling a receive
// slot its neighbour has not yet added from (the capacity hazard of docs/references.md §5).

#include <optional>
#include <string>
#include <vector>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/problem_params.h"
#include "kernels/registry.h"

namespace tpusim::kernels {

// What a ring reduction combines partial results with: lax.psum, pmax, pmin (XLA's
// all-reduce to_apply add, maximum, minimum).
enum class Reduction { kSum, kMax, kMin };
const char* ReductionName(Reduction reduction);  // "sum", "max", "min"
// out = a (+ | max | min) b on the VPU.
void Combine(dsl::Kernel& k, Reduction reduction, const dsl::Ref& out, const dsl::Ref& a,
             const dsl::Ref& b);

// How one direction of the ring cuts its part of every block into chunks.
//
// A block may also be a strided box: with rows > 1 the input is viewed as [rows, X, block]
// (block i is x[:, i, :], as when psum_scatter splits a middle dimension) and the output
// as [rows, block]. The part is then a column range of every row, and a chunk is a box of
// up to rows_per_chunk rows by a column range: whole part-rows while they fit a chunk,
// pieces of one row when a row alone is larger.
struct RingReducePlan {
  int64_t block = 0;        // elements of one block (the input / X) in each row
  int64_t part_offset = 0;  // the columns of each block this direction reduces
  int64_t part_size = 0;
  int64_t chunks = 1;            // Q: the part is cut into Q chunks
  int64_t chunks_per_round = 1;  // C: chunks in flight per step
  int64_t slot = 1;              // elements of one VMEM slot: rows_per_chunk x slot_cols
  int64_t rows = 1;              // A: rows of the [rows, X, block] view
  int64_t rows_per_chunk = 1;    // R
  int64_t col_pieces = 1;        // K: each group of R rows is cut into K column ranges
  int64_t slot_cols = 1;         // W: ceil(part_size / K)
  Reduction reduction = Reduction::kSum;
};

// How the ring reductions cut their blocks: the reduce-scatter and all-reduce kernels' own
// parameters.
struct RingChunking {
  uint64_t chunk_bytes = 0;      // the most bytes one chunk holds; 0: sized from VMEM
  int64_t chunks_in_flight = 2;  // C: enough to hide a hop and an add behind a chunk
};
// chunk_bytes (auto) and chunks_in_flight (default 2), declared once for those kernels.
std::vector<Param> RingChunkingParams();
RingChunking RingChunkingOf(const Params& params);
// The chunk_bytes declaration alone, `how` saying what it is sized from when unset.
Param ChunkBytesParam(const std::string& description, const std::string& how);
// chunk_bytes in whole elements of `dtype`, rounded down (it is the most bytes a chunk
// holds); a chunk_bytes below one element is refused, as no chunk can hold it.
int64_t ChunkElements(uint64_t chunk_bytes, dsl::DType dtype);

// Chunks of chunking.chunk_bytes or, when 0, sized from the chip's VMEM: half of VMEM
// shared by `directions` reducers' six slot rows (receive, sum, local x 2 parities) of C
// chunks each, at most 4 MiB per chunk. Larger chunks would only add fill time; 4 MiB
// already takes ~90 us on a 4.5e10 B/s link, far above the ~1 us hop latency the
// pipelining has to cover.
RingReducePlan PlanRingReduce(const dsl::Mesh& mesh, dsl::DType dtype, const RingChunking& chunking,
                              int64_t block, int64_t part_offset, int64_t part_size, int directions,
                              int64_t rows = 1);

// The scratch one RingReducer uses, in the order it expects them: recv_buf, sum_buf,
// local_buf (VMEM [2, C, R, W]); recv_sems, send_sems, local_sems (DMA [2, C]); credit
// (REGULAR). `prefix` names them in traces ("right_", "left_").
std::vector<dsl::ScratchSpec> RingReduceScratch(const RingReducePlan& plan, dsl::DType dtype,
                                                const std::string& prefix = "");
constexpr size_t kRingReduceScratchCount = 7;

// One direction of the ring reduce-scatter, run inside a kernel body after the start
// barrier: Begin(), then Step() until Done(), then Finish(). Two reducers (one per
// direction) may be interleaved step by step.
class RingReducer {
 public:
  // x: this device's whole input (X blocks, HBM): [X * block], or [rows, X, block] for a
  // plan with rows. out_block: where this device's reduced block goes (HBM): [block], or
  // [rows, block]. scratch: the refs RingReduceScratch described, from
  // `first` on. direction: +1 sends to the right neighbour, -1 to the left.
  RingReducer(dsl::Kernel& k, dsl::Ring ring, int direction, const RingReducePlan& plan, dsl::Ref x,
              dsl::Ref out_block, const dsl::Refs& scratch, size_t first);

  void Begin();  // prefetch the first local chunks, send what needs no neighbour
  bool Done() const { return consumed_ >= messages_.size(); }
  void Step();    // add the next arriving chunk, pass it on (or store it), send what is ready
  void Finish();  // wait for the last sends and stores

 private:
  struct Message {
    int64_t step;    // global step g = round * (X-1) + t
    int64_t t;       // ring step within the round
    int64_t j;       // chunk within the round
    int64_t offset;  // columns within the part
    int64_t size;
    int64_t row = 0;  // rows of the chunk
    int64_t nrows = 1;
  };
  size_t IndexOf(int64_t step, int64_t j) const;
  bool Exists(int64_t step, int64_t j) const;
  int Block(int64_t t) const;  // the block whose partial sum is sent at ring step t
  dsl::Ref Slot(const dsl::Ref& buf, const Message& m) const;
  dsl::Ref Input(int block, const Message& m) const;
  dsl::Ref Output(const Message& m) const;
  void Prefetch(size_t index);
  void DrainSlot(int64_t parity, int64_t j);
  void TrySends();

  dsl::Kernel& k_;
  dsl::Ring ring_;
  int direction_;
  RingReducePlan plan_;
  dsl::Ref x_, out_;
  dsl::Ref recv_buf_, sum_buf_, local_buf_, recv_sems_, send_sems_, local_sems_, credit_;
  int n_ = 1, me_ = 0, to_ = 0, from_ = 0;
  int64_t steps_per_round_ = 0, rounds_ = 0, total_steps_ = 0;
  std::vector<Message> messages_;
  size_t consumed_ = 0;
  size_t sent_ = 0;
  // What occupies each [parity][chunk] send semaphore: a send or a store of the sum slot.
  struct InFlight {
    dsl::AsyncCopy copy;
    bool send;  // a remote send (wait_send frees the slot) or a store to out (wait)
  };
  std::vector<std::vector<std::optional<InFlight>>> out_in_flight_;
  std::vector<std::vector<std::optional<dsl::AsyncCopy>>> local_in_flight_;
};

// Both directions at once, each reducing its plan's part of every block: rightward with
// the scratch from `first` on, leftward with the kRingReduceScratchCount refs after it.
// Interleaved chunk by chunk, so both links of the device stay fed. Run after the start
// barrier.
void ReduceBothWays(dsl::Kernel& k, const dsl::Ring& ring, const RingReducePlan& right,
                    const RingReducePlan& left, const dsl::Ref& x, const dsl::Ref& out_block,
                    const dsl::Refs& scratch, size_t first);

// Reduce-scatter: input (X*n,) sharded P(axis), so each device's block is its own n-element
// vector (V = n elements); output (n/X,) per device, P(axis): device i gets the sum over
// the axis of block i. All-reduce (replicated = true): output (n,) per device, P().
// Reference: sums in double, rounded once to the dtype; the tolerance says why.
Workload ReductionWorkload(const dsl::Mesh& mesh, const CollectiveProblem& problem, bool replicated,
                           dsl::PallasCall call);

// |kernel - reference| allowed for a sum over X devices of inputs in [-1, 1): the ring
// rounds each partial sum to the dtype once per step (X-1 roundings of values up to k in
// magnitude) and the reference rounds once, so atol = u X (X + 1) with u the dtype's unit
// roundoff (2^-8 bf16, 2^-24 f32); integers are exact.
double ReductionTolerance(dsl::DType dtype, int axis_size);

// The reductions' dtypes: no int8, whose partial sums would overflow.
std::vector<Param> ReductionParams();  // CollectiveParams with those dtypes
// Element count per device (n) of a reduction, with the shared checks: V splits into X
// whole-element blocks, and the dtype can hold a sum (int8 would overflow).
int64_t CheckReductionProblem(const dsl::Mesh& mesh, const CollectiveProblem& problem);

// The pallas_call of all_reduce_ring over `axis` for a per-device operand `x` of any rank
// (reduced as its flat elements, which must split into X blocks): x in HBM, out (x's type,
// in HBM) the sum of x over the axis on every device. Throws Error(kInvalidArgument) as
// CheckReductionProblem does.
dsl::PallasCall RingAllReduceCall(const dsl::Mesh& mesh, const std::string& axis,
                                  const dsl::ShapeDtype& x);

// Reduce-scatter = all-gather time (docs/references.md §3).
Bound RingReduceScatterBound(const dsl::Mesh& mesh, const Params& params);
Bound BidiReduceScatterBound(const dsl::Mesh& mesh, const Params& params);
// All-reduce = 2 x reduce-scatter, for a one-direction ring.
Bound RingAllReduceBound(const dsl::Mesh& mesh, const Params& params);

// nccl-tests: reduce_scatter (X-1)/X, all_reduce 2(X-1)/X.
double ReduceScatterBusFactor(int axis_size);
double AllReduceBusFactor(int axis_size);

}  // namespace tpusim::kernels
