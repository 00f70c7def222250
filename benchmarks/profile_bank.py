"""Where the counterfactual evaluation's time goes: the head bank's prefill of a verified chunk into every head of a
pool, against the target's own steps.

    python -m benchmarks.profile_bank [--pool pools/<target-slug>] [--domain sql] [--positions 1,3,5]
                                      [--repeats 30] [--out runs/bench/profile_bank]

A request is decoded with HedgeSpec selection (chain k = 4) to get a real state (tokens and the target's aux features);
then, for each chunk size n, every head is rewound by n positions and the bank prefills those n again (what one cycle
that accepted n - 1 drafts costs the evaluation). Timed parts (median ms): the whole bank sync; its stacked lm_head
alone (the [N, n, h] x [N, h, Vd] product); one head's own sync (what the chosen drafter pays anyway); a plain target
step and a target pass over 5 tokens (a k = 4 verification) with the engine's forward. Writes <out>/results.json and
<out>/table.md (also printed).
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
    h = bank.params["lm_head"]["weight"]  # [N,Vd,h] the stacked lm_heads
    for n in positions:
        def bank_sync(n=n):
            for d in dec.drafters:
                d.rewind(end - n)
            bank.sync(state)

        def one_sync(n=n):
            one.rewind(end - n)
            one.sync(state)

        x = torch.randn(h.shape[0], n, h.shape[2], dtype=h.dtype)

        def lm_head(x=x):
            torch.bmm(x, h.transpose(1, 2))

        rows.append({"positions": n, "bank_ms": median_ms(bank_sync, repeats),
                     "lm_head_ms": median_ms(lm_head, repeats), "one_head_ms": median_ms(one_sync, repeats)})
    verify = torch.tensor([ids[:5] if len(ids) >= 5 else ids])
    target_5 = median_ms(lambda: model(input_ids=verify), max(5, repeats // 5))
    params = sum(t.numel() for group in bank.params.values() for t in group.values())
    return {"heads": len(names), "draft_vocab": int(h.shape[1]), "stacked_params": params,
            "stacked_mb": params * h.element_size() / 2**20,
            "plain_step_ms": 1000 * pm.total_s / max(1, pm.new_tokens), "target_5_tokens_ms": target_5, "rows": rows}


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.profile_bank", __doc__)
    harness.add_common(ap, pool="", device="cpu", dtype="float32", out="runs/bench/profile_bank")
    ap.add_argument("--domain", default="sql", help="the held-out prompt decoded for the state")
    ap.add_argument("--positions", default="1,3,5")
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args(argv)
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
    members = harness.load_members(pool, info, model, ("eagle3",), at_least=2)
    prompt = domain_prompts(args.domain)["held_out"][0]["prompt"]
    res = profile(model, tok, members, prompt, positions, args.repeats)
    res.update(pool=str(pool), torch_threads=torch.get_num_threads())
    table = (f"{res['heads']} heads, draft vocabulary {res['draft_vocab']}, stacked weights {res['stacked_mb']:.0f} "
             f"MB; plain step {res['plain_step_ms']:.1f} ms, target over 5 tokens {res['target_5_tokens_ms']:.1f} "
             "ms\n\n" + harness.markdown_table(
                 ["positions", "bank sync ms", "of which lm_head ms", "one head's own sync ms"],
                 [[r["positions"], f"{r['bank_ms']:.1f}", f"{r['lm_head_ms']:.1f}", f"{r['one_head_ms']:.1f}"]
                  for r in res["rows"]]))
    harness.write_results(args.out, res, table)
    print(table)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
