#pragma once

// A functional run computes the same dot many times: a replicated operand is the same array
// on every chip, so a program whose weights are replicated over an axis of 16 chips multiplies
// the same matrices 16 times. The memo keeps the last few large dots with their operands and
// hands back the stored result when the operands are byte for byte the same (a full compare,
// not a hash: the result is exactly what the dot would compute). Small dots are not kept: for
// them the compare would cost as much as the product.

#include <deque>

#include "dsl/array.h"
#include "dsl/dtype.h"

namespace tpusim::dsl {

class MatmulMemo {
 public:
  // The dot's identity beyond its operands' bytes.
  struct Key {
    DType operands;
    Precision precision;
    DType result;
  };

  // The stored result of this dot, or null.
  const Array* Find(const Array& a, const Array& b, const Array* accumulator, Key key) const;
  // Remembers `out` as the result of this dot, forgetting the oldest when full.
  void Keep(const Array& a, const Array& b, const Array* accumulator, Key key, const Array& out);

  void Clear() { entries_.clear(); }

  // Dots of fewer multiply-adds than this are computed every time.
  static constexpr int64_t kMinMultiplyAdds = int64_t{1} << 24;
  // A dot whose operands and result take more host memory than this is not kept.
  static constexpr uint64_t kMaxEntryBytes = uint64_t{256} << 20;
  static constexpr size_t kEntries = 4;

 private:
  struct Entry {
    Array a, b, accumulator, out;
    bool has_accumulator = false;
    Key key;
  };
  std::deque<Entry> entries_;  // newest first
};

// The memo of this host thread: runs on different threads (a Python caller's, a sweep's)
// share nothing.
MatmulMemo& ThreadMatmulMemo();

// Empties this thread's memo when a run starts and when it ends, so a run never holds
// another's results, nor keeps them alive after it.
class MatmulMemoRun {
 public:
  MatmulMemoRun() { ThreadMatmulMemo().Clear(); }
  ~MatmulMemoRun() { ThreadMatmulMemo().Clear(); }
  MatmulMemoRun(const MatmulMemoRun&) = delete;
  MatmulMemoRun& operator=(const MatmulMemoRun&) = delete;
};

}  // namespace tpusim::dsl
