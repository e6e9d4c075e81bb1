// Replica groups in all three printed forms and shardings, against groups worked out by hand
// from XLA's definition of the iota form: iota(N) reshaped, transposed, flattened, cut.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "hlo/replica_groups.h"
#include "hlo/sharding.h"
#include "tests/hlo/hlo_test_support.h"

namespace tpusim::hlo {
namespace {

using testing::DecodeFailure;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

ReplicaGroups Groups(const std::string& text, int64_t devices) {
  return DecodeReplicaGroups(ParseAttribute("replica_groups", text), devices);
}

HloSharding Sharding(const std::string& text) {
  return DecodeSharding(ParseAttribute("sharding", text));
}

void ExpectGroupsError(const std::string& text, int64_t devices, int column,
                       const std::string& expected) {
  const HloError error = DecodeFailure([&] { (void)Groups(text, devices); });
  EXPECT_EQ(error.file_name(), "<replica_groups>");
  EXPECT_EQ(error.column(), column) << error.what();
  EXPECT_THAT(error.sentence(), HasSubstr(expected)) << error.what();
}

void ExpectShardingError(const std::string& text, int column, const std::string& expected) {
  const HloError error = DecodeFailure([&] { (void)Sharding(text); });
  EXPECT_EQ(error.column(), column) << error.what();
  EXPECT_THAT(error.sentence(), HasSubstr(expected)) << error.what();
}

TEST(ReplicaGroups, IotaFormCutsIotaIntoGroups) {
  EXPECT_EQ(Groups("[2,4]<=[8]", 8), (ReplicaGroups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(Groups("[1,8]<=[8]", 8), (ReplicaGroups{{0, 1, 2, 3, 4, 5, 6, 7}}));
}

TEST(ReplicaGroups, TransposedIotaFormTakesColumns) {
  // iota(8) as [2,4] is {{0,1,2,3},{4,5,6,7}}; transposed to [4,2]: {{0,4},{1,5},{2,6},{3,7}}.
  EXPECT_EQ(Groups("[4,2]<=[2,4]T(1,0)", 8), (ReplicaGroups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  // iota(30) as [6,5]: row r is 5r..5r+4. Transposed to [5,6], row c is the column
  // c, c+5, ..., c+25. Flattened and cut in threes of ten.
  const ReplicaGroups groups = Groups("[3,10]<=[6,5]T(1,0)", 30);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_THAT(groups[0], ElementsAre(0, 5, 10, 15, 20, 25, 1, 6, 11, 16));
  EXPECT_THAT(groups[1], ElementsAre(21, 26, 2, 7, 12, 17, 22, 27, 3, 8));
  EXPECT_THAT(groups[2], ElementsAre(13, 18, 23, 28, 4, 9, 14, 19, 24, 29));
  // iota(8) as [2,2,2] holds 4a+2b+c at (a,b,c); reversing the axes puts 4c+2b+a at (a,b,c):
  // 0,4,2,6,1,5,3,7 in order.
  EXPECT_EQ(Groups("[4,2]<=[2,2,2]T(2,1,0)", 8), (ReplicaGroups{{0, 4}, {2, 6}, {1, 5}, {3, 7}}));
  const IotaTileAssignment reversed{{2, 2, 2}, {2, 2, 2}, {2, 1, 0}};
  EXPECT_THAT(reversed.Expand(), ElementsAre(0, 4, 2, 6, 1, 5, 3, 7));
}

TEST(ReplicaGroups, ListFormAndEmptyMeaningAllDevices) {
  EXPECT_EQ(Groups("{{0,1},{2,3}}", 4), (ReplicaGroups{{0, 1}, {2, 3}}));
  EXPECT_EQ(Groups("{{3,1,0,2}}", 4), (ReplicaGroups{{3, 1, 0, 2}}));
  EXPECT_EQ(Groups("{}", 4), (ReplicaGroups{{0, 1, 2, 3}}));
  EXPECT_EQ(Groups("{}", 1), (ReplicaGroups{{0}}));
}

TEST(ReplicaGroups, Errors) {
  ExpectGroupsError("[2,2,2]<=[2,2,2]T(2,1,0)", 8, 1,
                    "two dimensions [groups,group_size] before '<=', as in [2,4]<=[8]");
  ExpectGroupsError("[2,4]<=[6]", 8, 8, "iota dimensions with 8 elements in all");
  ExpectGroupsError("[4,2]<=[2,4]T(1,1)", 8, 13,
                    "T(...) to list each of the 2 iota dimensions once");
  ExpectGroupsError("[4,2]<=[2,4]T(1)", 8, 13, "T(...) to list each of the 2 iota dimensions once");
  ExpectGroupsError("[2,4]<8", 8, 6, "'<=' and the iota dimensions");
  ExpectGroupsError("[0,4]<=[8]", 8, 2, "a dimension size of at least 1");
  ExpectGroupsError("[2048,1024]<=[2097152]", 8, 1, "at most 1048576 devices");
  ExpectGroupsError("[2,4]<=[8]", 4, 1, "device ids from 0 to 3 (the collective spans 4 devices)");
  ExpectGroupsError("{{0,1},{1,2}}", 4, 9, "each device in at most one group (device 1 repeats)");
  ExpectGroupsError("{{0,9}}", 4, 5, "device ids from 0 to 3");
  ExpectGroupsError("{{0,1},{}}", 4, 8, "a group with at least one device");
  ExpectGroupsError("{{0,x}}", 4, 5, "expected a device id in replica_groups, found 'x'.");
  ExpectGroupsError("{0,1}", 4, 2, "a group such as {0,1}");
  ExpectGroupsError("[2,4]<=[8]x", 8, 11,
                    "expected the end of the iota replica groups in replica_groups, found 'x'.");
  ExpectGroupsError("[2,4]<=[8]T", 8, 12, "expected '(' after T in replica_groups");
  ExpectGroupsError("[4,2]<=[2,4]T(1 0)", 8, 17, "expected ',' or ')' in T(...) in replica_groups");
  ExpectGroupsError("[2 4]<=[8]", 8, 4, "expected ',' or ']' in the dimensions in replica_groups");
  ExpectGroupsError("[x]<=[8]", 8, 2, "expected a dimension size in replica_groups");
  EXPECT_THROW((void)Groups("{}", 0), Error);
}

TEST(SourceTargetPairs, DecodeAndErrors) {
  const Attribute pairs = ParseAttribute("source_target_pairs", "{{0,1},{1,2},{7,0}}");
  EXPECT_THAT(DecodeSourceTargetPairs(pairs),
              ElementsAre(std::pair<int64_t, int64_t>(0, 1), std::pair<int64_t, int64_t>(1, 2),
                          std::pair<int64_t, int64_t>(7, 0)));
  EXPECT_TRUE(DecodeSourceTargetPairs(ParseAttribute("source_target_pairs", "{}")).empty());
  const HloError error = DecodeFailure(
      [] { (void)DecodeSourceTargetPairs(ParseAttribute("source_target_pairs", "{{0,1,2}}")); });
  EXPECT_THAT(error.sentence(), HasSubstr("a pair {source,target} of two device ids"));
  EXPECT_EQ(error.column(), 2);
}

TEST(Sharding, SimpleKinds) {
  EXPECT_EQ(Sharding("{replicated}").kind, HloSharding::Kind::kReplicated);
  EXPECT_EQ(Sharding("{manual}").kind, HloSharding::Kind::kManual);
  EXPECT_EQ(Sharding("{unknown}").kind, HloSharding::Kind::kUnknown);
  const HloSharding maximal = Sharding("{maximal device=3}");
  EXPECT_EQ(maximal.kind, HloSharding::Kind::kMaximal);
  EXPECT_EQ(maximal.device, 3);
  EXPECT_EQ(Sharding("{replicated metadata={op_name=\"a}\" source_line=3}}").kind,
            HloSharding::Kind::kReplicated);
}

TEST(Sharding, TiledForms) {
  const HloSharding rows = Sharding("{devices=[8,1]<=[8]}");
  EXPECT_TRUE(rows.IsTiled());
  EXPECT_THAT(rows.tile_assignment_dimensions, ElementsAre(8, 1));
  EXPECT_THAT(rows.tile_assignment_devices, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  const HloSharding partial = Sharding("{devices=[2,1,4]<=[8] last_tile_dim_replicate}");
  EXPECT_TRUE(partial.replicate_on_last_tile_dim);
  EXPECT_THAT(partial.DataTileDimensions(), ElementsAre(2, 1));
  const HloSharding listed = Sharding("{devices=[2,2]0,2,1,3}");
  EXPECT_THAT(listed.tile_assignment_devices, ElementsAre(0, 2, 1, 3));
  // iota(8) as [2,4] transposed to [4,2]: 0,4,1,5,2,6,3,7.
  const HloSharding manual = Sharding("{devices=[1,2,4]<=[2,4]T(1,0) last_tile_dims={manual}}");
  EXPECT_THAT(manual.tile_assignment_devices, ElementsAre(0, 4, 1, 5, 2, 6, 3, 7));
  EXPECT_THAT(manual.last_tile_dims, ElementsAre("manual"));
  EXPECT_THAT(manual.DataTileDimensions(), ElementsAre(1, 2));
  EXPECT_THAT(Sharding("{devices=[2,2,2]<=[2,2,2]T(2,1,0)}").tile_assignment_devices,
              ElementsAre(0, 4, 2, 6, 1, 5, 3, 7));
  const HloSharding subset = Sharding("{devices=[2]5,3 shard_like 1}");
  EXPECT_THAT(subset.tile_assignment_devices, ElementsAre(5, 3));
  EXPECT_EQ(subset.shard_like, 1);
}

TEST(Sharding, Tuples) {
  const HloSharding tuple = Sharding("{{replicated}, {devices=[2]<=[2]}, {{maximal device=1}}}");
  ASSERT_EQ(tuple.kind, HloSharding::Kind::kTuple);
  ASSERT_EQ(tuple.tuple_elements.size(), 3u);
  EXPECT_EQ(tuple.tuple_elements[0].kind, HloSharding::Kind::kReplicated);
  EXPECT_THAT(tuple.tuple_elements[1].tile_assignment_devices, ElementsAre(0, 1));
  EXPECT_EQ(tuple.tuple_elements[2].tuple_elements.at(0).device, 1);
  EXPECT_TRUE(Sharding("{}").tuple_elements.empty());
}

TEST(Sharding, Errors) {
  ExpectShardingError("{devices=[2,2]0,1,2}", 20, "more device ids: the tile dimensions hold 4");
  ExpectShardingError("{devices=[2,2]0,1,2,3,4}", 23,
                      "4 devices, as many as the tile dimensions hold");
  ExpectShardingError("{devices=[2,2]0,1,1,3}", 19, "distinct device ids of at least 0");
  ExpectShardingError("{devices=[2,2]<=[3]}", 17, "iota dimensions with 4 elements in all");
  ExpectShardingError("{last_tile_dim_replicate}", 25,
                      "a kind of sharding (replicated, manual, maximal or devices=)");
  ExpectShardingError("{replicated manual}", 13, "one kind of sharding, not two");
  ExpectShardingError("{maximal}", 9, "device=N in a maximal sharding");
  ExpectShardingError("{devices=[2]<=[2] last_tile_dim_replicate last_tile_dims={manual}}", 66,
                      "no more trailing subgroup dimensions than tile dimensions");
  ExpectShardingError("{replicated bogus}", 13,
                      "a sharding item (replicated, manual, maximal, device=, devices=");
  ExpectShardingError("{devices=[2]<=[2] last_tile_dims={7}}", 35,
                      "expected a subgroup kind (manual, replicated...) in last_tile_dims");
  ExpectShardingError("{devices=[2]<=[2] last_tile_dims={manual replicated}}", 42,
                      "expected ',' or '}' in last_tile_dims in sharding");
  {
    const HloError error =
        DecodeFailure([] { (void)DecodeSharding(ParseAttribute("sharding", "replicated")); });
    EXPECT_THAT(error.sentence(),
                HasSubstr("expected '{' to open a sharding in sharding, found 'replicated'."));
  }
  ExpectShardingError("{{replicated} {manual}}", 15, "',' or '}' in the tuple sharding");
  std::string deep;
  for (int i = 0; i < 70; ++i)
    deep += "{";
  deep += "replicated";
  for (int i = 0; i < 70; ++i)
    deep += "}";
  const HloError error = DecodeFailure([&] { (void)Sharding(deep); });
  EXPECT_THAT(error.sentence(), HasSubstr("nested at most 64 deep"));
}

}  // namespace
}  // namespace tpusim::hlo
