#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "dsl/array.h"
#include "dsl/mesh.h"
#include "dsl/ref.h"
#include "tests/support/test_support.h"

namespace tpusim::dsl {
namespace {

using ::testing::HasSubstr;

TEST(Array, Bf16RoundsToNearestEven) {
  Array a({3}, DType::kBF16);
  // 1 + 2^-8 is halfway between two bf16 values (1 and 1 + 2^-7): ties go to even (1).
  a.SetFlat(0, 1.0 + std::ldexp(1.0, -8));
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: even is 1 + 2^-6.
  a.SetFlat(1, 1.0 + 3 * std::ldexp(1.0, -8));
  a.SetFlat(2, 3.0);
  EXPECT_EQ(a.GetFlat(0), 1.0);
  EXPECT_EQ(a.GetFlat(1), 1.0 + std::ldexp(1.0, -6));
  EXPECT_EQ(a.GetFlat(2), 3.0);
}

TEST(Array, SliceAndPlaceAreInverse) {
  const Array a = Array::Iota({4, 6}, DType::kF32);
  const Array block = a.Slice({1, 2}, {2, 3});
  EXPECT_EQ(block.GetFlat(0), 8);   // a[1, 2]
  EXPECT_EQ(block.GetFlat(5), 16);  // a[2, 4]
  Array b({4, 6}, DType::kF32);
  b.Place(block, {1, 2});
  EXPECT_EQ(b.GetFlat(8), 8);
  EXPECT_EQ(b.GetFlat(0), 0);
}

TEST(Ref, SlicingComposesOffsetsAndSqueezes) {
  const Ref r = Ref::Make(0, "buf", {8, 16}, DType::kF32, MemorySpace::kVmem);
  const Ref v = r.at(ds(2, 4)).at(1, ds(3, 5));
  EXPECT_EQ(v.shape(), (Shape{5}));
  EXPECT_EQ(v.binding().offset, (2 + 1) * 16 + 3);
  EXPECT_EQ(v.Describe(), "buf.at[ds(2, 4)][1, ds(3, 5)]");
}

TEST(Ref, OutOfBoundsSliceNamesTheRefAndTheExtent) {
  const Ref r = Ref::Make(0, "x", {64}, DType::kBF16, MemorySpace::kAny);
  try {
    r.at(ds(60, 8));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfBounds);
    EXPECT_THAT(e.what(), HasSubstr("'x'"));
    EXPECT_THAT(e.what(), HasSubstr("extent 64"));
    EXPECT_THAT(e.what(), HasSubstr("[60, 68)"));
  }
}

TEST(PartitionSpec, SplitsAndPlacesBlocksByMeshCoordinates) {
  const Mesh mesh(testing::MakeTopology({2, 4}, {false, false}));
  const P spec{"y", "x"};
  EXPECT_EQ(spec.BlockShape(mesh, {16, 8}, "a"), (Shape{4, 4}));
  // Device 6 is (x=1, y=2): rows 2*4.., columns 1*4..
  EXPECT_EQ(spec.BlockOffsets(mesh, {16, 8}, 6), (Shape{8, 4}));
  EXPECT_EQ(spec.Describe(), "P('y', 'x')");
}

TEST(PartitionSpec, UnevenSplitSaysWhatToDo) {
  const Mesh mesh(testing::MakeTopology({4}, {false}));
  try {
    P{"x"}.BlockShape(mesh, {10}, "input x");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("input x has shape (10,)"));
    EXPECT_THAT(e.what(), HasSubstr("multiple of 4"));
  }
}

TEST(Mesh, UnknownAxisListsTheAxes) {
  const Mesh mesh(testing::MakeTopology({2, 2}, {false, false}));
  try {
    mesh.AxisIndex("z");
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("'z'"));
    EXPECT_THAT(e.what(), HasSubstr("'x', 'y'"));
  }
}

}  // namespace
}  // namespace tpusim::dsl
