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
(online/process.py) learns from every verification, publishes versions the server swaps in between decode cycles,
and exports pool versions under <out_dir>/versions/. Ctrl-C / SIGTERM / end of input stops both cleanly (the
trainer exports first); a request interrupted by the stop gets no record (over HTTP: a 503), so a restarted run
serves it. A restarted run loads the last exported pool version (and the trainer's optimizer state) and skips the
requests (and bad lines) already recorded. One run per out_dir. `python online_adapt.py --help-config` lists every
key.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch

from data_gen.generate import stop_token_ids
from draftpool.config import ConfigError, field, help_text, load_config
from draftpool.forward.sampling import SamplingParams
from draftpool.heap import bound_heap
from draftpool.io import LockedError, cache_root, run_lock
from draftpool.models import KINDS, get_kind
from draftpool.pool import load_pool, read_manifest
from draftpool.target import DEFAULT_TARGET, TargetError, load_target, resolve_device, resolve_target
from online.http_api import HttpFrontend, error_body, parse_address
from online.lookahead_server import LOOKAHEAD_SWAPS, LookaheadServer
from online.members import IndexSaver, load_members
from online.openai_jobs import chat_prompt_ids, http_rows
from online.process import ProcessConfig, TrainerHandle
from online.requests import answered_ids, read_requests
from online.server import SWAPS, AdaptiveServer, Request
from online.step_trainer import STEP_UPDATERS, StepEnv
from online.trainer import TrainerConfig
from online.versions import ExportSpec, check_out_dir, latest_version, load_trainer_state
from online.vllm_engine import VllmServeOptions
from specsel.decoding.auto import auto_spec
from specsel.decoding.costs import cache_path
from specsel.decoding.loop import SpecDecoder, SpecError
from specsel.lookahead.config import LookaheadConfig, problem_prompt
from specsel.selection.delayed_feedback import GameConfig
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector

RECIPE = "recipes/online/adapt.yaml"
MODES = ("auto", "chain", "tree", "lookahead")


@dataclass
class ServeConfig:
    RENAMED: ClassVar[dict[str, str]] = {"top_k": "feedback_top_k"}  # old key -> new key
    target: str = field(DEFAULT_TARGET, help="hub id or local folder of the target")
    pool: str = field("pools/{target_slug}", help="the offline drafter pool (build_pool.py)")
    kinds: list[str] = field(default_factory=lambda: list(KINDS), help="drafter kinds of the pool to serve")
    index_save_every: int = field(25, help="model-free members (suffix): save the served index to "
                                           "<out_dir>/indexes/<name> every n indexed answers and at the end (a "
                                           "restart resumes from it)")
    out_dir: str = field("runs/online/{target_slug}", help="exported pool versions, answers, trainer state")
    requests: str = field("-", help="JSONL file of requests, or - for stdin")
    http: str = field("", help="host:port: serve an OpenAI-compatible /v1/completions and /v1/chat/completions "
                               "there instead of reading serve.requests (e.g. 127.0.0.1:8000)")
    http_timeout: float = field(30.0, help="seconds an HTTP client may take to send a request body, in all (a "
                                           "stalled or dripping body gets a 408 and its connection closed)")
    api_key: str = field("", help="HTTP: every /v1/ request needs 'Authorization: Bearer <key>' ('' = "
                                  "$DRAFTPOOL_API_KEY if set, else no key); also --api-key")
    max_queue: int = field(64, help="HTTP: requests that may wait for the decode loop (503 past it)")
    chat_special_tokens: bool = field(False, help="chat content (and request-file prompts) that spells a special "
                                                  "token (<|im_start|> ...) becomes that token (true: a client can "
                                                  "forge turns) or stays text (false)")
    answers: str = field("", help="answers JSONL (default <out_dir>/answers.jsonl), appended as requests finish")
    selection: str = field("normal_hedge", help="normal_hedge (HedgeSpec) or fixed:<drafter name>")
    selection_state: str = field("reset", help="reset: a fresh selector per request; persistent: one for the run")
    mode: str = field("auto", help="auto (the chain length per cycle from measured costs and each drafter's "
                                    "acceptance, 0 = a plain step when nothing pays) | chain | tree (EAGLE-3 heads "
                                    "only) | lookahead (step-level lookahead reasoning with the pool's Llama step "
                                    "drafter: settings under lookahead.*, trainer.updater dpo or sft; NOT lossless)")
    k: int = field(4, help="draft depth (auto: the most it drafts)")
    auto_costs: str = field("", help="auto: JSON file of measured costs per machine/target/drafter ('' = "
                                     "<draftpool cache>/auto_costs.json, 'none' = measure at every start)")
    max_new_tokens: int = field(128, help="per request, unless the request says otherwise")
    temperature: float = field(0.0, help="sampling temperature (0: greedy, lossless)")
    feedback_top_k: int = field(64, help="target logits kept per verified position for the trainer (the "
                                         "feedback's top-k, not a sampling or tree top-k)")
    swap: str = field("cycle", help="take new drafter versions at every decode-cycle boundary (cycle; lookahead: "
                                    "step, before every round) or only between requests (request)")
    adapt: bool = field(True, help="run the trainer (false: serve the pool as it is)")
    device: str = field("cpu", help="the server's device")
    threads: int = field(1, help="torch threads of the server (the trainer has its own)")
    engine: str = field("draftpool", help="draftpool: this process decodes with the pool | vllm: a vLLM server "
                                          "decodes with one pool head (settings under vllm.*), draftpool's front "
                                          "end at serve.http forwards to it and adapts that head")


@dataclass
class AdaptConfig:
    serve: ServeConfig = field(default_factory=ServeConfig, help="serving")
    trainer: TrainerConfig = field(default_factory=TrainerConfig, help="online updates")
    process: ProcessConfig = field(default_factory=ProcessConfig, help="the trainer process")
    lookahead: LookaheadConfig = field(default_factory=LookaheadConfig, help="lookahead reasoning (serve.mode "
                                                                              "lookahead)")
    vllm: VllmServeOptions = field(default_factory=VllmServeOptions, help="the vLLM server (serve.engine vllm)")

    def validate(self) -> None:
        s = self.serve
        if s.mode not in MODES:
            raise ConfigError(f"serve.mode must be one of {', '.join(MODES)}, got {s.mode!r}")
        if not s.kinds or set(s.kinds) - set(KINDS):
            raise ConfigError(f"serve.kinds must list some of {', '.join(KINDS)}, got {s.kinds}")
        if s.index_save_every < 1:
            raise ConfigError(f"serve.index_save_every must be >= 1, got {s.index_save_every}")
        steps = self.trainer.updater in STEP_UPDATERS
        if (s.mode == "lookahead") != steps:
            raise ConfigError(f"serve.mode {s.mode} needs trainer.updater "
                              f"{'dpo or sft' if s.mode == 'lookahead' else 'ogd, optimistic or ensemble'}, got "
                              f"{self.trainer.updater!r}")
        if s.mode == "lookahead":
            if s.swap not in LOOKAHEAD_SWAPS:
                raise ConfigError(f"serve.swap in lookahead mode must be one of {', '.join(LOOKAHEAD_SWAPS)}, got "
                                  f"{s.swap!r}")
            if s.temperature != 0:
                raise ConfigError("lookahead reasoning is greedy here: serve.temperature must be 0")
            try:
                self.lookahead.validate()
            except ValueError as e:
                raise ConfigError(str(e)) from None
        if not (s.selection == "normal_hedge" or s.selection.startswith("fixed:")):
            raise ConfigError(f"serve.selection must be normal_hedge or fixed:<drafter>, got {s.selection!r}")
        if s.engine not in ("draftpool", "vllm"):
            raise ConfigError(f"serve.engine must be draftpool or vllm, got {s.engine!r}")
        if s.engine == "vllm":
            self.vllm.validate()
            if not s.http or s.mode == "lookahead" or s.temperature != 0:
                raise ConfigError("serve.engine vllm serves HTTP (set serve.http=host:port), token drafting only "
                                  "(not lookahead), at temperature 0")
        if s.selection_state not in ("reset", "persistent"):
            raise ConfigError(f"serve.selection_state must be reset or persistent, got {s.selection_state!r}")
        if s.swap not in SWAPS and s.mode != "lookahead":
            raise ConfigError(f"serve.swap must be one of {', '.join(SWAPS)}, got {s.swap!r}")
        if s.k < 1 or s.max_new_tokens < 1 or s.feedback_top_k < 1 or s.threads < 1 or s.max_queue < 1:
            raise ConfigError("serve.k, max_new_tokens, feedback_top_k, threads and max_queue must be >= 1")
        if not (0 <= s.temperature < float("inf") and 0 < s.http_timeout < float("inf")):
            raise ConfigError("serve.temperature must be >= 0 and serve.http_timeout > 0 (finite numbers)")
        if s.http:
            try:
                parse_address(s.http)
            except ValueError as e:
                raise ConfigError(str(e)) from None
        try:
            self.trainer.validate()
            self.process.validate()
        except ValueError as e:
            raise ConfigError(str(e)) from None


# ---------------------------------------------------------------------------------------------------------------------
def make_selector(cfg: ServeConfig, names: list[str]) -> Selector:
    if cfg.selection == "normal_hedge":
        return Selector(make_learner("normal_hedge", len(names)), len(names), cfg.k, GameConfig())
    name = cfg.selection.split(":", 1)[1]
    if name not in names:
        raise ConfigError(f"serve.selection names drafter {name!r}; the pool has {', '.join(names)}")
    return Selector(make_learner("fixed", len(names), arm=names.index(name)), len(names), cfg.k, reward="none")


def answer_record(rec: dict[str, Any], tok) -> dict[str, Any]:
    if "error" in rec:  # a bad request line has id None (no user-space id): a restart skips it by its line
        return {"id": rec.get("id"), **{k: rec[k] for k in ("line", "error") if k in rec}}
    m = rec["metrics"]
    new = rec["tokens"]
    out = {"id": rec["id"], "text": tok.decode(new, skip_special_tokens=True), "new_tokens": len(new),
           "mat": m.get("mat"), "tok_s": len(new) / rec["seconds"] if rec["seconds"] else None,
           "seconds": rec["seconds"], "versions_at_start": rec["versions_at_start"]}
    if "versions_at_end" in rec:
        out["versions_at_end"] = rec["versions_at_end"]
    if rec.get("cancelled"):
        out["cancelled"] = "the client closed the connection: decoding stopped early"
    if "lookahead" in m:
        out["lookahead"] = m["lookahead"]
        out["pairs"] = rec.get("pairs", 0)
    return out


class _Stop(BaseException):
    """A stop signal: a BaseException, so no per-request `except Exception` on the way can swallow it. `under_way`:
    set by the first stop signal (or by the end of the requests); the stop must then run to its end."""

    under_way: str | None = None


def _on_signal(signum, frame):
    """The first SIGINT / SIGTERM stops the run; one during the stop (trainer hand-over, final export, index save) is
    ignored with one stderr line: killing the stop half-way would lose what the trainer learnt, silently."""
    name = signal.Signals(signum).name
    if _Stop.under_way is None:
        _Stop.under_way = name  # before the raise: a second signal on its way out is ignored, not a second _Stop
        raise _Stop(name)
    line = (f"[online] {name} ignored: the stop is already under way; waiting for the trainer's final export and the "
            f"saves (SIGKILL abandons them, and what was learnt since the last export)\n")
    try:  # os.write: a print could re-enter a stderr write this signal interrupted
        os.write(2, line.encode())
    except OSError:
        pass


# ---------------------------------------------------------------------------------------------------------------------
def main_cfg(cfg: AdaptConfig) -> dict[str, Any]:
    """Serve until the requests end or a stop signal; -> a summary."""
    s = cfg.serve
    bound_heap()  # a server lives for days: buffers that follow request sizes must not fragment its heap
    torch.set_num_threads(s.threads)
    resolve_device(s.device)
    resolve_device(cfg.process.device)
    info = resolve_target(s.target)
    pool_dir = Path(s.pool.format(target_slug=info.slug))
    out_dir = Path(s.out_dir.format(target_slug=info.slug))
    if not (pool_dir / "pool.json").is_file():
        raise ConfigError(f"no pool at {pool_dir} (pool.json missing): run build_pool.py first")
    # 1. target and pool (a restart loads the last exported version and the trainer's state); out_dir and the
    # exported state are checked first: a bad one fails before the target loads
    check_out_dir(out_dir)
    resumed = latest_version(out_dir)  # ValueError: latest.json names no version folder of out_dir
    serve_dir, start_version, state = pool_dir, 0, None
    if resumed is not None:
        start_version, serve_dir = resumed
        state_path = serve_dir / "trainer_state.pt"
        state = load_trainer_state(state_path) if state_path.is_file() else None  # weights_only: no code runs
        print(f"[online] resuming from exported pool version {start_version} ({serve_dir})", file=sys.stderr)
    target, tok = load_target(info, s.device)
    if s.engine == "vllm":  # vLLM serves the head (the last exported version after a restart)
        from online.vllm_adapt import serve_vllm

        with run_lock(out_dir):
            return serve_vllm(cfg, info, target, pool_dir, out_dir, serve_dir, start_version, state)
    if s.mode == "lookahead":
        return _main_lookahead(cfg, info, target, tok, pool_dir, serve_dir, out_dir, start_version, state)
    models = load_members(s, info, target, pool_dir, serve_dir, out_dir)
    names = list(models)

    # 2. decoder, selection, trainer process
    from specsel.decoding.drafter import make_drafter

    drafters = {n: make_drafter(k, m) for n, (k, m) in models.items()}
    stops = stop_token_ids(tok, target)
    auto = None
    if s.mode == "auto":  # priors: each drafter's offline eval in the pool manifest; costs cached per machine
        entries = read_manifest(serve_dir).get("drafters", {})
        evals = {n: entries.get(n, {}).get("eval") for n in names}
        costs = cache_path(s.auto_costs, cache_root() / "auto_costs.json")
        auto = auto_spec(evals, with_trees=False, costs_cache=costs)  # greedy and sampled requests: each its priors
    dec = SpecDecoder(target, drafters, selector=make_selector(s, names), mode=s.mode, k=s.k, stop_ids=stops,
                      auto=auto)
    handle = None
    if s.adapt:
        export = ExportSpec(str(out_dir), str(pool_dir), info)
        out_embed = target.get_output_embeddings().weight.detach().float().cpu() if cfg.trainer.vocab_every else None
        trained = {n: (k, m) for n, (k, m) in models.items() if get_kind(k).trained}  # the others index answers
        handle = TrainerHandle(trained, cfg.trainer, cfg.process, export, state, start_version, out_embed=out_embed)
    server = AdaptiveServer(dec, {n: m for n, (_, m) in models.items()}, handle,
                            SamplingParams(temperature=s.temperature), s.feedback_top_k, s.swap)

    front = None
    if s.http:  # binds now: a port in use fails before anything is written
        front = HttpFrontend(s.http, info.name, names, s.temperature, s.max_new_tokens, s.http_timeout, s.api_key,
                             s.max_queue, sampling=s.mode != "tree")
    try:
        with run_lock(out_dir):  # one run per out_dir: two would interleave answers and race on versions
            return _serve(s, server, handle, front, tok, names, out_dir, stops,
                          saver=IndexSaver(models, out_dir, info, s.index_save_every))
    finally:
        if front is not None:
            front.close()


def _main_lookahead(cfg: AdaptConfig, info, target, tok, pool_dir: Path, serve_dir: Path, out_dir: Path,
                    start_version: int, state: dict | None) -> dict[str, Any]:
    """Lookahead mode: the pool's Llama step drafter drafts steps, the trainer adapts it by DPO (or SFT)."""
    s, la = cfg.serve, cfg.lookahead
    names, models = load_pool(serve_dir, info, target, ["llama"])
    name = la.drafter or (names[0] if len(names) == 1 else "")
    if name not in models:
        raise ConfigError(f"lookahead.drafter must name one of the pool's Llama drafters ({', '.join(names)}), got "
                          f"{la.drafter!r}")
    module = models[name][1].to(s.device).eval()
    stops = stop_token_ids(tok, target)
    reasoner = la.build(target, tok, module, set(stops))
    handle = None
    if s.adapt:
        export = ExportSpec(str(out_dir), str(pool_dir), info)
        env = StepEnv(str(info.path), tuple(stops), tok.pad_token_id if tok.pad_token_id is not None else stops[0],
                      la.spec(), la.judge, la.threshold, la.judge_model)
        handle = TrainerHandle({name: ("llama", module)}, cfg.trainer, cfg.process, export, state, start_version,
                               steps=env)
    server = LookaheadServer(reasoner, name, module, handle, s.swap, target.config.max_position_embeddings)
    front = None
    if s.http:
        front = HttpFrontend(s.http, info.name, [name], s.temperature, s.max_new_tokens, s.http_timeout, s.api_key,
                             s.max_queue, sampling=False)  # lookahead reasoning is greedy
    try:
        with run_lock(out_dir):
            return _serve(s, server, handle, front, tok, [name], out_dir, stops,
                          wrap=problem_prompt if la.problem_prompt else None)
    finally:
        if front is not None:
            front.close()


def _log_events(events: list[dict], metrics, log=None) -> None:
    """Trainer events: one metrics JSONL line each, and a log line per update round (to stderr by default)."""
    log = log or sys.stderr
    for ev in events:
        metrics.write(json.dumps({"time": time.time(), **ev}, default=str) + "\n")
        if ev.get("event") == "round":
            losses = ", ".join(f"{n} {v:.4f}" for n, v in ev.get("losses", {}).items() if v is not None)
            pairs = f"{ev['pairs']} pairs, " if "pairs" in ev else ""
            back = f", rolled back {', '.join(r['drafter'] for r in ev['rolled_back'])}" if ev.get("rolled_back") \
                else ""
            print(f"[online] round {ev['round']} ({pairs}{ev['records']} requests so far): loss {losses or '-'}; "
                  f"published {ev['published'] or 'nothing'}; guard rejected {len(ev['rejected'])}{back} "
                  f"(v{ev['version']})", file=log, flush=True)
    metrics.flush()


def _serve(s: ServeConfig, server, handle: TrainerHandle | None, front: HttpFrontend | None, tok,
           names: list[str], out_dir: Path, stops: list[int], wrap=None, saver: IndexSaver | None = None
           ) -> dict[str, Any]:
    # 3. serve: answers appended as they finish (JSONL / stdin, or the HTTP front end)
    source = None
    answers = Path(s.answers) if s.answers else out_dir / "answers.jsonl"
    answers.parent.mkdir(parents=True, exist_ok=True)
    done = answered_ids(answers)
    if front is not None:
        rows = http_rows(front, tok, stops, s.chat_special_tokens)
    else:
        source = sys.stdin.buffer if s.requests == "-" else open(s.requests, "rb")  # noqa: SIM115 - closed below
        rows = read_requests(source, s.max_new_tokens, done.ids, done.lines)  # answered ids; bad lines by number
    _Stop.under_way = None
    old = {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    served = errors = 0
    stopped_by = "end of requests"
    t0 = time.time()
    try:  # rule: a stop signal during the starts below is a stop like any other (the finally stops what started)
        if handle is not None:
            handle.start()
        if front is not None:
            front.start()
            print(f"[online] serving {front.address}/v1/completions and /v1/chat/completions", file=sys.stderr,
                  flush=True)
        with open(answers, "a") as out, open(out_dir / "metrics.jsonl", "a") as metrics:
            for row in rows:
                if "error" not in row:
                    run = row.get("run")  # an HTTP job's sampling, stops, stream
                    ids = row.get("prompt_ids") or chat_prompt_ids(tok, [{"role": "user", "content": wrap(
                        row["prompt"]) if wrap else row["prompt"]}], s.chat_special_tokens)
                    try:  # a request the target cannot take (too long for its context) is the caller's error
                        server.check_request(ids, row["max_new_tokens"], run.params if run else None)
                    except SpecError as e:
                        row = {**row, "error": f"request line {row['line']}: {e}" if "line" in row else str(e)}
                        if run is not None:
                            front.finish(run.job, 400, error_body(str(e)))
                            continue
                if "error" in row:
                    print(f"[online] {row['error']}", file=sys.stderr)
                    rec = row
                else:
                    if s.selection_state == "reset" and s.mode != "lookahead":
                        server.dec.set_selector(make_selector(s, names))
                    rec = server.serve(Request(row["id"], ids, row["max_new_tokens"]) if run is None else Request(
                        row["id"], ids, row["max_new_tokens"], run.job.cancelled.is_set,
                        run.watch if run.watches else None, run.params, run.seed))
                    served += 1
                    if saver is not None:
                        saver.answered(rec)
                errors += int("error" in rec)
                answer = answer_record(rec, tok)
                if row.get("run") is not None and "tokens" in rec:
                    answer.update(row["run"].record_fields(rec))  # the answer as the client gets it (stop strings)
                out.write(json.dumps(answer) + "\n")
                out.flush()
                metrics.write(json.dumps({"time": time.time(), "event": "request", **{
                    k: v for k, v in answer.items() if k != "text"}}) + "\n")
                _log_events(server.events, metrics)
                server.events.clear()
                if row.get("run") is not None:
                    row["run"].finish(rec, answer)
    except _Stop as e:
        stopped_by = str(e)
    finally:
        # rule: from here on a stop signal is ignored (_on_signal), first statement, no call before it; the original
        # handlers come back only once everything is saved
        _Stop.under_way = _Stop.under_way or stopped_by
        try:
            if source is not None and source is not sys.stdin.buffer:
                source.close()
            if front is not None:
                front.close()
            # 4. stop: the trainer finishes its round and exports the adapted pool; the served indexes are saved
            events = handle.stop() if handle is not None else []
            if saver is not None:
                saver.save()
            with open(out_dir / "metrics.jsonl", "a") as metrics:
                _log_events(server.events + events, metrics)
        finally:
            for sig, h in old.items():
                signal.signal(sig, h)
    summary = {"served": served, "errors": errors, "failed": server.failed, "skipped_answered": len(done),
               "indexed_answers": server.learned,
               "stopped_by": stopped_by, "seconds": time.time() - t0, "answers": str(answers)}
    if handle is not None:
        summary.update(trainer_faults=handle.faults, trainer_restarts=handle.restarts, feedback_dropped=handle.dropped,
                       rounds=handle.rounds_seen, exports=[e["path"] for e in handle.exports],
                       swaps=server.swap.swaps, versions=server.swap.versions(),
                       last_event=events[-1] if events else None, trainer_skipped=handle.skipped,
                       adaptation_lost=handle.lost)
    return summary


def main(argv: list[str] | None = None) -> int:
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
    except (ValueError, OSError, TargetError, LockedError) as e:  # ConfigError is a ValueError
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=2, default=str))
    if summary.get("adaptation_lost"):  # the run served, but what it learnt is not on disk
        print(f"error: adapted weights were not saved: {summary['adaptation_lost']}", file=sys.stderr)
        return 3
    return 0 if summary["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
