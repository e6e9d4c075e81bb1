#include "kernels/reduce_scatter.h"

#include <algorithm>
#include <cmath>

#include "base/errors.h"
#include "kernels/all_gather.h"

namespace tpusim::kernels {

using namespace dsl;

namespace {

constexpr uint64_t kMaxChunkBytes = 4ull << 20;

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

Param ChunkBytesParam(const std::string& description, const std::string& how) {
  return Param::Bytes("chunk_bytes", description + ", in whole elements (rounded down)")
      .Auto(how)
      .Range(1, 1ull << 30);
}

int64_t ChunkElements(uint64_t chunk_bytes, DType dtype) {
  const uint64_t esize = SizeOf(dtype);
  if (chunk_bytes < esize) {
    std::string message = "chunk_bytes ";
    message += std::to_string(chunk_bytes);
    message += " is less than one ";
    message += DTypeName(dtype);
    message += " element (";
    message += std::to_string(esize);
    message += " bytes), and a chunk holds whole elements; use a chunk_bytes of at least ";
    message += std::to_string(esize);
    message += ".";
    throw ParamError({"chunk_bytes"}, message);
  }
  return static_cast<int64_t>(chunk_bytes / esize);
}

std::vector<Param> RingChunkingParams() {
  return {ChunkBytesParam("the most bytes one chunk of a block holds (one VMEM slot)",
                          "half of VMEM over the slots, at most 4 MiB"),
          Param::Int("chunks_in_flight",
                     "chunks each ring step keeps in flight, each in its own double-buffered "
                     "VMEM slots")
              .Unit("chunks")
              .Default(2)
              .Range(1, 16)};
}

RingChunking RingChunkingOf(const Params& params) {
  RingChunking chunking;
  if (params.Has("chunk_bytes")) chunking.chunk_bytes = params.Bytes("chunk_bytes");
  chunking.chunks_in_flight = params.Int("chunks_in_flight");
  return chunking;
}

std::vector<Param> ReductionParams() {
  return CollectiveParams({DType::kBF16, DType::kF32, DType::kInt32},
                          "no int8, whose partial sums would overflow");
}

RingReducePlan PlanRingReduce(const Mesh& mesh, DType dtype, const RingChunking& chunking,
                              int64_t block, int64_t part_offset, int64_t part_size, int directions,
                              int64_t rows) {
  RingReducePlan plan;
  plan.block = block;
  plan.part_offset = part_offset;
  plan.part_size = part_size;
  plan.rows = rows;
  const uint64_t esize = SizeOf(dtype);
  const int64_t in_flight = std::max<int64_t>(1, chunking.chunks_in_flight);
  uint64_t chunk_bytes = chunking.chunk_bytes;
  if (chunk_bytes == 0) {
    const uint64_t vmem = mesh.topology().chip().vmem().capacity_bytes();
    const uint64_t slot_rows = static_cast<uint64_t>(directions) * 6 * in_flight;
    chunk_bytes = std::min(kMaxChunkBytes, vmem / 2 / slot_rows);
  }
  const int64_t chunk = chunking.chunk_bytes != 0
                            ? ChunkElements(chunk_bytes, dtype)
                            : std::max<int64_t>(1, static_cast<int64_t>(chunk_bytes / esize));
  if (part_size <= chunk) {
    plan.rows_per_chunk = std::clamp<int64_t>(chunk / std::max<int64_t>(part_size, 1), 1, rows);
    plan.col_pieces = 1;
  } else {
    plan.rows_per_chunk = 1;
    plan.col_pieces = CeilDiv(part_size, chunk);
  }
  plan.chunks = CeilDiv(rows, plan.rows_per_chunk) * plan.col_pieces;
  plan.chunks_per_round = std::min(in_flight, plan.chunks);
  plan.slot_cols = std::max<int64_t>(1, CeilDiv(part_size, plan.col_pieces));
  plan.slot = plan.rows_per_chunk * plan.slot_cols;
  return plan;
}

std::vector<ScratchSpec> RingReduceScratch(const RingReducePlan& plan, DType dtype,
                                           const std::string& prefix) {
  const Shape slots = {2, plan.chunks_per_round, plan.rows_per_chunk, plan.slot_cols};
  const Shape sems = {2, plan.chunks_per_round};
  return {ScratchSpec::VMEM(slots, dtype, prefix + "recv_buf"),
          ScratchSpec::VMEM(slots, dtype, prefix + "sum_buf"),
          ScratchSpec::VMEM(slots, dtype, prefix + "local_buf"),
          ScratchSpec::DMA(sems, prefix + "recv_sems"),
          ScratchSpec::DMA(sems, prefix + "send_sems"),
          ScratchSpec::DMA(sems, prefix + "local_sems"),
          ScratchSpec::REGULAR({}, prefix + "credit")};
}

const char* ReductionName(Reduction reduction) {
  switch (reduction) {
    case Reduction::kSum:
      return "sum";
    case Reduction::kMax:
      return "max";
    case Reduction::kMin:
      return "min";
  }
  return "?";
}

void Combine(Kernel& k, Reduction reduction, const Ref& out, const Ref& a, const Ref& b) {
  switch (reduction) {
    case Reduction::kSum:
      k.add(out, a, b);
      return;
    case Reduction::kMax:
      k.maximum(out, a, b);
      return;
    case Reduction::kMin:
      k.minimum(out, a, b);
      return;
  }
}

RingReducer::RingReducer(Kernel& k, Ring ring, int direction, const RingReducePlan& plan, Ref x,
                         Ref out_block, const Refs& scratch, size_t first)
    : k_(k),
      ring_(std::move(ring)),
      direction_(direction),
      plan_(plan),
      x_(std::move(x)),
      out_(std::move(out_block)),
      recv_buf_(scratch[first]),
      sum_buf_(scratch[first + 1]),
      local_buf_(scratch[first + 2]),
      recv_sems_(scratch[first + 3]),
      send_sems_(scratch[first + 4]),
      local_sems_(scratch[first + 5]),
      credit_(scratch[first + 6]) {
  n_ = ring_.size;
  me_ = ring_.index;
  to_ = ring_.index_at(direction_);
  from_ = ring_.index_at(-direction_);
  steps_per_round_ = n_ - 1;
  const int64_t c = plan_.chunks_per_round;
  rounds_ = CeilDiv(plan_.chunks, c);
  total_steps_ = rounds_ * steps_per_round_;
  if (plan_.part_size == 0) total_steps_ = 0;  // nothing of each block goes this way
  // Lexicographic (step, chunk): the order every device sends and receives in.
  for (int64_t g = 0; g < total_steps_; ++g) {
    const int64_t round = g / steps_per_round_;
    const int64_t in_round = std::min(c, plan_.chunks - round * c);
    for (int64_t j = 0; j < in_round; ++j) {
      const int64_t q = round * c + j;
      const int64_t piece = q % plan_.col_pieces;
      const int64_t begin = piece * plan_.part_size / plan_.col_pieces;
      const int64_t end = (piece + 1) * plan_.part_size / plan_.col_pieces;
      const int64_t row = q / plan_.col_pieces * plan_.rows_per_chunk;
      messages_.push_back(Message{g, g % steps_per_round_, j, begin, end - begin, row,
                                  std::min(plan_.rows_per_chunk, plan_.rows - row)});
    }
  }
  out_in_flight_.assign(2, std::vector<std::optional<InFlight>>(c));
  local_in_flight_.assign(2, std::vector<std::optional<AsyncCopy>>(c));
}

size_t RingReducer::IndexOf(int64_t step, int64_t j) const {
  // Every round but the last has C chunks, so round r starts at r C.
  const int64_t c = plan_.chunks_per_round;
  const int64_t round = step / steps_per_round_;
  const int64_t in_round = std::min(c, plan_.chunks - round * c);
  return static_cast<size_t>(round * steps_per_round_ * c + (step % steps_per_round_) * in_round +
                             j);
}

bool RingReducer::Exists(int64_t step, int64_t j) const {
  if (step < 0 || step >= total_steps_) return false;
  const int64_t c = plan_.chunks_per_round;
  const int64_t round = step / steps_per_round_;
  return j < std::min(c, plan_.chunks - round * c);
}

int RingReducer::Block(int64_t t) const {
  return static_cast<int>(((me_ - direction_ * (t + 1)) % n_ + n_) % n_);
}

// A flat input ([X * block]) moves 1-D chunks; a [rows, X, block] input moves 2-D boxes.
Ref RingReducer::Slot(const Ref& buf, const Message& m) const {
  if (x_.shape().size() == 1) return buf.at(m.step % 2, m.j, 0, ds(0, m.size));
  return buf.at(m.step % 2, m.j, ds(0, m.nrows), ds(0, m.size));
}

Ref RingReducer::Input(int block, const Message& m) const {
  const int64_t column = plan_.part_offset + m.offset;
  if (x_.shape().size() == 1) return x_.at(ds(block * plan_.block + column, m.size));
  return x_.at(ds(m.row, m.nrows), block, ds(column, m.size));
}

Ref RingReducer::Output(const Message& m) const {
  const int64_t column = plan_.part_offset + m.offset;
  if (out_.shape().size() == 1) return out_.at(ds(column, m.size));
  return out_.at(ds(m.row, m.nrows), ds(column, m.size));
}

// Loads the local input that message `index` will be added to: this device's copy of the
// block it becomes after the add (the block sent one step later).
void RingReducer::Prefetch(size_t index) {
  const Message& m = messages_[index];
  AsyncCopy load =
      k_.async_copy(Input(Block(m.t + 1), m), Slot(local_buf_, m), local_sems_.at(m.step % 2, m.j));
  load.start();
  local_in_flight_[m.step % 2][m.j] = load;
}

// Waits until nothing reads the sum slot [parity][j] any more (and its send semaphore is
// free again).
void RingReducer::DrainSlot(int64_t parity, int64_t j) {
  auto& pending = out_in_flight_[parity][j];
  if (!pending) return;
  // A send only needs its bytes to have left; a store to out is a local copy.
  if (pending->send) {
    pending->copy.wait_send();
  } else {
    pending->copy.wait();
  }
  pending.reset();
}

void RingReducer::Begin() {
  for (size_t i = 0; i < messages_.size() && messages_[i].step < 2; ++i)
    Prefetch(i);
  TrySends();
}

// Sends, in order, every message whose data is ready: step 0 of a round straight from the
// input in HBM, later steps from the sum slot once the previous step's chunk was added.
void RingReducer::TrySends() {
  while (sent_ < messages_.size()) {
    const Message& m = messages_[sent_];
    if (m.t > 0 && consumed_ <= IndexOf(m.step - 1, m.j)) return;
    // The neighbour's receive slot held message (g-2, j) until it added it. Wait for that
    // only once we have added our own (g-2, j): blocking earlier could leave our own
    // receive slots full and the whole ring waiting for credits (on a 2-device ring every
    // step comes straight from HBM, so nothing else would hold the sends back).
    if (m.step >= 2 && consumed_ <= IndexOf(m.step - 2, m.j)) return;
    if (m.step >= 2) k_.wait(credit_, 1);
    const int64_t parity = m.step % 2;
    Ref source;
    if (m.t == 0) {
      DrainSlot(parity, m.j);  // frees the send semaphore (a store may still hold it)
      source = Input(Block(0), m);
    } else {
      source = Slot(sum_buf_, m);
    }
    AsyncCopy send = k_.async_remote_copy(source, Slot(recv_buf_, m), send_sems_.at(parity, m.j),
                                          recv_sems_.at(parity, m.j), ring_.device(to_));
    send.start();
    out_in_flight_[parity][m.j] = InFlight{send, true};
    ++sent_;
  }
}

void RingReducer::Step() {
  const Message& m = messages_[consumed_];
  const int64_t parity = m.step % 2;
  const int64_t next_parity = 1 - parity;
  // Built in one string: a chain of + made a temporary per term, each step and chunk.
  std::string name = direction_ > 0 ? "rightward step " : "leftward step ";
  name += std::to_string(m.t);
  name += " chunk ";
  name += std::to_string(m.j);
  auto scope = k_.named_scope(name);
  // Our own descriptor of the same size: the neighbour's copy lands on our semaphore.
  AsyncCopy incoming =
      k_.async_remote_copy(Slot(recv_buf_, m), Slot(recv_buf_, m), send_sems_.at(parity, m.j),
                           recv_sems_.at(parity, m.j), ring_.device(from_));
  incoming.wait_recv();
  local_in_flight_[parity][m.j]->wait();
  local_in_flight_[parity][m.j].reset();
  // The sum goes to the slot of the message it becomes (step g+1), once that slot's last
  // send or store is done with it.
  Message sum = m;
  sum.step = m.step + 1;
  DrainSlot(next_parity, m.j);
  Combine(k_, plan_.reduction, Slot(sum_buf_, sum), Slot(recv_buf_, m), Slot(local_buf_, m));
  ++consumed_;
  // The receive and local slots are free again: let the neighbour refill the receive slot
  // and load the local chunk for two steps on.
  if (Exists(m.step + 2, m.j)) {
    k_.signal(credit_, 1, ring_.device(from_));
    Prefetch(IndexOf(m.step + 2, m.j));
  }
  if (m.t == steps_per_round_ - 1) {
    // The last step: this chunk of our own block is complete.
    AsyncCopy store =
        k_.async_copy(Slot(sum_buf_, sum), Output(m), send_sems_.at(next_parity, m.j));
    store.start();
    out_in_flight_[next_parity][m.j] = InFlight{store, false};
  }
  TrySends();
}

void RingReducer::Finish() {
  for (int64_t parity = 0; parity < 2; ++parity) {
    for (int64_t j = 0; j < plan_.chunks_per_round; ++j)
      DrainSlot(parity, j);
  }
}

void ReduceBothWays(Kernel& k, const Ring& ring, const RingReducePlan& right,
                    const RingReducePlan& left, const Ref& x, const Ref& out_block,
                    const Refs& scratch, size_t first) {
  RingReducer rightward(k, ring, +1, right, x, out_block, scratch, first);
  RingReducer leftward(k, ring, -1, left, x, out_block, scratch, first + kRingReduceScratchCount);
  rightward.Begin();
  leftward.Begin();
  while (!rightward.Done() || !leftward.Done()) {
    if (!rightward.Done()) rightward.Step();
    if (!leftward.Done()) leftward.Step();
  }
  rightward.Finish();
  leftward.Finish();
}

Workload ReductionWorkload(const Mesh& mesh, const CollectiveProblem& problem, bool replicated,
                           PallasCall call) {
  const int x = mesh.AxisSize(problem.axis);
  const DType dtype = problem.dtype;
  const int64_t n = static_cast<int64_t>(problem.bytes / SizeOf(dtype));
  Workload w{
      shard_map(mesh, {P{problem.axis}}, {replicated ? P{} : P{problem.axis}}, std::move(call)),
      {},
      {}};
  const Shape global = {x * n};
  w.inputs.push_back(EntryInput(global, dtype, problem.seed, 0, problem.functional));
  w.atol = ReductionTolerance(dtype, x);
  if (!problem.functional) return w;
  // Device d's input is elements [d n, (d + 1) n); the reduced vector is their sum, and
  // device i's reduce-scatter block is its i-th n/X slice.
  const Array& in = w.inputs[0];
  Array sum({n}, dtype);
  for (int64_t e = 0; e < n; ++e) {
    double s = 0;
    for (int d = 0; d < x; ++d)
      s += in.GetFlat(d * n + e);
    sum.SetFlat(e, s);
  }
  w.expected.push_back(std::move(sum));
  return w;
}

double ReductionTolerance(DType dtype, int axis_size) {
  double u = 0;
  if (dtype == DType::kBF16) u = std::ldexp(1.0, -8);
  if (dtype == DType::kF32) u = std::ldexp(1.0, -24);
  return u * axis_size * (axis_size + 1);
}

int64_t CheckReductionProblem(const Mesh& mesh, const CollectiveProblem& problem) {
  if (problem.dtype == DType::kInt8) {
    throw Error(ErrorKind::kInvalidArgument,
                "a reduction of int8 values would overflow its partial sums; use int32, bf16 "
                "or f32.");
  }
  CheckCollectiveProblem(mesh, problem);
  return static_cast<int64_t>(problem.bytes / SizeOf(problem.dtype));
}

Bound RingReduceScatterBound(const Mesh& mesh, const Params& params) {
  Bound b = RingAllGatherBound(mesh, params);
  b.formula = "reduce-scatter = all-gather: " + b.formula;
  return b;
}

Bound BidiReduceScatterBound(const Mesh& mesh, const Params& params) {
  Bound b = BidiAllGatherBound(mesh, params);
  b.formula = "reduce-scatter = all-gather: " + b.formula;
  return b;
}

Bound RingAllReduceBound(const Mesh& mesh, const Params& params) {
  Bound b = RingAllGatherBound(mesh, params);
  b.seconds *= 2;
  b.formula = "all-reduce = 2 x reduce-scatter: 2 " + b.formula;
  return b;
}

double ReduceScatterBusFactor(int axis_size) {
  return static_cast<double>(axis_size - 1) / axis_size;
}

double AllReduceBusFactor(int axis_size) {
  return 2.0 * (axis_size - 1) / axis_size;
}

}  // namespace tpusim::kernels
