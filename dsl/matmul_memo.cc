#include "dsl/matmul_memo.h"

namespace tpusim::dsl {

const Array* MatmulMemo::Find(const Array& a, const Array& b, const Array* accumulator,
                              Key key) const {
  for (const Entry& e : entries_) {
    if (e.key.operands != key.operands || e.key.precision != key.precision ||
        e.key.result != key.result || e.has_accumulator != (accumulator != nullptr))
      continue;
    if (!e.a.SameBytes(a) || !e.b.SameBytes(b)) continue;
    if (accumulator && !e.accumulator.SameBytes(*accumulator)) continue;
    return &e.out;
  }
  return nullptr;
}

void MatmulMemo::Keep(const Array& a, const Array& b, const Array* accumulator, Key key,
                      const Array& out) {
  const uint64_t bytes =
      a.nbytes() + b.nbytes() + (accumulator ? accumulator->nbytes() : 0) + out.nbytes();
  if (bytes > kMaxEntryBytes) return;
  if (entries_.size() == kEntries) entries_.pop_back();
  entries_.push_front(
      Entry{a, b, accumulator ? *accumulator : Array(), out, accumulator != nullptr, key});
}

MatmulMemo& ThreadMatmulMemo() {
  thread_local MatmulMemo memo;
  return memo;
}

}  // namespace tpusim::dsl
