#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pthread.h>

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

// A view's block is built without zeroing it first (Ref::Data's constructor): every field
// the slicing does not set must still come from its initializer, not from reused memory.
TEST(Ref, AViewKeepsTheDefaultsOfFieldsSlicingDoesNotSet) {
  for (int round = 0; round < 3; ++round) {  // later rounds reuse freed blocks
    Ref r = Ref::Make(2, "buf", {8, 16}, DType::kBF16, MemorySpace::kVmem);
    r.MarkScoped(7);
    const Ref v = r.at(ds(1, 2), 3);
    EXPECT_EQ(v.out_of_bounds(), "");
    EXPECT_EQ(v.binding().slot, 2);
    EXPECT_EQ(v.binding().scope_serial, 7u);
    EXPECT_EQ(v.strides().size(), 1u);
    EXPECT_EQ(v.dtype(), DType::kBF16);
    EXPECT_EQ(v.memory_space(), MemorySpace::kVmem);
    EXPECT_EQ(v.semaphore_type(), SemaphoreType::kDma);
    EXPECT_TRUE(v.InBoundsPart().has_value());
    EXPECT_EQ(v.Describe(), "buf.at[ds(1, 2), 3]");
  }
}

// A kernel may narrow one view in a loop: the view of a view of ... keeps its text, and
// neither describing nor freeing it walks a chain as deep as the loop, which would overflow
// a small stack (a core's is 512 KiB; this test gives its thread 128 KiB).
TEST(Ref, AViewSlicedThousandsOfTimesDescribesAndFreesItselfOnASmallStack) {
  constexpr int kLevels = 4000;
  struct Outcome {
    std::string text;
    Shape shape;
    int64_t offset = 0;
  } outcome;
  auto body = [](void* arg) -> void* {
    auto* out = static_cast<Outcome*>(arg);
    Ref v = Ref::Make(0, "buf", {kLevels + 1}, DType::kF32, MemorySpace::kVmem);
    for (int i = 0; i < kLevels; ++i)
      v = v.at(ds(1, kLevels - i));
    out->shape = v.shape();
    out->offset = v.binding().offset;
    out->text = v.Describe();
    return nullptr;  // v, the last of the views, is freed here
  };
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 128 << 10), 0);
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, &attr, body, &outcome), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
  EXPECT_EQ(outcome.shape, (Shape{1}));
  EXPECT_EQ(outcome.offset, kLevels);
  std::string expected = "buf.at";
  for (int i = 0; i < kLevels; ++i)
    expected += "[ds(1, " + std::to_string(kLevels - i) + ")]";
  EXPECT_EQ(outcome.text, expected);
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

TEST(Ref, OutOfBoundsViewsKnowTheirPartInsideTheRef) {
  Ref r = Ref::Make(0, "buf", {8, 16}, DType::kF32, MemorySpace::kVmem);
  r.AllowOutOfBoundsViews(true);
  const Ref past = r.at(ds(6, 4), ds(-2, 16));  // rows 6..9, columns -2..13
  EXPECT_THAT(past.out_of_bounds(), HasSubstr("'buf' is sliced out of bounds: dimension 0"));
  EXPECT_EQ(past.shape(), (Shape{4, 16}));
  const auto part = past.InBoundsPart();
  ASSERT_TRUE(part.has_value());
  EXPECT_EQ(part->first.shape(), (Shape{2, 14}));  // rows 6..7, columns 0..13
  EXPECT_EQ(part->second, (Shape{0, 2}));
  EXPECT_EQ(part->first.binding().offset, 6 * 16);
  EXPECT_TRUE(part->first.out_of_bounds().empty());
  // A view of it that lies inside the ref again is an ordinary view.
  const Ref back = past.at(ds(0, 2), ds(2, 14));
  EXPECT_TRUE(back.out_of_bounds().empty());
  EXPECT_EQ(back.binding().offset, 6 * 16);
  // Wholly outside: nothing to read.
  EXPECT_FALSE(r.at(ds(8, 2)).InBoundsPart().has_value());
  EXPECT_FALSE(past.at(3).InBoundsPart().has_value());  // row 9
  // Semaphores never make such views.
  Ref sems = Ref::Make(1, "sems", {2}, DType::kInt32, MemorySpace::kSemaphore);
  sems.AllowOutOfBoundsViews(true);
  EXPECT_THROW(sems.at(2), Error);
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
