#pragma once

// The label of a DMA that async_copy or async_remote_copy describes: "copy x -> buf.at[ds(0,
// 4)]", "remote copy out.at[ds(64, 64)] -> device 3 out.at[ds(64, 64)]". It is lazy
// (base::Label): it keeps the two refs' names and slices, not the refs, and writes the text
// only when an error, a report or the trace reads it.

#include "base/label.h"
#include "dsl/ref.h"

namespace tpusim::dsl {

// `remote`: a remote copy to `device`; `device` is not part of a local copy's text.
base::Label CopyLabel(const Ref& src, const Ref& dst, bool remote, int device);

}  // namespace tpusim::dsl
