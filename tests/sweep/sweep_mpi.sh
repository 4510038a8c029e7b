#!/bin/sh
# ridge sweep over 2 MPI ranks (rank 0 hands out points, rank 1 computes) must write the same
# bytes as one thread and as two threads. Exit 77 (skipped) where mpirun is absent.
set -eu
ridge="$1"; study="$2"
command -v mpirun >/dev/null 2>&1 || { echo "mpirun not found: skipped"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
"$ridge" sweep "$study" -j 1 --out "$dir/serial" >/dev/null 2>&1
"$ridge" sweep "$study" -j 2 --out "$dir/threads" >/dev/null 2>&1
# Under AddressSanitizer (scripts/test.sh's second pass), OpenMPI 4.1.4's own MPI_Init/Finalize
# leave ~120 KB in ~3350 allocations (libopen-pal, libmpi and the modules they unload; no ridge
# frame among them): leak checking is off for the ranks only. The one-process runs above, and
# test_sweep, check ridge's own allocations.
mpi_asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# CI runs as root on 2 cores.
ASAN_OPTIONS="$mpi_asan" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  mpirun -n 2 --oversubscribe "$ridge" sweep "$study" --out "$dir/mpi" >"$dir/mpi.log" 2>&1 ||
  { cat "$dir/mpi.log"; exit 1; }
for f in sweep.csv sweep.json sweep.svg sweep.points.jsonl; do
  cmp "$dir/serial/$f" "$dir/threads/$f"
  cmp "$dir/serial/$f" "$dir/mpi/$f"
done
# The MPI run computed every point on rank 1 (not a copy of a one-process run).
grep -q "6 to compute" "$dir/mpi.log"
echo "serial, 2 threads and 2 MPI ranks: identical"

# A worker rank killed (SIGKILL, test hook) while computing point 2, with mpirun told not to end
# the job for it: rank 0 declares it lost after 1 s of silence, reports point 2, writes no CSV,
# exits non-zero; the journal keeps the points that finished, and a rerun completes the sweep.
set +e
RIDGE_SWEEP_TEST_DIE_AT=2 ASAN_OPTIONS="$mpi_asan" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  mpirun -n 3 --oversubscribe --mca orte_abort_on_non_zero_status 0 \
  "$ridge" sweep "$study" --out "$dir/lost" --rank-timeout 1 >"$dir/lost.log" 2>&1
rc=$?
set -e
[ "$rc" -ne 0 ] || { cat "$dir/lost.log"; echo "a lost rank must exit non-zero"; exit 1; }
grep -q "point 2 (.*): lost with its MPI rank" "$dir/lost.log" || { cat "$dir/lost.log"; exit 1; }
[ ! -e "$dir/lost/sweep.csv" ]
"$ridge" sweep "$study" --out "$dir/lost" >/dev/null 2>"$dir/rerun.log"
grep -q "1 to compute, 5 from" "$dir/rerun.log" || { cat "$dir/rerun.log"; exit 1; }
for f in sweep.csv sweep.json sweep.svg sweep.points.jsonl; do cmp "$dir/serial/$f" "$dir/lost/$f"; done
echo "a lost rank: reported, exit $rc, completed by a rerun"
