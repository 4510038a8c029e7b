#!/usr/bin/env bash
# fuzz/pack.sh PKG.tar.xz: packs the fuzz targets of build/fuzz to run on a machine without clang
# or Ridge's libraries (the GPU machine's 16 cores, for the long run of docs/hardening.md): each
# target relinked to load its libraries and its dynamic loader from /tmp/ridge-fuzz/lib (so the
# other machine's glibc does not matter; --as-needed drops libraries nothing calls), debug info
# stripped (symbols kept), with the shipped configs (RIDGE_CONFIG_DIR), the dictionaries, the
# seed corpora (fuzz/seeds.sh) and fuzz/long-run.sh. There: tar -xJf PKG -C /tmp/ridge-fuzz.
# Run from the repository root after building the targets (scripts/test.sh's fuzz step).
set -euo pipefail
pkg="$(realpath -m "$1")"
root="$(pwd)"
stage="/tmp/ridge-fuzz"
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib"
targets="fuzz_config fuzz_model fuzz_study fuzz_records fuzz_cases fuzz_trace fuzz_graph"
targets="$targets fuzz_timeline fuzz_kineto fuzz_e2e fuzz_collective fuzz_serve fuzz_plan fuzz_sweep"
for t in $targets; do
  cmd="$(ninja -C build/fuzz -t commands "fuzz/$t" | tail -1)"
  cmd="${cmd#: && }"
  cmd="${cmd% && :}"
  compiler="${cmd%% *}"
  rest="${cmd#* }"
  rest="${rest/-o fuzz\/$t /-o $stage/bin/$t }"
  (cd build/fuzz && $compiler -Wl,--as-needed -Wl,--dynamic-linker=$stage/lib/ld-linux-x86-64.so.2 \
    -Wl,-rpath,$stage/lib $rest)
  strip --strip-debug "$stage/bin/$t"
done
for t in $targets; do
  ldd "$stage/bin/$t" | awk '/=> \//{print $3}'
done | sort -u | while read -r lib; do cp -L "$lib" "$stage/lib/"; done
cp -L /lib64/ld-linux-x86-64.so.2 "$stage/lib/"
cp -r configs "$stage/configs"
mkdir -p "$stage/dict"
cp fuzz/dict/*.dict "$stage/dict/"
fuzz/seeds.sh "$stage/seeds" 2>/dev/null
cp fuzz/long-run.sh "$stage/"
(cd "$stage" && tar -cJf "$pkg" .)
ls -la "$pkg"
