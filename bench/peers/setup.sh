#!/usr/bin/env bash
# Makes the peers' Python environment: build/peers-venv (or $PEERS_VENV).
#
#   bench/peers/setup.sh            prints the venv's python path on stdout
#
# The peers (the study's PyTorch method, ONNX Runtime) are benchmark
# opponents only: the engine never needs Python. The venv sees the system
# interpreter's site-packages, so an installed torch / transformers is reused
# (torch is ~900 MB from PyPI); whatever is missing is installed from PyPI:
# torch, transformers, onnxruntime, onnx, pandas, pyarrow.
#
# Environment: PYTHON (base interpreter, default python3), PEERS_VENV.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${PYTHON:-python3}
VENV=${PEERS_VENV:-$ROOT/build/peers-venv}

if [[ ! -x $VENV/bin/python ]]; then
  echo "peers: creating $VENV (system site-packages visible)" >&2
  "$PYTHON" -m venv --system-site-packages "$VENV" >&2
fi
PY=$VENV/bin/python

# module name -> PyPI name
declare -A WANT=([torch]=torch [transformers]=transformers [onnxruntime]=onnxruntime [onnx]=onnx
                 [pandas]=pandas [pyarrow]=pyarrow)
MISSING=()
for mod in "${!WANT[@]}"; do
  if ! "$PY" -c "import $mod" >/dev/null 2>&1; then
    MISSING+=("${WANT[$mod]}")
  fi
done
if ((${#MISSING[@]})); then
  echo "peers: pip install ${MISSING[*]}" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check "${MISSING[@]}" >&2
fi
"$PY" - >&2 <<'PYEOF'
import onnx, onnxruntime, pandas, torch, transformers
import onnxruntime.transformers.optimizer  # noqa: F401  (the graph optimizer the ORT peer uses)
import onnxruntime.quantization  # noqa: F401
print("peers: torch %s, transformers %s, onnxruntime %s, onnx %s, pandas %s" %
      (torch.__version__, transformers.__version__, onnxruntime.__version__, onnx.__version__, pandas.__version__))
PYEOF
echo "$PY"
