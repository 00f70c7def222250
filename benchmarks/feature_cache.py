"""The EAGLE-3 feature cache through the slot forward against one transformers forward per sequence.

    python -m benchmarks.feature_cache --data runs/data/smollm2-135m-instruct/sql --sequences 128 \
        [--rows-per-pass 1024] [--out runs/bench/feature_cache]

Both paths cache the same first --sequences train sequences (prompt + answer, as training builds them) into their own
folder with `training.target_cache.build_cache`, the code training runs; reported: seconds and sequences/s of each,
and how far the slot forward's features and teacher lie from the transformers forward's (max absolute difference of
the aux and final hidden states and of the log-sum-exp, the share of positions whose top-1 differs).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import torch
from safetensors.torch import load_file

from data_gen.generate import load_distilled
from draftpool.config import ConfigError
from draftpool.models.eagle3 import default_aux_layers
from draftpool.target import DEFAULT_TARGET, load_target, resolve_target
from training import target_cache
from training.data import ResponseDataset


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default=DEFAULT_TARGET)
    ap.add_argument("--data", required=True)
    ap.add_argument("--sequences", type=int, default=128)
    ap.add_argument("--rows-per-pass", type=int, default=1024)
    ap.add_argument("--max-len", type=int, default=320)
    ap.add_argument("--out", default="runs/bench/feature_cache")
    args = ap.parse_args(argv)
    info = resolve_target(args.target)
    model, _ = load_target(info)
    rows = list(load_distilled(args.data, "train"))[:args.sequences]
    ds = ResponseDataset(rows, args.max_len)
    layers = default_aux_layers(info.num_layers)
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    seconds = {}
    real = target_cache._slot_forward
    for name, forward in (("slot", real), ("transformers", lambda *a: None)):
        target_cache._slot_forward = forward
        try:
            t = time.perf_counter()
            target_cache.build_cache(model, ds, layers, out / name, "bench", args.rows_per_pass)
            seconds[name] = time.perf_counter() - t
        finally:
            target_cache._slot_forward = real
    diff = {"aux": 0.0, "last": 0.0, "lse": 0.0}
    top1_differ = positions = 0
    for i in range(len(ds)):
        a, b = (load_file(str(out / n / f"{i:07d}.safetensors")) for n in ("slot", "transformers"))
        for k in diff:
            diff[k] = max(diff[k], float((a[k].float() - b[k].float()).abs().max()))
        top1_differ += int((a["top1"] != b["top1"]).sum())
        positions += a["top1"].numel()
    report = {"target": info.name, "sequences": len(ds), "rows": positions, "seconds": seconds,
              "speedup": seconds["transformers"] / seconds["slot"], "max_abs_difference": diff,
              "top1_differ_share": top1_differ / positions, "threads": torch.get_num_threads()}
    (out / "results.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    try:
        main()
    except (ConfigError, OSError, ValueError) as e:
        sys.exit(f"error: {e}")
