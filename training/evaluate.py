"""Held-out evaluation of a drafter against the target.

Per draft step j (EAGLE-3: TTT step j; independent drafter: the same next-token statistic at every step):
- top-1 agreement with the target's argmax (greedy acceptance rate) and 1 - TV(p, q) (sampling acceptance rate);
- expected accepted length of a depth-D chain from those rates, bonus token included: 1 + sum_k prod_{j<k} a_j;
- the empirical greedy chain length: for every start position, 1 + the number of leading draft steps whose top-1
  equals the target's argmax (exact for greedy chain drafting on greedy held-out answers).
"""

from __future__ import annotations

from pathlib import Path

import torch

from draftpool.progress import progress
from training.data import ResponseDataset, collate
from training.losses import acceptance_on_draft_vocab, tvd
from training.ttt import shift_left

TOP_RANKS = 8  # topk_per_step: the target's token within the drafter's top 1..8 (the rank rates `auto` weighs
# trees with)


def target_forward(target, input_ids: torch.Tensor, attention_mask: torch.Tensor, aux_layers: list[int] | None):
    """-> (aux [B,T,3H] or None, logits [B,T,V]) from one frozen target pass."""
    with torch.no_grad():
        out = target(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=aux_layers is not None)
        aux = torch.cat([out.hidden_states[i] for i in aux_layers], dim=-1) if aux_layers is not None else None
    return aux, out.logits


def chain_length_from_rates(rates: list[float]) -> float:
    """1 + sum_{k=1..D} prod_{j<k} a_j (the bonus token included)."""
    total, prod = 1.0, 1.0
    for a in rates:
        prod *= a
        total += prod
    return total


@torch.no_grad()
def evaluate(kind: str, drafter, target, rows, depth: int, max_len: int, pad_id: int, batch_size: int = 8) -> dict:
    """kind "eagle3" (drafter = Eagle3Head, aux layers from its config) or "llama" (drafter = LlamaForCausalLM)."""
    return evaluate_many({"d": (kind, drafter)}, target, rows, depth, max_len, pad_id, batch_size)["d"]


@torch.no_grad()
def evaluate_many(drafters: dict[str, tuple[str, torch.nn.Module]], target, rows, depth: int, max_len: int,
                  pad_id: int, batch_size: int = 8, desc: str = "eval") -> dict[str, dict]:
    """Evaluate several drafters ({name: (kind, model)}) on the same rows with one target pass per batch.
    EAGLE-3 heads read their aux layers from their own config."""
    device = next(target.parameters()).device
    ds = ResponseDataset(rows, max_len)
    acc = {name: _Sums(depth) for name in drafters}
    want_hidden = any(kind == "eagle3" for kind, _ in drafters.values())
    for _, model in drafters.values():
        model.eval()
    for i in progress(range(0, len(ds), batch_size), desc, unit="batch"):
        b = {k: v.to(device) for k, v in collate([ds[j] for j in range(i, min(i + batch_size, len(ds)))],
                                                 pad_id).items()}
        ids, attn, lmask = b["input_ids"], b["attention_mask"], b["loss_mask"]
        out = target(input_ids=ids, attention_mask=attn, output_hidden_states=want_hidden)
        for name, (kind, model) in drafters.items():
            aux = None
            if kind == "eagle3":
                aux = torch.cat([out.hidden_states[k] for k in model.config.eagle_aux_hidden_state_layer_ids], -1)
            acc[name].add(kind, model, aux, out.logits, ids, attn, lmask)
    return {name: {"kind": drafters[name][0], "held_out_sequences": len(ds), **s.result()} for name, s in acc.items()}


class _Sums:
    """Running per-step sums of one drafter's held-out statistics."""

    def __init__(self, depth: int):
        self.depth = depth
        self.sums = {k: torch.zeros(depth, dtype=torch.float64) for k in ("top1", "accept", "n")}
        self.sums["topk"] = torch.zeros(depth, TOP_RANKS, dtype=torch.float64)  # target token in the top r+1
        self.chain_total, self.chain_n = 0.0, 0

    def add(self, kind, drafter, aux, tlogits, ids, attn, lmask) -> None:
        depth, sums = self.depth, self.sums
        ttop1 = tlogits.argmax(-1)  # [B,T]
        matches, masks, in_top = [], [], []  # in_top[j]: [B,T,R] the target's token within the drafter's top r+1
        if kind == "eagle3":
            _, step_logits = drafter(aux, ids, attn, depth)
            lse = tlogits.float().logsumexp(-1)
            td = tlogits.index_select(-1, drafter.draft_ids)
            for j, lg in enumerate(step_logits):
                mask = shift_left(lmask, 2 + j).bool()  # x_{t+2+j} is a response token
                matches.append(drafter.draft_ids[lg.argmax(-1)] == shift_left(ttop1, 1 + j))
                ranked = drafter.draft_ids[lg.topk(min(TOP_RANKS, lg.shape[-1]), -1).indices]  # [B,T,R] target ids
                in_top.append((ranked == shift_left(ttop1, 1 + j)[..., None]).cumsum(-1) > 0)
                masks.append(mask)
                a = acceptance_on_draft_vocab(lg, shift_left(td, 1 + j), shift_left(lse, 1 + j))
                sums["accept"][j] += a[mask].double().sum().cpu()
        else:
            dlogits = drafter(input_ids=ids, attention_mask=attn).logits
            m0 = dlogits.argmax(-1) == ttop1  # position t predicts x_{t+1}
            k0 = (dlogits.topk(min(TOP_RANKS, dlogits.shape[-1]), -1).indices == ttop1[..., None]).cumsum(-1) > 0
            a0 = 1 - tvd(dlogits, tlogits)
            for j in range(depth):
                mask = shift_left(lmask, 1 + j).bool()
                matches.append(shift_left(m0, j, fill=False))
                in_top.append(shift_left(k0, j, fill=False))
                masks.append(mask)
                sums["accept"][j] += shift_left(a0, j)[mask].double().sum().cpu()
        data_ok = []  # the held-out token is the target's argmax, so the teacher-forced context is the greedy one
        offset = 2 if kind == "eagle3" else 1
        for j in range(depth):
            data_ok.append(shift_left(ids, offset + j) == shift_left(ttop1, offset - 1 + j))
            sums["top1"][j] += (matches[j] & masks[j]).sum().cpu()
            sums["topk"][j, :in_top[j].shape[-1]] += (in_top[j] & masks[j][..., None]).sum((0, 1)).cpu()
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
    import json
    import sys

    from data_gen.domains import check_domain
    from data_gen.generate import DataGenConfig, ensure_data, load_distilled
    from draftpool.config import ConfigError, load_config
    from draftpool.io import atomic_write_json
    from draftpool.pool import DrafterLoadError, load_eagle3, load_llama
    from draftpool.target import DEFAULT_TARGET, TargetError, load_target, resolve_target

    ap = argparse.ArgumentParser(description=main.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--drafter", required=True, help="an exported drafter folder")
    ap.add_argument("--domain", required=True)
    ap.add_argument("--target", default=DEFAULT_TARGET)
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
        target, tok = load_target(info)
        dcfg = load_config(DataGenConfig, f"recipes/{args.domain}/data_gen.yaml",
                           [f"domain={args.domain}", f"target={args.target}", *args.data_set])
        ddir = ensure_data(dcfg, info, tok, target)
        rows = [r for r in load_distilled(ddir, "held_out") if r["temperature"] == 0.0]
        rows = rows[: args.max_sequences] if args.max_sequences else rows
        path = Path(args.drafter)
        meta = json.loads((path / "draftpool.json").read_text()) if (path / "draftpool.json").exists() else {}
        kind = meta.get("kind") or ("eagle3" if "Eagle3" in (path / "config.json").read_text() else "llama")
        if kind == "eagle3":
            drafter = load_eagle3(path, info, target.get_input_embeddings().weight)
        else:
            drafter = load_llama(path, info)
        res = evaluate(kind, drafter, target, rows, args.depth, args.max_len, tok.pad_token_id)
    except (ConfigError, DrafterLoadError, TargetError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    res.update(domain=args.domain, drafter=str(path), target=info.name)
    atomic_write_json(Path(args.out or path / f"eval-{args.domain}.json"), res)
    if args.write_eval:
        write_eval(path, res)
    print(format_table(res, f"{path.name} on held-out {args.domain} prompts"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
