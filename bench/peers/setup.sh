#!/usr/bin/env bash
# Makes the peers' Python environment: build/peers-venv (or $PEERS_VENV).
#
#   bench/peers/setup.sh            prints the venv's python path on stdout
#
# The peers (the study's PyTorch method, ONNX Runtime) are benchmark
# opponents only: the engine never needs Python. The venv holds exactly the
# versions bench/peers/requirements.txt pins (dependencies included), from
# PyPI; it does not see the system's site-packages, so another torch
# installed there cannot change the comparison. torch from PyPI is large
# (about 6 GB with its CUDA libraries); it is downloaded once.
#
# Environment: PYTHON (base interpreter, default python3), PEERS_VENV.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${PYTHON:-python3}
VENV=${PEERS_VENV:-$ROOT/build/peers-venv}
REQUIREMENTS=$ROOT/bench/peers/requirements.txt

if [[ ! -x $VENV/bin/python ]]; then
  echo "peers: creating $VENV" >&2
  "$PYTHON" -m venv "$VENV" >&2
fi
PY=$VENV/bin/python

# Installs what is missing or at another version; a no-op once the venv matches.
STAMP=$VENV/.infercost-requirements
if ! cmp -s "$REQUIREMENTS" "$STAMP"; then
  echo "peers: pip install -r $REQUIREMENTS" >&2
  "$PY" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS" >&2
  cp "$REQUIREMENTS" "$STAMP"
fi
"$PY" - >&2 <<'PYEOF'
import onnx, onnxruntime, onnxscript, pandas, torch, transformers
import onnxruntime.transformers.optimizer  # noqa: F401  (the graph optimizer the ORT peer uses)
import onnxruntime.quantization  # noqa: F401
print("peers: torch %s, transformers %s, onnxruntime %s, onnx %s, onnxscript %s, pandas %s" %
      (torch.__version__, transformers.__version__, onnxruntime.__version__, onnx.__version__,
       onnxscript.__version__, pandas.__version__))
PYEOF
echo "$PY"
