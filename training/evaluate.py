"""Held-out evaluation of a drafter against the target.

Per draft step j (EAGLE-3: TTT step j; independent drafter: the same next-token statistic at every step):
- top-1 agreement with the target's argmax (greedy acceptance rate) and 1 - TV(p, q) (sampling acceptance rate);
- expected accepted length of a depth-D chain from those rates, bonus token included: 1 + sum_k prod_{j<k} a_j;
- the empirical greedy chain length: for every start position, 1 + the number of leading draft steps whose top-1
  equals the target's argmax (exact for greedy chain drafting on greedy held-out answers).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

import torch

from draftpool.models import get_kind, kind_of_folder
from draftpool.models.kind import Steps, aux_features, shift_left
from draftpool.pool import Member
from draftpool.progress import progress
from training.data import ResponseDataset, collate

TOP_RANKS = 8  # topk_per_step: the target's token within the drafter's top 1..8 (the rank rates `auto` weighs
# trees with)


def target_forward(target, input_ids: torch.Tensor, attention_mask: torch.Tensor, aux_layers: list[int] | None):
    """-> (aux [B,T,3H] or None, logits [B,T,V]) from one frozen target pass."""
    with torch.no_grad():
        out = target(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=aux_layers is not None)
    return (None if aux_layers is None else aux_features(out.hidden_states, aux_layers)), out.logits


def param_dtype(module, default: torch.dtype) -> torch.dtype:
    """The dtype of a module's parameters (`default` for one without any, e.g. a model-free index)."""
    first = next(iter(module.parameters()), None) if isinstance(module, torch.nn.Module) else None
    return default if first is None else first.dtype


def chain_length_from_rates(rates: list[float]) -> float:
    """1 + sum_{k=1..D} prod_{j<k} a_j (the bonus token included)."""
    total, prod = 1.0, 1.0
    for a in rates:
        prod *= a
        total += prod
    return total


@torch.no_grad()
def evaluate(kind: str, drafter, target, rows, depth: int, max_len: int, pad_id: int, batch_size: int = 8) -> dict:
    """One drafter of kind `kind` (a pool manifest's kind name) on held-out rows."""
    return evaluate_many([Member("d", kind, drafter)], target, rows, depth, max_len, pad_id, batch_size)["d"]


@torch.no_grad()
def evaluate_many(members: Sequence[Member], target, rows, depth: int, max_len: int, pad_id: int,
                  batch_size: int = 8, desc: str = "eval") -> dict[str, dict]:
    """Evaluate several drafters (pool members, by name) on the same rows with one target pass per batch ->
    {member name: its figures}."""
    device = next(target.parameters()).device
    ds = ResponseDataset(rows, max_len)
    if len({m.name for m in members}) != len(members):
        raise ValueError(f"members evaluated together need distinct names, got {[m.name for m in members]}")
    acc = {m.name: _Sums(depth) for m in members}
    kinds = {m.name: get_kind(m.kind) for m in members}
    want_hidden = any(kinds[m.name].aux_layers(m.module) is not None for m in members)
    for m in members:
        m.module.eval()
    for i in progress(range(0, len(ds), batch_size), desc, unit="batch"):
        b = {k: v.to(device) for k, v in collate([ds[j] for j in range(i, min(i + batch_size, len(ds)))],
                                                 pad_id).items()}
        ids, attn, lmask = b["input_ids"], b["attention_mask"], b["loss_mask"]
        out = target(input_ids=ids, attention_mask=attn, output_hidden_states=want_hidden)
        for m in members:
            feats = kinds[m.name].features(m.module, out.hidden_states) if want_hidden else None
            feats = feats if feats is None else feats.to(param_dtype(m.module, feats.dtype))  # a bf16 target's
            # features into an fp32 head: the head's precision
            acc[m.name].add(kinds[m.name].steps(m.module, feats, ids, attn, depth), out.logits, ids, lmask)
    return {m.name: {"kind": m.kind, "held_out_sequences": len(ds), **acc[m.name].result()} for m in members}


class _Sums:
    """Running per-step sums of one drafter's held-out statistics."""

    def __init__(self, depth: int):
        self.depth = depth
        self.sums = {k: torch.zeros(depth, dtype=torch.float64) for k in ("top1", "accept", "n")}
        self.sums["topk"] = torch.zeros(depth, TOP_RANKS, dtype=torch.float64)  # target token in the top r+1
        self.chain_total, self.chain_n = 0.0, 0

    def add(self, steps: Steps, tlogits: torch.Tensor, ids: torch.Tensor, lmask: torch.Tensor) -> None:
        """steps over ids [B,T]; tlogits [B,T,V] the target's; lmask [B,T] 1 on response tokens."""
        depth, sums = self.depth, self.sums
        ttop1 = tlogits.argmax(-1)  # [B,T]
        lse = tlogits.float().logsumexp(-1)  # [B,T]

        def match(lg: torch.Tensor, j: int) -> torch.Tensor:  # [B,T] the drafter's top-1 is the target's
            return steps.top_ids(lg, 1)[..., 0] == steps.teacher(ttop1, j)

        def in_top(lg: torch.Tensor, j: int) -> torch.Tensor:  # [B,T,R] the target's token within its top r+1
            return (steps.top_ids(lg, TOP_RANKS) == steps.teacher(ttop1, j)[..., None]).cumsum(-1) > 0

        def accept(lg: torch.Tensor, j: int) -> torch.Tensor:  # [B,T] 1 - TV on the drafter's columns
            return steps.acceptance(lg, steps.teacher(tlogits, j), steps.teacher(lse, j))

        matches = steps.per_step(match, depth, fill=False)
        in_tops = steps.per_step(in_top, depth, fill=False)
        accepts = steps.per_step(accept, depth)
        masks = [steps.mask(lmask, j) for j in range(depth)]  # the predicted token is a response token
        data_ok = []  # the held-out token is the target's argmax, so the teacher-forced context is the greedy one
        for j in range(depth):
            data_ok.append(shift_left(ids, steps.predicts(j)) == steps.teacher(ttop1, j))
            sums["top1"][j] += (matches[j] & masks[j]).sum().cpu()
            sums["topk"][j, :in_tops[j].shape[-1]] += (in_tops[j] & masks[j][..., None]).sum((0, 1)).cpu()
            sums["accept"][j] += accepts[j][masks[j]].double().sum().cpu()
            sums["n"][j] += masks[j].sum().cpu()
        # empirical greedy chain from every start position with a response token to predict
        alive = masks[0].clone()
        length = alive.long()  # the bonus token
        for j in range(depth):
            alive = alive & masks[j] & matches[j]
            length += alive.long()
            alive = alive & data_ok[j]
        self.chain_total += length[masks[0]].sum().item()
        self.chain_n += masks[0].sum().item()

    def result(self) -> dict:
        n = self.sums["n"].clamp_min(1)
        top1 = (self.sums["top1"] / n).tolist()
        topk = (self.sums["topk"] / n[:, None]).tolist()
        accept = (self.sums["accept"] / n).tolist()
        return {
            "positions": int(self.sums["n"][0]), "depth": self.depth,
            "top1_per_step": top1, "accept_per_step": accept, "topk_per_step": topk,
            "expected_chain_length_greedy": chain_length_from_rates(top1),
            "expected_chain_length_sampling": chain_length_from_rates(accept),
            "empirical_greedy_chain_length": self.chain_total / max(1, self.chain_n),
        }


def format_table(res: dict, title: str) -> str:
    lines = [title, f"  held-out sequences {res['held_out_sequences']}, positions {res['positions']}",
             "  step | top-1 agreement | acceptance 1-TV", "  -----+-----------------+----------------"]
    for j, (t, a) in enumerate(zip(res["top1_per_step"], res["accept_per_step"])):
        lines.append(f"  {j:4d} | {t:15.3f} | {a:14.3f}")
    lines += [f"  expected accepted length, depth-{res['depth']} chain (bonus included):",
              f"    from top-1 rates (greedy)      {res['expected_chain_length_greedy']:.3f}",
              f"    from 1-TV rates (sampling)     {res['expected_chain_length_sampling']:.3f}",
              f"    empirical greedy chain         {res['empirical_greedy_chain_length']:.3f}"]
    return "\n".join(lines)


EXPORTED = ("top1_per_step", "accept_per_step", "topk_per_step", "expected_chain_length_greedy",
            "expected_chain_length_sampling", "empirical_greedy_chain_length")  # the eval a drafter is exported with


def write_eval(drafter_dir: Path, res: dict) -> None:
    """Make `res` the exported evaluation of the drafter in `drafter_dir`: its draftpool.json "eval" and, when the
    folder is in a pool, its pool.json entry (each written atomically)."""
    import json

    from draftpool.io import atomic_write_json

    meta_path = drafter_dir / "draftpool.json"
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    meta["eval"] = {k: res[k] for k in EXPORTED}
    atomic_write_json(meta_path, meta)
    manifest_path = drafter_dir.parent / "pool.json"
    if manifest_path.is_file():
        manifest = json.loads(manifest_path.read_text())
        entry = manifest.get("drafters", {}).get(drafter_dir.name)
        if isinstance(entry, dict):
            entry["eval"] = meta["eval"]
            atomic_write_json(manifest_path, manifest)


def main(argv: list[str] | None = None) -> int:
    """python -m training.evaluate --drafter pools/<target>/general-eagle3 --domain sql [--target ...] [--depth 7]
                                  [--data-set KEY=VALUE ...] [--write-eval]

    Evaluates an exported drafter on a domain's held-out self-distilled answers (generated first if missing).
    """
    import argparse
    import sys

    from data_gen.domains import check_domain
    from data_gen.generate import ensure_data, load_distilled
    from data_gen.plan import DataGenConfig
    from draftpool.config import ConfigError, load_config
    from draftpool.io import atomic_write_json
    from draftpool.models.folder import DrafterLoadError
    from draftpool.target import DEFAULT_TARGET, TargetError, dtype_name, load_target, resolve_target, target_dtype

    ap = argparse.ArgumentParser(description=main.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--drafter", required=True, help="an exported drafter folder")
    ap.add_argument("--domain", required=True)
    ap.add_argument("--target", default=DEFAULT_TARGET)
    ap.add_argument("--dtype", default="auto", help="the target's precision: auto (the measured choice for "
                                                      "batched forwards, docs/precision.md), float32, bfloat16")
    ap.add_argument("--depth", type=int, default=7)
    ap.add_argument("--max-len", type=int, default=320)
    ap.add_argument("--max-sequences", type=int, default=0)
    ap.add_argument("--out", default=None, help="JSON path (default <drafter>/eval-<domain>.json)")
    ap.add_argument("--data-set", nargs="*", default=[], metavar="KEY=VALUE",
                    help="overrides of the domain's data recipe, e.g. those of a training recipe's data.gen section")
    ap.add_argument("--write-eval", action="store_true",
                    help="also make this the drafter's exported evaluation (draftpool.json and its pool.json entry: "
                         "what `auto` reads), e.g. to add fields a newer version computes")
    args = ap.parse_args(argv)
    for flag, value, low in (("--depth", args.depth, 1), ("--max-len", args.max_len, 3),
                             ("--max-sequences", args.max_sequences, 0)):
        if value < low:
            ap.error(f"{flag} must be >= {low}, got {value}")
    try:
        check_domain(args.domain)
        info = resolve_target(args.target)
        dtype = target_dtype(args.dtype, "cpu", info, "batch")
        target, tok = load_target(info, "cpu", dtype)
        dcfg = load_config(DataGenConfig, f"recipes/{args.domain}/data_gen.yaml",
                           [f"domain={args.domain}", f"target={args.target}", *args.data_set])
        ddir = ensure_data(dcfg, info, tok, target)
        rows = [r for r in load_distilled(ddir, "held_out") if r["temperature"] == 0.0]
        rows = rows[: args.max_sequences] if args.max_sequences else rows
        path = Path(args.drafter)
        kind = kind_of_folder(path)
        drafter = get_kind(kind).load(path, info, target)
        res = evaluate(kind, drafter, target, rows, args.depth, args.max_len, tok.pad_token_id)
    except (ConfigError, DrafterLoadError, TargetError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    res.update(domain=args.domain, drafter=str(path), target=info.name, target_dtype=dtype_name(dtype))
    atomic_write_json(Path(args.out or path / f"eval-{args.domain}.json"), res)
    if args.write_eval:
        write_eval(path, res)
    print(format_table(res, f"{path.name} on held-out {args.domain} prompts"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def curve_hook(minutes: float, accelerator, kind: str, target, held_rows: list[dict], pad_id: int, run_dir: Path,
               setup_seconds: float, depth: int, max_len: int, batch_size: int):
    """train.curve_minutes > 0: the training loop's hook that evaluates the drafter on the held-out rows each time the
    training clock passes another `minutes`, and at the last step, and appends a row to run_dir/curve.jsonl (a fresh
    run starts the file anew). None when minutes is 0."""
    every = minutes * 60
    if not every:
        return None
    path = run_dir / "curve.jsonl"
    if accelerator.is_main_process and not any((run_dir / "checkpoints").glob("checkpoint_*")):
        path.unlink(missing_ok=True)
    due = [every]  # the next evaluation's training-clock time

    def hook(model, step: int, total: int, seconds: float, tokens: int) -> None:
        if seconds < due[0] and step < total:
            return
        due[0] = (seconds // every + 1) * every
        if accelerator.is_main_process:
            drafter = accelerator.unwrap_model(model)
            t0 = time.perf_counter()
            res = evaluate(kind, drafter, target, held_rows, depth, max_len, pad_id, batch_size)
            drafter.train()
            row = {"step": step, "train_seconds": round(seconds, 2), "setup_seconds": round(setup_seconds, 2),
                   "tokens": tokens, "eval_seconds": round(time.perf_counter() - t0, 2),
                   **{k: res[k] for k in ("top1_per_step", "accept_per_step", "expected_chain_length_greedy",
                                          "empirical_greedy_chain_length")}}
            with path.open("a") as f:
                f.write(json.dumps(row) + "\n")
        accelerator.wait_for_everyone()

    return hook
