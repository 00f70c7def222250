"""The EAGLE-3 feature cache through the slot forward against one transformers forward per sequence.

    python -m benchmarks.feature_cache --data runs/data/smollm2-135m-instruct/sql --sequences 128 \
        [--rows-per-pass 1024] [--out runs/bench/feature_cache]

Both paths cache the same first --sequences train sequences (prompt + answer, as training builds them) into their own
folder with `training.target_cache.build_cache`, the code training runs; reported: seconds and sequences/s of each,
and how far the slot forward's features and teacher lie from the transformers forward's (max absolute difference of
the aux and final hidden states and of the log-sum-exp, the share of positions whose top-1 differs).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import torch
from safetensors.torch import load_file

from benchmarks import harness
from data_gen.generate import load_distilled
from draftpool.models.eagle3 import default_aux_layers
from training import target_cache
from training.data import ResponseDataset


def main(argv: list[str] | None = None) -> dict:
    ap = harness.parser("benchmarks.feature_cache", __doc__)
    harness.add_common(ap, device="cpu", dtype="float32", out="runs/bench/feature_cache")
    ap.add_argument("--data", required=True)
    ap.add_argument("--sequences", type=int, default=128)
    ap.add_argument("--rows-per-pass", type=int, default=1024)
    ap.add_argument("--max-len", type=int, default=320)
    args = ap.parse_args(argv)
    target = harness.load_target(args)
    info, model = target.info, target.model
    rows = list(load_distilled(args.data, "train"))[:args.sequences]
    ds = ResponseDataset(rows, args.max_len)
    layers = default_aux_layers(info.num_layers)
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    seconds = {}
    real = target_cache._slot_forward
    for name, forward in harness.progress([("slot", real), ("transformers", lambda *a: None)], "cache paths",
                                          unit="path"):
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
    harness.write_results(out, report, harness.markdown_table(
        ["path", "seconds", "sequences/s"], [[n, f"{s:.2f}", f"{len(ds) / s:.2f}"] for n, s in seconds.items()]))
    print(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    raise SystemExit(harness.cli(main))
