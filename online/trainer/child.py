"""The trainer process's body: pulls served feedback, updates the drafters, publishes versions, exports pool versions.

Forked from the fork server (online/trainer/process.py: `context`, `PRELOAD` names this module) and started by
`TrainerHandle.start` through `_trainer_entry`; it runs with its own thread count and device (`ProcessConfig`).

Each loop: heartbeat -> `batch` records (token drafters: gathered over loops, fewer only at the stop) -> one round of
every learning drafter's updater (whose optimizer and ensemble state live as long as the process, and across restarts
of `online_adapt.py` through the exported state) -> the guard -> publish the accepted drafters as version v. Every
`export_every` rounds and at stop the adapted pool is written as a new pool version `<out>/versions/v000123/` in the
offline pipeline's format (plus `trainer_state.pt`), into a temp folder renamed into place, and `<out>/latest.json`
points at it (online/trainer/versions.py).

The trainer ignores SIGINT / SIGTERM (a Ctrl-C reaches the whole process group): only the server stops it. A round
that raises is retried record by record and the records that still raise are skipped (`skipped` events): a poison
record does not take the trainer down. A failed export is reported (`export_failed`) and the trainer goes on. It
stops when its parent (the fork server) is gone: the rule "do not outlive the server".
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import torch

from online.lookahead.step_trainer import STEP_UPDATERS, StepEnv, StepTrainer
from online.trainer.config import ProcessConfig
from online.trainer.feedback import Feedback, get_batch
from online.trainer.forkserver_shim import release_alive_pipe
from online.trainer.signals import ignore_stop_signals
from online.trainer.throttle import Serving, Throttle
from online.trainer.token_trainer import OnlineTrainer, TrainerConfig
from online.trainer.versions import ExportSpec, clean_stale_exports, export_pool
from online.trainer.weights import WeightBoard

# (models, trainer config, step env, output embedding) -> a trainer (OnlineTrainer or StepTrainer, or one like them)
TrainerFactory = Callable[[dict[str, tuple[str, torch.nn.Module]], TrainerConfig, StepEnv | None, torch.Tensor | None],
                          object]


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


def make_trainer(models: dict[str, tuple[str, torch.nn.Module]], tcfg: TrainerConfig, steps: StepEnv | None,
                 out_embed: torch.Tensor | None = None) -> OnlineTrainer | StepTrainer:
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
                 steps: StepEnv | None = None, out_embed: torch.Tensor | None = None,
                 factory: TrainerFactory = make_trainer, serving: torch.Tensor | None = None) -> None:
    """The trainer process's body (started by TrainerHandle, through `_trainer_entry`). `factory` builds the trainer
    (`make_trainer`'s signature; TrainerHandle's `trainer_factory`); `serving`: the server's busy flag (`Serving`),
    which `process.duty` reads."""
    ignore_stop_signals()
    torch.set_num_threads(pcfg.threads)
    cleaned = clean_stale_exports(export.out_dir) if export is not None else []
    dev = torch.device(pcfg.device)
    models = {n: (k, m.to(dev)) for n, (k, m) in models.items()}
    trainer = factory(models, tcfg, steps, out_embed)
    if isinstance(trainer, StepTrainer):  # its DPO rounds and guard can outlast the hang timeout: beat inside them
        trainer.on_step = lambda: heartbeat.__setitem__(0, time.time())
    if state is not None:
        trainer.load_state(state)
    version, exported_at, records = start_version, trainer.rounds, 0
    tried_at = exported_at  # the last export attempt (a failed one is retried export_every rounds later)

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
                 "rolled_back": rollbacks, "guard": guards, "seconds": time.perf_counter() - t0,
                 "rested_s": round(throttle.rested_s, 3)}  # process.duty: rest so far
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
    server = Serving(serving if serving is not None else torch.zeros(2, dtype=torch.int64))
    throttle = Throttle(pcfg.duty, server.busy, stop.is_set, lambda: heartbeat.__setitem__(0, time.time()))
    status.put({"event": "started", "version": version, "rounds": trainer.rounds, "cleaned": cleaned})
    if pcfg.nice:  # rule: after the start-up (a start at the lowest priority could outlast start_timeout)
        os.nice(pcfg.nice)
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
        mark, t0 = server.mark(), time.monotonic()
        train_safely(batch)
        throttle.after(time.monotonic() - t0, server.overlapped(mark))
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
