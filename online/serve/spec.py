"""Token-drafting serving (serve.mode auto / chain / tree): the pool's drafters (and model-free members) in a
`SpecDecoder` with Hedge (or fixed) selection, the auto planner's priors and costs, the trainer process for the
drafters that learn, wired around the serve loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from draftpool.chat import stop_token_ids
from draftpool.config import ConfigError
from draftpool.forward.sampling import SamplingParams
from draftpool.io import cache_root
from draftpool.models import get_kind
from draftpool.pool import read_manifest
from draftpool.target import TargetInfo
from online.config import AdaptConfig, ServeConfig
from online.serve.loop import serve_on
from online.serve.members import IndexSaver, serving_members
from online.serve.server import AdaptiveServer
from online.trainer.process import start_trainer
from specsel.decoding.auto import auto_spec
from specsel.decoding.costs import cache_path
from specsel.decoding.drafter import make_drafter
from specsel.decoding.loop import SpecDecoder
from specsel.selection.delayed_feedback import GameConfig
from specsel.selection.learners import make_learner
from specsel.selection.per_cycle import PerCycleSelector
from specsel.selection.selector import Selector


def make_selector(cfg: ServeConfig, names: list[str]) -> Selector | PerCycleSelector:
    """serve.selection: Hedge over the drafters (normal_hedge), per-cycle selection (per_cycle) or always one
    (fixed:<name>)."""
    if cfg.selection == "normal_hedge":
        return Selector(make_learner("normal_hedge", len(names)), len(names), cfg.k, GameConfig())
    if cfg.selection == "per_cycle":
        return PerCycleSelector(cfg.k)
    name = cfg.selection.split(":", 1)[1]
    if name not in names:
        raise ConfigError(f"serve.selection names drafter {name!r}; the pool has {', '.join(names)}")
    return Selector(make_learner("fixed", len(names), arm=names.index(name)), len(names), cfg.k, reward="none")


def serve_spec(cfg: AdaptConfig, info: TargetInfo, target, tok, pool_dir: Path, serve_dir: Path, out_dir: Path,
               start_version: int, state: dict | None) -> dict[str, Any]:
    """Serve with the pool's drafters from `serve_dir` (the pool, or the exported version a restart resumes, with
    the trainer's `state`). -> the run's summary."""
    s = cfg.serve
    members = serving_members(s, info, target, pool_dir, serve_dir, out_dir)
    names = [m.name for m in members]

    # 1. decoder and selection: auto's priors are each drafter's offline eval in the pool manifest, its costs cached
    # per machine (measured now, not inside the first request)
    drafters = {m.name: make_drafter(m.kind, m.module) for m in members}
    stops = stop_token_ids(tok, target)
    auto = None
    if s.mode == "auto":
        entries = read_manifest(serve_dir).get("drafters", {})
        evals = {n: entries.get(n, {}).get("eval") for n in names}
        costs = cache_path(s.auto_costs, cache_root() / "auto_costs.json")
        auto = auto_spec(evals, with_trees=False, costs_cache=costs)  # greedy and sampled requests: each its priors
    dec = SpecDecoder(target, drafters, selector=make_selector(s, names), mode=s.mode, k=s.k, stop_ids=stops,
                      auto=auto)
    dec.prepare()
    # 2. the trainer process, for the members that train (the others learn by indexing answers)
    trained = [m for m in members if get_kind(m.kind).trained]
    handle = start_trainer(cfg, info, target, pool_dir, out_dir, trained, state, start_version) if s.adapt else None
    # 3. serve
    server = AdaptiveServer(dec, {m.name: m.module for m in members}, handle,
                            SamplingParams(temperature=s.temperature), s.feedback_top_k, s.swap,
                            new_selector=(lambda: make_selector(s, names)) if s.selection_state == "reset" else None)
    return serve_on(s, server, handle, tok, out_dir, stops, info.name, names, sampling=s.mode != "tree",
                    saver=IndexSaver(members, out_dir, info, s.index_save_every))
