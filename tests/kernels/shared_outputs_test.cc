// A functional all-gather's outputs are the same bytes on every chip: the replicated input
// blocks are written once (base::Engine::CopyHost), the DMAs of whole blocks share them
// copy-on-write (sim/block_bytes.h), the hand-off gives each chip the same vector
// (base::Engine::TakeHost), and the check compares it with the reference once. A wrong byte on one
// chip must still be caught, and must stay on that chip.

#include <gtest/gtest.h>

#include "kernels/registry.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

TEST(SharedOutputs, AnAllGathersOutputsAreOneVectorAndAWrongByteOnOneChipIsCaught) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-4x4"));
  // 128 KiB shards: the halves each direction carries are whole 64 KiB blocks.
  kernels::Workload w =
      testing::Entry("all_gather_bidi")
          .make(mesh, testing::ParamsFor("all_gather_bidi", {{"axis", "x"}, {"bytes", 512 << 10}}));
  auto run = testing::RunWorkload(w);
  ASSERT_TRUE(run.result.ok) << run.result.error;
  std::vector<dsl::Array>& outputs = run.result.device_outputs.at(0);
  ASSERT_EQ(outputs.size(), 16u);
  // The input is sharded over x and replicated over y, so every ring gathers the same blocks:
  // the 16 outputs are one vector.
  for (int d = 1; d < 16; ++d)
    EXPECT_TRUE(outputs[d].SharesBytesWith(outputs[0])) << "device " << d;
  const auto check = dsl::CheckAgainstReference(w.program, run.result, w.expected);
  ASSERT_TRUE(check.equal) << check.detail;

  // One byte of one chip's output: the others that shared it keep theirs, and the check
  // names that chip.
  const int wrong = 6;
  int partner = -1;
  for (int e = 0; e < 16 && partner < 0; ++e) {
    if (e != wrong && outputs[e].SharesBytesWith(outputs[wrong])) partner = e;
  }
  ASSERT_GE(partner, 0);
  const dsl::Array before = outputs[partner];
  outputs[wrong].data()[12345] ^= 0x40;
  EXPECT_FALSE(outputs[wrong].SharesBytesWith(outputs[partner]));
  EXPECT_TRUE(outputs[partner].SameBytes(before));
  EXPECT_FALSE(outputs[wrong].SameBytes(before));
  const auto caught = dsl::CheckAgainstReference(w.program, run.result, w.expected);
  EXPECT_FALSE(caught.equal);
  EXPECT_NE(caught.detail.find("on device " + std::to_string(wrong) + " "), std::string::npos)
      << caught.detail;
}

}  // namespace
}  // namespace tpusim
