"""The trainer process: pulls served feedback, updates the drafters, publishes versions, exports pool versions.

It runs apart from the server (torch.multiprocessing, forkserver: see `context`) with its own thread count and device
(`ProcessConfig.device`, e.g. cuda:1), so an update round never waits for the server and the server never waits for a
round: feedback crosses over a small queue fed by the server's drop-oldest buffer, weights come back through
shared-memory boards (`online/weights.py`), never through disk.

Each loop: heartbeat -> `batch` records (token drafters: gathered over loops, fewer only at the stop) -> one round of
every learning drafter's updater (whose optimizer and ensemble state live as long as the process, and across restarts
of `online_adapt.py` through the exported state) -> the guard -> publish the accepted drafters as version v. Every
`export_every` rounds and at stop the adapted pool is written as a new pool version `<out>/versions/v000123/` in the
offline pipeline's format (plus `trainer_state.pt`), into a temp folder renamed into place, and `<out>/latest.json`
points at it (online/versions.py).

`TrainerHandle` is the server's side: start, submit feedback (never blocks), poll (drain status, detect a crash or a
stale heartbeat, restart up to `max_restarts` times from the last exported trainer state, or from the served weights
before the first export), stop (hand over every buffered record, let the trainer train on them and export, and say
in `lost` what could not be saved).

The trainer ignores SIGINT / SIGTERM (a Ctrl-C reaches the whole process group): only the server stops it. A round
that raises is retried record by record and the records that still raise are skipped (`skipped` events): a poison
record does not take the trainer down. A failed export is reported (`export_failed`) and the trainer goes on.
"""

from __future__ import annotations

import atexit
import copy
import os
import queue
import sys
import time
import weakref
from dataclasses import dataclass, field
from multiprocessing import forkserver

import torch
import torch.multiprocessing as mp

from online.feedback import DropOldestQueue, Feedback, get_batch
from online.step_trainer import STEP_UPDATERS, StepEnv, StepTrainer
from online.trainer import OnlineTrainer, TrainerConfig, versioned
from online.trainer_signals import ignore_stop_signals, kill_at_exit, spawn_signals
from online.versions import ExportSpec, clean_stale_exports, export_pool, latest_version, load_trainer_state
from online.weights import WeightBoard


@dataclass
class ProcessConfig:
    device: str = field(default="cpu", metadata={"help": "the trainer's device (cpu, cuda:1, ...)"})
    threads: int = field(default=1, metadata={"help": "torch threads of the trainer process (its own core(s))"})
    queue_size: int = field(default=64, metadata={"help": "feedback records buffered by the server (drop-oldest)"})
    export_every: int = field(default=100, metadata={"help": "rounds between pool-version exports (0: at stop only)"})
    keep_versions: int = field(default=3, metadata={"help": "exported pool versions kept on disk"})
    heartbeat_timeout: float = field(default=120.0, metadata={"help": "seconds without a heartbeat = hung"})
    start_timeout: float = field(default=600.0, metadata={"help": "seconds a starting trainer may take"})
    max_restarts: int = field(default=3, metadata={"help": "restarts after crashes or hangs, then serving goes on "
                                                           "with the last good weights and no adaptation"})
    fault: str = field(default="", metadata={"help": "fault injection for tests: crash_after:N or hang_after:N"})

    def validate(self) -> None:
        if self.threads < 1 or self.queue_size < 1 or self.keep_versions < 1 or self.max_restarts < 0:
            raise ValueError("process.threads, queue_size and keep_versions must be >= 1, max_restarts >= 0")
        if self.export_every < 0 or not (self.heartbeat_timeout > 0 and self.start_timeout > 0):
            raise ValueError("process.export_every must be >= 0 (0: at stop only), heartbeat_timeout and "
                             "start_timeout > 0")
        if self.fault and not any(self.fault.startswith(p) for p in ("crash_after:", "hang_after:")):
            raise ValueError(f"fault must be crash_after:N or hang_after:N, got {self.fault!r}")


PRELOAD = ["online.process"]  # what the fork server imports once (torch, transformers through the drafter modules,
# trl through the step trainer: ~4-5 s), so that a trainer process starts in a fraction of a second, not after them


def context():
    """The trainer's multiprocessing context: "forkserver", with this module preloaded in the fork server.

    A trainer is forked from the fork server (a fresh interpreter exec'd by the server on the first start, which
    imports `PRELOAD` once), never from the server itself: like a spawned process it shares no CUDA state, threads or
    locks with the server (the fork server initialises no CUDA and runs no torch op), and it gets the server's
    current working folder, sys.path and (`_trainer_entry`) environment at each start. The fork server is launched by
    the first `TrainerHandle.start` inside `spawn_signals`, so it and every trainer forked from it ignore SIGINT /
    SIGTERM from their first instruction (the fork server's own SIGINT handler is SIG_IGN, which its children get);
    it exits when the server does (its alive pipe closes), and the trainer, whose parent it is, then sees its parent
    gone and stops (the rule "do not outlive the server")."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def _trainer_entry(env: dict[str, str], *args) -> None:
    """The trainer process's entry: the server's environment at this start (a forked trainer inherits the fork
    server's, taken at its launch), then `trainer_main`. It lets go of the fork server's alive pipe (multiprocessing
    hands every forked child a copy, so that it could fork in turn; a trainer never does): the fork server then exits
    when the server dies however it dies, and the trainer, its child, sees that and stops."""
    ignore_stop_signals()
    fs = forkserver._forkserver
    if fs._forkserver_alive_fd is not None:
        os.close(fs._forkserver_alive_fd)
        fs._forkserver_alive_fd = None
    if dict(os.environ) != env:
        os.environ.clear()
        os.environ.update(env)
    trainer_main(*args)


def _fault_at(fault: str, kind: str) -> int:
    return int(fault.split(":")[1]) if fault.startswith(kind + ":") else -1


def make_trainer(models: dict[str, tuple[str, torch.nn.Module]], tcfg: TrainerConfig, steps: StepEnv | None,
                 out_embed: torch.Tensor | None = None):
    """The token drafters' trainer, or the lookahead step drafter's (updater dpo / sft, which needs `steps`)."""
    if tcfg.updater in STEP_UPDATERS:
        if steps is None:
            raise ValueError(f"updater {tcfg.updater} adapts a lookahead step drafter: serve in lookahead mode")
        return StepTrainer(models, tcfg, steps)
    return OnlineTrainer(models, tcfg, out_embed)


def _forget(trainer, records: list) -> None:
    """Take the records of a failed round out of whatever would read them again: the guard's held-out set (records,
    or a step trainer's pairs) and a step trainer's pair buffer."""
    drop = {id(r) for r in records} | {id(p) for r in records for p in getattr(r, "pairs", ())}
    if hasattr(trainer, "rows"):  # the token trainer's guard rows of the failed round
        trainer.rows = [x for x in trainer.rows if id(x) not in drop]
    kept = [x for x in trainer.holdout if id(x) not in drop]
    if len(kept) != len(trainer.holdout):
        trainer.holdout.clear()
        trainer.holdout.extend(kept)
        trainer.holdout_changes += 1
    if isinstance(trainer, StepTrainer):
        trainer.buffer = [p for p in trainer.buffer if id(p) not in drop]


def trainer_main(models: dict[str, tuple[str, torch.nn.Module]], tcfg: TrainerConfig, pcfg: ProcessConfig,
                 boards: dict[str, WeightBoard], transport, status, stop, heartbeat: torch.Tensor,
                 export: ExportSpec | None, start_version: int, state: dict | None,
                 steps: StepEnv | None = None, out_embed: torch.Tensor | None = None) -> None:
    """The trainer process's body (started by TrainerHandle, through `_trainer_entry`)."""
    ignore_stop_signals()
    torch.set_num_threads(pcfg.threads)
    cleaned = clean_stale_exports(export.out_dir) if export is not None else []
    dev = torch.device(pcfg.device)
    models = {n: (k, m.to(dev)) for n, (k, m) in models.items()}
    trainer = make_trainer(models, tcfg, steps, out_embed)
    if isinstance(trainer, StepTrainer):  # its DPO rounds and guard can outlast the hang timeout: beat inside them
        trainer.on_step = lambda: heartbeat.__setitem__(0, time.time())
    if state is not None:
        trainer.load_state(state)
    version, exported_at, records = start_version, trainer.rounds, 0
    tried_at = exported_at  # the last export attempt (a failed one is retried export_every rounds later)
    crash_at, hang_at = _fault_at(pcfg.fault, "crash_after"), _fault_at(pcfg.fault, "hang_after")

    def do_export() -> None:
        nonlocal exported_at, tried_at
        heartbeat[0] = time.time()
        tried_at = trainer.rounds
        stats = {"rounds": trainer.rounds, "records": trainer.seen, "rejected": trainer.rejected,
                 "updater": tcfg.updater, "full_information": tcfg.full_information}
        try:
            path = export_pool(export, version, models, trainer.published, trainer.state(), stats, pcfg.keep_versions)
        except Exception as e:  # noqa: BLE001 - e.g. a full disk or a read-only folder: reported, the trainer goes on
            status.put({"event": "export_failed", "version": version, "round": trainer.rounds,
                        "error": f"{type(e).__name__}: {e}"})
            return
        exported_at = trainer.rounds
        status.put({"event": "export", "version": version, "round": trainer.rounds, "path": str(path)})

    def train_on(batch: list[Feedback]) -> None:
        nonlocal version, records
        t0 = time.perf_counter()
        seen = trainer.seen
        moved = []
        try:
            moved = [fb.to(dev) for fb in batch]
            losses = trainer.round(moved)
            if losses is None:  # a step trainer waiting for its round's requests
                records += len(batch)
                status.put({"event": "pairs", "records": records, "pending_pairs": trainer.pending,
                            "pairs": sum(len(fb.pairs) for fb in batch)})
                return
            guards, out, rejected, rollbacks = {}, {}, [], []
            for name in losses:
                v = trainer.guard(name)
                guards[name] = {"action": v.action, "candidate": v.candidate, "best": v.best,
                                "published": v.published, "ok": v.ok}
                if v.weights is not None:
                    out[name] = v.weights
                if v.action == "rollback":
                    rollbacks.append({"drafter": name, "held_out_acceptance": v.published, "best": v.best})
                elif not v.ok:
                    rejected.append({"drafter": name, "held_out_acceptance": v.candidate, "best": v.best,
                                     "why": v.reason})
        except Exception:
            _forget(trainer, moved)  # rule: nothing of a failed round stays where it would raise again
            trainer.seen = seen
            raise
        records += len(batch)
        version += 1
        for name, weights in out.items():  # the guard's choice: the candidate, or the best version (a rollback)
            boards[name].publish({k: v.detach().cpu() for k, v in weights.items()}, version)
        event = {"event": "round", "round": trainer.rounds, "version": version, "records": records,
                 "losses": losses, "published": [n for n in out if guards[n]["ok"]], "rejected": rejected,
                 "rolled_back": rollbacks, "guard": guards, "seconds": time.perf_counter() - t0}
        if getattr(trainer, "last_vocab", None):
            event["vocab"] = trainer.last_vocab
        if isinstance(trainer, StepTrainer):
            event.update(pairs=trainer.last_pairs, held_out_pairs=len(trainer.holdout))
        status.put(event)

    def train_safely(batch: list[Feedback]) -> None:
        """A round that raises is retried one record at a time; a record that still raises is skipped (counted,
        reported), so one poison record can neither stop adaptation nor use up the trainer's restarts."""
        try:
            train_on(batch)
            return
        except Exception as e:  # noqa: BLE001 - the records are retried one by one below
            error = e
        skipped = 0 if len(batch) > 1 else 1
        for fb in batch if len(batch) > 1 else []:
            heartbeat[0] = time.time()
            try:
                train_on([fb])
            except Exception as e:  # noqa: BLE001 - this record is the poison: skipped
                skipped, error = skipped + 1, e
        if skipped:
            status.put({"event": "skipped", "records": skipped, "error": f"{type(error).__name__}: {error}"[:500]})

    parent = os.getppid()
    status.put({"event": "started", "version": version, "rounds": trainer.rounds, "cleaned": cleaned})
    pending: list[Feedback] = []
    # rule: a token drafters' round trains on `batch` records (the guard judges them), no fewer; the step trainer
    # takes pairs as they come and runs its own rounds every `round_every` requests
    need = 1 if isinstance(trainer, StepTrainer) else tcfg.batch
    while not stop.is_set():
        if os.getppid() != parent:  # rule: the server is gone (killed): do not outlive it
            return
        heartbeat[0] = time.time()
        pending += get_batch(transport, tcfg.batch - len(pending), timeout=0.2)
        if len(pending) < need:
            continue
        batch, pending = pending, []
        train_safely(batch)
        if trainer.rounds == crash_at:
            raise RuntimeError(f"injected crash after {crash_at} rounds")
        if trainer.rounds == hang_at:
            while True:  # injected hang: no heartbeat from here on
                time.sleep(1)
        if export is not None and pcfg.export_every and trainer.rounds - tried_at >= pcfg.export_every:
            do_export()
    # at stop: every record handed over gets its round (the server hands over all it buffered before the stop); the
    # last round may be short
    while batch := pending + get_batch(transport, tcfg.batch - len(pending), timeout=0.5):
        pending = []
        heartbeat[0] = time.time()
        train_safely(batch)
    if export is not None and trainer.rounds > exported_at:
        do_export()
    status.put({"event": "stopped", "version": version, "rounds": trainer.rounds, "records": records,
                "unsaved_rounds": trainer.rounds - exported_at if export is not None else 0})


# ---------------------------------------------------------------------------------------------------------------------
class TrainerHandle:
    """The server's handle on the trainer process. `models` are the served modules (name -> (kind, module)): the
    trainer begins from their current weights (and `state`, when a restarted server resumes an export); a trainer
    restarted after a crash or hang continues from the last exported trainer state."""

    def __init__(self, models: dict[str, tuple[str, torch.nn.Module]], tcfg: TrainerConfig, pcfg: ProcessConfig,
                 export: ExportSpec | None = None, state: dict | None = None, start_version: int = 0,
                 log=sys.stderr, steps: StepEnv | None = None, out_embed: torch.Tensor | None = None):
        """start_version: the version the served modules hold (a restarted server: the exported version it loaded);
        the trainer numbers its versions after it. out_embed: the target's output embedding (vocabulary
        adaptation starts new draft tokens' rows from it)."""
        tcfg.validate()
        pcfg.validate()
        self.ctx = context()
        if tcfg.updater in STEP_UPDATERS and steps is None:
            raise ValueError(f"updater {tcfg.updater} adapts a lookahead step drafter: serve in lookahead mode")
        self.models, self.tcfg, self.pcfg, self.export, self.state = models, tcfg, pcfg, export, state
        self.steps, self.out_embed = steps, out_embed
        self.boards = {n: WeightBoard(versioned(k, m, tcfg.vocab_every > 0)) for n, (k, m) in models.items()}
        self.feedback = DropOldestQueue(queue.Queue(maxsize=1), pcfg.queue_size)
        self.status = self.ctx.Queue()
        self.heartbeat = torch.zeros(1, dtype=torch.float64).share_memory_()
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
        models = {n: (k, copy.deepcopy(m).cpu()) for n, (k, m) in self.models.items()}
        self.proc = self.ctx.Process(
            target=_trainer_entry, name="draftpool-trainer", daemon=True,
            args=(dict(os.environ), models, self.tcfg, self.pcfg, self.boards, self.feedback.q, self.status,
                  self.stop_event, self.heartbeat, self.export, start_version, self.state, self.steps, self.out_embed))
        self.sent_at_start = self.feedback.sent
        with spawn_signals():  # a Ctrl-C to the process group during the trainer's start-up does not kill it (nor
            # the fork server, launched by the first start)
            self.proc.start()
        self.state = None  # a restart takes the last exported state (`restart_state`), not the first start's

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
            if ev["event"] in ("round", "pairs", "stopped"):
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
