"""Quick settings probe for online adaptation: one updater on one fixed drafter over the first N requests of the
online benchmark's cached domain-shift stream (run `python online_adapt.py --bench --parts replay` once first).

    python -m benchmarks.online_probe --drafter python-eagle3 --requests 300 --updater ogd --lr 1e-3 \
        --batch 4 --epochs 2
    python -m benchmarks.online_probe --drafter python-eagle3 --requests 300 --lr 0     (static: no updates)

Prints MAT per window of 20 requests and over the last 100 (the same replay as benchmarks/online.py, one torch thread).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import torch

from benchmarks import harness
from benchmarks.common.online_replay import mat, run_method
from online.trainer.config import TrainerConfig


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.online_probe", __doc__)
    harness.add_common(ap, pool="runs/shift/pools/{target_slug}", device="cpu", dtype="float32", out=None)
    ap.add_argument("--bench-out", default="runs/bench/online", help="the online benchmark's --out")
    ap.add_argument("--drafter", default="python-eagle3")
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--updater", default="ogd", choices=["ogd", "optimistic", "ensemble"])
    ap.add_argument("--lr", type=float, default=1e-3, help="0: the static drafter")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--k", type=int, default=4)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    info = harness.resolve(args)
    out = Path(args.bench_out)
    streams = sorted(out.glob(f"stream-{info.slug}-*.jsonl"))
    fb_dir = out / f"feedback-{info.slug}"
    if not streams or not fb_dir.is_dir():
        raise harness.BenchError(f"no cached stream / feedback under {out}: run the online benchmark first")
    ids = [json.loads(line)["id"] for line in streams[0].read_text().splitlines()][:args.requests]
    missing = [i for i in ids if not (fb_dir / f"{i}.pt").is_file()]
    if missing:
        raise harness.BenchError(f"{len(missing)} of {len(ids)} requests have no cached feedback in {fb_dir}")
    model = harness.load_target(args, info).model
    members = harness.load_members(harness.pool_dir(args, info), info, model, ["eagle3", "llama"])
    drafter = next((m for m in members if m.name == args.drafter), None)
    if drafter is None:
        raise harness.BenchError(f"no drafter {args.drafter!r} in the pool ({', '.join(m.name for m in members)})")
    feedback = [torch.load(fb_dir / f"{i}.pt", weights_only=False) for i in ids]
    cfg = (TrainerConfig(updater=args.updater, lr=args.lr, batch=args.batch, epochs=args.epochs)
           if args.lr > 0 else None)
    t0 = time.time()
    r = run_method(args.updater, [drafter], feedback, cfg, 0, args.k)
    n = len(feedback)
    print(json.dumps({**vars(args), "mat_per_20": [round(mat(r, i, i + 20), 3) for i in range(0, n, 20)],
                      "mat_last100": round(mat(r, max(0, n - 100), n), 4), "seconds": round(time.time() - t0)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
