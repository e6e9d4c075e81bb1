// HLO modules on the command line: run, compare and bench take a module file where they take
// an entry, hlo-info prints what was read, and every way a module or its flags can be wrong
// ends in one clear line that names the thing and the fix (exit 2).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/test_support.h"
#include "tools/tpusim/run_metrics.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;
using testing::LastLineJson;
using testing::RunTpusim;

std::string Example(const std::string& name) {
  return std::string(TPUSIM_SOURCE_DIR) + "/examples/hlo/" + name;
}

// A module file written for one test.
std::string WriteModule(const std::string& name, const std::string& text) {
  const std::string path = testing::TempPath(name);
  std::ofstream(path) << text;
  return path;
}

const char* kTiny = R"(HloModule tiny, num_partitions=4

ENTRY %main (p: f32[8,128]) -> f32[8,128] {
  %p = f32[8,128]{1,0} parameter(0), sharding={devices=[4,1]<=[4]}
  ROOT %e = f32[8,128]{1,0} exponential(f32[8,128]{1,0} %p), metadata={op_name="jit(f)/exp" source_file="f.py" source_line=3}
}
)";

TEST(HloCli, RunsAModuleFileWithItsPerOpTableAndJson) {
  const std::string trace = testing::TempPath("mlp_tp.pftrace");
  const auto r = RunTpusim("run " + Example("mlp_tensor_parallel.hlo") +
                           " --topology v5e-2x4 --json --trace " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("data             matches the reference on all 8 chips"));
  EXPECT_THAT(r.out, HasSubstr("critical path"));
  EXPECT_THAT(r.out, HasSubstr("all-reduce"));
  const auto j = LastLineJson(r.out);
  EXPECT_EQ(j["kind"], "program");
  EXPECT_EQ(j["correct"], true);
  bool found = false;
  for (const auto& op : j["ops"]) {
    if (op["name"] != "all-reduce") continue;
    found = true;
    EXPECT_EQ(op["kind"], "collective");
    EXPECT_EQ(op["count"], 1);
    EXPECT_GT(op["exposed_ns"].get<double>(), 0);
  }
  EXPECT_TRUE(found) << j["ops"].dump();
  testing::ExpectTraceValid(trace);
  // The trace names the steps after the instructions.
  std::ifstream in(trace, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(bytes, HasSubstr("broadcast_maximum_fusion"));
  EXPECT_THAT(bytes, HasSubstr("jit(f)/jit(main)/dot_general"));
}

// Through the CLI's flag; tests/hlo/examples_test.cc checks it for every example module
// (the async ring there: this one is its gathers and reduce-scatters in a second).
TEST(HloCli, TimingOnlyGivesTheSameTime) {
  const std::string module = Example("mlp_fsdp.hlo");
  const auto functional = RunTpusim("run " + module + " --topology v5e-2x4 --json");
  const auto timing = RunTpusim("run " + module + " --topology v5e-2x4 --timing-only --json");
  ASSERT_EQ(functional.exit_code, 0) << functional.err;
  ASSERT_EQ(timing.exit_code, 0) << timing.err;
  EXPECT_EQ(LastLineJson(functional.out)["sim_time_ns"], LastLineJson(timing.out)["sim_time_ns"]);
}

TEST(HloCli, HloInfoPrintsOpcodesParametersAndCollectiveGroups) {
  const auto r =
      RunTpusim("hlo-info " + Example("sharded_matmul_permute.hlo") + " --topology v5e-2x4");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("num_partitions=8"));
  EXPECT_THAT(r.out, HasSubstr("tiled as P(None, 'y')"));
  EXPECT_THAT(r.out, HasSubstr("2 groups of 4: {0, 1, 2, 3}, {4, 5, 6, 7}; on axis y"));
  EXPECT_THAT(r.out, HasSubstr("y, 3 hops"));
  EXPECT_THAT(r.out, HasSubstr("one kernel: roofline of its MXU, VPU and HBM work"));
}

// collective-broadcast is read, its iota groups mapped to the torus, charged as the lax
// collective_broadcast, and run with the algorithm the collectives table names.
TEST(HloCli, CollectiveBroadcastIsDescribedAndRunsWithItsAlgorithmReported) {
  const std::string module = WriteModule("broadcast.hlo", R"(HloModule b, num_partitions=8

ENTRY %e (x: bf16[4,1024]) -> bf16[4,1024] {
  %x = bf16[4,1024]{1,0} parameter(0)
  ROOT %cb = bf16[4,1024]{1,0} collective-broadcast(bf16[4,1024]{1,0} %x), channel_id=1, replica_groups=[2,4]<=[8]
}
)");
  const auto info = RunTpusim("hlo-info " + module + " --topology v5e-2x4");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("collective_broadcast collective (from each group's first"));
  EXPECT_THAT(info.out, HasSubstr("2 groups of 4: {0, 1, 2, 3}, {4, 5, 6, 7}; on axis y"));
  const auto run = RunTpusim("run " + module + " --topology v5e-2x4");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("matches the reference on all 8 chips"));
  EXPECT_THAT(run.out, ::testing::MatchesRegex(
                           "(.|\n)*cb +collective_broadcast (direct|recursive_doubling|ring|"
                           "bidi_ring) (.|\n)*"));
}

// A module with an op that has no host numerics (a Pallas kernel charged from its cost
// estimate) runs timing-only, and the summary says so and why.
TEST(HloCli, AModuleWithoutNumericsRunsTimingOnlyAndSaysWhy) {
  const std::string module = WriteModule("pallas.hlo", R"(HloModule k, num_partitions=4

ENTRY %e (a: f32[8,128]) -> f32[8,128] {
  %a = f32[8,128]{1,0} parameter(0)
  ROOT %k = f32[8,128]{1,0} custom-call(f32[8,128]{1,0} %a), custom_call_target="tpu_custom_call", backend_config={"custom_call_config": {"cost_estimate": {"flops": 0, "transcendentals": 0, "bytes_accessed": 8192}}, "kernel_name": "k"}
}
)");
  const auto r = RunTpusim("run " + module + " --topology v5e-2x2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("not checked: timing-only, because"));
  EXPECT_THAT(r.out, HasSubstr("'k' (custom-call) has no host numerics"));
}

// The per-op table shows a program's ten longest steps; --ops shows every one.
TEST(HloCli, OpsListsEveryStepOfTheModule) {
  std::string text =
      "HloModule chain, num_partitions=4\n\nENTRY %e (p: f32[8,128]) -> f32[8,128] {\n";
  text += "  %n0 = f32[8,128]{1,0} parameter(0)\n";
  for (int i = 1; i <= 12; ++i) {
    text += i == 12 ? "  ROOT %n" : "  %n";
    text += std::to_string(i) + " = f32[8,128]{1,0} negate(f32[8,128]{1,0} %n" +
            std::to_string(i - 1) + ")\n";
  }
  text += "}\n";
  const std::string module = WriteModule("chain.hlo", text);
  auto rows = [](const std::string& out) {
    int n = 0;
    for (size_t at = out.find(" negate "); at != std::string::npos;
         at = out.find(" negate ", at + 1))
      ++n;
    return n;
  };
  const auto ten = RunTpusim("run " + module + " --topology v5e-2x2");
  const auto all = RunTpusim("run " + module + " --topology v5e-2x2 --ops");
  ASSERT_EQ(ten.exit_code, 0) << ten.err;
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_EQ(rows(ten.out), 10);
  EXPECT_EQ(rows(all.out), 12);
}

// Without --topology: the first preset by name with the module's 8 devices, TPU7x's 2x2x1 chips
// of two chiplets each, where the 4 devices of a group span two axes (y and the chiplets).
TEST(HloCli, HloInfoWithoutATopologyTakesTheFirstPresetOfTheModulesSize) {
  const auto r = RunTpusim("hlo-info " + Example("sharded_matmul_permute.hlo"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("tpu7x-2x2x1, the first preset with as many devices"));
  EXPECT_THAT(r.out, HasSubstr("tiled as P(None, ('y', 'chiplet'))"));
  EXPECT_THAT(r.out, HasSubstr("2 groups of 4: {0, 1, 2, 3}, {4, 5, 6, 7}; on axes (y, chiplet)"));
}

TEST(HloCli, CompareRunsAModuleBesideAnotherSchedule) {
  const auto r = RunTpusim("compare " + Example("mlp_fsdp.hlo") + " " +
                           Example("mlp_tensor_parallel.hlo") + " --topology v5e-2x4");
  // Both compute out = relu(X @ W1) @ W2 on the same global shapes; their layouts differ.
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("mlp_fsdp.hlo"));
  EXPECT_THAT(r.out, HasSubstr("mlp_tensor_parallel.hlo"));
}

TEST(HloCli, BenchRunsAModuleOnceSinceItHasNothingToSweep) {
  const std::string csv = testing::TempPath("bench_hlo.csv");
  const auto r = RunTpusim("bench " + Example("mlp_tensor_parallel.hlo") +
                           " --topology v5e-2x4 --timing-only --csv " + csv + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("one run of each entry"));
  EXPECT_THAT(r.out, HasSubstr("# 1 of 1 sizes completed"));
  const auto rows = LastLineJson(r.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_GT(rows[0]["sim_time_ns"].get<double>(), 0);
  // The same time a plain run gives.
  const auto run = RunTpusim("run " + Example("mlp_tensor_parallel.hlo") +
                             " --topology v5e-2x4 --timing-only --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(rows[0]["sim_time_ns"], LastLineJson(run.out)["sim_time_ns"]);
  std::ifstream file(csv);
  std::string header;
  std::getline(file, header);
  EXPECT_EQ(header, cli::CsvHeader() + ",error") << "a swept column where nothing is swept";
  // Nothing is swept, so there is nothing to plot against.
  const auto plot = RunTpusim("bench " + Example("mlp_tensor_parallel.hlo") +
                              " --topology v5e-2x4 --plot " + testing::TempPath("p.svg"));
  EXPECT_EQ(plot.exit_code, 2);
  EXPECT_THAT(plot.err, HasSubstr("--plot draws against a swept parameter, and there is none"));
}

TEST(HloCli, AModuleWithATypoFailsAtItsLineAndColumn) {
  const std::string path =
      WriteModule("typo.hlo", "HloModule m\n\nENTRY %e {\n  %p = f32[2] parmeter(0)\n}\n");
  const auto r = RunTpusim("run " + path + " --topology v5e-2x2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("typo.hlo:4:"));
}

TEST(HloCli, AModuleForAnotherDeviceCountNamesBothAndTheFix) {
  const auto r = RunTpusim("run " + Example("mlp_fsdp.hlo") + " --topology v5e-2x2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("compiled for 8 devices"));
  EXPECT_THAT(r.err, HasSubstr("has 4 chips"));
  EXPECT_THAT(r.err, HasSubstr("jax_num_cpu_devices"));
}

TEST(HloCli, AnUnknownOpIsNamedUnlessUnknownOpsIsFree) {
  std::string text = kTiny;
  text.replace(text.find("exponential(f32[8,128]{1,0} %p)"), 31, "cholesky(f32[8,128]{1,0} %p)");
  const std::string path = WriteModule("cholesky.hlo", text);
  const auto refused = RunTpusim("run " + path + " --topology v5e-2x2");
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.err, HasSubstr("'e' (cholesky)"));
  EXPECT_THAT(refused.err, HasSubstr("cholesky.hlo:5:"));
  const auto free = RunTpusim("run " + path + " --topology v5e-2x2 --unknown-ops free");
  EXPECT_EQ(free.exit_code, 0) << free.err;
  EXPECT_THAT(free.out, HasSubstr("not modelled, charged nothing: e (cholesky)"));
  EXPECT_THAT(free.out, HasSubstr("timing-only, because"));
}

// Both signs of a module before SPMD partitioning: a Sharding custom call, and a sharding
// annotation on an op inside it (not the entry's parameters or root).
TEST(HloCli, AnUnpartitionedModuleSaysHowToGetThePartitionedOne) {
  auto refusal = [](const std::string& name, const std::string& text) {
    const auto r = RunTpusim("run " + WriteModule(name, text) + " --topology v5e-2x2");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr(".compile().as_text()"));
    return r.err;
  };
  for (const std::string target : {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"}) {
    std::string call = "custom-call(f32[8,128]{1,0} %p), custom_call_target=\"";
    call += target;
    call += "\"";
    std::string custom_call = kTiny;
    custom_call.replace(custom_call.find("exponential(f32[8,128]{1,0} %p)"), 31, call);
    EXPECT_THAT(refusal("lowered.hlo", custom_call),
                HasSubstr("has not been through SPMD partitioning"))
        << target;
  }
  std::string annotated = kTiny;
  annotated.replace(annotated.find("  ROOT %e"), 0,
                    "  %n = f32[8,128]{1,0} negate(f32[8,128]{1,0} %p), sharding={replicated}\n");
  EXPECT_THAT(refusal("annotated.hlo", annotated), HasSubstr("'n' carries a sharding annotation"));
}

TEST(HloCli, ABadDeviceOrderNamesItsFlag) {
  const std::string path = WriteModule("tiny.hlo", kTiny);
  const auto twice = RunTpusim("run " + path + " --topology v5e-2x2 --device-order 0,1,1,2");
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_THAT(twice.err, HasSubstr("appears twice"));
  EXPECT_THAT(twice.err, HasSubstr("--device-order"));
  const auto words = RunTpusim("run " + path + " --topology v5e-2x2 --device-order a,b");
  EXPECT_EQ(words.exit_code, 2);
  EXPECT_THAT(words.err, HasSubstr("'a' is not a device number"));
  const auto reversed = RunTpusim("run " + path + " --topology v5e-2x2 --device-order 3,2,1,0");
  EXPECT_EQ(reversed.exit_code, 0) << reversed.err;
}

TEST(HloCli, AMissingFileIsNamed) {
  const auto r = RunTpusim("hlo-info /nonexistent/step.hlo");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/step.hlo"));
}

}  // namespace
}  // namespace tpusim
