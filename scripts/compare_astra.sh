#!/usr/bin/env bash
# compare_astra.sh - issue 25's speed table: tpusim and ASTRA-sim's analytical backend side by
# side, timing-only, median of REPS runs each, interleaved row by row (tpusim, ASTRA-sim,
# tpusim, ...) because this machine's speed drifts by 2x from minute to minute.
#
# Usage: ASTRA_BIN=/path/AstraSim_Analytical_Congestion_Aware \
#        ASTRA_SCRIPT=/path/astra_collective.sh TOPOLOGIES=/path/to/topologies \
#        scripts/compare_astra.sh [path/to/tpusim]
# Without ASTRA_BIN (or with ASTRA_SCRIPT or the ring topologies missing) it says what is
# missing and exits 0: ASTRA-sim is not part of this repository (docs/performance.md says
# how to build it). REPS (default 3) sets the runs per cell.
#
# Both walls are whole processes: tpusim's `run` (topology parse, set-up, simulation) and
# the ASTRA-sim binary (config parse, simulation), timed the same way with date.
set -euo pipefail

tpusim=${1:-build/tools/tpusim/tpusim}
reps=${REPS:-3}
topologies=${TOPOLOGIES:-../shared/topologies}
astra_script=${ASTRA_SCRIPT:-../shared/peers/astra_collective.sh}

missing=""
[[ -n "${ASTRA_BIN:-}" && -x "${ASTRA_BIN}" ]] || missing="ASTRA_BIN (the ASTRA-sim binary)"
[[ -x "$astra_script" ]] || missing="${missing:+$missing, }ASTRA_SCRIPT ($astra_script)"
[[ -f "$topologies/ring16.textproto" && -f "$topologies/ring256.textproto" ]] ||
  missing="${missing:+$missing, }TOPOLOGIES ($topologies/ring16.textproto, ring256.textproto)"
if [[ -n "$missing" ]]; then
  echo "compare_astra: skipped, not found: $missing (see docs/performance.md)"
  exit 0
fi
if [[ ! -x "$tpusim" ]]; then
  echo "compare_astra: no tpusim at '$tpusim'; build it or pass its path" >&2
  exit 2
fi

# One row: label, tpusim kernel, topology file, bytes, then the astra_collective.sh
# arguments and its DIR. ASTRA-sim's link is 4.5e10 B/s one way, written in its GB/s of
# 2^30 B/s, with 1 us a hop, as the ring topologies declare.
rows=(
  "ring16 all-gather 64 MiB|all_gather_ring|ring16|64M|Ring 16 allgather 64M|uni"
  "ring256 all-gather 1 GiB, uni|all_gather_ring|ring256|1G|Ring 256 allgather 1G|uni"
  "ring256 all-gather 1 GiB, bidi|all_gather_bidi|ring256|1G|Ring 256 allgather 1G|bidir"
  "ring16 all-reduce 64 MiB|all_reduce_ring|ring16|64M|Ring 16 allreduce 64M|uni"
)

now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }

tpusim_wall() {  # kernel topology bytes -> "wall_s sim_us"
  local t0 t1 json
  t0=$(now)
  json=$("$tpusim" run "$1" --topology "$topologies/$2.textproto" --bytes "$3" --timing-only \
    --json | tail -n 1)
  t1=$(now)
  local sim_ns
  sim_ns=$(sed -E 's/.*"sim_time_ns":([^,}]*).*/\1/' <<<"$json")
  awk -v a="$t0" -v b="$t1" -v s="$sim_ns" 'BEGIN{printf "%.4f %.1f\n", b - a, s / 1000}'
}

astra_wall() {  # "TOPO N COLL SIZE" dir -> "wall_s sim_us"
  local out
  # shellcheck disable=SC2086
  out=$(cd /tmp && BW_GBPS=41.909515857696533 LAT_NS=1000 DIR=$2 "$astra_script" $1 | tail -n 1)
  sed -E 's/sim_ns=([0-9]+) wall_s=([0-9.]+)/\2 \1/' <<<"$out" |
    awk '{printf "%.4f %.1f\n", $1, $2 / 1000}'
}

printf '| %-30s | %13s | %12s | %11s | %10s | %5s |\n' case "tpusim sim us" "ASTRA sim us" "tpusim wall" "ASTRA wall" ratio
printf '|%s|%s|%s|%s|%s|%s|\n' -------------------------------- --------------- -------------- \
  ------------- ------------ -------
for row in "${rows[@]}"; do
  IFS='|' read -r label kernel topology bytes astra dir <<<"$row"
  ours=() theirs=()
  for ((i = 0; i < reps; ++i)); do
    read -r wall ours_sim < <(tpusim_wall "$kernel" "$topology" "$bytes")
    ours+=("$wall")
    read -r wall theirs_sim < <(astra_wall "$astra" "$dir")
    theirs+=("$wall")
  done
  a=$(median "${ours[@]}")
  b=$(median "${theirs[@]}")
  printf '| %-30s | %13s | %12s | %9s s | %8s s | %5s |\n' "$label" "$ours_sim" "$theirs_sim" \
    "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.2f", a / b}')"
done
