// The reference evaluator's collectives on 4 and 8 devices, in each of XLA's group modes,
// with list and iota replica groups, against results worked out by hand. Device d's input
// is built from d, so every result says where its data came from.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "tests/hlo/evaluator_test_support.h"

namespace tpusim::hlo::reference {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using testing::EvaluateText;
using testing::F32;
using testing::ModuleText;
using testing::Values;

// One f32 parameter per device: values(d).
std::vector<std::vector<dsl::Array>> PerDevice(
    int devices, const dsl::Shape& shape, const std::function<std::vector<double>(int)>& values) {
  std::vector<std::vector<dsl::Array>> parameters;
  for (int d = 0; d < devices; ++d)
    parameters.push_back({F32(shape, values(d))});
  return parameters;
}

// Device d holds [d + 1].
std::vector<std::vector<dsl::Array>> Ordinals(int devices) {
  return PerDevice(devices, {1}, [](int d) { return std::vector<double>{d + 1.0}; });
}

std::vector<std::vector<double>> Firsts(const std::vector<std::vector<dsl::Array>>& results) {
  std::vector<std::vector<double>> values;
  for (const auto& device : results)
    values.push_back(Values(device.at(0)));
  return values;
}

std::string AllReduce(const std::string& attributes) {
  return "  %x = f32[1] parameter(0)\n  ROOT %r = f32[1] all-reduce(%x), " + attributes +
         ", to_apply=%add";
}

using V = std::vector<double>;

TEST(ReferenceCollectives, AllReduceWithoutChannelGroupsReplicasWithinEachPartition) {
  // 2 replicas x 2 partitions: device = replica * 2 + partition.
  const auto one_partition = EvaluateText(
      ModuleText(AllReduce("replica_groups={{0,2},{1,3}}"), 1, 4, testing::kAddF32), Ordinals(4));
  EXPECT_THAT(Firsts(one_partition), ElementsAre(V{4}, V{6}, V{4}, V{6}));
  const auto two_partitions = EvaluateText(
      ModuleText(AllReduce("replica_groups={{0,1}}"), 2, 2, testing::kAddF32), Ordinals(4));
  // Replicas 0 and 1 of partition 0 are devices 0 and 2; of partition 1, devices 1 and 3.
  EXPECT_THAT(Firsts(two_partitions), ElementsAre(V{4}, V{6}, V{4}, V{6}));
}

TEST(ReferenceCollectives, AllReduceWithAChannelGroupsPartitionsWithinEachReplica) {
  const auto results = EvaluateText(
      ModuleText(AllReduce("channel_id=1, replica_groups={{0,1}}"), 2, 2, testing::kAddF32),
      Ordinals(4));
  EXPECT_THAT(Firsts(results), ElementsAre(V{3}, V{3}, V{7}, V{7}));
}

TEST(ReferenceCollectives, CrossReplicaAndPartitionTakesEveryPartitionOfTheNamedReplicas) {
  const auto per_replica = EvaluateText(
      ModuleText(AllReduce("channel_id=1, replica_groups={{0},{1}}, use_global_device_ids=false"),
                 2, 2, testing::kAddF32),
      Ordinals(4));
  EXPECT_THAT(Firsts(per_replica), ElementsAre(V{3}, V{3}, V{7}, V{7}));
  // Group order: replica 1's partitions, then replica 0's.
  const auto gathered = EvaluateText(
      ModuleText("  %x = f32[1] parameter(0)\n  ROOT %g = f32[4] all-gather(%x), channel_id=1, "
                 "replica_groups={{1,0}}, use_global_device_ids=false, dimensions={0}",
                 2, 2),
      Ordinals(4));
  for (const auto& device : Firsts(gathered))
    EXPECT_THAT(device, ElementsAre(3, 4, 1, 2));
}

TEST(ReferenceCollectives, GlobalDeviceIdsWithIotaGroups) {
  // [2,2]<=[2,2]T(1,0) is {{0,2},{1,3}}.
  const auto results = EvaluateText(
      ModuleText("  %x = f32[1] parameter(0)\n  ROOT %g = f32[2] all-gather(%x), channel_id=1, "
                 "replica_groups=[2,2]<=[2,2]T(1,0), use_global_device_ids=true, dimensions={0}",
                 2, 2),
      Ordinals(4));
  EXPECT_THAT(Firsts(results), ElementsAre(V{1, 3}, V{2, 4}, V{1, 3}, V{2, 4}));
}

TEST(ReferenceCollectives, AllReduceAppliesAnyReducerInGroupOrder) {
  // f(r, x) = 2 (r + x): not the fast path of a single add. Over 1, 2, 3, 4 in group order:
  // f(1, 2) = 6, f(6, 3) = 18, f(18, 4) = 44. The group {3,2,1,0} starts from device 3.
  const std::string twice_sum =
      "%twice_sum (a: f32[], b: f32[]) -> f32[] {\n"
      "  %a = f32[] parameter(0)\n"
      "  %b = f32[] parameter(1)\n"
      "  %s = f32[] add(%a, %b)\n"
      "  %two = f32[] constant(2)\n"
      "  ROOT %r = f32[] multiply(%s, %two)\n"
      "}\n";
  const std::string body =
      "  %x = f32[1] parameter(0)\n"
      "  %in.order = f32[1] all-reduce(%x), replica_groups={{0,1,2,3}}, to_apply=%twice_sum\n"
      "  %reversed = f32[1] all-reduce(%x), replica_groups={{3,2,1,0}}, to_apply=%twice_sum\n"
      "  ROOT %t = (f32[1], f32[1]) tuple(%in.order, %reversed)";
  const auto results = EvaluateText(ModuleText(body, 1, 4, twice_sum), Ordinals(4));
  for (const auto& device : results) {
    ASSERT_EQ(device.size(), 2u);
    EXPECT_THAT(Values(device[0]), ElementsAre(44));
    // f(4, 3) = 14, f(14, 2) = 32, f(32, 1) = 66.
    EXPECT_THAT(Values(device[1]), ElementsAre(66));
  }
}

TEST(ReferenceCollectives, ReduceScatterKeepsTheGroupIndexBlock) {
  const auto results = EvaluateText(
      ModuleText(
          "  %x = f32[4] parameter(0)\n  ROOT %rs = f32[1] reduce-scatter(%x), channel_id=1, "
          "replica_groups=[1,4]<=[4], use_global_device_ids=true, dimensions={0}, to_apply=%add",
          4, 1, testing::kAddF32),
      PerDevice(4, {4}, [](int d) {
        return V{10.0 * d, 10.0 * d + 1, 10.0 * d + 2, 10.0 * d + 3};
      }));
  // Column k sums to 60 + 4k; device i keeps block i.
  EXPECT_THAT(Firsts(results), ElementsAre(V{60}, V{64}, V{68}, V{72}));
}

TEST(ReferenceCollectives, AllToAllSendsChunkJToMemberJ) {
  const auto results = EvaluateText(
      ModuleText("  %x = f32[4] parameter(0)\n  ROOT %a = f32[4] all-to-all(%x), channel_id=1, "
                 "replica_groups={{0,1,2,3}}, dimensions={0}",
                 4),
      PerDevice(4, {4}, [](int d) {
        return V{10.0 * d, 10.0 * d + 1, 10.0 * d + 2, 10.0 * d + 3};
      }));
  EXPECT_THAT(Firsts(results),
              ElementsAre(V{0, 10, 20, 30}, V{1, 11, 21, 31}, V{2, 12, 22, 32}, V{3, 13, 23, 33}));
  // Two groups of an iota: {0,1,2,3} and {4,5,6,7} as [2,4]<=[8]; each member sends its
  // row j of two to member j.
  const auto grouped = EvaluateText(
      ModuleText("  %x = f32[4,1] parameter(0)\n  ROOT %a = f32[4,1] all-to-all(%x), channel_id=1, "
                 "replica_groups=[2,4]<=[8], dimensions={0}",
                 8),
      PerDevice(8, {4, 1}, [](int d) {
        return V{10.0 * d, 10.0 * d + 1, 10.0 * d + 2, 10.0 * d + 3};
      }));
  EXPECT_THAT(Firsts(grouped)[5], ElementsAre(41, 51, 61, 71));
}

TEST(ReferenceCollectives, AllToAllTupleFormExchangesOperands) {
  const std::string body =
      "  %x = f32[1] parameter(0)\n"
      "  %ten = f32[1] constant({10})\n"
      "  %y = f32[1] add(%x, %ten)\n"
      "  ROOT %a = (f32[1], f32[1]) all-to-all(%x, %y), replica_groups={{0,1}}";
  const auto results = EvaluateText(ModuleText(body, 1, 2), Ordinals(2));
  ASSERT_EQ(results.size(), 2u);
  // Member i receives operand i of every member, in member order.
  EXPECT_THAT(Values(results[0][0]), ElementsAre(1));
  EXPECT_THAT(Values(results[0][1]), ElementsAre(2));
  EXPECT_THAT(Values(results[1][0]), ElementsAre(11));
  EXPECT_THAT(Values(results[1][1]), ElementsAre(12));
}

TEST(ReferenceCollectives, CollectivePermuteByPartitionOrReplicaAndZerosForNonTargets) {
  const auto by_partition = EvaluateText(
      ModuleText("  %x = f32[1] parameter(0)\n  ROOT %p = f32[1] collective-permute(%x), "
                 "channel_id=1, source_target_pairs={{0,1},{1,2},{2,3}}",
                 4),
      Ordinals(4));
  EXPECT_THAT(Firsts(by_partition), ElementsAre(V{0}, V{1}, V{2}, V{3}));
  // Without a channel the pairs name replicas: replica 0 -> 1 in each of 2 partitions.
  const auto by_replica = EvaluateText(
      ModuleText("  %x = f32[1] parameter(0)\n  ROOT %p = f32[1] collective-permute(%x), "
                 "source_target_pairs={{0,1}}",
                 2, 2),
      Ordinals(4));
  EXPECT_THAT(Firsts(by_replica), ElementsAre(V{0}, V{0}, V{1}, V{2}));
}

TEST(ReferenceCollectives, CollectiveBroadcastSendsTheFirstMembersValue) {
  const auto results = EvaluateText(
      ModuleText("  %x = f32[1] parameter(0)\n  ROOT %b = f32[1] collective-broadcast(%x), "
                 "channel_id=1, replica_groups={{1,0},{3,2}}",
                 4),
      Ordinals(4));
  EXPECT_THAT(Firsts(results), ElementsAre(V{2}, V{2}, V{4}, V{4}));
}

TEST(ReferenceCollectives, AsyncPairsYieldTheSynchronousResults) {
  const std::string gather_computation =
      "%gather (p: f32[1]) -> f32[4] {\n"
      "  %p = f32[1] parameter(0)\n"
      "  ROOT %ag = f32[4] all-gather(%p), channel_id=9, replica_groups={{3,2,1,0}}, "
      "use_global_device_ids=true, dimensions={0}\n"
      "}\n" +
      std::string(testing::kAddF32);
  const std::string body = R"(
  %x = f32[1] parameter(0)
  %ag-start = (f32[1], f32[4]) all-gather-start(%x), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, dimensions={0}
  %ag-done = f32[4] all-gather-done(%ag-start)
  %ar-start = f32[1] all-reduce-start(%x), channel_id=2, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, to_apply=%add
  %ar-done = f32[1] all-reduce-done(%ar-start)
  %cp-start = (f32[1], f32[1], u32[], u32[]) collective-permute-start(%x), channel_id=3, source_target_pairs={{0,3},{3,0}}
  %cp-done = f32[1] collective-permute-done(%cp-start)
  %async-start = ((f32[1]), f32[4], s32[]) async-start(%x), calls=%gather
  %async-update = ((f32[1]), f32[4], s32[]) async-update(%async-start)
  %async-done = f32[4] async-done(%async-update)
  %copy-start = (f32[1], f32[1], u32[]) copy-start(%x)
  %copy-done = f32[1] copy-done(%copy-start)
  ROOT %t = (f32[4], f32[1], f32[1], f32[4], f32[1]) tuple(%ag-done, %ar-done, %cp-done, %async-done, %copy-done))";
  const auto results = EvaluateText(ModuleText(body, 4, 1, gather_computation), Ordinals(4));
  ASSERT_EQ(results.size(), 4u);
  const std::vector<V> all_reduced = {{3}, {3}, {7}, {7}};
  const std::vector<V> permuted = {{4}, {0}, {0}, {1}};
  for (size_t d = 0; d < 4; ++d) {
    ASSERT_EQ(results[d].size(), 5u);
    EXPECT_THAT(Values(results[d][0]), ElementsAre(1, 2, 3, 4));
    EXPECT_THAT(Values(results[d][1]), ElementsAreArray(all_reduced[d]));
    EXPECT_THAT(Values(results[d][2]), ElementsAreArray(permuted[d]));
    EXPECT_THAT(Values(results[d][3]), ElementsAre(4, 3, 2, 1));
    EXPECT_THAT(Values(results[d][4]), ElementsAre(d + 1.0));
  }
}

TEST(ReferenceCollectives, PartitionAndReplicaIds) {
  const auto results =
      EvaluateText(ModuleText("  %p = u32[] partition-id()\n  %r = u32[] replica-id()\n"
                              "  ROOT %t = (u32[], u32[]) tuple(%p, %r)",
                              2, 2),
                   {{}, {}, {}, {}});
  ASSERT_EQ(results.size(), 4u);
  for (size_t d = 0; d < 4; ++d) {
    EXPECT_EQ(results[d][0].dtype(), dsl::DType::kUInt32);
    EXPECT_THAT(Values(results[d][0]), ElementsAre(d % 2));
    EXPECT_THAT(Values(results[d][1]), ElementsAre(d / 2));
  }
}

}  // namespace
}  // namespace tpusim::hlo::reference
