"""The trainer process's body: pulls served feedback, updates the drafters, publishes versions, exports pool versions.

Forked from the fork server (online/trainer/process.py: `context`, `PRELOAD` names this module) and started by
`TrainerHandle.start` through `_trainer_entry`; it runs with its own thread count and device (`ProcessConfig`).

Each loop (`TrainerProcess.run`): heartbeat -> records, gathered over loops until the trainer's `min_records` (fewer
only at the stop) -> one round of every learning drafter's updater (whose optimizer and ensemble state live as long
as the process, and across restarts of `online_adapt.py` through the exported state) -> the guard -> publish the
accepted drafters as version v. Every `export_every` rounds and at stop the adapted pool is written as a new pool
version `<out>/versions/v000123/` in the offline pipeline's format (plus `trainer_state.pt`), into a temp folder
renamed into place, and `<out>/latest.json` points at it (online/trainer/versions.py).

What trains is a `Trainer`, built in the process by the handle's factory: the token drafters' (`TokenTrainers`,
online/trainer/token_trainer.py) or the lookahead step drafter's (online/lookahead/step_trainer.py); this module asks
only the protocol. The trainer ignores SIGINT / SIGTERM (a Ctrl-C reaches the whole process group): only the server
stops it. A round that raises is retried record by record and the records that still raise are skipped (`skipped`
events): a poison record does not take the trainer down. A failed export is reported (`export_failed`) and the trainer
goes on. It stops when its parent (the fork server) is gone: the rule "do not outlive the server".
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Protocol

import torch

from draftpool.pool import Member
from online.trainer.config import ProcessConfig, TrainerConfig
from online.trainer.feedback import get_batch
from online.trainer.forkserver_shim import release_alive_pipe
from online.trainer.guard import Verdict
from online.trainer.signals import ignore_stop_signals
from online.trainer.throttle import Serving, Throttle
from online.trainer.token_trainer import OnlineTrainer
from online.trainer.versions import ExportSpec, clean_stale_exports, export_pool
from online.trainer.weights import WeightBoard


class Trainer(Protocol):
    """What the trainer process asks of a trainer (OnlineTrainer, StepTrainer)."""

    rounds: int  # rounds run
    seen: int  # records taken
    rejected: int  # versions the guard held back
    min_records: int  # records a round waits for (fewer only at the stop)
    published: dict[str, dict[str, torch.Tensor]]  # the version of each drafter the server was last given

    def round(self, batch: list) -> dict | None:
        """One round on `batch` -> {drafter: loss}, or None while it waits for more records."""

    def guard(self, name: str) -> Verdict: ...

    def round_event(self) -> dict[str, Any]:
        """What the last round adds to its event (vocabulary swaps, pairs)."""

    def waiting_event(self, batch: list) -> dict[str, Any]:
        """What a `waiting` event says of records taken while the round waits."""

    def forget(self, records: list) -> None:
        """Take the records of a failed round out of everything that would read them again."""

    def beat_with(self, beat: Callable[[], None]) -> None:
        """The process's heartbeat, for work that can outlast the hang timeout."""

    def state(self) -> dict: ...

    def load_state(self, state: dict) -> None: ...


class TrainerFactory(Protocol):
    """Builds the trainer inside the trainer process. It crosses to that process pickled: a module-level function,
    or an instance of a module-level class of a module the process can import."""

    updaters: tuple[str, ...]  # the trainer.updater values its trainers take

    def __call__(self, members: list[Member], tcfg: TrainerConfig, out_embed: torch.Tensor | None) -> Trainer: ...


class TokenTrainers:
    """The token drafters' trainer (OGD, optimistic, Hedge ensemble)."""

    updaters = ("ogd", "optimistic", "ensemble")

    def __call__(self, members: list[Member], tcfg: TrainerConfig, out_embed: torch.Tensor | None) -> OnlineTrainer:
        return OnlineTrainer(members, tcfg, out_embed)


TOKEN_TRAINERS = TokenTrainers()


def _trainer_entry(env: dict[str, str], *args) -> None:
    """The trainer process's entry: the server's environment at this start (a forked trainer inherits the fork
    server's, taken at its launch), then `trainer_main`. It lets go of the fork server's alive pipe (multiprocessing
    hands every forked child a copy, so that it could fork in turn; a trainer never does): the fork server then exits
    when the server dies however it dies, and the trainer, its child, sees that and stops."""
    ignore_stop_signals()
    release_alive_pipe()
    if dict(os.environ) != env:
        os.environ.clear()
        os.environ.update(env)
    trainer_main(*args)


class TrainerProcess:
    """The loop of the trainer process around one `Trainer`: rounds, the guard's verdicts published on the weight
    boards, exports, status events."""

    def __init__(self, trainer: Trainer, members: list[Member], tcfg: TrainerConfig, pcfg: ProcessConfig,
                 boards: dict[str, WeightBoard], status, heartbeat: torch.Tensor, export: ExportSpec | None,
                 version: int, device: torch.device):
        self.trainer, self.members, self.tcfg, self.pcfg = trainer, members, tcfg, pcfg
        self.boards, self.status, self.heartbeat, self.export = boards, status, heartbeat, export
        self.version, self.device = version, device
        self.exported_at = self.tried_at = trainer.rounds  # the last export, and the last attempt (a failed one is
        self.records = 0  # retried export_every rounds later)
        self.throttle: Throttle | None = None

    def beat(self) -> None:
        self.heartbeat[0] = time.time()

    def export_now(self) -> None:
        """Write the pool version now; a failure is an event, and the trainer goes on."""
        t = self.trainer
        self.beat()
        self.tried_at = t.rounds
        stats = {"rounds": t.rounds, "records": t.seen, "rejected": t.rejected, "updater": self.tcfg.updater,
                 "full_information": self.tcfg.full_information}
        try:
            path = export_pool(self.export, self.version, self.members, t.published, t.state(), stats,
                               self.pcfg.keep_versions)
        except Exception as e:  # noqa: BLE001 - e.g. a full disk or a read-only folder: reported, the trainer goes on
            self.status.put({"event": "export_failed", "version": self.version, "round": t.rounds,
                             "error": f"{type(e).__name__}: {e}"})
            return
        self.exported_at = t.rounds
        self.status.put({"event": "export", "version": self.version, "round": t.rounds, "path": str(path)})

    def verdicts(self, losses: dict) -> tuple[dict, dict, list, list]:
        """The guard on every drafter the round updated -> (guard figures, weights to publish, rejected, rolled
        back)."""
        guards, out, rejected, rollbacks = {}, {}, [], []
        for name in losses:
            v = self.trainer.guard(name)
            guards[name] = {"action": v.action, "candidate": v.candidate, "best": v.best, "published": v.published,
                            "ok": v.ok}
            if v.weights is not None:
                out[name] = v.weights
            if v.action == "rollback":
                rollbacks.append({"drafter": name, "held_out_acceptance": v.published, "best": v.best})
            elif not v.ok:
                rejected.append({"drafter": name, "held_out_acceptance": v.candidate, "best": v.best,
                                 "why": v.reason})
        return guards, out, rejected, rollbacks

    def train_on(self, batch: list) -> None:
        """One round on `batch`, its verdicts published as the next version, its event sent."""
        t, t0 = self.trainer, time.perf_counter()
        seen, moved = t.seen, []
        try:
            moved = [fb.to(self.device) for fb in batch]
            losses = t.round(moved)
            if losses is None:  # a trainer waiting for its round's records
                self.records += len(batch)
                self.status.put({"event": "waiting", "records": self.records, **t.waiting_event(batch)})
                return
            guards, out, rejected, rollbacks = self.verdicts(losses)
        except Exception:
            t.forget(moved)  # rule: nothing of a failed round stays where it would raise again
            t.seen = seen
            raise
        self.records += len(batch)
        self.version += 1
        for name, weights in out.items():  # the guard's choice: the candidate, or the best version (a rollback)
            self.boards[name].publish({k: v.detach().cpu() for k, v in weights.items()}, self.version)
        self.status.put({"event": "round", "round": t.rounds, "version": self.version, "records": self.records,
                         "losses": losses, "published": [n for n in out if guards[n]["ok"]], "rejected": rejected,
                         "rolled_back": rollbacks, "guard": guards, "seconds": time.perf_counter() - t0,
                         "rested_s": round(self.throttle.rested_s, 3) if self.throttle else 0.0,  # process.duty
                         **t.round_event()})

    def train_safely(self, batch: list) -> None:
        """A round that raises is retried one record at a time; a record that still raises is skipped (counted,
        reported), so one poison record can neither stop adaptation nor use up the trainer's restarts."""
        try:
            self.train_on(batch)
            return
        except Exception as e:  # noqa: BLE001 - the records are retried one by one below
            error = e
        skipped = 0 if len(batch) > 1 else 1
        for fb in batch if len(batch) > 1 else []:
            self.beat()
            try:
                self.train_on([fb])
            except Exception as e:  # noqa: BLE001 - this record is the poison: skipped
                skipped, error = skipped + 1, e
        if skipped:
            why = f"{type(error).__name__}: {error}"[:500]
            self.status.put({"event": "skipped", "records": skipped, "error": why})

    def run(self, transport, stop, server: Serving) -> None:
        """Rounds until the server's stop, then every record handed over gets its round and the last export."""
        t, pcfg = self.trainer, self.pcfg
        self.throttle = Throttle(pcfg.duty, server.busy, stop.is_set, self.beat)
        parent = os.getppid()
        pending: list = []
        while not stop.is_set():
            if os.getppid() != parent:  # rule: the server is gone (killed): do not outlive it
                return
            self.beat()
            pending += get_batch(transport, self.tcfg.batch - len(pending), timeout=0.2)
            if len(pending) < t.min_records:
                continue
            batch, pending = pending, []
            mark, t0 = server.mark(), time.monotonic()
            server.computing(True)
            try:
                self.train_safely(batch)
            finally:
                server.computing(False)
            self.throttle.after(time.monotonic() - t0, server.overlapped(mark))
            if self.export is not None and pcfg.export_every and t.rounds - self.tried_at >= pcfg.export_every:
                self.export_now()
        # at stop: every record handed over gets its round (the server hands over all it buffered before the
        # stop); the last round may be short
        while batch := pending + get_batch(transport, self.tcfg.batch - len(pending), timeout=0.5):
            pending = []
            self.beat()
            self.train_safely(batch)
        if self.export is not None and t.rounds > self.exported_at:
            self.export_now()
        self.status.put({"event": "stopped", "version": self.version, "rounds": t.rounds, "records": self.records,
                         "unsaved_rounds": t.rounds - self.exported_at if self.export is not None else 0})


def trainer_main(members: list[Member], tcfg: TrainerConfig, pcfg: ProcessConfig, boards: dict[str, WeightBoard],
                 transport, status, stop, heartbeat: torch.Tensor, export: ExportSpec | None, start_version: int,
                 state: dict | None, out_embed: torch.Tensor | None, factory: TrainerFactory,
                 serving: torch.Tensor | None = None) -> None:
    """The trainer process's body (started by TrainerHandle, through `_trainer_entry`). `factory` builds the trainer
    (TrainerHandle's `trainer_factory`); `serving`: the server's busy flag (`Serving`), which `process.duty` reads."""
    ignore_stop_signals()
    torch.set_num_threads(pcfg.threads)
    cleaned = clean_stale_exports(export.out_dir) if export is not None else []
    dev = torch.device(pcfg.device)
    members = [replace(m, module=m.module.to(dev)) for m in members]
    for m in members:  # rule: updates move a low-rank specialist off base + adapters: its exports are whole heads
        if getattr(m.module, "low_rank", None) is not None:
            m.module.low_rank = None
    trainer = factory(members, tcfg, out_embed)
    loop = TrainerProcess(trainer, members, tcfg, pcfg, boards, status, heartbeat, export, start_version, dev)
    trainer.beat_with(loop.beat)  # rule: its long rounds and guards beat inside them
    if state is not None:
        trainer.load_state(state)
    loop.exported_at = loop.tried_at = trainer.rounds
    status.put({"event": "started", "version": start_version, "rounds": trainer.rounds, "cleaned": cleaned})
    if pcfg.nice:  # rule: after the start-up (a start at the lowest priority could outlast start_timeout)
        os.nice(pcfg.nice)
    loop.run(transport, stop, Serving(serving if serving is not None else torch.zeros(3, dtype=torch.int64)))
