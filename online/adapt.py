"""Serve a request stream with a drafter pool while a separate trainer process adapts the drafters (online).

    python online_adapt.py [--config recipes/online/adapt.yaml] [key=value ...]
    python online_adapt.py serve.requests=prompts.jsonl trainer.updater=optimistic process.device=cuda:1
    cat prompts.jsonl | python online_adapt.py serve.requests=-
    python online_adapt.py serve.http=127.0.0.1:8000              (OpenAI-compatible completions endpoint)
    python -m benchmarks.online [options]                         (the domain-shift benchmark, source checkout)

Requests are JSON lines {"id": ..., "prompt": ..., "max_new_tokens" (or "max_tokens"): optional}; each prompt is
chat-templated for the target. A line that is not such a request (invalid UTF-8 or JSON, unknown keys, a lone
surrogate, an id seen before, a prompt too long for the target's context) gets an error record naming the line, and
serving goes on. Answers are appended to `serve.answers` (default <out_dir>/answers.jsonl) as each request finishes:
id, text, new tokens, MAT, tok/s and the drafter versions that served it (or the error). The trainer
(online/trainer/process.py) learns from every verification, publishes versions the server swaps in between decode
cycles, and exports pool versions under <out_dir>/versions/. Ctrl-C / SIGTERM / end of input stops both cleanly (the
trainer exports first); a request interrupted by the stop gets no record (over HTTP: a 503), so a restarted run serves
it. A restarted run loads the last exported pool version (and the trainer's optimizer state) and skips the requests
(and bad lines) already recorded. One run per out_dir. `python online_adapt.py --help-config` lists every key.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import torch

from draftpool.config import ConfigError, help_text, load_config
from draftpool.heap import bound_heap
from draftpool.io import LockedError, run_lock
from draftpool.target import TargetError, dtype_name, load_target, resolve_device, resolve_target, target_dtype
from draftpool.version_guard import UncheckedVersionError
from online.config import RECIPE, AdaptConfig
from online.lookahead.mode import serve_lookahead
from online.serve.spec import serve_spec
from online.trainer.process import server_threads
from online.trainer.versions import check_out_dir, latest_version, load_trainer_state
from online.vllm.adapt import serve_vllm

# This module is the command line and the start (target, pool, resume, the run lock); the settings are
# online/config.py, each serving mode's wiring online/serve/spec.py, online/lookahead/mode.py and online/vllm/adapt.py,
# the serve loop online/serve/loop.py.


def main_cfg(cfg: AdaptConfig) -> dict[str, Any]:
    """Serve until the requests end or a stop signal; -> a summary."""
    s = cfg.serve
    bound_heap()  # a server lives for days: buffers that follow request sizes must not fragment its heap
    torch.set_num_threads(server_threads(cfg)[0])  # the trainer's handle fits them to its rounds (process.py)
    resolve_device(s.device)
    resolve_device(cfg.process.device)
    info = resolve_target(s.target)
    pool_dir = Path(s.pool.format(target_slug=info.slug))
    out_dir = Path(s.out_dir.format(target_slug=info.slug))
    if not (pool_dir / "pool.json").is_file():
        raise ConfigError(f"no pool at {pool_dir} (pool.json missing): run build_pool.py first")
    # 1. out_dir checked and locked (one run per out_dir, whatever the engine: two would interleave answers and race
    # on versions), then what a restart resumes (the last exported version and the trainer's state): a bad one
    # fails before the target loads
    check_out_dir(out_dir)
    with run_lock(out_dir):
        return _serve(cfg, info, pool_dir, out_dir)


def _serve(cfg: AdaptConfig, info, pool_dir: Path, out_dir: Path) -> dict[str, Any]:
    s = cfg.serve
    resumed = latest_version(out_dir)  # ValueError: latest.json names no version folder of out_dir
    serve_dir, start_version, state = pool_dir, 0, None
    if resumed is not None:
        start_version, serve_dir = resumed
        state_path = serve_dir / "trainer_state.pt"
        state = load_trainer_state(state_path) if state_path.is_file() else None  # weights_only: no code runs
        print(f"[online] resuming from exported pool version {start_version} ({serve_dir})", file=sys.stderr)
    # 2. the mode serves (vLLM: the head of the last exported version after a restart)
    target, tok = load_target(info, s.device, serve_dtype(s, info))
    if s.engine == "vllm":
        return serve_vllm(cfg, info, target, pool_dir, out_dir, serve_dir, start_version, state)
    if s.mode == "lookahead":
        return serve_lookahead(cfg, info, target, tok, pool_dir, serve_dir, out_dir, start_version, state)
    return serve_spec(cfg, info, target, tok, pool_dir, serve_dir, out_dir, start_version, state)


def serve_dtype(s, info) -> torch.dtype:
    """serve.dtype -> the target's dtype: explicit as named; auto: the measured choice for decoding on a CPU where
    the draftpool engine drafts tokens, float32 elsewhere (as before)."""
    device = resolve_device(s.device)
    if s.dtype != "auto":
        return target_dtype(s.dtype, device)
    if device.type != "cpu" or s.engine == "vllm" or s.mode == "lookahead":
        return torch.float32
    dtype = target_dtype("auto", device, info, "decode")
    print(f"[online] target precision {dtype_name(dtype)} (serve.dtype auto, measured: "
          f"draftpool/precision.py)", file=sys.stderr, flush=True)
    return dtype


def main(argv: list[str] | None = None) -> int:
    """The command line (module docstring). -> the exit status: 0, 1 (a request failed), 2 (bad settings or input), 3
    (adapted weights were not saved)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--bench" in argv:
        print("error: the domain-shift benchmark runs from a source checkout: python online_adapt.py --bench",
              file=sys.stderr)
        return 2
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=RECIPE, help=f"the recipe (default {RECIPE})")
    ap.add_argument("--help-config", action="store_true", help="list every config key and exit")
    ap.add_argument("--api-key", default=None, help="= serve.api_key (prefer $DRAFTPOOL_API_KEY: a flag shows in ps)")
    args, overrides = ap.parse_known_args(argv)
    if args.help_config:
        print(help_text(AdaptConfig))
        return 0
    try:
        cfg = load_config(AdaptConfig, args.config, overrides)  # validates
        cfg.serve.api_key = args.api_key or cfg.serve.api_key or os.environ.get("DRAFTPOOL_API_KEY", "")
        summary = main_cfg(cfg)
    except (ValueError, OSError, TargetError, LockedError, UncheckedVersionError) as e:  # ConfigError: a ValueError
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=2, default=str))
    if summary.get("adaptation_lost"):  # the run served, but what it learnt is not on disk
        print(f"error: adapted weights were not saved: {summary['adaptation_lost']}", file=sys.stderr)
        return 3
    return 0 if summary["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
