#!/usr/bin/env bash
# Installs the Debian 12 packages Ridge builds with, only those missing. Needs root (or sudo).
set -euo pipefail
packages=(cmake ninja-build g++ clang libclang-rt-14-dev clang-format ccache
          libeigen3-dev libyaml-cpp-dev libboost-graph-dev libcli11-dev catch2
          nlohmann-json3-dev libfmt-dev libbenchmark-dev libsimdjson-dev zlib1g-dev
          libprotobuf-dev protobuf-compiler libboost-mpi-dev openmpi-bin libopenmpi-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "ridge: installing Debian packages: ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
