#include "dsl/pipeline.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "base/core_port.h"

namespace tpusim::dsl {

namespace {

// "(None, 8, 128)": a block shape as the user wrote it.
std::string BlockString(const Shape& block) {
  std::string s = "(";
  for (size_t i = 0; i < block.size(); ++i)
    s += (i ? ", " : "") + (block[i] == kSqueezed ? std::string("None") : std::to_string(block[i]));
  return s + (block.size() == 1 ? ",)" : ")");
}

// The largest multiple of `quantum` at most `want` that divides `extent`; `extent` if none.
int64_t SuggestDim(int64_t want, int64_t extent, int64_t quantum) {
  for (int64_t c = std::min(want, extent) / quantum * quantum; c >= quantum; c -= quantum) {
    if (extent % c == 0) return c;
  }
  return extent;
}

// The TPU tiling quantum of dim d of a rank-`rank` VMEM block (docs/references.md §1).
int64_t Quantum(size_t d, size_t rank, MemorySpace space) {
  if (space != MemorySpace::kVmem) return 1;
  if (d + 1 == rank) return 128;
  if (d + 2 == rank) return 8;
  return 1;
}

}  // namespace

void ThrowIndexMapArity(size_t takes, size_t grid_axes) {
  throw Error(ErrorKind::kKernelMisuse,
              "an index_map takes " + std::to_string(takes) + " grid indices, but the grid has " +
                  std::to_string(grid_axes) +
                  " axes; write it with one int per grid axis, or take const "
                  "std::vector<int>&.");
}

std::string GridStepName(const std::string& prefix, const std::vector<int>& ids) {
  std::string s = prefix + " (";
  for (size_t i = 0; i < ids.size(); ++i)
    s += (i ? ", " : "") + std::to_string(ids[i]);
  return s + (ids.size() == 1 ? ",)" : ")");
}

bool NextGridPoint(const std::vector<int>& grid, std::vector<int>& ids) {
  for (size_t d = grid.size(); d-- > 0;) {
    if (++ids[d] < grid[d]) return true;
    ids[d] = 0;
  }
  return false;
}

GridPipeline::GridPipeline(std::string owner, std::vector<int> grid,
                           std::vector<PipelineOperand> operands, ErrorKind kind)
    : owner_(std::move(owner)), grid_(std::move(grid)) {
  for (auto& operand : operands) {
    Plan plan;
    plan.operand = std::move(operand);
    const PipelineOperand& op = plan.operand;
    const Shape& array = op.ref.shape();
    const std::string spec_of = owner_ + ": BlockSpec for " + op.what;
    if (op.ref.is_semaphore()) {
      throw Error(kind, spec_of + " names semaphore '" + op.ref.Describe() +
                            "'; pipelines move data buffers.");
    }
    const MemorySpace space = op.spec.memory_space;
    if (space == MemorySpace::kSemaphore) {
      throw Error(kind, spec_of +
                            " asks for memory space SEMAPHORE; use VMEM, SMEM or ANY, and put "
                            "semaphores in scratch_shapes.");
    }
    plan.pipelined = space != MemorySpace::kAny;
    if (!plan.pipelined) {
      plans_.push_back(std::move(plan));
      continue;
    }
    const Shape given = op.spec.block_shape ? *op.spec.block_shape : array;
    const std::string array_text = TypeString(op.ref.dtype(), array);
    if (given.size() != array.size()) {
      throw Error(kind, spec_of + " has block " + BlockString(given) + " of rank " +
                            std::to_string(given.size()) + ", but the array " + array_text +
                            " has rank " + std::to_string(array.size()) +
                            "; give one block dim per array dim (kSqueezed for a dim of size 1 "
                            "the kernel should not see).");
    }
    for (size_t d = 0; d < given.size(); ++d) {
      if (given[d] != kSqueezed && given[d] <= 0) {
        throw Error(kind, spec_of + " has block " + BlockString(given) + ": dim " +
                              std::to_string(d) + " is " + std::to_string(given[d]) +
                              ", but block dims must be positive, or kSqueezed.");
      }
      plan.block.push_back(given[d] == kSqueezed ? 1 : given[d]);
      if (given[d] != kSqueezed) plan.kernel_shape.push_back(given[d]);
    }
    const size_t rank = array.size();
    // The (8, 128) rule on the last two dims of a VMEM block.
    bool tiled = true;
    Shape suggestion = plan.block;
    for (size_t d = rank >= 2 ? rank - 2 : 0; d < rank; ++d) {
      const int64_t q = Quantum(d, rank, space);
      if (plan.block[d] % q != 0 && plan.block[d] != array[d]) {
        tiled = false;
        suggestion[d] = SuggestDim(plan.block[d], array[d], q);
      }
    }
    if (!tiled) {
      const Shape last(array.end() - std::min<size_t>(rank, 2), array.end());
      const Shape last_block(given.end() - std::min<size_t>(rank, 2), given.end());
      throw Error(kind, spec_of + " has block " + BlockString(given) + ", but the last " +
                            (rank >= 2 ? "two dims must be multiples of (8, 128)"
                                       : "dim must be a multiple of 128") +
                            " or equal the array dims " + ShapeString(last) + " (array " +
                            array_text + "; TPU tiling, docs/references.md §1). Try block " +
                            BlockString(suggestion) + ".");
    }
    for (size_t d = 0; d < rank; ++d) {
      if (array[d] % plan.block[d] != 0) {
        Shape fix = plan.block;
        fix[d] = SuggestDim(plan.block[d], array[d], Quantum(d, rank, space));
        throw Error(kind, spec_of + " has block " + BlockString(given) +
                              ", which does not tile the array " + array_text + " evenly: dim " +
                              std::to_string(d) + " (" + std::to_string(array[d]) +
                              ") is not a multiple of " + std::to_string(plan.block[d]) +
                              ". Blocks must divide the array; try block " + BlockString(fix) +
                              ".");
      }
      plan.blocks.push_back(array[d] / plan.block[d]);
    }
    plans_.push_back(std::move(plan));
  }
}

void GridPipeline::ShuffleParallelDims(const std::vector<std::string>& semantics, uint64_t seed) {
  std::mt19937_64 random(seed);
  order_.assign(grid_.size(), {});
  for (size_t d = 0; d < grid_.size() && d < semantics.size(); ++d) {
    if (semantics[d] != "parallel") continue;
    order_[d].resize(static_cast<size_t>(grid_[d]));
    std::iota(order_[d].begin(), order_[d].end(), 0);
    std::shuffle(order_[d].begin(), order_[d].end(), random);
  }
}

GridShare CoreShare(const std::vector<int>& grid, const std::vector<std::string>& semantics,
                    int core, int cores) {
  GridShare share;
  for (size_t d = 0; d < grid.size() && d < semantics.size(); ++d) {
    if (semantics[d] != "parallel" && semantics[d] != "core_parallel") continue;
    const int n = grid[d];
    const int base = n / cores;
    const int extra = n % cores;
    share.axis = static_cast<int>(d);
    share.begin = core * base + std::min(core, extra);
    share.end = share.begin + base + (core < extra ? 1 : 0);
    return share;
  }
  return share;
}

std::vector<int> GridPipeline::Visit(const std::vector<int>& counter,
                                     const GridShare& share) const {
  std::vector<int> ids = counter;
  if (share.axis >= 0) ids[static_cast<size_t>(share.axis)] += share.begin;
  for (size_t d = 0; d < order_.size(); ++d) {
    if (!order_[d].empty()) ids[d] = order_[d][static_cast<size_t>(counter[d])];
  }
  return ids;
}

uint64_t GridPipeline::BlockBytes(size_t i) const {
  const Plan& p = plans_[i];
  if (!p.pipelined) return 0;
  return static_cast<uint64_t>(NumElements(p.block)) * SizeOf(p.operand.ref.dtype());
}

BlockIndex GridPipeline::IndexOf(const Plan& p, const std::vector<int>& ids,
                                 const std::vector<Array>& scalars) const {
  const size_t rank = p.block.size();
  const BlockSpec& spec = p.operand.spec;
  if (!spec.index_map && !spec.scalar_index_map) return BlockIndex(rank, 0);
  BlockIndex index =
      spec.scalar_index_map ? spec.scalar_index_map(ids, scalars) : spec.index_map(ids);
  const std::string where = owner_ + ": the index_map of " + p.operand.what + " returned " +
                            ShapeString(index) + " at " + GridStepName("step", ids);
  if (index.size() != rank) {
    throw Error(ErrorKind::kKernelMisuse,
                where + ", but the operand has " + std::to_string(rank) +
                    " dims; return one block index per dim (0 for a squeezed dim of size 1).");
  }
  for (size_t d = 0; d < rank; ++d) {
    if (index[d] < 0 || index[d] >= p.blocks[d]) {
      std::string counts;
      for (size_t e = 0; e < rank; ++e)
        counts += (e ? " x " : "") + std::to_string(p.blocks[e]);
      throw Error(ErrorKind::kOutOfBounds,
                  where + ", outside the " + counts + " blocks of " + ShapeString(p.block) +
                      " that tile " + TypeString(p.operand.ref.dtype(), p.operand.ref.shape()) +
                      ". Index maps return block indices, not element offsets.");
    }
  }
  return index;
}

void GridPipeline::Run(Kernel& k, const Step& step, const std::string& scope,
                       const std::vector<Array>& scalars, const GridShare& share) const {
  std::vector<int> grid = grid_;
  if (share.axis >= 0) {
    if (share.end <= share.begin) return;  // this core has no steps
    grid[static_cast<size_t>(share.axis)] = share.end - share.begin;
  }
  base::CorePort& port = k.port();
  const int me = k.device_id();
  const size_t n = plans_.size();

  struct State {
    Ref buffer[2];  // the whole block, for the DMAs
    Ref view[2];    // what the kernel sees: squeezed dims dropped
    Ref sem[2];
    BlockIndex held[2];  // inputs: the block each buffer holds or is receiving
    bool busy[2] = {false, false};
    int current = 0;
    BlockIndex index;  // this step's block
    uint64_t bytes = 0;
  };
  std::vector<State> states(n);
  std::vector<Ref> scoped;
  for (size_t i = 0; i < n; ++i) {
    const Plan& p = plans_[i];
    if (!p.pipelined) continue;
    State& s = states[i];
    const Ref& ref = p.operand.ref;
    s.bytes = BlockBytes(i);
    for (int b = 0; b < 2; ++b) {
      s.buffer[b] = k.AllocateScoped(ref.name(), p.block, ref.dtype(), p.operand.spec.memory_space,
                                     SemaphoreType::kDma,
                                     "pipeline buffer " + std::to_string(b) + " of " +
                                         p.operand.what + " " + TypeString(ref.dtype(), p.block));
      scoped.push_back(s.buffer[b]);
      s.view[b] = k.MakeRef(s.buffer[b].binding().slot, ref.name(), p.kernel_shape, ref.dtype(),
                            p.operand.spec.memory_space);
    }
    for (int b = 0; b < 2; ++b) {
      s.sem[b] = k.AllocateScoped(
          ref.name() + (p.operand.output ? " copy-out " : " copy-in ") + std::to_string(b), {},
          DType::kInt32, MemorySpace::kSemaphore);
      scoped.push_back(s.sem[b]);
    }
  }

  // Out of line: its request (boxes, label) would otherwise sit in this frame, below which
  // every kernel body runs; each core's stack is touched that much deeper, a page per device
  // on a pod (docs/performance-pod-memory.md).
  auto copy = [&](size_t i, int b, const BlockIndex& index, bool in) __attribute__((noinline)) {
    const Plan& p = plans_[i];
    State& s = states[i];
    std::vector<Slice> slices;
    for (size_t d = 0; d < p.block.size(); ++d)
      slices.push_back(ds(index[d] * p.block[d], p.block[d]));
    const Ref whole = p.operand.ref.Sliced(slices);
    base::DmaRequest request;
    request.source = k.Resolve(in ? whole : s.buffer[b], me);
    request.destination = k.Resolve(in ? s.buffer[b] : whole, me);
    request.recv_semaphore = k.ResolveSemaphore(s.sem[b], me, "pipeline");
    request.label = std::string(in ? "copy-in " : "copy-out ") + p.operand.ref.name() + " " +
                    ShapeString(index);
    port.StartDma(request);
    s.busy[b] = true;
  };
  auto wait = [&](size_t i, int b) {
    State& s = states[i];
    if (s.bytes > 0) {
      port.Wait(k.ResolveSemaphore(s.sem[b], me, "pipeline"), static_cast<int64_t>(s.bytes),
                base::WaitKind::kDma, "pipeline wait");
    }
    s.busy[b] = false;
  };
  auto is_input = [&](size_t i) { return plans_[i].pipelined && !plans_[i].operand.output; };
  auto is_output = [&](size_t i) { return plans_[i].pipelined && plans_[i].operand.output; };

  std::vector<int> counter(grid.size(), 0);
  std::vector<int> ids = Visit(counter, share);
  for (size_t i = 0; i < n; ++i) {
    if (plans_[i].pipelined) states[i].index = IndexOf(plans_[i], ids, scalars);
  }
  std::vector<BlockIndex> next_index(n);
  Refs refs(n);
  bool first = true;
  // The fixed control cost of a step (index maps, DMA issue, waits, loop), charged on the
  // core inside the step's slice. A grid that pipelines nothing has none of that
  // bookkeeping and pays for its loop control alone (docs/time-model.md), so every step
  // costs simulated time and a runaway grid meets the time limit.
  const bool pipelines =
      std::any_of(plans_.begin(), plans_.end(), [](const Plan& p) { return p.pipelined; });
  while (true) {
    port.BeginScope(GridStepName(scope, ids));
    port.Execute(base::GridStep{pipelines}, pipelines ? "step overhead" : "loop control");
    std::vector<int> next_counter = counter;
    const bool last = !NextGridPoint(grid, next_counter);
    const std::vector<int> next = Visit(next_counter, share);
    for (size_t i = 0; i < n && !last; ++i) {
      if (plans_[i].pipelined) next_index[i] = IndexOf(plans_[i], next, scalars);
    }
    // The first step fetches its own blocks.
    for (size_t i = 0; i < n && first; ++i) {
      if (!is_input(i)) continue;
      states[i].held[0] = states[i].index;
      copy(i, 0, states[i].index, true);
    }
    first = false;
    // 1. Prefetch the next step's blocks, unless they are already here.
    for (size_t i = 0; i < n && !last; ++i) {
      State& s = states[i];
      if (!is_input(i) || next_index[i] == s.held[s.current]) continue;
      const int other = s.current ^ 1;
      s.held[other] = next_index[i];
      copy(i, other, next_index[i], true);
    }
    // 2. Wait for this step's blocks.
    for (size_t i = 0; i < n; ++i) {
      if (is_input(i) && states[i].busy[states[i].current]) wait(i, states[i].current);
    }
    // 3. The body.
    for (size_t i = 0; i < n; ++i)
      refs[i] = plans_[i].pipelined ? states[i].view[states[i].current] : plans_[i].operand.ref;
    step(ids, refs);
    // 4. Write back outputs whose block is done; free the other buffer for the next block.
    for (size_t i = 0; i < n; ++i) {
      State& s = states[i];
      if (!is_output(i) || (!last && next_index[i] == s.index)) continue;
      copy(i, s.current, s.index, false);
      const int other = s.current ^ 1;
      if (s.busy[other]) wait(i, other);
      s.current = other;
    }
    if (last) {
      for (size_t i = 0; i < n; ++i) {
        for (int b = 0; b < 2 && is_output(i); ++b) {
          if (states[i].busy[b]) wait(i, b);
        }
      }
    }
    // 5. Move on to the next step's input buffers.
    for (size_t i = 0; i < n && !last; ++i) {
      State& s = states[i];
      if (is_input(i) && next_index[i] != s.held[s.current]) s.current ^= 1;
      if (plans_[i].pipelined) s.index = next_index[i];
    }
    port.EndScope();
    if (last) break;
    counter = next_counter;
    ids = next;
  }
  for (auto it = scoped.rbegin(); it != scoped.rend(); ++it)
    k.FreeScoped(*it);
}

void emit_pipeline(Kernel& k, const PipelineBody& body, const std::vector<int>& grid,
                   const std::vector<BlockSpec>& in_specs, const std::vector<BlockSpec>& out_specs,
                   const Refs& inputs, const Refs& outputs,
                   const std::vector<std::string>& dimension_semantics) {
  if (in_specs.size() != inputs.size() || out_specs.size() != outputs.size()) {
    throw Error(ErrorKind::kKernelMisuse, "emit_pipeline has " + std::to_string(in_specs.size()) +
                                              " in_specs and " + std::to_string(out_specs.size()) +
                                              " out_specs for " + std::to_string(inputs.size()) +
                                              " inputs and " + std::to_string(outputs.size()) +
                                              " outputs; give one BlockSpec per operand.");
  }
  if (grid.empty()) {
    throw Error(ErrorKind::kKernelMisuse,
                "emit_pipeline: the grid is empty; use {1} for one step.");
  }
  for (int g : grid) {
    if (g <= 0) {
      throw Error(
          ErrorKind::kKernelMisuse,
          "emit_pipeline: every grid dimension must be at least 1, got " + std::to_string(g) + ".");
    }
  }
  for (const auto* specs : {&in_specs, &out_specs}) {
    for (const BlockSpec& spec : *specs) {
      if (spec.scalar_index_map) {
        throw Error(ErrorKind::kKernelMisuse,
                    "emit_pipeline: an index map reads scalar-prefetch operands, but "
                    "emit_pipeline's index maps take the grid indices only; load the scalars "
                    "in the kernel and capture them in the index map instead.");
      }
    }
  }
  std::vector<PipelineOperand> operands;
  for (size_t i = 0; i < inputs.size(); ++i) {
    operands.push_back({inputs[i], in_specs[i], false,
                        "input " + std::to_string(i) + " ('" + inputs[i].Describe() + "')"});
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    operands.push_back({outputs[i], out_specs[i], true,
                        "output " + std::to_string(i) + " ('" + outputs[i].Describe() + "')"});
  }
  if (!dimension_semantics.empty() && dimension_semantics.size() != grid.size()) {
    throw Error(ErrorKind::kKernelMisuse,
                "emit_pipeline has " + std::to_string(dimension_semantics.size()) +
                    " dimension_semantics for a grid of " + std::to_string(grid.size()) +
                    " dimensions; give one per dimension, or none.");
  }
  for (const std::string& semantics : dimension_semantics) {
    if (semantics != "parallel" && semantics != "arbitrary") {
      throw Error(ErrorKind::kKernelMisuse, "emit_pipeline: dimension_semantics '" + semantics +
                                                "' is neither 'parallel' nor 'arbitrary'.");
    }
  }
  GridPipeline pipeline("emit_pipeline", grid, std::move(operands), ErrorKind::kKernelMisuse);
  if (k.grid_seed()) pipeline.ShuffleParallelDims(dimension_semantics, *k.grid_seed());
  auto scope = k.named_scope("emit_pipeline");
  pipeline.Run(k, body, "pipeline step");
}

void run_scoped(Kernel& k, const std::function<void(const Refs&)>& body,
                const std::vector<ScratchSpec>& shapes) {
  Refs refs;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const ScratchSpec& s = shapes[i];
    const std::string name = s.name.empty() ? "scoped" + std::to_string(i) : s.name;
    refs.push_back(k.AllocateScoped(name, s.shape, s.dtype, s.memory_space, s.semaphore_type,
                                    "run_scoped " + name + " " + TypeString(s.dtype, s.shape)));
  }
  body(refs);
  for (size_t i = refs.size(); i-- > 0;)
    k.FreeScoped(refs[i]);
}

}  // namespace tpusim::dsl
