"""Where the counterfactual evaluation's time goes: the head bank's prefill of a verified chunk into every head of a
pool, against the target's own steps.

    python -m benchmarks.profile_bank [--pool pools/<target-slug>] [--domain sql] [--positions 1,3,5]
                                      [--repeats 30] [--synthetic N:R] [--out runs/bench/profile_bank]

A request is decoded with HedgeSpec selection (chain k = 4) to get a real state (tokens and the target's aux features);
then, for each chunk size n, every head is rewound by n positions and the bank prefills those n again (what one cycle
that accepted n - 1 drafts costs the evaluation). Timed parts (median ms): the whole bank sync; its stacked lm_head
alone (the [N, n, h] x [N, h, Vd] product); one head's own sync (what the chosen drafter pays anyway); a plain target
step and a target pass over 5 tokens (a k = 4 verification) with the engine's forward. Writes <out>/results.json and
<out>/table.md (also printed).

--synthetic N:R compares, in one run, the ways a pool can hold N specialists of the pool's first head: N whole
heads (its copies, each perturbed, so the stack holds N distinct weights), N low-rank specialists of rank R over it
(draftpool/models/low_rank.py: random adapters on every linear layer, merged into each copy; the bank reads the
base once), and the same with each its own lm_head (`eagle3.lora_vocab=own`: those stacked whole). The time of a
prefill does not depend on the weights' values, only on their shapes and sharing, so random weights measure what
trained specialists would cost.
"""

from __future__ import annotations

from typing import Any

import torch

from benchmarks import harness
from data_gen.domains import check_domain, domain_prompts
from draftpool.chat import render_prompt
from draftpool.config import ConfigError
from draftpool.pool import Member


def median_ms(fn, repeats: int) -> float:
    """One untimed warm-up call, then the harness's median of `repeats` calls, in ms."""
    fn()
    return harness.median_ms(fn, repeats)


@torch.inference_mode()
def profile(model, tok, members: list[Member], prompt: str, positions: list[int], repeats: int) -> dict[str, Any]:
    from specsel.decoding.drafter import make_drafter
    from specsel.decoding.loop import SpecDecoder
    from specsel.selection.head_bank import HeadBank
    from specsel.selection.learners import make_learner
    from specsel.selection.selector import Selector

    drafters = {m.name: make_drafter(m.kind, m.module) for m in members}
    drafters = {n: d for n, d in drafters.items() if HeadBank.accepts(d)}  # what a bank stacks
    names = list(drafters)
    sel = Selector(make_learner("normal_hedge", len(names)), len(names), 4)
    dec = SpecDecoder(model, drafters, selector=sel, mode="chain", k=4)
    ids = render_prompt(tok, prompt)
    state, bank = dec.decode(ids, 48).state, sel.bank
    if bank is None:
        raise ConfigError("the pool's heads do not share one shape: no head bank to profile")
    end = state.feats.shape[0]
    one = dec.drafters[0]
    plain = SpecDecoder(model, None, mode="plain")
    _, pm = plain.generate(ids, 32)
    rows = []
    h = bank.params["lm_head"].get("weight")  # [N,Vd,h] the stacked lm_heads (None: a low-rank bank's is shared)
    for n in positions:
        def bank_sync(n=n):
            for d in dec.drafters:
                d.rewind(end - n)
            bank.sync(state)

        def one_sync(n=n):
            one.rewind(end - n)
            one.sync(state)

        x = torch.randn(len(names), n, one.head.lm_head.in_features)

        def lm_head(x=x):
            torch.bmm(x, h.transpose(1, 2))

        rows.append({"positions": n, "bank_ms": median_ms(bank_sync, repeats),
                     "lm_head_ms": median_ms(lm_head, repeats) if h is not None else None,
                     "one_head_ms": median_ms(one_sync, repeats)})
    verify = torch.tensor([ids[:5] if len(ids) >= 5 else ids])
    target_5 = median_ms(lambda: model(input_ids=verify), max(5, repeats // 5))
    params = sum(t.numel() for group in bank.params.values() for t in group.values())
    return {"heads": len(names), "draft_vocab": int(one.head.lm_head.out_features), "stacked_params": params,
            "stacked_mb": params * next(one.head.parameters()).element_size() / 2**20, "low_rank_bank": bank.low_rank,
            "plain_step_ms": 1000 * pm.total_s / max(1, pm.new_tokens), "target_5_tokens_ms": target_5, "rows": rows}


@torch.no_grad()
def synthetic(base: Member, n: int, rank: int, seed: int = 0) -> dict[str, list[Member]]:
    """N whole specialists and N rank-`rank` low-rank specialists of `base`'s head, with the base's lm_head adapted
    and with their own (random weights: see --synthetic) -> {"whole", "low_rank", "low_rank_own_vocab": [...]}"""
    import copy

    from draftpool.models.low_rank import LowRank, delta, fingerprint, linear_layers

    g = torch.Generator().manual_seed(seed)
    fp, out = fingerprint(base.module), {"whole": [], "low_rank": [], "low_rank_own_vocab": []}
    for i in range(n):
        whole = copy.deepcopy(base.module)
        for p in whole.parameters():
            if p.requires_grad:
                p.add_(torch.randn(p.shape, generator=g) * 1e-3)
        out["whole"].append(Member(f"whole-{i}", base.kind, whole))
        low, factors = copy.deepcopy(base.module), {}
        for name in linear_layers(low):
            layer = low.get_submodule(name)
            a = torch.randn(rank, layer.in_features, generator=g) * 0.01
            b = torch.randn(layer.out_features, rank, generator=g) * 0.01
            factors[name] = (a, b)
            layer.weight.add_(delta(a, b, 2.0))
        low.low_rank = LowRank(factors, 2.0, fp)
        out["low_rank"].append(Member(f"low-rank-{i}", base.kind, low))
        own = copy.deepcopy(low)  # eagle3.lora_vocab=own: its lm_head its own (stacked whole), no adapter there
        own.lm_head.weight.add_(torch.randn(own.lm_head.weight.shape, generator=g) * 1e-3)
        own.low_rank = LowRank({k: v for k, v in factors.items() if k != "lm_head"}, 2.0, fp)
        out["low_rank_own_vocab"].append(Member(f"low-rank-own-{i}", base.kind, own))
    return out


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.profile_bank", __doc__)
    harness.add_common(ap, pool="", device="cpu", dtype="float32", out="runs/bench/profile_bank")
    ap.add_argument("--domain", default="sql", help="the held-out prompt decoded for the state")
    ap.add_argument("--positions", default="1,3,5")
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--synthetic", default="", help="N:R: N whole against N rank-R low-rank specialists of the "
                                                    "pool's first head (the pool's own heads otherwise)")
    args = ap.parse_args(argv)
    try:
        n_syn, rank = (int(x) for x in args.synthetic.split(":")) if args.synthetic else (0, 0)
    except ValueError:
        n_syn = rank = -1
    if args.synthetic and (n_syn < 2 or rank < 1):
        raise ConfigError(f"--synthetic must be N:R with N >= 2 and R >= 1, got {args.synthetic!r}")
    try:
        positions = [int(p) for p in args.positions.split(",") if p]
    except ValueError:
        positions = []
    if not positions or min(positions) < 1 or args.repeats < 1:
        raise ConfigError("--positions must list sizes >= 1 and --repeats must be >= 1")
    check_domain(args.domain)
    info = harness.resolve(args)
    pool = harness.pool_dir(args, info)
    target = harness.load_target(args, info)
    model, tok = target.model, target.tok
    members = harness.load_members(pool, info, model, ("eagle3",), at_least=1 if n_syn else 2)
    prompt = domain_prompts(args.domain)["held_out"][0]["prompt"]
    sets = synthetic(members[0], n_syn, rank) if n_syn else {"pool": members}
    results = {}
    for label, group in sets.items():
        res = profile(model, tok, group, prompt, positions, args.repeats)
        res.update(pool=str(pool), torch_threads=torch.get_num_threads(), members=label)
        results[label] = res
    tables = []
    for label, res in results.items():
        tables.append(
            f"**{label}**: {res['heads']} heads, draft vocabulary {res['draft_vocab']}, stacked weights "
            f"{res['stacked_mb']:.1f} MB; plain step {res['plain_step_ms']:.1f} ms, target over 5 tokens "
            f"{res['target_5_tokens_ms']:.1f} ms\n\n" + harness.markdown_table(
                ["positions", "bank sync ms", "of which lm_head ms", "one head's own sync ms", "bank / one head"],
                [[r["positions"], f"{r['bank_ms']:.1f}", "-" if r["lm_head_ms"] is None else f"{r['lm_head_ms']:.1f}",
                  f"{r['one_head_ms']:.1f}", f"{r['bank_ms'] / r['one_head_ms']:.2f}"] for r in res["rows"]]))
    table = "\n\n".join(tables)
    harness.write_results(args.out, results if n_syn else results["pool"], table)
    print(table)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
