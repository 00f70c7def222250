"""The trainer process: pulls served feedback, updates the drafters, publishes versions, exports pool versions.

It runs apart from the server (torch.multiprocessing, spawn) with its own thread count and device
(`ProcessConfig.device`, e.g. cuda:1), so an update round never waits for the server and the server never waits for a
round: feedback crosses over a small queue fed by the server's drop-oldest buffer, weights come back through
shared-memory boards (`online/weights.py`), never through disk.

Each loop: heartbeat -> up to `batch` records -> one round of every learning drafter's updater (whose optimizer and
ensemble state live as long as the process, and across restarts of `online_adapt.py` through the exported state) ->
the guard -> publish the accepted drafters as version v. Every `export_every` rounds and at stop the adapted pool is
written as a new pool version `<out>/versions/v000123/` in the offline pipeline's format (plus `trainer_state.pt`),
into a temp folder renamed into place, and `<out>/latest.json` points at it.

`TrainerHandle` is the server's side: start, submit feedback (never blocks), poll (drain status, detect a crash or a
stale heartbeat, restart up to `max_restarts` times from the last exported trainer state, or from the served weights
before the first export), stop.
"""

from __future__ import annotations

import copy
import json
import os
import queue
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.multiprocessing as mp

from draftpool.io import atomic_dir, atomic_write_json
from online.feedback import DropOldestQueue, Feedback, get_batch
from online.step_trainer import STEP_UPDATERS, StepEnv, StepTrainer
from online.trainer import OnlineTrainer, TrainerConfig, versioned
from online.weights import WeightBoard, assign


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


@dataclass
class ExportSpec:
    """Where and how the trainer writes pool versions: the source pool's manifest and folders give the format."""

    out_dir: str
    source_pool: str
    target: object  # draftpool.target.TargetInfo


# ---------------------------------------------------------------------------------------------------------------------
def latest_version(out_dir: str | Path) -> tuple[int, Path] | None:
    """(version, folder) of the newest complete exported pool version, or None."""
    path = Path(out_dir) / "latest.json"
    if not path.is_file():
        return None
    info = json.loads(path.read_text())
    folder = Path(out_dir) / info["path"]
    return (int(info["version"]), folder) if (folder / "pool.json").is_file() else None


def export_pool(spec: ExportSpec, version: int, models: dict[str, tuple[str, torch.nn.Module]],
                params: dict[str, dict[str, torch.Tensor]], trainer_state: dict, stats: dict,
                keep: int = 3) -> Path:
    """Write the pool with `params` as `<out>/versions/v{version}` (atomic), then point latest.json at it."""
    from transformers import AutoTokenizer

    from draftpool.pool import write_eagle3, write_llama

    src = Path(spec.source_pool)
    manifest = json.loads((src / "pool.json").read_text())
    out = Path(spec.out_dir)
    name = f"v{version:06d}"
    with atomic_dir(out / "versions" / name) as tmp:
        for drafter, (kind, module) in models.items():
            entry = manifest["drafters"][drafter]
            meta_path = src / entry["path"] / "draftpool.json"
            meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {"kind": kind}
            meta["online"] = {"version": version, "source_pool": str(src), **stats}
            m = copy.deepcopy(module).cpu()
            assign(m, params[drafter])  # the version's weights and draft vocabulary
            if kind == "eagle3":
                write_eagle3(m, tmp / drafter, spec.target, meta)
            else:
                write_llama(m, AutoTokenizer.from_pretrained(src / entry["path"]), tmp / drafter, meta)
            entry.update(path=drafter, online={"version": version, **stats})
        # the version holds only the drafters trained here (vLLM mode and lookahead adapt one head of the pool)
        manifest["drafters"] = {n: e for n, e in manifest["drafters"].items() if n in models}
        manifest.pop("matrix", None)  # measured on the source weights: no longer true of these
        manifest["online"] = {"version": version, "source_pool": str(src), **stats}
        (tmp / "pool.json").write_text(json.dumps(manifest, indent=2) + "\n")
        torch.save(trainer_state, tmp / "trainer_state.pt")
    atomic_write_json(out / "latest.json", {"version": version, "path": f"versions/{name}"})
    for old in sorted((out / "versions").glob("v*"))[:-keep]:  # rule: older versions go only after latest moved
        shutil.rmtree(old, ignore_errors=True)
    return out / "versions" / name


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


def trainer_main(models: dict[str, tuple[str, torch.nn.Module]], tcfg: TrainerConfig, pcfg: ProcessConfig,
                 boards: dict[str, WeightBoard], transport, status, stop, heartbeat: torch.Tensor,
                 export: ExportSpec | None, start_version: int, state: dict | None,
                 steps: StepEnv | None = None, out_embed: torch.Tensor | None = None) -> None:
    """The trainer process's body (spawned by TrainerHandle)."""
    torch.set_num_threads(pcfg.threads)
    dev = torch.device(pcfg.device)
    models = {n: (k, m.to(dev)) for n, (k, m) in models.items()}
    trainer = make_trainer(models, tcfg, steps, out_embed)
    if isinstance(trainer, StepTrainer):  # its DPO rounds and guard can outlast the hang timeout: beat inside them
        trainer.on_step = lambda: heartbeat.__setitem__(0, time.time())
    if state is not None:
        trainer.load_state(state)
    version, exported_at, records = start_version, trainer.rounds, 0
    crash_at, hang_at = _fault_at(pcfg.fault, "crash_after"), _fault_at(pcfg.fault, "hang_after")

    def do_export() -> None:
        nonlocal exported_at
        heartbeat[0] = time.time()
        stats = {"rounds": trainer.rounds, "records": trainer.seen, "rejected": trainer.rejected,
                 "updater": tcfg.updater, "full_information": tcfg.full_information}
        path = export_pool(export, version, models, trainer.published, trainer.state(), stats, pcfg.keep_versions)
        exported_at = trainer.rounds
        status.put({"event": "export", "version": version, "path": str(path)})

    def train_on(batch: list[Feedback]) -> None:
        nonlocal version, records
        t0 = time.perf_counter()
        losses = trainer.round([fb.to(dev) for fb in batch])
        records += len(batch)
        if losses is None:  # a step trainer waiting for its round's requests
            status.put({"event": "pairs", "records": records, "pending_pairs": trainer.pending,
                        "pairs": sum(len(fb.pairs) for fb in batch)})
            return
        version += 1
        published, rejected = [], []
        guards = {}
        for name in losses:
            ok, acc, last = trainer.guard(name)
            guards[name] = {"candidate": acc, "published": last, "ok": ok}
            if ok:
                boards[name].publish({k: v.detach().cpu() for k, v in trainer.candidate(name).items()}, version)
                published.append(name)
            else:
                rejected.append({"drafter": name, "held_out_acceptance": acc, "published": last})
        event = {"event": "round", "round": trainer.rounds, "version": version, "records": records,
                 "losses": losses, "published": published, "rejected": rejected, "seconds": time.perf_counter() - t0}
        if getattr(trainer, "last_vocab", None):
            event["vocab"] = trainer.last_vocab
        if isinstance(trainer, StepTrainer):
            event.update(pairs=trainer.last_pairs, held_out_pairs=len(trainer.holdout), guard=guards)
        status.put(event)

    parent = os.getppid()
    status.put({"event": "started", "version": version, "rounds": trainer.rounds})
    while not stop.is_set():
        if os.getppid() != parent:  # rule: the server is gone (killed): do not outlive it
            return
        heartbeat[0] = time.time()
        batch = get_batch(transport, tcfg.batch, timeout=0.2)
        if not batch:
            continue
        train_on(batch)
        if trainer.rounds == crash_at:
            raise RuntimeError(f"injected crash after {crash_at} rounds")
        if trainer.rounds == hang_at:
            while True:  # injected hang: no heartbeat from here on
                time.sleep(1)
        if export is not None and pcfg.export_every and trainer.rounds - exported_at >= pcfg.export_every:
            do_export()
    # at stop: the records already handed over (the transport holds at most 2) get their round
    heartbeat[0] = time.time()
    if batch := get_batch(transport, tcfg.batch, timeout=0.5):
        train_on(batch)
    if export is not None and trainer.rounds > exported_at:
        do_export()
    status.put({"event": "stopped", "version": version, "rounds": trainer.rounds})


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
        self.ctx = mp.get_context("spawn")
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
        self.log = log

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
            target=trainer_main, name="draftpool-trainer", daemon=True,
            args=(models, self.tcfg, self.pcfg, self.boards, self.feedback.q, self.status, self.stop_event,
                  self.heartbeat, self.export, start_version, self.state, self.steps, self.out_embed))
        self.proc.start()
        self.state = None  # a restart takes the last exported state (`restart_state`), not the first start's

    def restart_state(self) -> tuple[dict | None, str]:
        """What a restarted trainer continues from: the last exported version's trainer state (its weights with their
        optimizer moments, optimistic hints and ensemble weights, consistent with each other; the rounds since that
        export are lost), or, with no export yet, the served weights and a fresh optimizer. -> (state, description)"""
        found = latest_version(self.export.out_dir) if self.export is not None else None
        path = found[1] / "trainer_state.pt" if found else None
        if path is None or not path.is_file():
            return None, "the served weights (no exported state yet: fresh optimizer state)"
        return torch.load(path, weights_only=False), f"exported version {found[0]}'s state (optimizer state kept)"

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
            elif ev["event"] == "started":
                self.starts.append(ev)
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
        """Ask the trainer to finish its round, export and exit; kill it after `timeout`. -> last events."""
        if self.proc is None:
            return self._drain()
        if not self.proc.is_alive():  # died since the last poll (e.g. at its start): a fault, not a clean stop
            self.faults.append({"kind": "crash", "why": f"trainer process exited with code {self.proc.exitcode}",
                                "time": time.time()})
            print(f"[online] {self.faults[-1]['why']} before the stop: nothing exported", file=self.log, flush=True)
            self.proc = None
            return self._drain()
        self.feedback.flush()
        self.stop_event.set()
        self.proc.join(timeout)
        if self.proc.is_alive():
            print(f"[online] trainer did not stop within {timeout:.0f} s: killed", file=self.log, flush=True)
            self.proc.kill()
            self.proc.join(10)
        self.proc = None
        return self._drain()
