"""The run summary `online_adapt.py` prints at the end (and `main_cfg` returns), one schema for every engine: what
was served, what stopped the run, and with adaptation on what the trainer did and whether it was saved. vLLM serving
(online/vllm/adapt.py) adds its engine's figures under "vllm"."""

from __future__ import annotations

import time
from typing import Any

from online.trainer.hotswap import HotSwap
from online.trainer.process import TrainerHandle


def run_summary(engine: str, served: int, failed: int, errors: int, stopped_by: str, started: float,
                handle: TrainerHandle | None, events: list[dict], swap: HotSwap | None = None,
                answers: str | None = None, skipped_answered: int = 0, indexed_answers: int = 0,
                **extra: Any) -> dict[str, Any]:
    """served: requests decoded (a refused one is not); failed: requests whose decode raised; errors: error records
    (bad lines, refused and failed requests); started: time.time() at the start; events: the trainer's stop events
    (its last names how the stop went); swap: the server's hot swap, where it swaps versions in; answers: the
    answers file (None: the engine's clients got the answers, nothing was recorded). extra: the engine's own."""
    out: dict[str, Any] = {"engine": engine, "served": served, "errors": errors, "failed": failed,
                           "skipped_answered": skipped_answered, "indexed_answers": indexed_answers,
                           "stopped_by": stopped_by, "seconds": time.time() - started, "answers": answers}
    if handle is not None:
        out.update(trainer_faults=handle.faults, trainer_restarts=handle.restarts, feedback_dropped=handle.dropped,
                   rounds=handle.rounds_seen, exports=[e["path"] for e in handle.exports],
                   swaps=swap.swaps if swap is not None else 0, versions=swap.versions() if swap is not None else {},
                   last_event=events[-1] if events else None, trainer_skipped=handle.skipped,
                   adaptation_lost=handle.lost)
    return out | extra
