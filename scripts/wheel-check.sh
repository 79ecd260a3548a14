#!/usr/bin/env bash
# make wheel's last step: installs a repaired wheel into a fresh venv (no build tools, nothing of the
# source tree on sys.path), checks that every library its module loads is either bundled in the wheel
# (auditwheel's infercost.libs) or a base system library, and classifies the tiny committed model's
# rows with it, comparing the output with the CLI's.
#   scripts/wheel-check.sh WHEEL [BUILD]
set -euo pipefail
wheel=$(realpath "$1")
build=$(realpath "${2:-build}")
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "$build/wheel-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check --no-deps --no-index "$wheel"
site=$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
module=$(ls "$site"/infercost/_native*.so)
# Base libraries any manylinux system has (its policy's list); everything else must come from the wheel.
base='^(linux-vdso|libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|libz|ld-linux-x86-64)\.so'
bad=0
while read -r name _ path _; do
  [ -z "$name" ] && continue
  if [[ "$(basename "$name")" =~ $base ]]; then continue; fi
  case "$(realpath -m "$path")" in
    "$site"/infercost.libs/*) ;;
    *) echo "wheel-check: $name resolves outside the wheel: $path" >&2; bad=1 ;;
  esac
done < <(env -u LD_LIBRARY_PATH ldd "$module" | sed 's/^\s*//')
[ $bad -eq 0 ] || exit 1
mkdir "$work/run"
printf '{"full_text": "I love it"}\n{"full_text": null}\n{"full_text": "worst day ever"}\n' > "$work/run/in.jsonl"
(cd "$work/run" && env -u LD_LIBRARY_PATH -u PYTHONPATH "$work/venv/bin/python" - "$root" <<'PY'
import json, sys
import infercost
root = sys.argv[1]
assert "/infercost/" in infercost.__file__ and "site-packages" in infercost.__file__, infercost.__file__
m = infercost.run(["in.jsonl"], f"{root}/tests/data_files/golden/tiny-distilbert", output="out.jsonl", threads=1, max_length=128)
assert m["rows"] == 2 and m["rows_null"] == 1, m
print(f"wheel-check: infercost {infercost.__version__} from {infercost.__file__}: {m['rows']} rows classified")
PY
)
"$build/infercost" run "$work/run/in.jsonl" --model "$root/tests/data_files/golden/tiny-distilbert" \
  --output "$work/run/cli.jsonl" --threads 1 --max-length 128 --quiet
cmp "$work/run/out.jsonl" "$work/run/cli.jsonl"
echo "wheel-check: $(basename "$wheel"): installs in a fresh venv, loads only bundled and base libraries, same output as the CLI"
