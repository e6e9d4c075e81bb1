#include "kernels/ring.h"

namespace tpusim::kernels {

void MeetRingNeighbours(dsl::Kernel& k, const std::string& axis) {
  const int n = k.axis_size(axis);
  if (n < 2) return;
  const int me = k.axis_index(axis);
  const dsl::Ref barrier = k.barrier_semaphore();
  k.signal(barrier, 1, {{axis, (me + n - 1) % n}});
  k.signal(barrier, 1, {{axis, (me + 1) % n}});
  k.wait(barrier, 2);
}

void MeetEveryoneOnAxis(dsl::Kernel& k, const std::string& axis) {
  const int n = k.axis_size(axis);
  if (n < 2) return;
  const int me = k.axis_index(axis);
  const dsl::Ref barrier = k.barrier_semaphore();
  for (int d = 1; d < n; ++d)
    k.signal(barrier, 1, {{axis, (me + d) % n}});
  k.wait(barrier, n - 1);
}

}  // namespace tpusim::kernels
