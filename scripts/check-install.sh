#!/usr/bin/env bash
# Installs a build as a user would (cmake --install: headers, static libraries,
# the exported CMake package, the CLI) into a temporary prefix, builds
# examples/classify against it with find_package(infercost), and checks that
# the example labels texts as the installed CLI does. ctest runs it (label
# install); it leaves nothing behind.
#   scripts/check-install.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/infercost-install.XXXXXX")
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" --component dev >/dev/null
cmake --install "$build" --prefix "$work/prefix" --component cli >/dev/null
# Only the public API is installed: at most 12 headers, all in include/infercost/
# (no stage's header: backend, config, weights, safetensors, tokenizer and
# file helpers live in src/), and one library.
headers=$(find "$work/prefix/include" -type f | sort)
if [ "$(echo "$headers" | wc -l)" -gt 12 ] || echo "$headers" | grep -q -v "^$work/prefix/include/infercost/[a-z_]*\.h$"; then
  echo "check-install: more than the 12 flat headers of include/infercost were installed:" >&2
  echo "$headers" >&2
  exit 1
fi
libraries=$(find "$work/prefix" -name '*.a' -o -name '*.so' | grep -v '/bin/' | sort)
if [ "$libraries" != "$(find "$work/prefix" -name libinfercost.a)" ]; then
  echo "check-install: expected one library, libinfercost.a; installed:" >&2
  echo "$libraries" >&2
  exit 1
fi
compiler=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake -S "$root/examples/classify" -B "$work/example" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_CXX_COMPILER="$compiler" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/example" -j 2 >/dev/null

model="$root/tests/data_files/golden/tiny-distilbert"
texts=("what a lovely day" "this is awful, never again" "ok I guess")
"$work/example/infercost-classify" "$model" "${texts[@]}" 2>/dev/null | cut -f1 > "$work/example.labels"
for t in "${texts[@]}"; do printf '{"full_text": "%s"}\n' "$t"; done > "$work/in.jsonl"
"$work/prefix/bin/infercost" run "$work/in.jsonl" --model "$model" --max-length 128 --output "$work/out.jsonl" 2>/dev/null
python3 -c 'import json,sys; [print(json.loads(l)["label"]) for l in open(sys.argv[1])]' "$work/out.jsonl" \
  > "$work/cli.labels"
if ! diff -u "$work/cli.labels" "$work/example.labels"; then
  echo "check-install: the example's labels differ from the CLI's" >&2
  exit 1
fi
echo "check-install: $(echo "$headers" | wc -l) headers and libinfercost.a installed; examples/classify built against them; $(wc -l < "$work/cli.labels") labels equal to the CLI's"
