"""Drafter selection over a pool, HedgeSpec-style evaluation on the embedded target (or any target with a pool).

    python -m benchmarks.select [--pool pools/<target-slug>] [--kinds eagle3[,suffix]] [--drafters PATTERNS]
                                [--per-domain 8] [--k 4] [--state reset|persistent] [--live 16] [--live-k 0]
                                [--perturbed-per-domain 4] [--out runs/bench/select]

1. Streams: held-out prompts of every pool domain with the target's greedy answers (the self-distilled held-out
   split; `general` = its chat prompts), per domain and shuffled into one mixed stream, plus a perturbed stream (the
   same questions wrapped in natural instruction variations, answered greedily here).
2. Acceptance tables (benchmarks/replay.py): one target pass + one TTT pass per drafter and request (a model-free
   member: its proposal after every true prefix); cached in --out per drafter and request.
3. Replay of every method on every stream (exact at temperature 0): generalist and each drafter alone, the per-request
   oracle, the best single drafter in hindsight, HedgeSpec (NormalHedge / Hedge / AdaNormalHedge, length or
   acceptance loss, token or chunk game, the B.5 practical settings), MetaSD UCB (BD, BE), EXP3, SH, PETC, D-UCB,
   SW-UCB, BanditSpec UCBSpec / EXP3Spec, uniform, and the offline router. MAT per domain, mixed, perturbed; pool
   size 2 -> N; cumulative regret; best-arm ratio; the domain x drafter heatmap.
4. Live: the real SpecDecoder on the first --live requests of the mixed stream for a few methods: tok/s, speedup
   over plain decoding, exact match with plain greedy, counterfactual-evaluation share of the time, switching cost,
   and agreement of live MAT with the replay.
Outputs: <out>/results.json, <out>/table.md and the PNGs (`python -m benchmarks.publish <out>` copies them to docs/);
progress lines on stderr as it runs.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import os
import random
import time
import uuid
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import torch

from benchmarks import harness
from benchmarks.common.router import train_domain_router
from benchmarks.harness import save_figure
from benchmarks.replay import (
    Method,
    ReplayRequest,
    acceptance_tables,
    chain_estimates,
    cumulative_regret,
    replay,
    token_losses,
)
from data_gen.domains import GENERAL
from data_gen.generate import load_distilled
from data_gen.hf_backend import generate_batch
from data_gen.plan import data_dir_for
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.config import ConfigError
from draftpool.pool import Member
from draftpool.target import TargetInfo
from specsel.decoding.auto import auto_spec
from specsel.selection.delayed_feedback import GameConfig
from specsel.selection.learners import make_learner

PRACTICAL = GameConfig(hybrid=3, token_stride=6, warmup_rounds=6, feedback_every=12)  # HedgeSpec App. B.5
SETTLED = GameConfig(warmup_rounds=4, feedback_every=8, settle=0.9)  # evaluation batched once the weights settle


TABLES_FORMAT = 6  # bumped when acceptance_tables changes what it computes (2: BD along the drafted chain; 3: depth;
# 4: depth from the kind's teacher-forced steps at every position; 5: per drafter, model-free flags;
# 6: model-free members prefer a request match as long as the corpus's)


def learner(name: str, **kw):
    return lambda n, seed: make_learner(name, n, seed=seed, **kw)


def selection_methods() -> list[Method]:
    """The online selectors, named as in the tables."""
    return [
        Method("hedgespec-nh", learner("normal_hedge"), GameConfig()),
        Method("hedgespec-nh-depth", learner("normal_hedge"), GameConfig(), depth=True),
        Method("hedgespec-hedge", learner("hedge"), GameConfig()),
        Method("hedgespec-adanh", learner("ada_normal_hedge"), GameConfig()),
        Method("hedgespec-nh-accept", learner("normal_hedge"), GameConfig(loss="accept")),
        Method("hedgespec-nh-chunk", learner("normal_hedge"), GameConfig(level="chunk")),
        Method("hedgespec-nh-practical", learner("normal_hedge"), PRACTICAL),
        Method("hedgespec-nh-settled", learner("normal_hedge"), SETTLED),
        Method("ucb-bd", learner("ucb"), reward="bd"),
        Method("ucb-be", learner("ucb"), reward="be"),
        Method("exp3-bd", learner("exp3"), reward="bd"),
        Method("sh-bd", learner("sh"), reward="bd"),
        Method("petc-bd", learner("petc"), reward="bd"),
        Method("d-ucb-bd", learner("d_ucb"), reward="bd"),
        Method("sw-ucb-bd", learner("sw_ucb"), reward="bd"),
        Method("ucbspec", learner("ucb_spec"), reward="length"),
        Method("exp3spec", learner("exp3_spec"), reward="length"),
        Method("uniform", learner("uniform"), reward="none"),
    ]


# ---------------------------------------------------------------------------------------------------- streams
@dataclass
class Request:
    id: str
    domain: str
    prompt: str
    prompt_ids: list[int]
    answer_ids: list[int]


def held_out_requests(info: TargetInfo, domain: str, n: int, max_new_tokens: int) -> list[Request]:
    rows = load_distilled(data_dir_for("runs/data/{target_slug}/{domain}", info.slug, domain), "held_out")
    out = []
    for r in rows:
        if r["temperature"] != 0.0 or (domain == GENERAL and r["source"] != "chat"):
            continue
        answer = list(r["response_ids"])[:max_new_tokens]
        out.append(Request(r["id"], domain, r["prompt"], list(r["prompt_ids"]), answer))
        if len(out) == n:
            break
    if not out:
        raise ConfigError(f"no held-out greedy answers for {domain} (run data generation / build_pool.py first)")
    return out


def perturbed_requests(model, tok, domain: str, n: int, max_new_tokens: int, stops: list[int]) -> list[Request]:
    """The first n held-out questions of `domain`, perturbed, answered greedily (batched) by the target."""
    from data_gen.perturb import perturbed_prompts

    rows = [r for r in perturbed_prompts(domain if domain != GENERAL else GENERAL) if r["source"] in (domain, "chat")]
    rows = rows[:n]
    ids = [render_prompt(tok, r["prompt"]) for r in rows]
    answers = []
    for i in range(0, len(ids), 8):
        answers += [a for a, _ in generate_batch(model, tok, ids[i:i + 8], 0.0, 1.0, max_new_tokens, 0, stops)]
    return [Request(f"{r['id']}-p", domain, r["prompt"], p, a) for r, p, a in zip(rows, ids, answers)]


def build_tables(target, drafters: list[Member], keys: dict[str, str], requests: list[Request], k: int,
                 cache: Path, desc: str) -> list[ReplayRequest]:
    """Acceptance tables per request, in the order of `drafters`, cached on disk per drafter and request (resumable;
    `keys[name]` names a drafter's version: adding members to a pool reuses the others')."""
    out = []
    for r in harness.progress(requests, desc, unit="request"):
        paths = {d.name: cache / keys[d.name] / f"{r.id}.pt" for d in drafters}
        missing = [d for d in drafters if not paths[d.name].exists()]
        if missing:
            t = acceptance_tables(target, missing, r.prompt_ids, r.answer_ids, k)
            for i, n in enumerate(d.name for d in missing):
                row = {"acc": t.acc[i], "gamma": t.gamma[i], "bd": t.bd[i], "depth": t.depth[i],
                       "free": bool(t.free[i]), "length": t.length}
                paths[n].parent.mkdir(parents=True, exist_ok=True)
                tmp = paths[n].with_suffix(f".tmp{uuid.uuid4().hex[:6]}")
                torch.save(row, tmp)
                os.replace(tmp, paths[n])
        rows = [torch.load(paths[d.name]) for d in drafters]
        length = rows[0]["length"]
        if any(row["length"] != length for row in rows):  # the greedy prefix is the target's: one for every drafter
            raise ValueError(f"cached tables of {r.id} disagree on its length (stale cache in {cache}?)")
        acc, gamma, bd, depth = (torch.stack([row[key] for row in rows]) for key in ("acc", "gamma", "bd", "depth"))
        out.append(ReplayRequest(r.id, r.domain, len(r.prompt_ids), length, acc, gamma, bd, prompt=r.prompt,
                                 depth=depth, free=torch.tensor([row["free"] for row in rows])))
    return out


def table_keys(entries: dict[str, dict], names: list[str], k: int) -> dict[str, str]:
    """A cache key per drafter: its pool entry (path, version, evaluation), k and the tables' format."""
    return {n: hashlib.sha1(f"{n}{json.dumps(entries[n], sort_keys=True)}{k}{TABLES_FORMAT}".encode()).hexdigest()[:12]
            for n in names}


def pick_drafters(names: list[str], patterns: str) -> list[str]:
    """The pool members named by comma-separated fnmatch patterns (all for an empty string), in pool order."""
    pats = [p.strip() for p in patterns.split(",") if p.strip()]
    keep = [n for n in names if not pats or any(fnmatch.fnmatchcase(n, p) for p in pats)]
    if len(keep) < 2:
        raise ConfigError(f"--drafters {patterns!r} keeps {keep} of {names}: selection needs >= 2 drafters")
    return keep


def estimator_bias(stream: list[ReplayRequest], names: list[str], k: int) -> dict[str, dict[str, float]]:
    """Per drafter, mean over every chain start of the stream: the accepted length (bonus included) estimated from
    depth-0 gammas (Theorem 3, what the live counterfactual evaluation feeds the game), from per-depth gammas, and
    the true one from the tables."""
    parts = [chain_estimates(q, k) for q in stream]
    step0, depth, truth = (torch.cat([p[i] for p in parts], dim=1) for i in range(3))  # [N, all starts]
    return {n: {"depth0_estimate": float(step0[i].mean()), "per_depth_estimate": float(depth[i].mean()),
                "true": float(truth[i].mean())} for i, n in enumerate(names)}


def router_arms(router, requests: list[ReplayRequest], names: list[str]) -> dict[str, int]:
    """The drafter index the offline router sends each request to (its predicted domain's head, else general)."""
    from specsel.selection.router import route_to_drafter

    pred = router.predict([r.prompt for r in requests])
    return {r.id: names.index(route_to_drafter(p, names)) for r, p in zip(requests, pred)}


def subset(stream: list[ReplayRequest], arms: list[int]) -> list[ReplayRequest]:
    return [ReplayRequest(r.id, r.domain, r.prompt_len, r.length, r.acc[arms], r.gamma[arms], r.bd[arms], r.prompt,
                          None if r.depth is None else r.depth[arms], None if r.free is None else r.free[arms])
            for r in stream]


def hybrid_pairs(router_arm: dict[str, int], names: list[str], entries: dict[str, dict]) -> dict[str, tuple[int, int]]:
    """Per request, the drafters Arctic's hybrid rule decides between: the routed head and the suffix member of its
    domain (else the general one)."""
    out = {}
    for rid, arm in router_arm.items():
        head, dom = names[arm], entries[names[arm]]["domain"]
        suffix = next((f"{d}-suffix" for d in (dom, GENERAL) if f"{d}-suffix" in names), None)
        if entries[head]["kind"] == "suffix" or suffix is None:
            raise ConfigError(f"hybrid needs a head and a suffix member per request; routed to {head}, suffix members "
                              f"{[n for n in names if entries[n]['kind'] == 'suffix']}")
        out[rid] = (names.index(suffix), arm)
    return out


# ---------------------------------------------------------------------------------------------------- replay
def run_methods(stream: list[ReplayRequest], names: list[str], k: int, persistent: bool,
                router_arm: dict[str, int] | None, methods: list[Method] | None = None) -> dict[str, Any]:
    """Every method on one stream -> {method: ReplayResult}, with singles, the oracle and the best single."""
    n = len(names)
    res = {}
    for i, name in enumerate(names):
        res[f"single:{name}"] = replay(stream, Method(name, arm_of=partial(lambda r, a: a, a=i)), n, k)
    # oracle: per request the drafter that needs the fewest target forwards (best in hindsight, per request)
    best = {r.id: min(range(n), key=lambda i: (res[f"single:{names[i]}"].forwards[j], i))
            for j, r in enumerate(stream)}
    res["oracle"] = replay(stream, Method("oracle", arm_of=lambda r: best[r.id]), n, k)
    single = max((f"single:{nm}" for nm in names), key=lambda m: res[m].mat)
    res["best-single"] = res[single]
    res["best-single"].name = single
    for m in methods if methods is not None else selection_methods():
        res[m.name] = replay(stream, m, n, k, persistent=persistent)
    if router_arm is not None:
        res["router"] = replay(stream, Method("router", arm_of=lambda r: router_arm[r.id]), n, k)
    return res


def best_arm_ratio(res, stream: list[ReplayRequest], oracle) -> list[float]:
    """Per round index within a request: share of requests whose chosen drafter is that request's oracle drafter."""
    rounds = max(len(c) for c in res.choices)
    out = []
    for t in range(rounds):
        hits = [c[t] == o[0] for c, o in zip(res.choices, oracle.choices) if len(c) > t]
        out.append(sum(hits) / len(hits))
    return out


# ---------------------------------------------------------------------------------------------------- live
POOL_GROUPS = {"heads": {"head"}, "suffix": {"suffix"}, "heads+suffix": {"head", "suffix"},
               "heads+suffix+ngram": {"head", "suffix", "ngram"}}  # what each group's members are


def member_class(kind: str) -> str:
    return {"eagle3": "head", "llama": "head"}.get(kind, kind)


def chunk_oracle(stream: list[ReplayRequest]) -> float:
    """MAT of a per-cycle oracle: at every cycle the member whose chain accepts the most there (greedy over cycles: a
    bound on what per-cycle switching can reach, switching free)."""
    tokens = forwards = 0
    for req in stream:
        s, f = req.prompt_len + 1, 1
        while s < req.length:
            s += int(req.acc[:, s].max()) + 1
            f += 1
        tokens, forwards = tokens + req.new_tokens, forwards + f
    return tokens / max(1, forwards)


def oracle_gap(stream: list[ReplayRequest], names: list[str], kinds: dict[str, str], k: int,
               persistent: bool) -> dict[str, Any]:
    """Per pool group (heads / suffix members / both / both + the request's n-grams, those the pool has): the best
    single member, HedgeSpec, the per-request and per-chunk oracles (MAT on the stream), their gaps over the best
    single member, and which member wins each domain's requests (the per-request oracle's picks)."""
    hedge = [m for m in selection_methods() if m.name == "hedgespec-nh"]
    out = {}
    for group, allowed in POOL_GROUPS.items():
        arms = [i for i, n in enumerate(names) if member_class(kinds[n]) in allowed]
        if len(arms) < 2 or {member_class(kinds[names[i]]) for i in arms} != allowed:
            continue  # the pool lacks a class of members this group needs
        sub, sub_names = subset(stream, arms), [names[i] for i in arms]
        res = run_methods(sub, sub_names, k, persistent, None, hedge)
        best = res["best-single"]
        oracle = res["oracle"]
        wins: dict[str, dict[str, int]] = {}
        for req, picks in zip(sub, oracle.choices):
            winner = sub_names[picks[0]] if picks else "-"
            wins.setdefault(req.domain, {}).setdefault(winner, 0)
            wins[req.domain][winner] += 1
        chunk = chunk_oracle(sub)
        out[group] = {"members": len(arms), "best_single": best.name.split(":", 1)[1], "best_single_mat": best.mat,
                      "hedgespec_mat": res["hedgespec-nh"].mat, "oracle_request_mat": oracle.mat,
                      "oracle_chunk_mat": chunk, "gap_request": oracle.mat / best.mat, "gap_chunk": chunk / best.mat,
                      "hedgespec_vs_best": res["hedgespec-nh"].mat / best.mat, "wins": wins}
    return out


def live_runs(model, members: list[Member], requests: list[Request], methods: list[Method],
              best_single: str, k: int, stops: list[int], replay_res: dict[str, Any], mode: str = "chain",
              priors: dict[str, list[float]] | None = None, hybrid: dict[str, tuple[int, int]] | None = None,
              live_k: int = 0) -> dict[str, Any]:
    """The real SpecDecoder (fresh learner per request, as in --state reset) vs plain decoding. mode chain: fixed k
    (what the replay models: live == replay is checked); auto: the serving default, the chosen drafter's chain length
    per cycle from measured costs and its acceptance (`priors`: per-drafter acceptance from the offline evaluation,
    `auto_spec(evals).priors`), one decoder per method across its requests as in a server; request by request,
    plain and every method in turn. `live_k` (auto, 0 = k):
    the most drafts per cycle, the chain model-free members may reach (heads' lengths stay auto's choice). Method
    "hybrid": Arctic's rule per request over `hybrid[request id]` = (suffix member, head), threshold k."""
    from specsel.decoding.drafter import make_drafter
    from specsel.decoding.loop import SpecDecoder
    from specsel.selection.hybrid import HybridSelector
    from specsel.selection.selector import Selector

    names = [m.name for m in members]
    drafters = {m.name: make_drafter(m.kind, m.module) for m in members}
    plain = SpecDecoder(model, mode="plain", stop_ids=stops)
    runs: dict[str, dict[str, Any]] = {"plain": {"tokens": 0, "seconds": 0.0, "forwards": 0, "exact": 0}}
    for m in methods:
        runs[m.name] = {"tokens": 0, "seconds": 0.0, "forwards": 0, "exact": 0, "eval_s": 0.0, "switch_s": 0.0,
                        "switches": 0, "catchup_tokens": 0, "select_s": 0.0, "draft_s": 0.0, "verify_s": 0.0,
                        "same_as_replay": 0}
    position = {q.id: i for i, q in enumerate(replay_res["stream"])}  # request id -> index in the replayed stream

    def selector(m: Method, r: Request) -> tuple[Any, str, int]:
        """A fresh selector for request r (as --state reset) -> (selector, decode mode, k)."""
        idx = position[r.id]
        if m.name == "hybrid":
            return HybridSelector(*hybrid[r.id], threshold=k), mode, (live_k or k) if mode == "auto" else k
        if m.arm_of is not None:
            lrn = make_learner("fixed", len(names), arm=m.arm_of(replay_res["stream"][idx]))
        else:
            lrn = m.make(len(names), idx)  # the replay seeds request idx of the stream with idx
        # bandit rewards are defined on fixed-k drafts: bandits run fixed chains even in auto mode
        full = m.arm_of is not None or getattr(lrn, "full_information", False)
        m_mode = mode if full else "chain"
        m_k = (live_k or k) if m_mode == "auto" else k
        return Selector(lrn, len(names), m_k, m.game, "none" if m.arm_of is not None else m.reward), m_mode, m_k

    # one decoder per method across its requests, as a server keeps one: auto's costs and acceptance estimates go on
    # from request to request (the selector starts fresh per request); an untimed warm-up request each first (auto
    # measures its costs there, as a server does at start)
    decoders: dict[str, tuple[SpecDecoder, str]] = {}
    plain.generate(requests[0].prompt_ids, 8)
    for m in methods:
        sel, m_mode, m_k = selector(m, requests[0])
        auto = auto_spec({}, priors=dict(priors or {})) if m_mode == "auto" else None
        decoders[m.name] = SpecDecoder(model, drafters, selector=sel, k=m_k, stop_ids=stops, mode=m_mode,
                                       auto=auto), m_mode
        decoders[m.name][0].generate(requests[0].prompt_ids, 8)
    # rule: request by request, plain and then every method in turn, so machine drift hits them alike
    for r in harness.progress(requests, "live", unit="request"):
        idx = position[r.id]
        ref, pm = plain.generate(r.prompt_ids, len(r.answer_ids))
        runs["plain"]["tokens"] += pm.new_tokens
        runs["plain"]["seconds"] += pm.total_s
        runs["plain"]["forwards"] += pm.target_forwards
        runs["plain"]["exact"] += 1
        for m in methods:
            dec, m_mode = decoders[m.name]
            dec.set_selector(selector(m, r)[0])
            out, pm = dec.generate(r.prompt_ids, len(r.answer_ids))
            row = runs[m.name]
            row["tokens"] += pm.new_tokens
            row["seconds"] += pm.total_s
            row["forwards"] += pm.target_forwards
            row["exact"] += int(out == ref)
            for key in ("eval_s", "switch_s", "switches", "catchup_tokens", "select_s", "draft_s", "verify_s"):
                row[key] += getattr(pm, key)
            row.setdefault("cycle_shares", []).extend(s / c for s, c in zip(pm.selection_s, pm.cycle_s) if c > 0)
            rep = replay_res["results"].get(m.name)
            row["mode"] = m_mode
            if m_mode == "chain" and rep is not None:  # auto's k varies per cycle: the replay's fixed-k chains no
                # longer describe it (nor do they describe the live-only hybrid rule)
                same = rep.forwards[idx] == pm.target_forwards and rep.choices[idx] == pm.choices
                row["same_as_replay"] += int(same)
            else:
                row.pop("same_as_replay", None)
    for row in runs.values():
        row["tok_s"] = row["tokens"] / row["seconds"]
        row["mat"] = row["tokens"] / row["forwards"]
        row["speedup"] = row["tok_s"] / (runs["plain"]["tokens"] / runs["plain"]["seconds"])
        if "eval_s" in row:
            row["eval_share"] = row["eval_s"] / row["seconds"]
        shares = sorted(row.pop("cycle_shares", []))
        if shares:  # selection + feedback as a share of each cycle's time: median and 95th percentile over cycles
            row["selection_share_median"] = shares[len(shares) // 2]
            row["selection_share_p95"] = shares[min(len(shares) - 1, int(0.95 * len(shares)))]
    return {"requests": [r.id for r in requests], "best_single": best_single, "runs": runs, "mode": mode}


# ---------------------------------------------------------------------------------------------------- plots
def plots(report: dict[str, Any], out: Path) -> list[Path]:
    plt = harness.pyplot()
    paths = []
    # heatmap: domain x drafter MAT
    hm = report["heatmap"]
    fig, ax = plt.subplots(figsize=(1.0 + 0.9 * len(hm["drafters"]), 1.0 + 0.55 * len(hm["domains"])))
    im = ax.imshow(hm["mat"], cmap="viridis")
    ax.set_xticks(range(len(hm["drafters"])), hm["drafters"], rotation=35, ha="right", fontsize=8)
    ax.set_yticks(range(len(hm["domains"])), hm["domains"], fontsize=8)
    for i, row in enumerate(hm["mat"]):
        for j, v in enumerate(row):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7,
                    color="white" if v < (max(map(max, hm["mat"])) + min(map(min, hm["mat"]))) / 2 else "black")
    fig.colorbar(im, ax=ax, label=f"MAT (chain k={report['config']['k']})")
    ax.set_title("held-out MAT: domain (rows) x drafter (cols)", fontsize=9)
    paths.append(out / "select_heatmap.png")
    save_figure(fig, paths[-1])
    # cumulative regret on the mixed stream
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, curve in report["regret"].items():
        ax.plot(curve["tokens"], curve["regret"], label=name, lw=1.2)
    ax.set_xlabel("generated tokens (mixed stream)")
    ax.set_ylabel("cumulative regret vs best single drafter")
    ax.legend(fontsize=7)
    paths.append(out / "select_regret.png")
    save_figure(fig, paths[-1])
    # MAT vs pool size
    fig, ax = plt.subplots(figsize=(7, 4))
    ps = report["pool_size"]
    for name in ps["methods"]:
        ax.plot(ps["sizes"], [ps["mat"][str(s)][name] for s in ps["sizes"]], marker="o", label=name)
    ax.set_xlabel("drafters in the pool")
    ax.set_ylabel("MAT, mixed stream")
    ax.legend(fontsize=7)
    paths.append(out / "select_pool_size.png")
    save_figure(fig, paths[-1])
    # best-arm ratio
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, curve in report["best_arm_ratio"].items():
        ax.plot(range(1, len(curve) + 1), curve, label=name, lw=1.2)
    ax.set_xlabel("round within a request")
    ax.set_ylabel("share of requests on their best drafter")
    ax.legend(fontsize=7)
    paths.append(out / "select_best_arm.png")
    save_figure(fig, paths[-1])
    return paths


def format_table(report: dict[str, Any]) -> str:
    doms = report["domains"]
    head = "| method | " + " | ".join(doms) + " | mixed | perturbed |"
    lines = [head, "|" + "---|" * (len(doms) + 3)]
    for name, row in report["table"].items():
        cells = [f"{row['per_domain'][d]:.2f}" for d in doms]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {row['mixed']:.2f} | {row['perturbed']:.2f} |")
    bias = report.get("estimator_bias")
    if bias:
        lines += ["", "Accepted length per chain (bonus included), mean over every start of the mixed stream: "
                      "estimated from depth-0 gammas (what live HedgeSpec sees), from per-depth gammas, true:", "",
                  "| drafter | depth-0 estimate | per-depth estimate | true | bias of depth-0 |",
                  "|---|---|---|---|---|"]
        for name, b in bias.items():
            lines.append(f"| {name} | {b['depth0_estimate']:.3f} | {b['per_depth_estimate']:.3f} | {b['true']:.3f} | "
                         f"{b['depth0_estimate'] - b['true']:+.3f} |")
    gap = report.get("oracle_gap")
    if gap:
        lines += ["", "Oracle gap on the mixed stream (MAT; gap = oracle / best single member):", "",
                  "| pool | members | best single | its MAT | HedgeSpec | oracle per request | oracle per chunk | "
                  "gap per request | gap per chunk |", "|---|---|---|---|---|---|---|---|---|"]
        for group, g in gap.items():
            lines.append(f"| {group} | {g['members']} | {g['best_single']} | {g['best_single_mat']:.3f} | "
                         f"{g['hedgespec_mat']:.3f} | {g['oracle_request_mat']:.3f} | {g['oracle_chunk_mat']:.3f} | "
                         f"{g['gap_request']:.3f}x | {g['gap_chunk']:.3f}x |")
        last = list(gap.values())[-1]
        lines += ["", f"Per-request oracle's winners by domain ({list(gap)[-1]}):", ""]
        lines += [f"- {d}: " + ", ".join(f"{n} {c}" for n, c in sorted(w.items(), key=lambda x: -x[1]))
                  for d, w in sorted(last["wins"].items())]
    live = report.get("live")
    if live:
        lines += ["", f"Live SpecDecoder ({live.get('mode', 'chain')}), first {len(live['requests'])} requests of the "
                      f"mixed stream (best single = {live['best_single']}):", "",
                  "| method | MAT | tok/s | speedup vs plain | exact | eval share | selection per cycle, p50 / p95 | "
                  "switches | switch ms | live == replay |", "|---|---|---|---|---|---|---|---|---|---|"]
        n = len(live["requests"])
        for name, r in live["runs"].items():
            lines.append(f"| {name} | {r['mat']:.2f} | {r['tok_s']:.1f} | {r['speedup']:.2f} | {r['exact']}/{n} | "
                         f"{r.get('eval_share', 0):.1%} | "
                         f"{r.get('selection_share_median', 0):.1%} / {r.get('selection_share_p95', 0):.1%} | "
                         f"{r.get('switches', 0)} | "
                         f"{1000 * r.get('switch_s', 0) / max(1, r.get('switches', 0)):.1f} | "
                         + (f"{r['same_as_replay']}/{n} |" if "same_as_replay" in r else "- |"))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------- main
def run(args: argparse.Namespace) -> dict[str, Any]:
    t_start = time.time()
    # 1. target, pool, streams
    info = harness.resolve(args)
    pool_dir = harness.pool_dir(args, info)
    if not (pool_dir / "pool.json").is_file():
        raise ConfigError(f"no pool at {pool_dir} (pool.json missing): run build_pool.py first")
    target = harness.load_target(args, info)
    model, tok = target.model, target.tok
    members = harness.load_members(pool_dir, info, model, args.kinds.split(","), at_least=2)
    entries = json.loads((pool_dir / "pool.json").read_text())["drafters"]
    if args.ngram:  # the request's own n-grams (prompt lookup): a member with no folder, its default settings
        from draftpool.models.suffix import NgramModel

        members.append(Member("ngram", "ngram", NgramModel(info.vocab_size)))
        entries["ngram"] = {"kind": "ngram", "domain": "request", "config": NgramModel(info.vocab_size).config()}
    names = pick_drafters([m.name for m in members], args.drafters)
    members = [next(m for m in members if m.name == n) for n in names]
    domains = sorted({entries[n]["domain"] for n in names if entries[n]["kind"] != "ngram"})
    stops = stop_token_ids(tok, model)
    out = Path(args.out)
    keys, cache = table_keys(entries, names, args.k), out / "tables"
    per_domain = {d: held_out_requests(info, d, args.per_domain, args.max_new_tokens) for d in domains}
    rng = random.Random(args.seed)
    mixed_req = [r for d in domains for r in per_domain[d]]
    rng.shuffle(mixed_req)
    pert_req = []
    for d in domains:
        pert_req += perturbed_requests(model, tok, d, args.perturbed_per_domain, args.max_new_tokens, stops)
    rng.shuffle(pert_req)

    # 2. acceptance tables
    mixed = build_tables(model, members, keys, mixed_req, args.k, cache, "tables (held-out)")
    perturbed = build_tables(model, members, keys, pert_req, args.k, cache, "tables (perturbed)")
    by_id = {r.id: r for r in mixed}

    # 3. router decisions (offline baseline)
    router_arm = None
    if not args.no_router:
        router = train_domain_router(domains=domains, seed=args.seed, cache_dir=out / "router")
        router_arm = router_arms(router, mixed + perturbed, names)

    # 4. replay every method on every stream
    persistent = args.state == "persistent"
    res_mixed = run_methods(mixed, names, args.k, persistent, router_arm)
    res_pert = run_methods(perturbed, names, args.k, persistent, router_arm)
    res_dom = {d: run_methods([by_id[r.id] for r in per_domain[d]], names, args.k, persistent, router_arm)
               for d in domains}
    table = {}
    best_key = res_mixed["best-single"].name  # "single:<drafter>": the best single drafter on the mixed stream
    for key in res_mixed:
        src = best_key if key == "best-single" else key  # that same drafter on every stream
        table[key if key != "best-single" else f"best-single ({best_key.split(':', 1)[1]})"] = {
            "per_domain": {d: res_dom[d][src].mat for d in domains}, "mixed": res_mixed[src].mat,
            "perturbed": res_pert[src].mat}
    heat = {"domains": domains, "drafters": names,
            "mat": [[res_dom[d][f"single:{n}"].mat for n in names] for d in domains]}
    # regret and best-arm ratio on the mixed stream
    losses = token_losses(mixed, args.k)
    show = ["hedgespec-nh", "hedgespec-hedge", "hedgespec-adanh", "ucb-bd", "exp3-bd", "ucbspec", "exp3spec",
            "uniform"]
    if f"single:{GENERAL}-eagle3" in res_mixed:
        show.append(f"single:{GENERAL}-eagle3")
    regret = {}
    for name in show:
        curve = cumulative_regret(res_mixed[name], losses)
        step = max(1, len(curve) // 400)
        regret[name] = {"tokens": list(range(0, len(curve), step)), "regret": curve[::step].tolist()}
    bar = {name: best_arm_ratio(res_mixed[name], mixed, res_mixed["oracle"]) for name in show}
    # pool size 2 -> N: the generalist first, then specialists in the pool's order
    order = ([names.index(f"{GENERAL}-eagle3")] if f"{GENERAL}-eagle3" in names else []) + \
        [i for i, n in enumerate(names) if n != f"{GENERAL}-eagle3"]
    size_methods = ["hedgespec-nh", "hedgespec-hedge", "ucb-bd", "exp3-bd", "ucbspec", "exp3spec"]
    pick = [m for m in selection_methods() if m.name in size_methods]
    sizes = list(range(2, len(names) + 1))
    ps = {}
    for s in sizes:
        arms = order[:s]
        r = run_methods(subset(mixed, arms), [names[a] for a in arms], args.k, persistent, None, pick)
        ps[str(s)] = {m: r[m].mat for m in size_methods + ["oracle", "best-single"]}
    report = {
        "target": {"name": info.name, "slug": info.slug}, "pool": str(pool_dir), "drafters": names,
        "domains": domains,
        "config": {"k": args.k, "per_domain": args.per_domain, "perturbed_per_domain": args.perturbed_per_domain,
                   "max_new_tokens": args.max_new_tokens, "state": args.state, "seed": args.seed},
        "streams": {"mixed": [r.id for r in mixed], "perturbed": [r.id for r in perturbed]},
        "table": table, "heatmap": heat, "regret": regret, "best_arm_ratio": bar,
        "pool_size": {"sizes": sizes, "order": [names[a] for a in order], "methods": size_methods + ["oracle",
                                                                                                     "best-single"],
                      "mat": ps},
        "choices_mixed": {k: v.choices for k, v in res_mixed.items() if not k.startswith("single:")},
        "estimator_bias": estimator_bias(mixed, names, args.k),
        "oracle_gap": oracle_gap(mixed, names, {n: entries[n]["kind"] for n in names}, args.k, persistent),
    }
    harness.write_results(out, report)  # the replay part, kept if the live part is stopped
    # 5. live decoding for tok/s, exactness, evaluation share, switching cost
    if args.live:
        live_names = [m.strip() for m in args.live_methods.split(",") if m.strip()]
        sel = {m.name: m for m in selection_methods()}
        best_name = res_mixed["best-single"].name.split(":", 1)[1]
        fixed = {"generalist": f"{GENERAL}-eagle3", "best-single": best_name}
        methods = []
        for n in live_names:
            if n in sel:
                methods.append(sel[n])
            elif n in fixed and fixed[n] in names:
                methods.append(Method(n, arm_of=partial(lambda r, a: a, a=names.index(fixed[n]))))
            elif n == "router" and router_arm is not None:
                methods.append(Method("router", arm_of=lambda r: router_arm[r.id]))
            elif n == "hybrid" and router_arm is not None:
                methods.append(Method("hybrid"))
            else:
                raise ConfigError(f"unknown live method {n!r}")
        reps = {**res_mixed, **{"generalist": res_mixed.get(f"single:{GENERAL}-eagle3"),
                                "best-single": res_mixed["best-single"]}}
        reqs = [next(q for q in mixed_req if q.id == r.id) for r in mixed[:args.live]]
        priors = auto_spec({n: entries[n].get("eval") for n in names}, with_trees=False).priors
        hybrid = hybrid_pairs(router_arm, names, entries) if any(m.name == "hybrid" for m in methods) else None
        report["live"] = live_runs(model, members, reqs, methods, best_name, args.k, stops,
                                   {"stream": mixed, "results": reps}, args.live_mode, priors, hybrid, args.live_k)
        report["live"]["live_k"] = args.live_k or args.k
    report["seconds"] = time.time() - t_start
    text = format_table(report)
    harness.write_results(out, report, text)
    plots(report, out)
    print(text)
    return report


def make_parser() -> argparse.ArgumentParser:
    ap = harness.parser("benchmarks.select", __doc__)
    harness.add_common(ap, pool="", device="cpu", dtype="float32", out="runs/bench/select", seed=0)
    ap.add_argument("--kinds", default="eagle3", help="drafter kinds to select among (eagle3,suffix,llama)")
    ap.add_argument("--drafters", default="", help="comma-separated name patterns of the members to select among "
                    "(e.g. 'general-eagle3,*-suffix'; default: every member of --kinds)")
    ap.add_argument("--per-domain", type=int, default=8, help="held-out requests per domain")
    ap.add_argument("--perturbed-per-domain", type=int, default=4)
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--k", type=int, default=4, help="chain draft length")
    ap.add_argument("--state", choices=["reset", "persistent"], default="reset",
                    help="learner state per request (reset) or across the stream (persistent)")
    ap.add_argument("--live", type=int, default=16, help="mixed-stream requests decoded live (0 = replay only)")
    ap.add_argument("--live-methods", default="generalist,best-single,hedgespec-nh,hedgespec-nh-practical,ucb-bd,"
                                              "exp3-bd,router")
    ap.add_argument("--live-k", type=int, default=0, help="live auto mode: the most drafts per cycle (0 = --k), "
                                                          "how far a model-free member's confident chain may reach")
    ap.add_argument("--live-mode", choices=["auto", "chain"], default="auto",
                    help="live decoding: auto (the serving default: k per cycle from costs) or chain (fixed k, "
                         "checked against the replay)")
    ap.add_argument("--no-router", action="store_true", help="skip the router baseline")
    ap.add_argument("--ngram", action="store_true", help="add a prompt-lookup member ('ngram': the request's own "
                                                         "n-grams) to the pool")
    return ap


def _main(argv: list[str] | None) -> int:
    args = make_parser().parse_args(argv)
    if args.per_domain < 1 or args.k < 1 or args.max_new_tokens < 2 or args.live < 0 or args.live_k < 0 or \
            args.perturbed_per_domain < 1:
        raise ConfigError("--per-domain, --perturbed-per-domain and --k must be >= 1, --max-new-tokens >= 2, "
                          "--live >= 0")
    run(args)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
