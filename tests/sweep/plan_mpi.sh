#!/bin/sh
# ridge plan with its top-k simulations on 2 MPI ranks (rank 0 hands them out, rank 1 runs them)
# and on 2 threads must write the same bytes as one thread. Exit 77 (skipped) without mpirun.
set -eu
ridge="$1"; study="$2"
command -v mpirun >/dev/null 2>&1 || { echo "mpirun not found: skipped"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
run() {  # run NAME THREADS [launcher...]: the plan's text, JSON, CSV and SVG under $dir/NAME.*
  name="$1"; threads="$2"; shift 2
  "$@" "$ridge" plan "$study" -j "$threads" --json "$dir/$name.json" --csv "$dir/$name.csv" \
    --svg "$dir/$name.svg" >"$dir/$name.txt" 2>"$dir/$name.err" || { cat "$dir/$name.err"; exit 1; }
}
run serial 1 env
run threads 2 env
# As in sweep_mpi.sh: OpenMPI's own start-up and shutdown leak under ASan; leak checks off for the
# ranks only. CI runs as root on 2 cores.
mpi_asan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
run mpi 1 env ASAN_OPTIONS="$mpi_asan" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  mpirun -n 2 --oversubscribe
for f in txt json csv svg; do
  cmp "$dir/serial.$f" "$dir/threads.$f"
  cmp "$dir/serial.$f" "$dir/mpi.$f"
done
echo "plan: serial, 2 threads and 2 MPI ranks identical"
