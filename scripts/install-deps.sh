#!/usr/bin/env bash
# Installs the Debian 12 packages infercost builds with (ninja-build: the
# Makefile configures its build folders for Ninja). Idempotent and quiet
# when everything is present; uses sudo when not root. ocl-icd-opencl-dev is
# only a Recommends of libdnnl-dev, but its CMake config needs OpenCL headers.
# chromium (headless) opens the HTML report in its test; python3-dev has the
# headers the Python module (nanobind) compiles against.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config libdnnl-dev ocl-icd-opencl-dev libutf8proc-dev libsimdjson-dev nlohmann-json3-dev
      libcli11-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev
      libsnappy-dev zlib1g-dev libzstd-dev liblz4-dev libbrotli-dev python3-venv python3-dev clang libclang-rt-14-dev
      chromium)
missing=()
# Java 17 for pyspark (infercost.spark's suites, tests/spark; pyspark itself comes from PyPI into build/pyenv).
pkgs+=(openjdk-17-jre-headless)
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
