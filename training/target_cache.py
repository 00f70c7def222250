"""Offline cache of the frozen target's features for EAGLE-3 training (`eagle3.target_cache=true`).

Instead of a target forward per batch and epoch, the aux hidden states [L,3H] and the final (normed) hidden state [L,H]
of every training sequence are computed once and stored, one safetensors file per sequence, in the target's dtype.
At train time the target logits are recomputed from the final hidden state by the target's `lm_head` alone.
"""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from draftpool.io import atomic_write_text
from draftpool.models.kind import aux_features
from draftpool.progress import progress


def build_cache(target, dataset, layers: list[int], cache_dir: Path, sig: str) -> None:
    """Compute missing entries (resumable: a file exists only once complete); `sig` names target + layers + data."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    stamp = cache_dir / "SIGNATURE"
    if stamp.exists() and stamp.read_text() != sig:
        raise ValueError(f"{cache_dir} caches features of another target, layer set or data; delete it")
    atomic_write_text(stamp, sig)
    device = next(target.parameters()).device
    for i in progress(range(len(dataset)), "cache target features", unit="seq"):
        path = cache_dir / f"{i:07d}.safetensors"
        if path.exists():
            continue
        ids = dataset[i]["input_ids"].unsqueeze(0).to(device)
        with torch.no_grad():
            hs = target(input_ids=ids, output_hidden_states=True).hidden_states
        aux = aux_features(hs, layers)[0]
        tmp = path.with_suffix(".tmp")
        save_file({"aux": aux.contiguous().cpu(), "last": hs[-1][0].contiguous().cpu()}, str(tmp))
        tmp.rename(path)


def cached_features(target, cache_dir: Path, index: torch.Tensor, width: int):
    """-> (aux [B,T,3H], logits [B,T,V]) for dataset positions `index`, zero-padded on the right to `width`."""
    device = next(target.parameters()).device
    items = [load_file(str(cache_dir / f"{int(i):07d}.safetensors")) for i in index.tolist()]
    aux = torch.zeros(len(items), width, items[0]["aux"].shape[-1], dtype=items[0]["aux"].dtype)
    last = torch.zeros(len(items), width, items[0]["last"].shape[-1], dtype=items[0]["last"].dtype)
    for b, it in enumerate(items):
        n = it["aux"].shape[0]
        aux[b, :n], last[b, :n] = it["aux"], it["last"]
    with torch.no_grad():
        logits = target.lm_head(last.to(device))
    return aux.to(device), logits
