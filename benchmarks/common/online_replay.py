"""The online benchmarks' shared replay of a domain-shift stream (benchmarks.online, online_guard, online_probe): the
stream's prompts, the target's cached greedy answers, the feedback the server would collect, and one method served in
replay with the trainer's rounds and hot swaps."""

from __future__ import annotations

import copy
import json
import os
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from benchmarks import harness
from benchmarks.replay import Method, ReplayRequest, chain_acceptance, greedy_chains, replay
from data_gen.domains import domain_prompts
from data_gen.hf_backend import generate_batch
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.config import ConfigError
from draftpool.models import get_kind
from draftpool.pool import Member
from online.trainer.config import TrainerConfig
from online.trainer.feedback import Feedback, feedback_from_ids
from online.trainer.token_trainer import OnlineTrainer, versioned
from online.trainer.weights import assign
from online.updaters.vocab import VocabCounter
from specsel.selection.delayed_feedback import GameConfig
from specsel.selection.learners import make_learner


@dataclass
class Item:
    """One request of the stream: its prompt and the target's greedy answer, as token ids."""

    id: str
    domain: str
    prompt_ids: list[int]
    answer_ids: list[int]


# ---------------------------------------------------------------------------------------------------- 1. stream
def stream_prompts(shift: str, n_shift: int, then: str, n_then: int) -> list[tuple[str, str, str]]:
    """[(id, domain, prompt)]: the shift domain's train prompts then its held-out ones, then the known domain's."""
    sp = domain_prompts(shift)
    rows = [(r["id"], shift, r["prompt"]) for r in sp["train"] + sp["held_out"]][:n_shift]
    if len(rows) < n_shift:
        raise ConfigError(f"{shift} has {len(rows)} prompts, --shift-requests asks for {n_shift}")
    rows += [(r["id"], then, r["prompt"]) for r in domain_prompts(then)["held_out"][:n_then]] if n_then else []
    return rows


def greedy_stream(model, tok, rows: list[tuple[str, str, str]], max_new: int, path: Path, batch: int = 16
                  ) -> list[Item]:
    """The target's greedy answers (batched), cached as JSON lines in `path` (resumable by id)."""
    done = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            r = json.loads(line)
            done[r["id"]] = Item(**r)
    todo = [r for r in rows if r[0] not in done]
    stops = stop_token_ids(tok, model)
    with open(path, "a") as f:
        for i in harness.progress(range(0, len(todo), batch), "greedy answers", unit="batch", interval=30):
            part = todo[i:i + batch]
            ids = [render_prompt(tok, p) for _, _, p in part]
            for (rid, dom, _), p, (a, _) in zip(part, ids, generate_batch(model, tok, ids, 0.0, 1.0, max_new, 0,
                                                                          stops)):
                done[rid] = Item(rid, dom, p, a)
                f.write(json.dumps(done[rid].__dict__) + "\n")
            f.flush()
    return [done[r[0]] for r in rows]


def served_feedback(model, item: Item, aux_layers: list[int], top_k: int) -> Feedback:
    """What the server collects when it serves `item` at temperature 0 (online.trainer.feedback.feedback_from_ids)."""
    return feedback_from_ids(model, item.id, item.prompt_ids, item.answer_ids, aux_layers, top_k)


def cached_feedback(model, stream: list[Item], aux_layers: list[int], top_k: int, cache: Path
                    ) -> tuple[list[Feedback], list[str]]:
    """-> (feedback per request, its cache files)."""
    cache.mkdir(parents=True, exist_ok=True)
    out = []
    for item in harness.progress(stream, "target passes", unit="request", interval=30):
        path = cache / f"{item.id}.pt"
        if path.is_file():
            out.append(torch.load(path, weights_only=False))
            continue
        fb = served_feedback(model, item, aux_layers, top_k)
        tmp = path.with_suffix(".tmp")
        torch.save(fb, tmp)
        os.replace(tmp, path)
        out.append(fb)
    return out, [str(cache / f"{item.id}.pt") for item in stream]


# ---------------------------------------------------------------------------------------------------- replay
@torch.inference_mode()
def request_tables(members: list[Member], fb: Feedback, k: int, arms: list[int] | None = None) -> ReplayRequest:
    """Acceptance tables of one request for the members' current weights, in their order (only `arms` filled when
    given)."""
    x, p0 = fb.tokens, fb.prompt_len
    t_len = len(x)
    n = len(members)
    acc, gamma = torch.zeros(n, t_len, dtype=torch.long), torch.zeros(n, t_len)
    starts = torch.arange(p0 + 1, t_len)
    for i in arms if arms is not None else range(n):
        kind, model = get_kind(members[i].kind), members[i].module
        feats = fb.aux() if kind.aux_layers(model) is not None else None  # [1,T,3H]
        for s, drafts, _, _ in greedy_chains(kind, model, x, feats, k, starts):
            acc[i, s], gamma[i, s] = chain_acceptance(drafts, x, s)
    return ReplayRequest(fb.request_id, "", p0, t_len, acc, gamma, torch.zeros(n, t_len))


def run_method(name: str, members: list[Member], feedback: list[Feedback],
               tcfg: TrainerConfig | None, fixed_arm: int | None, k: int, keep_at: int = -1,
               out_embed: torch.Tensor | None = None) -> dict[str, Any]:
    """Serve the stream in replay with one method; -> per-request tokens / forwards / arms, timings, ensemble meta
    weights and vocabulary coverage over the stream, and (when keep_at >= 0) the served version after request
    keep_at. The members are copied (the method trains its own); an arm is a member's index. out_embed: the
    target's output embedding (vocabulary adaptation)."""
    torch.set_num_threads(1)
    members = copy.deepcopy(members)
    by_name = {m.name: m for m in members}
    trainer = OnlineTrainer(members, tcfg, out_embed) if tcfg is not None else None
    method = (Method(name, arm_of=lambda r: fixed_arm) if fixed_arm is not None
              else Method(name, lambda n, seed: make_learner("normal_hedge", n, seed=seed), GameConfig()))
    out: dict[str, Any] = {"tokens": [], "forwards": [], "arm": [], "rounds": 0, "trained": 0, "rejected": 0,
                           "table_s": 0.0, "train_s": 0.0, "losses": [], "ensemble_p": [], "coverage": []}
    seen = VocabCounter(members[0].module.config.vocab_size)  # what the stream's answers use
    pending: list[Feedback] = []
    for idx, fb in enumerate(harness.progress(feedback, name, unit="request", interval=30)):
        t0 = time.perf_counter()
        req = request_tables(members, fb, k, [fixed_arm] if fixed_arm is not None else None)
        res = replay([req], method, len(members), k, seed=idx)
        out["table_s"] += time.perf_counter() - t0
        arm = Counter(res.choices[0]).most_common(1)[0][0] if res.choices[0] else (fixed_arm or 0)
        out["tokens"].append(res.tokens[0])
        out["forwards"].append(res.forwards[0])
        out["arm"].append(arm)
        seen.add(fb.tokens[fb.prompt_len:])
        if trainer is not None:
            fb.drafter = arm
            pending.append(fb)
            if len(pending) == tcfg.batch:
                t0 = time.perf_counter()
                losses = trainer.round(pending)
                out["losses"].append(losses)
                if tcfg.updater == "ensemble":  # the meta weights over the rates, per drafter, after each round
                    out["ensemble_p"].append({n: trainer.updaters[n].p for n in losses})
                for dn in losses:  # the guard, then the hot swap of what it lets out (weights and vocabulary):
                    verdict = trainer.guard(dn)  # the candidate, or the best version again (a rollback)
                    if verdict.weights is not None:
                        assign(by_name[dn].module, verdict.weights)
                out["train_s"] += time.perf_counter() - t0
                pending = []
        if (idx + 1) % 25 == 0:  # share of the stream's answer tokens each served head's vocabulary holds so far
            out["coverage"].append({m.name: seen.coverage(m.module.t2d) for m in members
                                    if get_kind(m.kind).vocab_buffers(m.module)})  # drafters with a draft vocabulary
        if idx == keep_at:
            vocab = tcfg is not None and tcfg.vocab_every > 0
            out["weights"] = {m.name: {key: v.clone() for key, v in versioned(m.kind, m.module, vocab).items()}
                              for m in members}
    if trainer is not None:
        out["rounds"], out["rejected"], out["trained"] = trainer.rounds, trainer.rejected, trainer.schedule.trained
        out["vocab_swaps"] = dict(trainer.vocab_swaps)
    return out


def replay_job(name: str, members: list[Member], paths: list[str], tcfg: TrainerConfig | None,
               fixed_arm: int | None, k: int, keep_at: int, out_embed: torch.Tensor | None = None) -> dict[str, Any]:
    """A replay in a worker process: it reads the cached feedback itself (no 100s of MB through a pipe)."""
    feedback = [torch.load(p, weights_only=False) for p in paths]
    return run_method(name, members, feedback, tcfg, fixed_arm, k, keep_at, out_embed)


def mat(res: dict[str, Any], lo: int, hi: int) -> float:
    """Tokens per target forward of requests lo..hi of a run_method result."""
    return sum(res["tokens"][lo:hi]) / max(1, sum(res["forwards"][lo:hi]))
