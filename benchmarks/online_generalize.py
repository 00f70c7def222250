"""Does a head learn from served records what it meets next? The question behind every online-adaptation figure:
an update pays only through requests that come after it.

    python -m benchmarks.online_generalize --pool pools-readme/{target_slug} --drafter sql-eagle3 \
        --stream benchmarks/streams/python_six_domains.jsonl \
        --variants static,lr1e-4,lr1e-3,lr3e-5:e4,lr1e-3:only=lm_head,lr1e-3:only=norm,lr1e-4:v1 \
        [--group 20] [--max-new-tokens 64] [--out runs/bench/generalize]

The stream's greedy answers and the feedback the server would collect are cached in --out (the same files as
benchmarks.online_guard's replay with the same --out). The stream is split as a server meets it: all but the last
--group requests are the past, the last group is traffic of a kind not seen yet (the streams in benchmarks/streams/
are groups of 20 requests on one subject). Each variant (benchmarks.online_guard's grammar, the guard off: every
update is kept, since the question is what an update teaches; `only=<regex>`: only the weights whose names match
train) starts from the pool's head and trains with the online trainer (online/trainer/token_trainer.py) in rounds
over the even records of the past, in stream order. Then the guard's measure, step-0 greedy acceptance, on: the
records it trained on (what it memorised), the odd records of the past (the same subjects, requests it did not see)
and the last group (a subject it never saw). Outputs: <out>/results.json, <out>/table.md; progress on stderr.
"""

from __future__ import annotations

import copy
import re
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import harness
from benchmarks.common.online_replay import cached_feedback, greedy_stream
from benchmarks.online_guard import read_stream, variant_config
from draftpool.config import ConfigError
from draftpool.models import get_kind

ROOT = Path(__file__).resolve().parents[1]


def parse_variant(name: str) -> tuple[Any, str | None]:
    """'lr1e-3:only=lm_head' -> (its TrainerConfig with the guard off, or None for static; the weights regex)."""
    parts = name.split(":")
    only = [p[len("only="):] for p in parts if p.startswith("only=")]
    rest = ":".join(p for p in parts if not p.startswith("only="))
    if len(only) > 1 or (only and rest == "static"):
        raise ConfigError(f"--variants: at most one only=<regex>, and none with static; got {name!r}")
    if rest == "static":
        return None, None
    cfg = variant_config(f"off:{rest}" if rest else "off")
    try:
        pattern = re.compile(only[0]).pattern if only else None
    except re.error as e:
        raise ConfigError(f"--variants: only={only[0]!r} is not a regular expression ({e})") from None
    return cfg, pattern


def split(feedback: list, group: int) -> dict[str, list]:
    """The stream as the server meets it -> trained (the past's even records), same (its odd ones), new (the last
    group)."""
    if len(feedback) < 2 * group + 2:
        raise ConfigError(f"the stream has {len(feedback)} requests; --group {group} needs at least {2 * group + 2}")
    past = feedback[:-group]
    return {"trained": past[0::2], "same": past[1::2], "new": feedback[-group:]}


def run_variant(member, cfg, only: str | None, parts: dict[str, list], out_embed) -> dict[str, Any]:
    from online.trainer.token_trainer import OnlineTrainer, held_out_acceptance

    m = copy.deepcopy(member)
    t0 = time.time()
    if cfg is not None:
        if only is not None:
            names = [n for n, p in m.module.named_parameters() if p.requires_grad]
            keep = [n for n in names if re.search(only, n)]
            if not keep:
                raise ConfigError(f"only={only!r} matches none of the head's weights ({', '.join(names)})")
            for n, p in m.module.named_parameters():
                p.requires_grad_(n in keep)
        tr = OnlineTrainer([m], cfg, out_embed if cfg.vocab_every else None)
        for i in range(0, len(parts["trained"]), cfg.batch):
            tr.round(parts["trained"][i:i + cfg.batch])
        weights = tr.candidate(m.name)
    else:
        from online.trainer.token_trainer import versioned

        weights = versioned(m.kind, m.module, False)
    train_s = time.time() - t0
    acc = {k: round(held_out_acceptance(m.kind, m.module, weights, v), 4) for k, v in parts.items()}
    return {**acc, "train_s": round(train_s, 1)}


def format_table(report: dict[str, Any]) -> str:
    rows = [[v, r["trained"], r["same"], r["new"], r["train_s"]] for v, r in report["variants"].items()]
    n = report["records"]
    return harness.markdown_table(
        ["variant", f"trained on ({n['trained']} records)", f"same subjects, unseen ({n['same']})",
         f"new subject ({n['new']})", "train s"], rows)


def _main(argv: list[str] | None) -> int:
    import torch

    ap = harness.parser("benchmarks.online_generalize", __doc__)
    harness.add_common(ap, pool="pools/{target_slug}", device="cpu", dtype="float32", out="runs/bench/generalize")
    ap.add_argument("--drafter", default="sql-eagle3", help="the pool's EAGLE-3 head")
    ap.add_argument("--stream", default=str(ROOT / "benchmarks/streams/python_six_domains.jsonl"))
    ap.add_argument("--variants", default="static,lr1e-4,lr1e-3")
    ap.add_argument("--group", type=int, default=20, help="requests of the last subject (new traffic)")
    ap.add_argument("--max-new-tokens", type=int, default=64)
    args = ap.parse_args(argv)
    if args.group < 1 or args.max_new_tokens < 1:
        raise ConfigError("--group and --max-new-tokens must be >= 1")
    variants = {v: parse_variant(v) for v in harness.csv(args.variants)}
    rows = read_stream(Path(args.stream))
    info = harness.resolve(args)
    pool = harness.pool_dir(args, info)
    target = harness.load_target(args, info)
    members = harness.load_members(pool, info, target.model, ["eagle3"])
    member = next((m for m in members if m.name == args.drafter), None)
    if member is None:
        raise ConfigError(f"--drafter {args.drafter!r} is not an eagle3 head of {pool} "
                          f"({', '.join(m.name for m in members)})")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    items = greedy_stream(target.model, target.tok, rows, args.max_new_tokens,
                          out / f"answers-{Path(args.stream).stem}-{args.max_new_tokens}.jsonl")
    aux = get_kind(member.kind).aux_layers(member.module)
    feedback, _ = cached_feedback(target.model, items, list(aux), 64, out / f"feedback-{Path(args.stream).stem}")
    parts = split(feedback, args.group)
    out_embed = target.model.get_output_embeddings().weight.detach().float()
    report: dict[str, Any] = {"target": info.name, "pool": str(pool), "drafter": args.drafter, "stream": args.stream,
                              "records": {k: len(v) for k, v in parts.items()}, "threads": torch.get_num_threads(),
                              "argv": argv if argv is not None else sys.argv[1:], "variants": {}}
    for name, (cfg, only) in variants.items():
        report["variants"][name] = run_variant(member, cfg, only, parts, out_embed)
        harness.log.info(f"[generalize] {name}: {report['variants'][name]}")
        harness.write_results(out, report)
    harness.write_results(out, report, format_table(report))
    print(format_table(report))
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
