// Grids and BlockSpecs: VMEM operands pipelined over the grid (docs/references.md §5), the
// block rules, scoped allocations (run_scoped, emit_pipeline) and VMEM capacity.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "base/work.h"
#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "dsl/pipeline.h"
#include "dsl/shard_map.h"
#include "tests/support/test_support.h"
#include "traces/trace_sink.h"

namespace tpusim {
namespace {

using namespace dsl;
using ::testing::HasSubstr;

// x + y elementwise, on the host.
Array Add(const Array& x, const Array& y) {
  Array out(x.shape(), x.dtype());
  for (int64_t i = 0; i < x.size(); ++i)
    out.SetFlat(i, x.GetFlat(i) + y.GetFlat(i));
  return out;
}

TEST(Grid, PipelinedBlocksReachTheKernelAsVmemRefs) {
  GridSpec grid;
  grid.grid = {4, 2};
  grid.in_specs = {BlockSpec({64, 128}, [](int i, int j) { return BlockIndex{i, j}; })};
  grid.out_specs = {BlockSpec({64, 128}, [](int i, int j) { return BlockIndex{i, j}; })};
  std::vector<std::string> seen;
  auto body = [&](Kernel& k, const Refs& r) {
    if (k.program_id(0) == 0 && k.program_id(1) == 0) {
      seen.push_back(std::string(MemorySpaceName(r[0].memory_space())) + " " +
                     ShapeString(r[0].shape()) + " " + MemorySpaceName(r[1].memory_space()));
    }
    k.add(r[1], r[0], r[0]);
  };
  PallasCall call = pallas_call("double", body, grid, {{{256, 256}, DType::kF32}});
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}}, {P{}}, call);
  const Array x = Array::Random({256, 256}, DType::kF32, 3);
  auto run = testing::RunAndCheckTrace(program, {x});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  EXPECT_EQ(seen, (std::vector<std::string>{"VMEM (64, 128) VMEM"}));
  EXPECT_TRUE(CompareExact(run.result.outputs[0], Add(x, x)).equal);
  // 8 blocks in, 8 out: every step maps to a different block.
  EXPECT_EQ(run.result.stats.dmas, 16u);
}

TEST(Grid, SqueezedDimsAreDroppedFromTheKernelsRef) {
  GridSpec grid;
  grid.grid = {4};
  grid.in_specs = {BlockSpec({kSqueezed, 8, 128}, [](int i) { return BlockIndex{i, 0, 0}; })};
  grid.out_specs = {BlockSpec({kSqueezed, 8, 128}, [](int i) { return BlockIndex{3 - i, 0, 0}; })};
  Shape seen;
  auto body = [&](Kernel& k, const Refs& r) {
    seen = r[0].shape();
    k.cast(r[1], r[0]);
  };
  PallasCall call = pallas_call("reverse", body, grid, {{{4, 8, 128}, DType::kBF16}});
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}}, {P{}}, call);
  const Array x = Array::Random({4, 8, 128}, DType::kBF16, 4);
  auto run = testing::RunAndCheckTrace(program, {x});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  EXPECT_EQ(seen, (Shape{8, 128}));
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(CompareExact(run.result.outputs[0].Slice({3 - i, 0, 0}, {1, 8, 128}),
                             x.Slice({i, 0, 0}, {1, 8, 128}))
                    .equal)
        << "block " << i;
  }
}

// Grid (2, 3): x's block changes with i only, w's with j, out's with both, and
// rows' with i only. Copies are skipped while a block stays the same, and an output is
// written back only when its block index changes or the grid ends.
TEST(Grid, CopiesAreSkippedWhileTheBlockStaysTheSame) {
  GridSpec grid;
  grid.grid = {2, 3};
  grid.in_specs = {BlockSpec({8, 128},
                             [](int i, int) {
                               return BlockIndex{i, 0};
                             }),
                   BlockSpec({8, 128}, [](int, int j) {
                     return BlockIndex{0, j};
                   })};
  grid.out_specs = {BlockSpec({8, 128},
                              [](int i, int j) {
                                return BlockIndex{i, j};
                              }),
                    BlockSpec({8, 128}, [](int i, int) {
                      return BlockIndex{i, 0};
                    })};
  auto body = [](Kernel& k, const Refs& r) {
    k.add(r[2], r[0], r[1]);
    if (k.program_id(1) == 2) k.cast(r[3], r[0]);  // written on the last j only
  };
  PallasCall call = pallas_call("broadcast_add", body, grid,
                                {{{16, 384}, DType::kF32}, {{16, 128}, DType::kF32}});
  call.in_names = {"x", "w"};
  call.out_names = {"out", "rows"};
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}, P{}}, {P{}, P{}}, call);
  const Array x = Array::Random({16, 128}, DType::kF32, 5);
  const Array w = Array::Random({8, 384}, DType::kF32, 6);
  auto run = testing::RunAndCheckTrace(program, {x, w});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  // x: 2 copy-ins (one per i); w: 6 (its block changes at every step, also from j=2 back
  // to j=0); out: 6 write-backs; rows: 2 (when i changes, and at the end).
  EXPECT_EQ(run.result.stats.dmas, 2u + 6u + 6u + 2u);
  Array expected({16, 384}, DType::kF32);
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 3; ++j) {
      expected.Place(Add(x.Slice({i * 8, 0}, {8, 128}), w.Slice({0, j * 128}, {8, 128})),
                     {i * 8, j * 128});
    }
  }
  EXPECT_TRUE(CompareExact(run.result.outputs[0], expected).equal);
  EXPECT_TRUE(CompareExact(run.result.outputs[1], x).equal);
}

// An operand whose block never changes is copied in once, whatever the grid.
TEST(Grid, AWholeArrayBlockIsCopiedOnce) {
  GridSpec grid;
  grid.grid = {5};
  grid.in_specs = {BlockSpec()};
  grid.out_specs = {BlockSpec()};
  auto body = [](Kernel& k, const Refs& r) {
    if (k.program_id(0) == 4) k.cast(r[1], r[0]);
  };
  PallasCall call = pallas_call("copy", body, grid, {{{8, 100}, DType::kF32}});
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}}, {P{}}, call);
  const Array x = Array::Random({8, 100}, DType::kF32, 9);
  auto run = testing::RunAndCheckTrace(program, {x});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  EXPECT_EQ(run.result.stats.dmas, 2u);
  EXPECT_TRUE(CompareExact(run.result.outputs[0], x).equal);
}

// The input of step i+1 is fetched while step i computes: a grid whose steps each take
// longer than a block's copy runs in about one copy plus the compute.
TEST(Grid, PrefetchOverlapsTheNextCopyWithCompute) {
  GridSpec grid;
  grid.grid = {8};
  grid.in_specs = {BlockSpec({512, 512},
                             [](int i) {
                               return BlockIndex{i, 0};
                             }),
                   BlockSpec({512, 512}, [](int) {
                     return BlockIndex{0, 0};
                   })};
  grid.out_specs = {BlockSpec({512, 512}, [](int i) { return BlockIndex{i, 0}; })};
  grid.scratch_shapes = {ScratchSpec::VMEM({512, 512}, DType::kF32, "acc")};
  auto body = [](Kernel& k, const Refs& r) {
    k.dot(r[0], r[1], r[3], false);
    k.cast(r[2], r[3]);
  };
  PallasCall call = pallas_call("chain", body, grid, {{{4096, 512}, DType::kBF16}});
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}, P{}}, {P{}}, call);
  RunOptions options;
  options.functional = false;
  auto run = testing::RunAndCheckTrace(
      program,
      {Array::Placeholder({4096, 512}, DType::kBF16), Array::Placeholder({512, 512}, DType::kBF16)},
      options);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  const auto& core = run.result.stats.cores[0];
  const double compute = static_cast<double>(core.mxu_busy + core.vpu_busy);
  const double copy = 512.0 * 512 * 2 / 8.19e11 * 1e12;  // one bf16 block over HBM, ps
  // Prologue (x and w blocks), then compute-bound steps, each with its fixed step cost,
  // then the last write-back.
  const Mesh mesh = testing::OneChipMesh();  // chip() refers into it: it must outlive the reference
  const auto& chip = mesh.topology().chip();
  const double steps = 8 * static_cast<double>(testing::ModelCycles(chip, base::GridStep{})) /
                       chip.clock_hz() * 1e12;
  EXPECT_LT(static_cast<double>(run.result.time()), compute + steps + 4 * copy);
  EXPECT_GT(static_cast<double>(run.result.time()), compute);
}

// a, b and out, all f32[256, 128], on a grid of 2.
// The pipeline's copies are DMAs of the model: they show on the DMA tracks, by operand and
// block index, and the waits for them on the core track.
TEST(Grid, PipelineCopiesShowOnTheTrace) {
  GridSpec grid;
  grid.grid = {2};
  grid.in_specs = {BlockSpec({8, 128}, [](int i) { return BlockIndex{i, 0}; }), BlockSpec::Any()};
  grid.out_specs = {BlockSpec({8, 128}, [](int i) { return BlockIndex{i, 0}; })};
  std::vector<std::string> spaces;
  auto body = [&](Kernel& k, const Refs& r) {
    spaces = {MemorySpaceName(r[0].memory_space()), MemorySpaceName(r[1].memory_space())};
    k.cast(r[2], r[0]);
  };
  PallasCall call = pallas_call("traced", body, grid, {{{16, 128}, DType::kF32}});
  call.in_names = {"x", "unused"};
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}, P{}}, {P{}}, call);
  const std::string path = testing::TempPath("trace.json");
  auto sink = traces::OpenTraceFile(path);
  RunOptions options;
  options.trace = sink.get();
  const RunResult result =
      program.Run({Array({16, 128}, DType::kF32), Array({4}, DType::kF32)}, options);
  sink->Finish();
  sink.reset();
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(spaces, (std::vector<std::string>{"VMEM", "ANY"}));
  std::ifstream file(path);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (const char* name : {"copy-in x (0, 0)", "copy-in x (1, 0)", "copy-out out0 (0, 0)",
                           "copy-out out0 (1, 0)", "wait x copy-in 0", "step (1,)"}) {
    EXPECT_THAT(text, HasSubstr(name));
  }
}

TEST(Grid, AnIndexMapForTheWrongNumberOfAxesSaysSo) {
  GridSpec grid;
  grid.grid = {2, 2};
  grid.in_specs = {BlockSpec({8, 128}, [](int i) { return BlockIndex{i, 0}; })};
  grid.out_specs = {BlockSpec::Any()};
  const ShardMap program =
      shard_map(testing::OneChipMesh(), {P{}}, {P{}},
                pallas_call("arity", [](Kernel&, const Refs&) {}, grid, {{{8}, DType::kF32}}));
  auto run = testing::RunAndCheckTrace(program, {Array({16, 128}, DType::kF32)});
  ASSERT_FALSE(run.result.ok);
  EXPECT_THAT(run.result.error,
              HasSubstr("an index_map takes 1 grid indices, but the grid has 2 axes"));
}

ShardMap TwoInputs(const std::vector<BlockSpec>& in_specs,
                   const std::vector<BlockSpec>& out_specs) {
  GridSpec grid;
  grid.grid = {2};
  grid.in_specs = in_specs;
  grid.out_specs = out_specs;
  PallasCall call =
      pallas_call("blocks", [](Kernel&, const Refs&) {}, grid, {{{256, 128}, DType::kF32}});
  call.in_names = {"a", "b"};
  call.out_names = {"out"};
  return shard_map(testing::OneChipMesh(), {P{}, P{}}, {P{}}, call);
}

std::string RunError(const ShardMap& program) {
  try {
    program.Run({Array({256, 128}, DType::kF32), Array({256, 128}, DType::kF32)}, {});
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "expected a BlockSpec error";
  return "";
}

TEST(BlockSpecRules, BlocksBreakingTheEightBy128RuleNameTheOperandAndTheRule) {
  const BlockSpec ok({128, 128}, [](int i) { return BlockIndex{i, 0}; });
  const BlockSpec bad({100, 128}, [](int i) { return BlockIndex{i, 0}; });
  EXPECT_THAT(RunError(TwoInputs({ok, bad}, {ok})),
              HasSubstr("blocks: BlockSpec for input 1 ('b') has block (100, 128), but the last "
                        "two dims must be multiples of (8, 128) or equal the array dims "
                        "(256, 128)"));
  const BlockSpec narrow({128, 64}, [](int i) { return BlockIndex{i, 0}; });
  EXPECT_THAT(RunError(TwoInputs({ok, ok}, {narrow})),
              HasSubstr("BlockSpec for output 0 ('out') has block (128, 64), but the last two "
                        "dims must be multiples of (8, 128)"));
  // Equal to the array dims is fine even when not a multiple: (8, 100) of (8, 100).
  const BlockSpec whole({8, 100}, [](int) { return BlockIndex{0, 0}; });
  GridSpec grid;
  grid.in_specs = {whole};
  grid.out_specs = {whole};
  const ShardMap program =
      shard_map(testing::OneChipMesh(), {P{}}, {P{}},
                pallas_call("whole", [](Kernel& k, const Refs& r) { k.cast(r[1], r[0]); }, grid,
                            {{{8, 100}, DType::kF32}}));
  EXPECT_TRUE(program.Run({Array({8, 100}, DType::kF32)}, {}).ok);
}

TEST(BlockSpecRules, BlocksThatDoNotTileTheArraySaySo) {
  const BlockSpec ok({128, 128}, [](int i) { return BlockIndex{i, 0}; });
  const BlockSpec uneven({96, 128}, [](int i) { return BlockIndex{i, 0}; });
  const std::string e = RunError(TwoInputs({uneven, ok}, {ok}));
  EXPECT_THAT(e, HasSubstr("BlockSpec for input 0 ('a') has block (96, 128), which does not "
                           "tile the array f32[256,128] evenly: dim 0 (256) is not a multiple "
                           "of 96"));
  EXPECT_THAT(e, HasSubstr("try block (64, 128)"));
}

TEST(BlockSpecRules, ABlockOfTheWrongRankSaysSo) {
  const BlockSpec ok({128, 128}, [](int i) { return BlockIndex{i, 0}; });
  const BlockSpec flat({128}, [](int i) { return BlockIndex{i}; });
  EXPECT_THAT(RunError(TwoInputs({ok, flat}, {ok})),
              HasSubstr("BlockSpec for input 1 ('b') has block (128,) of rank 1, but the array "
                        "f32[256,128] has rank 2"));
}

TEST(BlockSpecRules, AnIndexMapOutsideTheArrayFailsTheRunWithATrace) {
  GridSpec grid;
  grid.grid = {3};
  grid.in_specs = {BlockSpec({128, 128}, [](int i) { return BlockIndex{i, 0}; })};
  grid.out_specs = {BlockSpec({128, 128}, [](int) { return BlockIndex{0, 0}; })};
  PallasCall call =
      pallas_call("overrun", [](Kernel&, const Refs&) {}, grid, {{{128, 128}, DType::kF32}});
  call.in_names = {"x"};
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}}, {P{}}, call);
  auto run = testing::RunAndCheckTrace(program, {Array({256, 128}, DType::kF32)});
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kOutOfBounds);
  EXPECT_THAT(run.result.error,
              HasSubstr("the index_map of input 0 ('x') returned (2, 0) at step (2,), outside "
                        "the 2 x 1 blocks of (128, 128)"));
}

TEST(VmemCapacity, PipelineBuffersCountAndTheErrorListsThem) {
  // Two 32 MiB buffers per operand and a 32 MiB accumulator: 160 MiB > 128 MiB.
  GridSpec grid;
  grid.grid = {2};
  grid.in_specs = {BlockSpec({2048, 4096}, [](int i) { return BlockIndex{i, 0}; })};
  grid.out_specs = {BlockSpec({2048, 4096}, [](int i) { return BlockIndex{i, 0}; })};
  grid.scratch_shapes = {ScratchSpec::VMEM({2048, 4096}, DType::kF32, "acc")};
  PallasCall call =
      pallas_call("big", [](Kernel&, const Refs&) {}, grid, {{{4096, 4096}, DType::kF32}});
  call.in_names = {"x"};
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}}, {P{}}, call);
  RunOptions options;
  options.functional = false;
  auto run =
      testing::RunAndCheckTrace(program, {Array::Placeholder({4096, 4096}, DType::kF32)}, options);
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kCapacity);
  const std::string& e = run.result.error;
  EXPECT_THAT(e, HasSubstr("VMEM of chip 0 (x=0) is over capacity"));
  EXPECT_THAT(e, HasSubstr("128 MiB available"));
  EXPECT_THAT(e, HasSubstr("32 MiB  acc f32[2048,4096]"));
  EXPECT_THAT(e, HasSubstr("32 MiB  pipeline buffer 0 of input 0 ('x') f32[2048,4096]"));
  EXPECT_THAT(e, HasSubstr("32 MiB  pipeline buffer 1 of input 0 ('x') f32[2048,4096]"));
  EXPECT_THAT(e, HasSubstr("32 MiB  pipeline buffer 0 of output 0 f32[2048,4096]"));
  EXPECT_THAT(e, HasSubstr("32 MiB  pipeline buffer 1 of output 0 f32[2048,4096]  <- does not "
                           "fit"));
}

// SMEM BlockSpecs pipeline into SMEM; the (8, 128) rule is for VMEM tiles only.
TEST(Grid, SmemBlocksArePipelinedIntoSmem) {
  GridSpec grid;
  grid.grid = {4};
  grid.in_specs = {BlockSpec(
      {1, 4},
      [](int i) {
        return BlockIndex{i, 0};
      },
      MemorySpace::kSmem)};
  grid.out_specs = {BlockSpec(
      {1, 4},
      [](int i) {
        return BlockIndex{i, 0};
      },
      MemorySpace::kSmem)};
  auto body = [](Kernel& k, const Refs& r) {
    EXPECT_EQ(r[0].memory_space(), MemorySpace::kSmem);
    k.store(r[1], k.load(r[0]));
  };
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}}, {P{}},
                                     pallas_call("smem", body, grid, {{{4, 4}, DType::kInt32}}));
  const Array x = Array::Iota({4, 4}, DType::kInt32);
  auto run = testing::RunAndCheckTrace(program, {x});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  EXPECT_TRUE(CompareExact(run.result.outputs[0], x).equal);
}

TEST(SmemCapacity, ScopedSmemOverflowListsTheAllocations) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::SMEM({256}, DType::kInt32, "flags")};
  auto body = [](Kernel& k, const Refs&) {
    run_scoped(k, [](const Refs&) {}, {ScratchSpec::SMEM({1 << 18}, DType::kInt32, "table")});
  };
  const ShardMap program = shard_map(testing::OneChipMesh(), {P{}}, {P{}},
                                     pallas_call("smem", body, grid, {{{8}, DType::kF32}}));
  auto run = testing::RunAndCheckTrace(program, {Array({8}, DType::kF32)});
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kCapacity);
  EXPECT_THAT(run.result.error, HasSubstr("SMEM of chip 0 (x=0) is over capacity"));
  EXPECT_THAT(run.result.error, HasSubstr("1 MiB available"));
  EXPECT_THAT(run.result.error, HasSubstr("flags int32[256]"));
  EXPECT_THAT(run.result.error,
              HasSubstr("1 MiB  run_scoped table int32[262144]  <- does not fit"));
}

TEST(Grid, DimensionSemanticsAreRecorded) {
  GridSpec grid;
  grid.grid = {2, 2};
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  std::vector<std::string> seen;
  auto body = [&](Kernel& k, const Refs&) {
    if (k.program_id(0) == 0 && k.program_id(1) == 0)
      seen = {k.dimension_semantics(0), k.dimension_semantics(1)};
  };
  const ShardMap program =
      shard_map(testing::OneChipMesh(), {P{}}, {P{}},
                pallas_call("sem", body, grid, {{{8}, DType::kF32}},
                            CompilerParams{.dimension_semantics = {"parallel", "arbitrary"}}));
  auto run = testing::RunAndCheckTrace(program, {Array({8}, DType::kF32)});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  EXPECT_EQ(seen, (std::vector<std::string>{"parallel", "arbitrary"}));
  EXPECT_EQ(program.call().compiler_params.dimension_semantics, seen);
}

// An outer grid over row halves, each running an inner pipeline over (64, 128) blocks of
// its half, straight from the HBM refs.
TEST(EmitPipeline, RunsANestedPipelineOverHbmRefs) {
  GridSpec grid;
  grid.grid = {2};
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  std::vector<std::vector<int>> inner_steps;
  auto body = [&](Kernel& k, const Refs& r) {
    const int64_t half = 128;
    const Ref x = r[0].at(ds(k.program_id(0) * half, half));
    const Ref out = r[1].at(ds(k.program_id(0) * half, half));
    const BlockSpec spec({64, 128}, [](int i, int j) { return BlockIndex{i, j}; });
    emit_pipeline(k,
                  [&](const std::vector<int>& ids, const Refs& blocks) {
                    if (k.program_id(0) == 0) inner_steps.push_back(ids);
                    EXPECT_EQ(blocks[0].memory_space(), MemorySpace::kVmem);
                    k.add(blocks[1], blocks[0], blocks[0]);
                  },
                  {2, 2}, {spec}, {spec}, {x}, {out});
  };
  const ShardMap program =
      shard_map(testing::OneChipMesh(), {P{}}, {P{}},
                pallas_call("nested", body, grid, {{{256, 256}, DType::kF32}}));
  const Array x = Array::Random({256, 256}, DType::kF32, 11);
  auto run = testing::RunAndCheckTrace(program, {x});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  EXPECT_TRUE(CompareExact(run.result.outputs[0], Add(x, x)).equal);
  EXPECT_EQ(inner_steps, (std::vector<std::vector<int>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}}));
  EXPECT_EQ(run.result.stats.dmas, 2u * (4 + 4));
}

TEST(EmitPipeline, BlockRulesApplyToTheNestedSpecs) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  auto body = [](Kernel& k, const Refs& r) {
    const BlockSpec spec({60, 128}, [](int i) { return BlockIndex{i, 0}; });
    emit_pipeline(k, [](const std::vector<int>&, const Refs&) {}, {2}, {spec}, {spec}, {r[0]},
                  {r[1]});
  };
  const ShardMap program =
      shard_map(testing::OneChipMesh(), {P{}}, {P{}},
                pallas_call("nested", body, grid, {{{120, 128}, DType::kF32}}));
  auto run = testing::RunAndCheckTrace(program, {Array({120, 128}, DType::kF32)});
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kKernelMisuse);
  EXPECT_THAT(run.result.error,
              HasSubstr("emit_pipeline: BlockSpec for input 0 ('in0') has block (60, 128), but "
                        "the last two dims must be multiples of (8, 128)"));
}

ShardMap ScopedProgram(KernelFn body) {
  GridSpec grid;
  grid.in_specs = {BlockSpec::Any()};
  grid.out_specs = {BlockSpec::Any()};
  grid.scratch_shapes = {ScratchSpec::DMA({}, "sem")};
  return shard_map(testing::OneChipMesh(), {P{}}, {P{}},
                   pallas_call("scoped", std::move(body), grid, {{{64, 128}, DType::kF32}}));
}

TEST(RunScoped, AllocatesVmemForTheScopeAndFreesIt) {
  auto body = [](Kernel& k, const Refs& r) {
    // 96 MiB twice in a row fits in 128 MiB only because the first is freed.
    for (int round = 0; round < 2; ++round) {
      run_scoped(k,
                 [&](const Refs& s) {
                   const Ref& big = s[0];
                   const Ref& tile = s[1];
                   const Ref& sem = s[2];
                   EXPECT_EQ(tile.memory_space(), MemorySpace::kVmem);
                   AsyncCopy in = k.async_copy(r[0], tile, sem);
                   in.start();
                   in.wait();
                   k.add(tile, tile, tile);
                   if (round == 1) {
                     AsyncCopy out = k.async_copy(tile, r[1], sem);
                     out.start();
                     out.wait();
                   }
                   (void)big;
                 },
                 {ScratchSpec::VMEM({96 << 18}, DType::kF32, "big"),
                  ScratchSpec::VMEM({64, 128}, DType::kF32, "tile"), ScratchSpec::DMA({}, "sem")});
    }
  };
  const Array x = Array::Random({64, 128}, DType::kF32, 12);
  auto run = testing::RunAndCheckTrace(ScopedProgram(body), {x});
  ASSERT_TRUE(run.result.ok) << run.result.error;
  // Each round doubles the fresh copy of x.
  EXPECT_TRUE(CompareExact(run.result.outputs[0], Add(x, x)).equal);
}

TEST(RunScoped, NestedScopesCountAgainstCapacity) {
  auto body = [](Kernel& k, const Refs&) {
    run_scoped(k,
               [&](const Refs&) {
                 run_scoped(k, [](const Refs&) {},
                            {ScratchSpec::VMEM({96 << 18}, DType::kF32, "inner")});
               },
               {ScratchSpec::VMEM({96 << 18}, DType::kF32, "outer")});
  };
  auto run = testing::RunAndCheckTrace(ScopedProgram(body), {Array({64, 128}, DType::kF32)});
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kCapacity);
  EXPECT_THAT(run.result.error, HasSubstr("96 MiB  run_scoped outer f32[25165824]\n"));
  EXPECT_THAT(run.result.error,
              HasSubstr("96 MiB  run_scoped inner f32[25165824]  <- does not fit"));
}

TEST(RunScoped, ASemaphoreLeftNonZeroAtScopeEndIsAnError) {
  auto body = [](Kernel& k, const Refs&) {
    run_scoped(k, [&](const Refs& s) { k.signal(s[0], 2); }, {ScratchSpec::REGULAR({}, "flag")});
  };
  auto run = testing::RunAndCheckTrace(ScopedProgram(body), {Array({64, 128}, DType::kF32)});
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kSemaphoreNotZero);
  EXPECT_THAT(run.result.error, HasSubstr("scoped semaphore 'flag' is 2 at the end of its scope"));
}

TEST(RunScoped, FreeingABufferWhileADmaWritesItIsARace) {
  auto body = [](Kernel& k, const Refs& r) {
    run_scoped(k, [&](const Refs& s) { k.async_copy(r[0], s[0], r[2]).start(); },
               {ScratchSpec::VMEM({64, 128}, DType::kF32, "tile")});
    k.wait(r[2], 1);  // never reached
  };
  auto run = testing::RunAndCheckTrace(ScopedProgram(body), {Array({64, 128}, DType::kF32)});
  ASSERT_FALSE(run.result.ok);
  EXPECT_EQ(run.result.error_kind, ErrorKind::kRace);
  EXPECT_THAT(run.result.error, HasSubstr("frees a buffer 'run_scoped tile f32[64,128]' while "
                                          "DMA 'copy in0 -> tile' still writes into it"));
}

}  // namespace
}  // namespace tpusim
