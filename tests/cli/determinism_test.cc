// Same inputs, same trace bytes: in functional and in timing-only runs, twice in one
// process and once each in two child processes of the CLI.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "tests/support/test_support.h"

namespace tpusim {
namespace {

std::string FileBytes(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

// A kernel with remote DMAs on both link directions, VMEM staging and VPU adds.
constexpr const char* kKernel = "reduce_scatter_bidi";

class Determinism : public ::testing::TestWithParam<bool /* functional */> {};

TEST_P(Determinism, TwoRunsInOneProcessWriteTheSameTraceBytes) {
  const auto* info = kernels::Registry::Get().Find(kKernel);
  ASSERT_NE(info, nullptr);
  const dsl::Mesh mesh(testing::MakeTopology({4}, {true}));
  const kernels::Params args = testing::ParamsFor(kKernel, {{"bytes", 4 * 4 * 4096}}, GetParam());
  std::string traces[2];
  for (int run = 0; run < 2; ++run) {
    kernels::Workload workload = info->make(mesh, args);
    const auto checked =
        testing::RunWorkload(workload, args.functional, "run" + std::to_string(run));
    ASSERT_TRUE(checked.result.ok) << checked.result.error;
    traces[run] = FileBytes(checked.trace_path);
  }
  ASSERT_FALSE(traces[0].empty());
  EXPECT_TRUE(traces[0] == traces[1]) << "the two traces differ";
}

TEST_P(Determinism, TwoChildProcessesWriteTheSameTraceBytes) {
  std::string traces[2];
  for (int run = 0; run < 2; ++run) {
    const std::string path = testing::TempPath("child" + std::to_string(run) + ".pftrace");
    const auto r = testing::RunTpusim(std::string("run ") + kKernel +
                                      " --topology v5e-4x4 --axis x --bytes 256K --trace " + path +
                                      (GetParam() ? "" : " --timing-only"));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    traces[run] = FileBytes(path);
  }
  ASSERT_FALSE(traces[0].empty());
  EXPECT_TRUE(traces[0] == traces[1]) << "the two traces differ";
}

INSTANTIATE_TEST_SUITE_P(Modes, Determinism, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "Functional" : "TimingOnly"; });

}  // namespace
}  // namespace tpusim
