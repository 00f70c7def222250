"""Lookahead reasoning benchmark (OnlineSpec Table 2 on the embedded target): target alone, step drafter alone,
LR (lookahead reasoning, static drafter), OSD-LR (the drafter distilled online on the target's steps) and Online-LR
(DPO on the rejected steps), one stream per domain, all in one run.

    python -m benchmarks.lookahead [--drafter pools/{target_slug}/math-llama68m] [--methods target,drafter,lr,...]
        [--stream 30] [--other python --other-n 10] [--max-new-tokens 128] [--gamma 2] [--judge embedding]
        [--round-every 5] [--lr 5e-7] [--threads 1] [--out runs/bench/lookahead]

A method name osd-lr / online-lr may carry its own learning rate (online-lr:3e-5) to compare rates in one run.

Math stream: the shipped word problems (online split, in file order) in the Table 6 problem prompt; their numeric
answers are checked (accuracy with a 95% Wilson interval) and each answer is compared with the target-alone answer
to the same problem (agreement). The other domain: held-out prompts of a shipped domain (agreement only: same
extracted final number, else the same first 32 tokens). The online methods run the real serving stack: a
`LookaheadServer` with its trainer in a separate process (DPO or SFT rounds every --round-every requests, held-out
pairs guarding each version, versions hot-swapped before lookahead rounds). The methods run one after another over
the same requests, the server on --threads torch threads (the trainer on its own core); tok/s of every method comes
from this run. Lookahead reasoning is not lossless: the answers are measured, not assumed.

Writes <out>/requests.jsonl (one row per method and request), <out>/results.json, <out>/table.md (also printed) and
<out>/lookahead.png (`python -m benchmarks.publish <out>` copies it to docs/); progress lines on stderr as it runs.
"""

from __future__ import annotations

import copy
import json
import math
import sys
import time
from pathlib import Path

import torch

from benchmarks import harness
from data_gen.domains import domain_prompts
from data_gen.problems import extract_answer, is_correct, load_problems
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.pool import Member
from online.lookahead.server import LookaheadServer
from online.lookahead.step_trainer import StepEnv, StepTrainers
from online.serve.request import Request
from online.trainer.config import ProcessConfig, TrainerConfig
from online.trainer.process import TrainerHandle
from specsel.lookahead.config import LookaheadConfig, problem_prompt
from specsel.lookahead.generate import StepLM
from specsel.lookahead.lookahead import decode_alone
from specsel.lookahead.steps import StepCutter

METHODS = ("target", "drafter", "lr", "osd-lr", "online-lr")
UPDATER = {"osd-lr": "sft", "online-lr": "dpo"}


def parse_method(spec: str) -> tuple[str, float | None]:
    """'online-lr' or 'online-lr:3e-5' (an online method at its own learning rate) -> (method, lr or None)."""
    name, _, lr = spec.partition(":")
    if name not in METHODS or (lr and name not in UPDATER):
        raise ValueError(f"unknown method {spec!r}: choose from {', '.join(METHODS)} (osd-lr / online-lr may take "
                         f":LR)")
    try:
        return name, float(lr) if lr else None
    except ValueError:
        raise ValueError(f"method {spec!r}: {lr!r} is not a learning rate") from None


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval of a proportion k / n."""
    if n == 0:
        return 0.0, 0.0
    p = k / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def agree(a: str, b: str, a_ids: list[int], b_ids: list[int]) -> bool:
    """Same final number when both have one, else the same first 32 tokens."""
    x, y = extract_answer(a), extract_answer(b)
    if x is not None and y is not None:
        return abs(x - y) <= 1e-6 * max(1.0, abs(y))
    return a_ids[:32] == b_ids[:32]


def requests_of(tok, domain: str, n: int, start: int = 0) -> list[dict]:
    if domain == "math-problems":
        rows = load_problems("stream")[start:start + n]
        return [{"id": r["id"], "ids": render_prompt(tok, problem_prompt(r["question"])), "answer": r["answer"]}
                for r in rows]
    rows = domain_prompts(domain)["held_out"][start:start + n]
    return [{"id": r["id"], "ids": render_prompt(tok, r["prompt"]), "answer": None} for r in rows]


def run_method(spec: str, reqs: list[dict], target, tok, drafter, la: LookaheadConfig, args, eos: set[int],
               info, log) -> list[dict]:
    method, lr = parse_method(spec)
    rows = []
    if method in ("target", "drafter"):
        lm = StepLM(target if method == "target" else drafter, eos, StepCutter(tok, la.spec()))
        for i, r in enumerate(reqs):
            out, secs = decode_alone(lm, r["ids"], args.max_new_tokens)
            rows.append({"method": spec, "i": i, "id": r["id"], "tokens": out, "seconds": secs})
            harness.log.info("[lookahead] %s %d/%d: %d tokens, %.2f tok/s", spec, i + 1, len(reqs), len(out),
                             len(out) / secs)
        return rows
    module = copy.deepcopy(drafter).eval()  # every method starts from the pool's weights
    reasoner = la.build(target, tok, module, eos)
    handle = None
    if method in UPDATER:
        tcfg = TrainerConfig(updater=UPDATER[method], lr=lr or args.lr, beta=0.1,
                             epochs=3 if method == "online-lr" else 1, clip=1.0, round_every=args.round_every,
                             pair_batch=16, batch=4, holdout_every=args.holdout_every, holdout_size=16,
                             guard_margin=0.02)
        pcfg = ProcessConfig(threads=1, export_every=0)
        env = StepEnv(str(info.path), tuple(sorted(eos)), tok.pad_token_id, la.spec(), la.judge, la.threshold,
                      la.judge_model)
        handle = TrainerHandle([Member("step", "llama", module)], tcfg, pcfg, None, log=log,
                               trainer_factory=StepTrainers(env))
        handle.start()
    server = LookaheadServer(reasoner, "step", module, handle, "step")
    try:
        for i, r in enumerate(reqs):
            rec = server.serve(Request(r["id"], r["ids"], args.max_new_tokens))
            if not rec.ok:
                raise RuntimeError(f"{method} request {r['id']}: {rec.error}\n{rec.traceback or ''}")
            m = rec.metrics["lookahead"]
            rows.append({"method": spec, "i": i, "id": r["id"], "tokens": rec.tokens, "seconds": rec.seconds,
                         **{k: m[k] for k in ("rounds", "accepted_steps", "drafted_steps", "accepted_tokens",
                                              "judge_calls", "draft_s", "target_s", "judge_s")},
                         "pairs": rec.pairs or 0, "version": rec.versions_at_start.get("step", 0)})
            for ev in server.take_events():
                if ev.get("event") == "round":
                    harness.log.info(f"[lookahead] {spec} trainer round {ev['round']}: {ev.get('pairs')} pairs, "
                                     f"loss {ev['losses']}, guard {ev.get('guard')}, published {ev['published']}")
            harness.log.info(f"[lookahead] {spec} {i + 1}/{len(reqs)}: {m['accepted_steps']}/{m['drafted_steps']} "
                             f"steps accepted in {m['rounds']} rounds, {len(rec.tokens)} tokens, "
                             f"{m['tok_s']:.2f} tok/s, v{rows[-1]['version']}")
    finally:
        if handle is not None:
            handle.stop()  # the trainer finishes the round of what it was handed, then stops
    if handle is not None and rows:
        rows[-1]["trainer_rounds"] = handle.rounds_seen
        rows[-1]["trainer_faults"] = len(handle.faults)
    return rows


def summarize(rows: list[dict], reqs: list[dict], tok, base: dict[int, dict] | None) -> dict:
    n = len(rows)
    toks = sum(len(r["tokens"]) for r in rows)
    secs = sum(r["seconds"] for r in rows)
    out = {"requests": n, "new_tokens": toks, "seconds": secs, "tok_s": toks / secs if secs else 0.0}
    texts = [tok.decode(r["tokens"], skip_special_tokens=True) for r in rows]
    if reqs and reqs[0]["answer"] is not None:
        k = sum(is_correct(t, reqs[r["i"]]["answer"]) for t, r in zip(texts, rows))
        out["accuracy"], out["accuracy_ci95"] = k / n, wilson(k, n)
    if base is not None:
        k = sum(agree(t, base[r["i"]]["text"], r["tokens"], base[r["i"]]["tokens"]) for t, r in zip(texts, rows))
        out["agreement"], out["agreement_ci95"] = k / n, wilson(k, n)
    if "rounds" in rows[0]:
        rounds = sum(r["rounds"] for r in rows)
        acc, drafted = sum(r["accepted_steps"] for r in rows), sum(r["drafted_steps"] for r in rows)
        out.update(rounds=rounds, steps_per_round=acc / max(1, rounds), accept_ratio=acc / max(1, drafted),
                   accepted_tokens_per_round=sum(r["accepted_tokens"] for r in rows) / max(1, rounds),
                   tokens_per_round=toks / max(1, rounds), pairs=sum(r["pairs"] for r in rows),
                   time_split={k: sum(r[k] for r in rows) / secs for k in ("draft_s", "target_s", "judge_s")})
        third = rows[len(rows) - len(rows) // 3:]
        out["last_third_accept_ratio"] = (sum(r["accepted_steps"] for r in third)
                                          / max(1, sum(r["drafted_steps"] for r in third)))
        out["final_version"] = rows[-1]["version"]  # the version serving the last request
        if "trainer_rounds" in rows[-1]:
            out["trainer_rounds"], out["trainer_faults"] = rows[-1]["trainer_rounds"], rows[-1]["trainer_faults"]
    return out


def plot(results: dict, path: Path, window: int) -> None:
    plt = harness.pyplot()
    domains = list(results)
    fig, axes = plt.subplots(2, len(domains), figsize=(6 * len(domains), 7), squeeze=False)
    for col, dom in enumerate(domains):
        rows = results[dom]["rows"]
        for method in dict.fromkeys(r["method"] for r in rows if "rounds" in r):
            mine = [r for r in rows if r["method"] == method]
            if not mine:
                continue
            acc = [r["accepted_steps"] for r in mine]
            dr = [r["drafted_steps"] for r in mine]
            ratio = [sum(acc[max(0, i - window + 1):i + 1]) / max(1, sum(dr[max(0, i - window + 1):i + 1]))
                     for i in range(len(mine))]
            axes[0][col].plot(ratio, label=method)
            axes[1][col].plot([len(r["tokens"]) / r["seconds"] for r in mine], label=method)
        for method in ("target", "drafter"):
            mine = [r for r in rows if r["method"] == method]
            if mine:
                axes[1][col].plot([len(r["tokens"]) / r["seconds"] for r in mine], "--", label=f"{method} alone")
        axes[0][col].set_title(f"{dom}: accepted-step ratio (rolling {window} requests)")
        axes[1][col].set_title(f"{dom}: tok/s per request")
        axes[1][col].set_xlabel("request in the stream")
        for ax in axes[:, col]:
            ax.legend(fontsize=8)
            ax.grid(alpha=0.3)
    harness.save_figure(fig, path, dpi=90)


def _main(argv: list[str] | None) -> int:
    ap = harness.parser("benchmarks.lookahead", __doc__)
    harness.add_common(ap, out="runs/bench/lookahead")
    ap.add_argument("--drafter", default="pools/{target_slug}/math-llama68m", help="the step drafter's pool folder")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--stream", type=int, default=30, help="math word problems of the online split")
    ap.add_argument("--other", default="python", help="the other domain (held-out prompts); '' = none")
    ap.add_argument("--other-n", type=int, default=10)
    ap.add_argument("--max-new-tokens", type=int, default=128)
    ap.add_argument("--gamma", type=int, default=4)
    ap.add_argument("--judge", default="embedding")
    ap.add_argument("--threshold", type=float, default=0.697)
    ap.add_argument("--judge-model", default="")
    ap.add_argument("--max-step-tokens", type=int, default=100)
    ap.add_argument("--delimiter", default="\n\n", help="step delimiter (backslash escapes read: '\\n')")
    ap.add_argument("--round-every", type=int, default=5, help="requests per DPO / SFT round")
    ap.add_argument("--holdout-every", type=int, default=10, help="every n-th pair held out for the guard")
    ap.add_argument("--lr", type=float, default=5e-7)
    ap.add_argument("--threads", type=int, default=1, help="torch threads of the server (the trainer has one)")
    ap.add_argument("--window", type=int, default=5, help="rolling window of the plot")
    args = ap.parse_args(argv)
    methods = harness.csv(args.methods)
    [parse_method(m) for m in methods]
    if not methods or methods[0] != "target":
        raise harness.BenchError("the methods must begin with target (the baseline every other is compared with)")
    delimiter = args.delimiter.encode().decode("unicode_escape")
    la = LookaheadConfig(judge=args.judge, threshold=args.threshold, judge_model=args.judge_model, gamma=args.gamma,
                         max_step_tokens=args.max_step_tokens, delimiter=delimiter)
    la.validate()
    torch.set_num_threads(args.threads)
    loaded = harness.load_target(args)
    info, target, tok = loaded.info, loaded.model, loaded.tok
    folder = Path(args.drafter.format(target_slug=info.slug))
    members = harness.load_members(folder.parent, info, target, ["llama"], at_least=0)
    found = next((m for m in members if m.name == folder.name), None)
    if found is None:
        raise harness.BenchError(f"no Llama drafter {folder.name} in {folder.parent} (has "
                                 f"{', '.join(m.name for m in members) or 'none'}); train one: accelerate launch "
                                 f"train_drafter.py --domain math --drafter llama68m "
                                 f"--recipe recipes/math/llama68m-step.yaml")
    drafter = found.module.eval()
    eos = set(stop_token_ids(tok, target))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    domains = {"math-problems": args.stream} | ({args.other: args.other_n} if args.other else {})
    results, started, tables = {}, time.time(), []
    with open(out / "requests.jsonl", "w") as log_rows:
        for dom, n in domains.items():
            reqs = requests_of(tok, dom, n)
            rows, base, summary = [], None, {}
            for method in methods:
                got = run_method(method, reqs, target, tok, drafter, la, args, eos, info, sys.stderr)
                for r in got:
                    r["text"] = tok.decode(r["tokens"], skip_special_tokens=True)
                    log_rows.write(json.dumps({"domain": dom, **r}) + "\n")
                log_rows.flush()
                if method == "target":
                    base = {r["i"]: r for r in got}
                summary[method] = summarize(got, reqs, tok, base if method != "target" else None)
                rows += got
            t = summary["target"]["tok_s"]
            for s in summary.values():
                s["speedup"] = s["tok_s"] / t if t else 0.0
            if "lr" in summary:
                for m in summary:
                    if parse_method(m)[0] in UPDATER and summary["lr"]["last_third_accept_ratio"] > 0:
                        summary[m]["last_third_vs_lr"] = (summary[m]["last_third_accept_ratio"]
                                                          / summary["lr"]["last_third_accept_ratio"])
            results[dom] = {"summary": summary, "rows": rows}
            tables.append(format_table(dom, summary))
            print("\n" + tables[-1], flush=True)
    res = {"target": info.name, "drafter": str(folder), "settings": vars(args), "seconds": time.time() - started,
           "domains": {d: r["summary"] for d, r in results.items()}}
    harness.write_results(out, res, "\n\n".join(tables))
    plot(results, out / "lookahead.png", args.window)
    return 0


def format_table(dom: str, summary: dict) -> str:
    """One domain's methods as a markdown table under its name."""
    def acc(s: dict) -> str:
        return (f"{s['accuracy']:.2f} [{s['accuracy_ci95'][0]:.2f},{s['accuracy_ci95'][1]:.2f}]"
                if "accuracy" in s else "-")

    return f"{dom}\n\n" + harness.markdown_table(
        ["method", "steps/round", "accept", "acc.tok/rnd", "tok/s", "speedup", "accuracy (95% CI)", "agree"],
        [[m, f"{s.get('steps_per_round', float('nan')):.2f}", f"{s.get('accept_ratio', float('nan')):.2f}",
          f"{s.get('accepted_tokens_per_round', float('nan')):.1f}", f"{s['tok_s']:.2f}", f"{s['speedup']:.2f}x",
          acc(s), f"{s.get('agreement', float('nan')):.2f}"] for m, s in summary.items()])


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
