"""The server's side of the weight board: swap published drafter versions in between decode cycles.

`HotSwap.poll()` runs at a cycle boundary (never inside one): for every drafter whose board holds a newer complete
version it copies the weights into the served module in place and returns that drafter's index. The decoder then
forgets the drafter's cache (its keys were computed by the old weights; the next sync prefills the committed tokens
again) and rebuilds the head bank's stacked weights. The target's cache is untouched, so the output cannot change:
at temperature 0 it is the target's greedy continuation whichever weights draft.
"""

from __future__ import annotations

import time

import torch

from online.trainer.weights import WeightBoard, assign


class HotSwap:
    def __init__(self, boards: dict[str, WeightBoard], modules: dict[str, torch.nn.Module], start: int = 0):
        """boards and modules keyed by drafter name, in the decoder's drafter order; `start`: the version the modules
        hold now (0: the offline pool; a restarted server: the exported version it loaded)."""
        if set(boards) - set(modules):
            raise ValueError(f"boards for unknown drafters: {sorted(set(boards) - set(modules))}")
        self.boards, self.modules = boards, modules
        self.names = list(modules)
        self.version = {n: start for n in self.names}  # version served now
        self.since = {n: time.monotonic() for n in self.names}  # when it was swapped in (monotonic clock)
        self.swaps = 0
        self.seconds = 0.0

    @torch.no_grad()
    def poll(self) -> list[int]:
        """Swap in every newer complete version; -> indices (in `names`) of the drafters that changed."""
        changed = []
        for i, name in enumerate(self.names):
            board = self.boards.get(name)
            got = board.read(self.version[name]) if board is not None else None
            if got is None:
                continue  # nothing newer, or a slot rewritten during the copy (retry at the next boundary)
            version, params = got
            assign(self.modules[name], params)  # weights and, with vocabulary adaptation, d2t / t2d together
            self.version[name] = version
            self.since[name] = time.monotonic()
            self.swaps += 1
            changed.append(i)
        return changed

    def versions(self) -> dict[str, int]:
        return dict(self.version)

    def ages(self) -> dict[str, float]:
        """Seconds since each drafter's served version was swapped in (since the start for the start version)."""
        now = time.monotonic()
        return {n: now - t for n, t in dict(self.since).items()}
