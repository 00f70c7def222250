"""Offline cache of the frozen target's features for EAGLE-3 training (`eagle3.target_cache=true`).

Instead of a target forward per batch and epoch, the aux hidden states [L,3H] and the final (normed) hidden state [L,H]
of every training sequence are computed once and stored, one safetensors file per sequence, in the target's dtype,
with the two per-position numbers of the full-vocabulary teacher the loss needs: its log-sum-exp and its top-1.
At train time the teacher is the final hidden state projected on the target's `lm_head` rows of the draft
vocabulary only (the compact teacher: Vd of V rows, the same values).
"""

from __future__ import annotations

from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from draftpool.io import atomic_write_text
from draftpool.models.kind import aux_features
from draftpool.progress import progress
from training.ttt import Teacher

KEYS = {"aux", "last", "lse", "top1"}


def cache_dir(run_dir: Path, dtype: torch.dtype | str) -> Path:
    """Where a run keeps the features of its target in `dtype`: one cache per precision (a bf16 target's features
    are not an fp32 one's)."""
    return Path(run_dir) / f"target_cache-{str(dtype).removeprefix('torch.')}"


def _complete(path: Path) -> bool:
    """A cache file with every key (files of an older draftpool lack lse / top1 and are recomputed)."""
    if not path.exists():
        return False
    with safe_open(str(path), "pt") as f:
        return KEYS <= set(f.keys())


def build_cache(target, dataset, layers: list[int], cache_dir: Path, sig: str, rows_per_pass: int = 1024) -> None:
    """Compute missing entries (resumable: a file exists only once complete); `sig` names target + layers + data.

    Where the lean forward reproduces the target, sequences go through the slot forward (draftpool/forward/slots.py)
    several at a time, up to `rows_per_pass` rows per pass: one matmul per linear for all of them, no padding between
    them; elsewhere one transformers forward per sequence."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    stamp = cache_dir / "SIGNATURE"
    if stamp.exists() and stamp.read_text() != sig:
        raise ValueError(f"{cache_dir} caches features of another target, layer set or data; delete it")
    atomic_write_text(stamp, sig)
    todo = [i for i in range(len(dataset)) if not _complete(cache_dir / f"{i:07d}.safetensors")]
    if not todo:
        return
    ids = {i: dataset[i]["input_ids"] for i in todo}
    groups: list[list[int]] = [[]]
    for i in todo:  # consecutive sequences, up to rows_per_pass rows a pass (a longer one alone)
        if groups[-1] and sum(len(ids[j]) for j in groups[-1]) + len(ids[i]) > rows_per_pass:
            groups.append([])
        groups[-1].append(i)
    forward = _slot_forward(target, max(map(len, groups)), max(len(x) for x in ids.values()))
    bar = progress(len(todo), "cache target features", unit="seq")
    for group in groups:
        for i, (aux, last, logits) in zip(group, _features(target, forward, [ids[i] for i in group], layers)):
            tensors = {"aux": aux, "last": last, "lse": logits.logsumexp(-1), "top1": logits.argmax(-1)}
            path = cache_dir / f"{i:07d}.safetensors"
            tmp = path.with_suffix(".tmp")
            save_file({k: v.contiguous().cpu() for k, v in tensors.items()}, str(tmp))
            tmp.rename(path)
        bar.update(len(group))
    bar.close()


def _slot_forward(target, slots: int, capacity: int):
    """The slot forward over `target` where the lean forward reproduces it, else None."""
    from draftpool.forward import lean_probe
    from draftpool.forward.slots import SlotForward

    why, _, _ = lean_probe.probe(target)
    return SlotForward(target, slots, capacity) if why is None else None


@torch.no_grad()
def _features(target, forward, seqs: list[torch.Tensor], layers: list[int]):
    """-> per sequence (aux [L,3H], final normed hidden [L,H], float logits [L,V])."""
    if forward is None:
        device = next(target.parameters()).device
        for ids in seqs:
            out = target(input_ids=ids[None].to(device), output_hidden_states=True)
            yield aux_features(out.hidden_states, layers)[0], out.hidden_states[-1][0], out.logits[0].float()
        return
    for slot in range(len(seqs)):
        forward.release(slot)
    last, feats = forward.forward([(k, x.tolist()) for k, x in enumerate(seqs)], aux=layers, all_rows=True)
    aux = aux_features(feats, layers)  # [M,3H]
    start = 0
    for x in seqs:
        rows = slice(start, start + len(x))
        yield aux[rows], last[rows], forward.lm_head(last[rows]).float()
        start += len(x)


def compact_teacher(target, last: torch.Tensor, columns: torch.Tensor | None) -> torch.Tensor:
    """last [...,H] the target's final normed hidden states -> its logits [...,Vs] at `columns` only (None: all V).
    Each value is the full lm_head's (the same row dot products), at Vs / V of its cost."""
    head = target.get_output_embeddings()
    weight = head.weight if columns is None else head.weight[columns]  # [Vs,H]
    bias = getattr(head, "bias", None)
    bias = bias if bias is None or columns is None else bias[columns]
    with torch.no_grad():
        return F.linear(last.to(weight.dtype), weight, bias)


def cached_features(target, cache_dir: Path, index: torch.Tensor, width: int, columns: torch.Tensor | None
                    ) -> tuple[torch.Tensor, Teacher]:
    """-> (aux [B,T,3H], the teacher at `columns` [Vs]) for dataset positions `index`, zero-padded on the right to
    `width` (padding rows: logits 0, lse 0, top-1 0; no loss is taken there)."""
    device = next(target.parameters()).device
    items = [load_file(str(cache_dir / f"{int(i):07d}.safetensors")) for i in index.tolist()]

    def stack(key: str) -> torch.Tensor:  # per item [L,...] -> [B,width,...]
        first = items[0][key]
        out = first.new_zeros(len(items), width, *first.shape[1:])
        for b, it in enumerate(items):
            out[b, : it[key].shape[0]] = it[key]
        return out.to(device)

    teacher = Teacher(compact_teacher(target, stack("last"), columns), stack("lse"), stack("top1"))
    return stack("aux"), teacher
