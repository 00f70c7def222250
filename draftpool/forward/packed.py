"""oneDNN-prepacked linears for decoding on CPU, and the few row counts a long pass runs at.

The lean forward (draftpool/forward/lean.py) runs the target's linears through `Linear`; drafters run theirs through
`packed_view` (`PackedLinear`: the module's own weights, repacked when a hot swap changes them in place). oneDNN keeps
native memory for every row count a linear has run at, so a pass of more than LONG_PASS rows runs padded to
`padded_rows` (lean.py's docstring, memory).
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F

PACK_ROWS = 4  # oneDNN's row-count hint for the packed layout (4: fastest for 1..9 rows on the CPUs tried)

LONG_PASS = 32  # causal passes of more rows (prefills) are padded to a few row counts; shorter ones (chains) never


def padded_rows(rows: int) -> int:
    """The row count a causal pass of `rows` > LONG_PASS runs at: rounded up to a multiple of 16 up to 256 rows,
    above that to eight steps per doubling (100 -> 112, 300 -> 320, 1000 -> 1024); fewer rows run as they are."""
    if rows <= LONG_PASS:
        return rows
    step = max(16, 1 << (rows.bit_length() - 4))
    return -(-rows // step) * step


_CAN_PACK: dict[torch.dtype, bool] = {}  # dtype -> whether this CPU's oneDNN packs it (bf16 needs AVX-512 or
# AVX-NE-CONVERT; on an AVX2-only CPU the reorder raises)


def _packable(device: torch.device, dtype: torch.dtype) -> bool:
    if device.type != "cpu" or dtype not in (torch.float32, torch.bfloat16):
        return False
    if not torch.backends.mkldnn.is_available():
        return False
    if dtype not in _CAN_PACK:
        try:
            torch.ops.mkldnn._reorder_linear_weight(torch.zeros(8, 8, dtype=dtype), PACK_ROWS)
            _CAN_PACK[dtype] = True
        except RuntimeError:
            _CAN_PACK[dtype] = False
    return _CAN_PACK[dtype]


@torch.library.custom_op("draftpool::packed_linear", mutates_args=())
def packed_linear(x: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor | None, out_features: int) -> torch.Tensor:
    """x [T,in] times a oneDNN-prepacked weight -> [T,out]. An opaque op for torch.compile: inductor cannot take a
    prepacked weight as a graph input (its lowering of `_linear_pointwise` raises), so compiled blocks call the
    same kernel eager code does (and keep its row invariance)."""
    return torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [None], "")


@packed_linear.register_fake
def _(x: torch.Tensor, packed: torch.Tensor, bias: torch.Tensor | None, out_features: int) -> torch.Tensor:
    return x.new_empty(x.shape[0], out_features)


class Linear:
    """x [T,in] -> one output per fused linear layer [T,out_i]; oneDNN-prepacked (one fused matrix) or plain."""

    def __init__(self, mods: list[torch.nn.Linear], prepack: bool):
        self.sizes = [m.out_features for m in mods]
        self.packed = None
        if prepack:
            w = torch.cat([m.weight for m in mods]) if len(mods) > 1 else mods[0].weight
            b = None if mods[0].bias is None else torch.cat([m.bias for m in mods])
            self.packed, self.bias = torch.ops.mkldnn._reorder_linear_weight(w.contiguous(), PACK_ROWS), b
        else:
            self.parts = [(m.weight, m.bias) for m in mods]

    def __call__(self, x: torch.Tensor) -> list[torch.Tensor]:
        return _linear(x, self.packed is not None, self.sizes, self.tensors())

    def tensors(self) -> tuple:
        """What a compiled block takes as inputs: (packed weight, bias), or (weight, bias) per part."""
        return (self.packed, self.bias) if self.packed is not None else tuple(t for part in self.parts for t in part)


def _linear(x: torch.Tensor, packed: bool, sizes: list[int], ts: tuple) -> list[torch.Tensor]:
    """`Linear.__call__` on `Linear.tensors()`, traceable by torch.compile (the packed kernel via `packed_linear`)."""
    if packed:
        y = packed_linear(x, ts[0], ts[1], sum(sizes)) if torch.compiler.is_compiling() else \
            torch.ops.mkldnn._linear_pointwise(x, ts[0], ts[1], "none", [None], "")  # eager: no custom-op hop
        return list(y.split(sizes, -1)) if len(sizes) > 1 else [y]
    return [F.linear(x, ts[2 * j], ts[2 * j + 1]) for j in range(len(sizes))]


class PackedLinear(torch.nn.Module):
    """A decode-time stand-in for an nn.Linear: the same weights prepacked for oneDNN, repacked whenever the source
    weight changes in place (an online hot swap `copy_`s into it, which bumps the tensor's version counter) or is
    replaced. A source whose version cannot be tracked (an inference tensor) runs unpacked."""

    def __init__(self, src: torch.nn.Linear):
        super().__init__()
        self.__dict__["src"] = src  # not a submodule: its parameters stay the source's, listed once
        self._seen: tuple | None = None
        self._packed = None

    def _current(self) -> bool:
        w = self.src.weight
        try:
            seen = (id(w), w._version, w.data_ptr())
        except RuntimeError:  # inference tensors keep no version counter
            return False
        if seen != self._seen:
            self._packed, self._seen = Linear([self.src], prepack=True), seen
        return True

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self._current():
            return F.linear(x, self.src.weight, self.src.bias)
        x2 = x.reshape(-1, x.shape[-1])  # [T,in]
        rows, padded = x2.shape[0], padded_rows(x2.shape[0])
        if padded > rows:  # rule: a long pass runs at one of a few row counts (module docstring, memory)
            x2 = torch.cat([x2, x2.new_zeros(padded - rows, x2.shape[1])])  # [T',in]
        return self._packed(x2)[0][:rows].reshape(*x.shape[:-1], -1)


def packed_view(module: torch.nn.Module) -> torch.nn.Module:
    """A view of `module` for decoding whose nn.Linear layers run prepacked (CPU, fp32 / bf16): module objects are
    shallow copies sharing every parameter and buffer with `module`; elsewhere `module` itself."""
    p = next(module.parameters(), None)
    if p is None or not _packable(p.device, p.dtype):
        return module

    def view(m: torch.nn.Module) -> torch.nn.Module:
        if isinstance(m, torch.nn.Linear):
            return PackedLinear(m)
        clone = copy.copy(m)
        clone._modules = {name: view(child) if child is not None else None for name, child in m._modules.items()}
        return clone

    return view(module)
