"""Low-rank specialists: a head trained as LoRA adapters over a shared base head, kept in its folder beside the merged
weights.

The folder's `model.safetensors` holds the merged weights (W + scale * B A per adapted linear layer), so vLLM, SGLang
and a pool of one load it unchanged. `low_rank/adapter.safetensors` keeps the adapters themselves (`<module>.lora_A`
[r,in], `<module>.lora_B` [out,r]) and draftpool.json's "adapter" entry their rank, scale, layers and the fingerprint
of the base they were trained over; a specialist's own weights outside the adapters (its own vocabulary's lm_head)
are only in the merged file. Heads whose adapters share a base fingerprint are evaluated together by reading the base
once (specsel/selection/head_bank.py): the base's weight of an adapted layer is the merged weight less the member's
own delta.

Shapes: r rank, i in features, o out features.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import nn

from draftpool.models.folder import DrafterLoadError

ADAPTER_FILE = "low_rank/adapter.safetensors"  # in a subfolder: vLLM loads every *.safetensors at the top level


@dataclass
class LowRank:
    """A head's adapters: {module name: (A [r,i], B [o,r])}, scale (lora_alpha / r), the base's fingerprint."""

    factors: dict[str, tuple[torch.Tensor, torch.Tensor]]
    scale: float
    base: str

    @property
    def rank(self) -> int:
        return next(iter(self.factors.values()))[0].shape[0]

    def meta(self) -> dict[str, Any]:
        return {"rank": self.rank, "scale": self.scale, "modules": sorted(self.factors), "base_sha256": self.base}


def delta(a: torch.Tensor, b: torch.Tensor, scale: float) -> torch.Tensor:
    """a [r,i], b [o,r] -> the adapter's weight delta [o,i]."""
    return scale * (b @ a)


def linear_layers(head: nn.Module) -> list[str]:
    """The names of a head's linear layers (what its adapters may cover)."""
    return [name for name, m in head.named_modules() if isinstance(m, nn.Linear)]


def fingerprint(head: nn.Module) -> str:
    """sha256 over a head's tensors by name (float32 bytes): equal for one base, whatever folder holds it."""
    h = hashlib.sha256()
    for name, p in sorted(head.state_dict().items()):
        h.update(name.encode())
        h.update(p.detach().float().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def from_peft(model, base: str) -> LowRank:
    """A peft LoRA model's adapters (one adapter, "default") -> LowRank; `base`: the fingerprint of the head it wraps.
    Uses peft's own layer objects (`lora_A` / `lora_B` / `scaling`), not a parse of its state-dict names."""
    from peft.tuners.lora import LoraLayer

    factors, scales = {}, set()
    root = model.get_base_model()
    for name, module in root.named_modules():
        if isinstance(module, LoraLayer) and "default" in module.lora_A:
            factors[name] = (module.lora_A["default"].weight.detach().float().cpu().clone(),
                             module.lora_B["default"].weight.detach().float().cpu().clone())
            scales.add(float(module.scaling["default"]))
    if not factors or len(scales) != 1:
        raise ValueError(f"expected one LoRA adapter with one scale, found {len(factors)} layers, scales {scales}")
    return LowRank(factors, scales.pop(), base)


def save(low: LowRank, folder: Path) -> dict[str, Any]:
    """Write the adapters into `folder` (inside the head folder's atomic write) -> draftpool.json's "adapter" entry."""
    tensors = {}
    for name, (a, b) in low.factors.items():
        tensors[f"{name}.lora_A"], tensors[f"{name}.lora_B"] = a.contiguous(), b.contiguous()
    (folder / ADAPTER_FILE).parent.mkdir(exist_ok=True)
    save_file(tensors, str(folder / ADAPTER_FILE), metadata={"format": "pt"})
    return low.meta()


def load(folder: Path, meta: dict[str, Any], head: nn.Module) -> LowRank:
    """Read and check a head folder's adapters against the head they belong to: every named layer a linear layer of
    the head, A [r,in], B [out,r] of its shape, one rank, a finite scale."""
    try:
        rank, scale, modules, base = int(meta["rank"]), float(meta["scale"]), list(meta["modules"]), \
            str(meta["base_sha256"])
    except (KeyError, TypeError, ValueError) as e:
        raise DrafterLoadError(f"{folder}/draftpool.json: malformed 'adapter' entry ({e})") from None
    try:
        tensors = load_file(str(folder / ADAPTER_FILE))
    except (SafetensorError, OSError, ValueError) as e:
        raise DrafterLoadError(f"{folder}/{ADAPTER_FILE} is missing or corrupt: {e}") from None
    layers = dict(head.named_modules())
    factors = {}
    for name in modules:
        layer = layers.get(name)
        a, b = tensors.get(f"{name}.lora_A"), tensors.get(f"{name}.lora_B")
        if not isinstance(layer, nn.Linear) or a is None or b is None or a.shape != (rank, layer.in_features) \
                or b.shape != (layer.out_features, rank):
            raise DrafterLoadError(f"{folder}/{ADAPTER_FILE}: no rank-{rank} adapter of linear layer {name!r} "
                                   f"in it, or one of the wrong shape")
        factors[name] = (a.float(), b.float())
    if not modules or not torch.isfinite(torch.tensor(scale)):
        raise DrafterLoadError(f"{folder}/draftpool.json: the adapter names no layer or has scale {scale}")
    return LowRank(factors, scale, base)
