"""Lookahead serving (serve.mode lookahead): the pool's Llama step drafter drafts reasoning steps the target judges,
and the trainer process adapts it by DPO (or SFT) on the rejected steps, wired around the serve loop."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from draftpool.chat import stop_token_ids
from draftpool.config import ConfigError
from draftpool.models import kinds_with
from draftpool.pool import load_members
from draftpool.target import TargetInfo
from online.config import AdaptConfig
from online.lookahead.server import LookaheadServer
from online.lookahead.step_trainer import StepEnv, StepTrainers
from online.serve.loop import serve_on
from online.trainer.process import start_trainer
from specsel.lookahead.config import problem_prompt


def serve_lookahead(cfg: AdaptConfig, info: TargetInfo, target, tok, pool_dir: Path, serve_dir: Path,
                    out_dir: Path, start_version: int, state: dict | None) -> dict[str, Any]:
    """Lookahead mode: the pool's Llama step drafter drafts steps, the trainer adapts it by DPO (or SFT).
    -> the run's summary."""
    s, la = cfg.serve, cfg.lookahead
    members = {m.name: m for m in load_members(serve_dir, info, target, kinds_with("step_drafter"))}
    names = list(members)
    name = la.drafter or (names[0] if len(names) == 1 else "")
    if name not in members:
        raise ConfigError(f"lookahead.drafter must name one of the pool's Llama drafters ({', '.join(names)}), got "
                          f"{la.drafter!r}")
    member = replace(members[name], module=members[name].module.to(s.device).eval())
    module = member.module
    stops = stop_token_ids(tok, target)
    reasoner = la.build(target, tok, module, set(stops))
    handle = None
    if s.adapt:  # the trainer judges held-out steps the way the server does
        env = StepEnv(str(info.path), tuple(stops), tok.pad_token_id if tok.pad_token_id is not None else stops[0],
                      la.spec(), la.judge, la.threshold, la.judge_model)
        handle = start_trainer(cfg, info, target, pool_dir, out_dir, [member], state, start_version, StepTrainers(env))
    server = LookaheadServer(reasoner, name, module, handle, s.swap, target.config.max_position_embeddings)
    return serve_on(s, server, handle, tok, out_dir, stops, info.name, [name], sampling=False,  # greedy reasoning
                    wrap=problem_prompt if la.problem_prompt else None)
