"""The server's handle on the trainer process (`TrainerHandle`), and the fork server it is started from.

The trainer (online/trainer/child.py) runs apart from the server (torch.multiprocessing, forkserver: see `context`)
with its own thread count and device (`ProcessConfig.device`, e.g. cuda:1), so an update round never waits for the
server and the server never waits for a round: feedback crosses over a small queue fed by the server's drop-oldest
buffer, weights come back through shared-memory boards (`online/trainer/weights.py`), never through disk.

`TrainerHandle` is the server's side: start, submit feedback (never blocks), poll (drain status, detect a crash or a
stale heartbeat, restart up to `max_restarts` times from the last exported trainer state, or from the served weights
before the first export), stop (hand over every buffered record, let the trainer train on them and export, and say
in `lost` what could not be saved).

`start_trainer` is what every serving mode (native, lookahead, vLLM) starts its trainer with.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import multiprocessing.context
import os
import queue
import sys
import time
import weakref
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import torch

from draftpool.pool import Member
from draftpool.target import TargetInfo, dtype_name, resolve_device, target_dtype
from online.trainer import forkserver_shim
from online.trainer.child import TOKEN_TRAINERS, TrainerFactory, _trainer_entry
from online.trainer.config import ProcessConfig, TrainerConfig
from online.trainer.feedback import DropOldestQueue, Feedback
from online.trainer.signals import kill_at_exit, spawn_signals
from online.trainer.throttle import Serving
from online.trainer.token_trainer import versioned
from online.trainer.versions import ExportSpec, latest_version, load_trainer_state
from online.trainer.weights import WeightBoard

PRELOAD = ["online.trainer.child"]  # what the fork server imports once (torch, transformers through the drafter
# modules, trl through the step trainer: ~4-5 s), so that a trainer process starts in a fraction of a second, not after


def context() -> multiprocessing.context.BaseContext:
    """The trainer's multiprocessing context: "forkserver", with the trainer's module preloaded in the fork server
    (online/trainer/forkserver_shim.py, which refuses a Python whose fork server it was not checked against).

    A trainer is forked from the fork server (a fresh interpreter exec'd by the server on the first start, which
    imports `PRELOAD` once), never from the server itself: like a spawned process it shares no CUDA state, threads or
    locks with the server (the fork server initialises no CUDA and runs no torch op), and it gets the server's
    current working folder, sys.path and (`_trainer_entry`) environment at each start. The fork server is launched by
    the first `TrainerHandle.start` inside `spawn_signals`, so it and every trainer forked from it ignore SIGINT /
    SIGTERM from their first instruction (the fork server's own SIGINT handler is SIG_IGN, which its children get);
    it exits when the server does (its alive pipe closes), and the trainer, whose parent it is, then sees its parent
    gone and stops (the rule "do not outlive the server")."""
    return forkserver_shim.context(PRELOAD)


def server_threads(cfg) -> tuple[int, int]:
    """The server's torch threads (`cfg`: an AdaptConfig) -> (while the trainer waits, while it computes a round):
    serve.threads when given, else every core this process may use, less the trainer's threads while it computes
    beside the server at the server's priority (a niced trainer, or one on another device, takes no core from it)."""
    if cfg.serve.threads > 0:
        return cfg.serve.threads, cfg.serve.threads
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    p = cfg.process
    competes = cfg.serve.adapt and p.device == "cpu" and p.nice == 0 and cfg.serve.engine == "draftpool"
    return cores, max(1, cores - p.threads) if competes else cores


@contextlib.contextmanager
def decoding(handle: TrainerHandle | None) -> Iterator[None]:
    """The server decodes a request inside this: the trainer's duty cycle (process.duty) sees it busy, and the
    server's threads fit the trainer's rounds (`TrainerHandle.fit_threads`)."""
    if handle is None:
        yield
        return
    handle.fit_threads()
    handle.serving.begin()
    try:
        yield
    finally:
        handle.serving.end()


class TrainerHandle:
    """The server's handle on the trainer process. `members` are the served drafters: the trainer begins from their
    current weights (and `state`, when a restarted server resumes an export); a trainer restarted after a crash or
    hang continues from the last exported trainer state."""

    def __init__(self, members: list[Member], tcfg: TrainerConfig, pcfg: ProcessConfig,
                 export: ExportSpec | None = None, state: dict | None = None, start_version: int = 0,
                 log=sys.stderr, out_embed: torch.Tensor | None = None,
                 trainer_factory: TrainerFactory = TOKEN_TRAINERS):
        """start_version: the version the served modules hold (a restarted server: the exported version it loaded);
        the trainer numbers its versions after it. out_embed: the target's output embedding (vocabulary
        adaptation starts new draft tokens' rows from it). trainer_factory: builds the trainer inside the trainer
        process (the token drafters' by default; lookahead serving passes the step drafter's); it crosses to that
        process pickled (`TrainerFactory`; the tests' faulty trainers: tests/online/faults.py)."""
        tcfg.validate()
        pcfg.validate()
        if tcfg.updater not in trainer_factory.updaters:
            raise ValueError(f"updater {tcfg.updater} is not one this trainer takes "
                             f"({', '.join(trainer_factory.updaters)}): dpo and sft adapt a lookahead step drafter "
                             f"(serve in lookahead mode), the others token drafters")
        self.ctx = context()
        self.members, self.tcfg, self.pcfg, self.export, self.state = list(members), tcfg, pcfg, export, state
        self.out_embed, self.trainer_factory = out_embed, trainer_factory
        self.boards = {m.name: WeightBoard(versioned(m.kind, m.module, tcfg.vocab_every > 0)) for m in members}
        self.feedback = DropOldestQueue(queue.Queue(maxsize=1), pcfg.queue_size)
        self.status = self.ctx.Queue()
        self.heartbeat = torch.zeros(1, dtype=torch.float64).share_memory_()
        self.serving = Serving(torch.zeros(3, dtype=torch.int64).share_memory_())  # busy flags (throttle.py)
        self.threads: tuple[int, int] | None = None  # the server's threads: (trainer waiting, trainer computing)
        self.proc = None
        self.start_version = start_version
        self.enabled = True
        self.restarts = 0
        self.faults: list[dict] = []  # crashes and hangs, as reported
        self.last_round: dict = {}
        self.exports: list[dict] = []
        self.starts: list[dict] = []  # "started" events: the version and round each (re)started trainer began at
        self.rounds_seen = 0
        self.skipped = 0  # records whose round raised even alone (poison records), skipped by the trainer
        self.export_failures: list[dict] = []
        self.lost: str | None = None  # set by stop() when adapted weights could not be saved
        self.saved_round = 0  # the round the current trainer's weights were last saved at (its start or an export)
        self.proc_records = [0, 0]  # the current trainer process's records: trained, skipped
        self.sent_at_start = 0  # feedback records sent to earlier trainer processes
        self.log = log
        atexit.register(kill_at_exit, weakref.ref(self))

    def fit_threads(self) -> None:
        """Called by the server's decode thread at request starts and cycle boundaries: it takes every core while the
        trainer waits and leaves the trainer its threads while a round computes (rule: a trainer that rests costs
        serving nothing)."""
        if self.threads is None:
            return
        n = self.threads[1] if self.serving.training() else self.threads[0]
        if n != torch.get_num_threads():
            torch.set_num_threads(n)

    def start(self) -> None:
        self.stop_event = self.ctx.Event()
        # rule: a fresh channel per process (a killed reader can leave the old one's lock held); never let unread
        # records hold up the server's exit
        channel = self.ctx.Queue(maxsize=2)
        channel.cancel_join_thread()
        with self.feedback.lock:  # vLLM mode: the feedback thread may be flushing into the old channel
            self.feedback.q = channel
        self.heartbeat[0] = 0.0
        self.started_at = time.time()
        start_version = max([self.start_version] + [b.latest() for b in self.boards.values()])
        members = [replace(m, module=copy.deepcopy(m.module).cpu()) for m in self.members]
        self.proc = self.ctx.Process(
            target=_trainer_entry, name="draftpool-trainer", daemon=True,
            args=(dict(os.environ), members, self.tcfg, self.pcfg, self.boards, self.feedback.q, self.status,
                  self.stop_event, self.heartbeat, self.export, start_version, self.state, self.out_embed,
                  self.trainer_factory, self.serving.flag))
        self.sent_at_start = self.feedback.sent
        with spawn_signals():  # a Ctrl-C to the process group during the trainer's start-up does not kill it (nor
            # the fork server, launched by the first start)
            self.proc.start()
        self.state = None  # a restart takes the last exported state (`restart_state`), not the first start's

    def wait_ready(self, timeout: float | None = None, poll_s: float = 0.05) -> float:
        """After `start`: wait until the trainer beats (its imports, copies of the heads and optimizer built), up to
        `timeout` (default process.start_timeout), or until it dies (poll's crash handling takes over) -> seconds
        waited. Serving begins after it, so the trainer's start-up does not compete with the first requests for the
        cores (measured: ~9 s of a core on the 2-core CPU of docs/results/2026-11-29-adaptation-pays.md, section 5)."""
        t0 = time.monotonic()
        deadline = t0 + (self.pcfg.start_timeout if timeout is None else timeout)
        while self.proc is not None and self.proc.is_alive() and float(self.heartbeat[0]) == 0.0 \
                and time.monotonic() < deadline:
            time.sleep(poll_s)
        return time.monotonic() - t0

    def restart_state(self) -> tuple[dict | None, str]:
        """What a restarted trainer continues from: the last exported version's trainer state (its weights with their
        optimizer moments, optimistic hints and ensemble weights, consistent with each other; the rounds since that
        export are lost), or, with no export yet, the served weights and a fresh optimizer. -> (state, description)"""
        try:
            found = latest_version(self.export.out_dir) if self.export is not None else None
            path = found[1] / "trainer_state.pt" if found else None
            if path is None or not path.is_file():
                return None, "the served weights (no exported state yet: fresh optimizer state)"
            return load_trainer_state(path), f"exported version {found[0]}'s state (optimizer state kept)"
        except (ValueError, OSError) as e:
            return None, f"the served weights (the exported state is unusable: {e})"

    def submit(self, fb: Feedback) -> None:
        """Queue one served request's feedback; never blocks (drop-oldest when the trainer is behind)."""
        if self.enabled:
            self.feedback.put(fb)

    def poll(self) -> list[dict]:
        """Between requests: move buffered feedback on, drain status events, detect a crash or a hang and
        restart. -> the status events drained."""
        events = self._drain()
        if self.proc is None:
            return events
        self.feedback.flush()
        beat = float(self.heartbeat[0])
        if not self.proc.is_alive():
            self._fault("crash", f"trainer process exited with code {self.proc.exitcode}")
        elif beat == 0.0 and time.time() - self.started_at > self.pcfg.start_timeout:
            self._fault("hang", f"trainer did not start within {self.pcfg.start_timeout:.0f} s")
        elif beat > 0.0 and time.time() - beat > self.pcfg.heartbeat_timeout:
            self._fault("hang", f"no trainer heartbeat for {time.time() - beat:.0f} s")
        return events

    def _drain(self) -> list[dict]:
        events = []
        while True:
            try:
                ev = self.status.get_nowait()
            except (queue.Empty, OSError, EOFError):
                break
            events.append(ev)
            if ev["event"] == "round":
                self.last_round = ev
                self.rounds_seen += 1
            elif ev["event"] == "export":
                self.exports.append(ev)
                self.saved_round = ev["round"]
            elif ev["event"] == "started":
                self.starts.append(ev)
                self.saved_round, self.proc_records = ev["rounds"], [0, 0]
            elif ev["event"] == "skipped":
                self.skipped += ev["records"]
                self.proc_records[1] += ev["records"]
                print(f"[online] trainer skipped {ev['records']} feedback record(s) whose round fails: {ev['error']}",
                      file=self.log, flush=True)
            elif ev["event"] == "export_failed":
                self.export_failures.append(ev)
                print(f"[online] export of version {ev['version']} failed: {ev['error']}", file=self.log, flush=True)
            if ev["event"] in ("round", "waiting", "stopped"):
                self.proc_records[0] = ev["records"]
        return events

    def _fault(self, kind: str, why: str) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(10)
        self.faults.append({"kind": kind, "why": why, "time": time.time()})
        if self.restarts >= self.pcfg.max_restarts:
            print(f"[online] {why}; restart limit ({self.pcfg.max_restarts}) reached: serving goes on with the "
                  f"last good weights, without adaptation", file=self.log, flush=True)
            self.proc, self.enabled = None, False
            self._drop_buffered()  # no trainer will take them: counted in `dropped`
            return
        self.restarts += 1
        self.state, source = self.restart_state()
        print(f"[online] {why}; restarting the trainer ({self.restarts}/{self.pcfg.max_restarts}) from {source}",
              file=self.log, flush=True)
        self.start()

    @property
    def dropped(self) -> int:
        return self.feedback.dropped

    def stop(self, timeout: float = 120.0) -> list[dict]:
        """Hand the trainer every buffered record, ask it to finish its rounds, export and exit; kill it after
        `timeout`. Sets `lost` when adapted weights could not be saved. -> last events."""
        if self.proc is None:
            return self._drain()
        if not self.proc.is_alive():  # died since the last poll (e.g. at its start): a fault, not a clean stop
            self.faults.append({"kind": "crash", "why": f"trainer process exited with code {self.proc.exitcode}",
                                "time": time.time()})
            print(f"[online] {self.faults[-1]['why']} before the stop: nothing exported", file=self.log, flush=True)
            code, self.proc = self.proc.exitcode, None
            self._drop_buffered()
            events = self._drain()
            self._check_stop(events, code, None)
            return events
        deadline = time.time() + timeout
        events = self._hand_over(time.time() + timeout / 2)
        self.stop_event.set()
        while self.proc.is_alive() and time.time() < deadline and not self._hung():
            self.proc.join(0.5)
            events += self._drain()  # rule: keep reading, or a full status pipe holds up the trainer's exit
        killed = None
        if self.proc.is_alive():
            killed = "it was hung (no heartbeat) and was killed" if self._hung() else \
                f"it did not stop within {timeout:.0f} s and was killed"
            print(f"[online] trainer: {killed}", file=self.log, flush=True)
            self.proc.kill()
            self.proc.join(10)
        code, self.proc = self.proc.exitcode, None
        events += self._drain()
        self._check_stop(events, code, killed)
        return events

    def _hung(self) -> bool:
        """No heartbeat for `heartbeat_timeout` s (a stop does not wait out its whole timeout for a hung trainer)."""
        beat = float(self.heartbeat[0])
        return beat > 0.0 and time.time() - beat > self.pcfg.heartbeat_timeout

    def _hand_over(self, deadline: float) -> list[dict]:
        """At stop: move every buffered record to the trainer, which trains on them before its final export; what
        cannot be handed over by `deadline` (or to a dead trainer) is counted in `dropped`. -> events drained."""
        events = []
        while True:
            self.feedback.flush()
            with self.feedback.lock:
                left = len(self.feedback.local)
            if not left:
                return events
            if not self.proc.is_alive() or time.time() > deadline or self._hung():
                n = self._drop_buffered()
                print(f"[online] {n} feedback record(s) could not be handed to the trainer before the stop: dropped",
                      file=self.log, flush=True)
                return events
            events += self._drain()
            time.sleep(0.02)

    def _drop_buffered(self) -> int:
        with self.feedback.lock:
            n = len(self.feedback.local)
            self.feedback.dropped += n
            self.feedback.local.clear()
        return n

    def _check_stop(self, events: list[dict], code: int | None, killed: str | None) -> None:
        """Whether the stopped trainer saved what it learnt: a clean "stopped" event with no unsaved round, exit 0.
        Otherwise `lost` says what was lost and why (the server reports it and exits non-zero)."""
        if self.export is None:
            return  # nothing is ever saved: nothing to lose
        stopped = next((e for e in reversed(events) if e["event"] == "stopped"), None)
        why = killed or (f"the trainer exited with code {code}" if code != 0 else None)
        lost = []
        if stopped is not None:
            if stopped["unsaved_rounds"]:
                lost.append(f"{stopped['unsaved_rounds']} update round(s) since the last export")
        else:
            why = why or "the trainer exited without reporting a stop"
            unsaved = max(0, self.last_round.get("round", 0) - self.saved_round)
            untrained = self.feedback.sent - self.sent_at_start - sum(self.proc_records)
            if unsaved:
                lost.append(f"{unsaved} update round(s) since the last export")
            if untrained > 0:
                lost.append(f"{untrained} feedback record(s) handed over but never trained on")
        if self.export_failures and (lost or why):
            why = "; ".join(filter(None, [why, f"export failed: {self.export_failures[-1]['error']}"]))
        if lost:
            self.lost = f"{' and '.join(lost)} not saved ({why or 'the final export did not happen'})"
            print(f"[online] adaptation lost: {self.lost}", file=self.log, flush=True)
        elif why:
            print(f"[online] {why} (nothing unsaved)", file=self.log, flush=True)


def start_trainer(cfg, info: TargetInfo, target, pool_dir: Path, out_dir: Path, members: list[Member],
                  state: dict | None, start_version: int, factory: TrainerFactory = TOKEN_TRAINERS) -> TrainerHandle:
    """The trainer of a serving run (`cfg`: its AdaptConfig) for `members`: exports go to out_dir (pool versions of
    pool_dir's manifest), vocabulary adaptation gets the target's output embedding; `state` / `start_version`: what
    a restarted run resumes. Not started yet (the serve loop starts it)."""
    export = ExportSpec(str(out_dir), str(pool_dir), info)
    out_embed = target.get_output_embeddings().weight.detach().float().cpu() if cfg.trainer.vocab_every else None
    handle = TrainerHandle(members, trainer_precision(cfg.trainer, cfg.process.device, info), cfg.process, export,
                           state, start_version, out_embed=out_embed, trainer_factory=factory)
    threads = server_threads(cfg)
    handle.threads = threads if threads[0] != threads[1] else None
    return handle


def trainer_precision(trainer: TrainerConfig, device: str, info: TargetInfo) -> TrainerConfig:
    """trainer.precision with `auto` resolved on the trainer's device: the measured choice for batched forwards
    (draftpool/precision.py; the trainer runs a request's rows per forward), one log line saying which."""
    if trainer.precision != "auto" or trainer.updater in ("dpo", "sft"):  # the step trainer runs fp32
        return trainer
    dtype = dtype_name(target_dtype("auto", resolve_device(device), info, "batch"))
    print(f"[online] trainer precision {dtype} (trainer.precision auto, measured: draftpool/precision.py)",
          file=sys.stderr, flush=True)
    return replace(trainer, precision="bfloat16" if dtype == "bfloat16" else "float32")
