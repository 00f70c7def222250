"""What a reproducible seeded answer costs: sampling keyed by (seed, position) against rejection sampling, with a
pool head drafting, on held-out prompts (or a prompt file).

    python -m benchmarks.keyed_sampling --pool pools/{target_slug} --drafter sql-eagle3 --domain sql \
        [--temperature 0.8] [--top-p 0.95] [--seeds 3] [--max-prompts 8] [--max-new-tokens 64] [--k 3] \
        [--out runs/bench/keyed_sampling]

Per rule (rejection, keyed) and prompt x seed: accepted drafts per cycle, MAT (tokens per target forward) and tok/s,
and for keyed whether the answer equals plain keyed sampling's with the same seed (it must: the check of
reproducibility whatever drafts) and whether a second run gives the same text. Plain sampling's tok/s is the
reference. Outputs: <out>/results.json, <out>/table.md; progress lines on stderr.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks import harness

RULES = ("rejection", "keyed")


def held_out(domain: str, n: int, tok) -> list[list[int]]:
    from data_gen.domains import domain_prompts
    from draftpool.chat import render_prompt

    return [render_prompt(tok, r["prompt"]) for r in domain_prompts(domain)["held_out"][:n]]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = harness.parser("benchmarks.keyed_sampling", __doc__)
    harness.add_common(ap, out="runs/bench/keyed_sampling", pool="", seed=0)
    ap.add_argument("--drafter", default="sql-eagle3", help="the pool member that drafts")
    ap.add_argument("--domain", default="sql", help="the held-out prompts' domain")
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--top-p", type=float, default=0.95)
    ap.add_argument("--seeds", type=int, default=3, help="seeds per prompt")
    ap.add_argument("--max-prompts", type=int, default=8)
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--k", type=int, default=3, help="draft chain length")
    args = ap.parse_args(argv)
    if args.temperature <= 0 or args.seeds < 1 or args.max_prompts < 1 or args.max_new_tokens < 1 or args.k < 1:
        raise harness.BenchError("--temperature must be > 0 and --seeds, --max-prompts, --max-new-tokens, --k >= 1")
    import torch

    from draftpool.chat import stop_token_ids
    from draftpool.forward.sampling import SamplingParams
    from specsel.decoding.drafter import make_drafter
    from specsel.decoding.loop import SpecDecoder

    info = harness.resolve(args)
    folder = harness.pool_dir(args, info)
    t = harness.load_target(args, info)
    members = {m.name: m for m in harness.load_members(folder, info, t.model, ["eagle3", "llama"])}
    if args.drafter not in members:
        raise harness.BenchError(f"no member {args.drafter!r} in {folder}: {', '.join(members)}")
    member = members[args.drafter]
    stops = stop_token_ids(t.tok, t.model)
    params = SamplingParams(args.temperature, top_p=args.top_p)
    plain = SpecDecoder(t.model, mode="plain", stop_ids=stops)
    spec = SpecDecoder(t.model, make_drafter(member.kind, member.module), mode="chain", k=args.k, stop_ids=stops)
    prompts = held_out(args.domain, args.max_prompts, t.tok)
    runs: list[dict[str, Any]] = []
    jobs = [(i, p, s) for i, p in enumerate(prompts) for s in range(args.seed, args.seed + args.seeds)]
    for i, prompt, seed in harness.progress(jobs, desc="prompt x seed", unit="run"):
        t0 = time.perf_counter()
        ref, _ = plain.generate(prompt, args.max_new_tokens, params, seed=seed, keyed=True)
        plain_s = time.perf_counter() - t0
        runs.append({"rule": "plain", "prompt": i, "seed": seed, "new_tokens": len(ref), "seconds": plain_s,
                     "forwards": len(ref)})
        for rule in RULES:
            keyed = rule == "keyed"
            t0 = time.perf_counter()
            out, m = spec.generate(prompt, args.max_new_tokens, params, seed=seed, keyed=keyed)
            row = {"rule": rule, "prompt": i, "seed": seed, "new_tokens": len(out),
                   "seconds": time.perf_counter() - t0, "forwards": m.target_forwards,
                   "accepted": sum(m.accepted), "cycles": len(m.accepted)}
            if keyed:
                again, _ = spec.generate(prompt, args.max_new_tokens, params, seed=seed, keyed=True)
                row |= {"equals_plain_keyed": out == ref, "repeatable": again == out}
            runs.append(row)
    summary = {}
    for rule in ("plain", *RULES):
        rs = [r for r in runs if r["rule"] == rule]
        new, fwd, secs = (sum(r[k] for r in rs) for k in ("new_tokens", "forwards", "seconds"))
        summary[rule] = {"mat": new / fwd, "tok_s": new / secs, "new_tokens": new}
        if rule != "plain":
            summary[rule]["accepted_per_cycle"] = sum(r["accepted"] for r in rs) / max(1, sum(r["cycles"] for r in rs))
    keyed_rows = [r for r in runs if r["rule"] == "keyed"]
    summary["keyed"]["all_equal_plain_keyed"] = all(r["equals_plain_keyed"] for r in keyed_rows)
    summary["keyed"]["all_repeatable"] = all(r["repeatable"] for r in keyed_rows)
    base = summary["plain"]["tok_s"]
    table = harness.markdown_table(
        ["rule", "accepted / cycle", "MAT", "tok/s", "x plain"],
        [[rule, f"{summary[rule].get('accepted_per_cycle', 0):.2f}", f"{summary[rule]['mat']:.2f}",
          f"{summary[rule]['tok_s']:.1f}", f"{summary[rule]['tok_s'] / base:.2f}"] for rule in ("plain", *RULES)])
    results = {"drafter": args.drafter, "domain": args.domain, "temperature": args.temperature, "top_p": args.top_p,
               "k": args.k, "prompts": len(prompts), "seeds": args.seeds, "max_new_tokens": args.max_new_tokens,
               "machine": harness.machine(t.device, t.dtype), "threads": torch.get_num_threads(),
               "summary": summary, "runs": runs}
    harness.write_results(args.out, results, table)
    print(table)
    return results


if __name__ == "__main__":
    raise SystemExit(harness.cli(main))
