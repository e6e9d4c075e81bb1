// dsl/ref.h: a view keeps its extents, strides and slices in its one block, sized to its
// rank and slices, builds shape()'s vector only when asked, and is shared when the same ref
// is sliced the same way again (Ref::ViewCache, dsl/ref.cc), but never after the ref it
// slices has changed.

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "base/errors.h"
#include "dsl/ref.h"

namespace tpusim::dsl {
namespace {

std::vector<int64_t> Dims(const Ref& r) {
  return std::vector<int64_t>(r.dims().begin(), r.dims().end());
}
std::vector<int64_t> Strides(const Ref& r) {
  return std::vector<int64_t>(r.strides().begin(), r.strides().end());
}

TEST(RefViews, ManyDimensionsKeepTheirShapeStridesAndText) {
  const Ref r = Ref::Make(0, "big", {2, 3, 4, 5, 6, 7}, DType::kF32, MemorySpace::kVmem);
  EXPECT_EQ(Strides(r), (std::vector<int64_t>{2520, 840, 210, 42, 7, 1}));
  const Ref v = r.at(1, ds(1, 2), ds(0, 4), 2, ds(1, 3), ds(0, 7));
  EXPECT_EQ(v.shape(), (Shape{2, 4, 3, 7}));
  EXPECT_EQ(Dims(v), (std::vector<int64_t>{2, 4, 3, 7}));
  EXPECT_EQ(Strides(v), (std::vector<int64_t>{840, 210, 7, 1}));
  EXPECT_EQ(v.binding().offset, 2520 + 840 + 2 * 42 + 7);
  EXPECT_EQ(v.size(), 2 * 4 * 3 * 7);
  EXPECT_EQ(v.Describe(), "big.at[1, ds(1, 2), ds(0, 4), 2, ds(1, 3), ds(0, 7)]");
  // Views of views: each level's slices follow those of the view it slices.
  const Ref w = v.at(1, ds(1, 3)).at(ds(1, 2), 2).at(1, 5);
  EXPECT_TRUE(w.shape().empty());
  EXPECT_EQ(w.size(), 1);
  // v's offset, then [1, 1:] of v, [1, 2] of that, [1, 5] of that.
  EXPECT_EQ(w.binding().offset, 3451 + (840 + 210) + (210 + 2 * 7) + (210 + 5));
  EXPECT_EQ(w.Describe(),
            "big.at[1, ds(1, 2), ds(0, 4), 2, ds(1, 3), ds(0, 7)][1, ds(1, 3)][ds(1, 2), 2][1, 5]");
}

TEST(RefViews, ShapeIsMadeOnceAndMatchesDims) {
  const Ref r = Ref::Make(0, "buf", {8, 16}, DType::kBF16, MemorySpace::kVmem);
  const Ref v = r.at(ds(2, 4));
  const Shape& shape = v.shape();
  EXPECT_EQ(shape, (Shape{4, 16}));
  EXPECT_EQ(&v.shape(), &shape);  // the same vector on every call
  const Ref copy = v;
  EXPECT_EQ(&copy.shape(), &shape);  // copies share the block
  EXPECT_EQ(v.nbytes(), 4u * 16u * 2u);
}

TEST(RefViews, TheSameViewTwiceIsTheSameView) {
  const Ref sems = Ref::Make(3, "sems", {2, 4}, DType::kInt32, MemorySpace::kSemaphore);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 4; ++j) {
        const Ref s = sems.at(i, j);
        EXPECT_TRUE(s.dims().empty());
        EXPECT_EQ(s.binding().offset, i * 4 + j);
        EXPECT_EQ(s.Describe(), "sems[" + std::to_string(i) + ", " + std::to_string(j) + "]");
      }
    }
  }
  // An index and a range of one are different views: one drops the dimension.
  EXPECT_EQ(Dims(sems.at(1)), (std::vector<int64_t>{4}));
  EXPECT_EQ(Dims(sems.at(ds(1, 1))), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(Dims(sems.at(1)), (std::vector<int64_t>{4}));
}

TEST(RefViews, ARefChangedAfterSlicingMakesFreshViews) {
  Ref r = Ref::Make(2, "buf", {8}, DType::kF32, MemorySpace::kVmem);
  const Ref before = r.at(ds(0, 2));
  EXPECT_EQ(before.binding().scope_serial, 0u);
  r.MarkScoped(9);  // r's block is its own: changed in place
  const Ref after = r.at(ds(0, 2));
  EXPECT_EQ(after.binding().scope_serial, 9u);
  EXPECT_EQ(before.binding().scope_serial, 0u);
  // Past the shape: an error, until the ref may make out-of-bounds views.
  EXPECT_THROW(r.at(ds(6, 4)), Error);
  r.AllowOutOfBoundsViews(true);
  EXPECT_FALSE(r.at(ds(6, 4)).out_of_bounds().empty());
  EXPECT_TRUE(r.at(ds(0, 2)).out_of_bounds().empty());
  // A view changed after it was made is copied first: the ref's next view is unchanged.
  Ref view = r.at(ds(4, 2));
  view.MarkScoped(5);
  EXPECT_EQ(view.binding().scope_serial, 5u);
  EXPECT_EQ(r.at(ds(4, 2)).binding().scope_serial, 9u);
}

TEST(RefViews, CopiesAndMovesShareOneBlock) {
  const Ref r = Ref::Make(1, "buf", {16, 4}, DType::kF32, MemorySpace::kVmem);
  Ref a = r.at(ds(2, 8));
  const int64_t* block = a.dims().data();
  Ref b = a;
  EXPECT_EQ(b.dims().data(), block);
  Ref c = std::move(b);
  EXPECT_EQ(c.dims().data(), block);
  EXPECT_TRUE(b.dims().empty());  // NOLINT(bugprone-use-after-move): a moved-from ref is empty
  b = c;
  a = std::move(c);
  EXPECT_EQ(a.dims().data(), block);
  EXPECT_EQ(b.dims().data(), block);
  const Ref& same = a;
  a = same;  // itself: still the same block
  EXPECT_EQ(Dims(a), (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(a.binding().offset, 8);
}

TEST(RefViews, AChangedCopyBuildsItsOwnShape) {
  const Ref r = Ref::Make(0, "buf", {8, 16}, DType::kF32, MemorySpace::kVmem);
  const Ref v = r.at(ds(2, 4), ds(0, 8));
  const Shape& shape = v.shape();
  Ref changed = v;
  changed.MarkScoped(4);  // shared with v: copied first
  EXPECT_EQ(changed.shape(), shape);
  EXPECT_NE(&changed.shape(), &shape);
  EXPECT_EQ(Strides(changed), Strides(v));
  EXPECT_EQ(changed.Describe(), "buf.at[ds(2, 4), ds(0, 8)]");
  EXPECT_EQ(changed.binding().scope_serial, 4u);
  EXPECT_EQ(v.binding().scope_serial, 0u);
}

}  // namespace
}  // namespace tpusim::dsl
