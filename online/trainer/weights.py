"""Versioned drafter weights in shared memory: the trainer publishes, the server swaps them in between decode cycles.

Two slots of one flat float buffer each (double buffering) and a small int64 header, all in shared memory
(`share_memory_`, so they cross a torch.multiprocessing boundary by handle, never through disk). Each slot carries a
sequence counter (seqlock): the writer sets it to the next odd value, copies, sets it to the next even value and only
then points `active` at the slot (set, never flipped, so a writer that died mid-copy cannot invert the parity for
the next one). A reader copies the active slot out and keeps the copy only if the slot's counter was even and unchanged
across the copy, so a torn (half-written) version can never be served: the reader keeps its current weights and
tries again at the next cycle boundary.
"""

from __future__ import annotations

import torch

# header layout (int64): seq of slot 0, seq of slot 1, active slot, version of slot 0, version of slot 1
SEQ, ACTIVE, VERSION = (0, 1), 2, (3, 4)


class WeightBoard:
    def __init__(self, template: dict[str, torch.Tensor]):
        """template: name -> tensor giving the names, shapes and dtypes of the published weights."""
        if not template:
            raise ValueError("nothing to publish: the weight template is empty")
        self.layout: list[tuple[str, tuple[int, ...], torch.dtype, int, int]] = []  # name, shape, dtype, start, end
        start = 0
        for name, t in template.items():
            self.layout.append((name, tuple(t.shape), t.dtype, start, start + t.numel()))
            start += t.numel()
        self.slots = torch.zeros(2, start, dtype=torch.float32).share_memory_()  # [2, numel]
        self.header = torch.zeros(5, dtype=torch.int64).share_memory_()
        self.header[ACTIVE] = -1  # nothing published yet

    def publish(self, params: dict[str, torch.Tensor], version: int) -> None:
        """(single writer) write `params` as `version` into the inactive slot, then make it the active one."""
        if set(params) != {name for name, *_ in self.layout}:
            raise ValueError("published weights do not match the board's template")
        if version <= self.latest():
            raise ValueError(f"version {version} is not newer than the published {self.latest()}")
        for name, shape, *_ in self.layout:
            if tuple(params[name].shape) != shape:
                raise ValueError(f"{name}: shape {tuple(params[name].shape)} != template {shape}")
        slot = 1 - int(self.header[ACTIVE]) if int(self.header[ACTIVE]) >= 0 else 0
        buf = self.slots[slot]
        seq = int(self.header[SEQ[slot]])
        # rule: odd while writing, set (not flipped): a writer that died mid-copy left it odd, and a flip would make
        # the copy look complete while it is written and hide it once it is; odd -> the next odd still changes it
        self.header[SEQ[slot]] = seq + 1 if seq % 2 == 0 else seq + 2
        for name, _, _, a, b in self.layout:
            buf[a:b].copy_(params[name].detach().reshape(-1))
        self.header[VERSION[slot]] = version
        self.header[SEQ[slot]] += 1  # rule: even once the copy is complete
        self.header[ACTIVE] = slot  # rule: readers are pointed at a slot only after it is complete

    def latest(self) -> int:
        """The active version (0 when nothing is published)."""
        slot = int(self.header[ACTIVE])
        return int(self.header[VERSION[slot]]) if slot >= 0 else 0

    def read(self, newer_than: int) -> tuple[int, dict[str, torch.Tensor]] | None:
        """(any reader) a consistent copy of the active version if it is newer than `newer_than`, else None
        (nothing new, or the slot changed during the copy: try again later)."""
        slot = int(self.header[ACTIVE])
        if slot < 0:
            return None
        seq = int(self.header[SEQ[slot]])
        version = int(self.header[VERSION[slot]])
        if seq % 2 or version <= newer_than:
            return None
        flat = self.slots[slot].clone()
        if int(self.header[SEQ[slot]]) != seq or int(self.header[VERSION[slot]]) != version:
            return None  # rule: a slot rewritten during the copy is torn: discard it
        return version, {name: flat[a:b].view(shape).to(dtype) for name, shape, dtype, a, b in self.layout}


@torch.no_grad()
def assign(module: torch.nn.Module, tensors: dict[str, torch.Tensor]) -> None:
    """Copy a published version into a module in place: parameters and buffers (an EAGLE-3 head's d2t / t2d) by name,
    each cast to the module's own device and dtype."""
    for key, value in tensors.items():
        try:
            t = module.get_parameter(key)
        except AttributeError:
            t = module.get_buffer(key)
        t.copy_(value.to(device=t.device, dtype=t.dtype))
