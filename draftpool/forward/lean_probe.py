"""The lean forward's probe decision (`lean.build`: does the lean forward reproduce this model, is it batch
invariant, how many pad rows), memoised in this process by what it depends on: TargetRunner asks for it once per
model object, and online_adapt.py and the tests load the same target again and again as new objects. lean's
functions are read as module attributes at call time, so a patched one is both what runs and another key."""

from __future__ import annotations

import hashlib
from collections import OrderedDict

import torch
import torch.nn.functional as F

from draftpool.forward import lean, timing, torch_shim

try:  # ~10 GB/s: fingerprinting a 135M-parameter target takes ~0.05 s (sha256: ~1.3 s)
    import xxhash
except ImportError:  # not a declared dependency: sha256 then
    xxhash = None

_PROBES: OrderedDict = OrderedDict()  # fingerprint -> (why lean declined or None, batch invariant, pad rows)
PROBES_KEPT = 64


def _content_hash(model) -> str | None:
    """A hash of every parameter and buffer (name, dtype, shape, device and bytes); None when a tensor has no data
    to read (meta tensors)."""
    h = xxhash.xxh3_128() if xxhash is not None else hashlib.sha256()
    seen: dict[int, tuple] = {}  # data pointer -> (first name, layout)
    named = [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)]
    for name, t in named:
        if t.device.type == "meta":
            return None
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|{t.device}|".encode())
        if t.data_ptr() in seen and seen[t.data_ptr()][1] == (t.dtype, tuple(t.shape), t.stride()):
            h.update(f"tied:{seen[t.data_ptr()][0]}|".encode())  # a tied weight: the same tensor, named once
            continue
        seen[t.data_ptr()] = (name, (t.dtype, tuple(t.shape), t.stride()))
        h.update(t.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy())
    return ("xxh3_128:" if xxhash is not None else "sha256:") + h.hexdigest()


def fingerprint(model, prepack: bool = True, pad_single: bool = True, compile: bool = False) -> tuple | None:
    """Everything `lean.build`'s decision depends on, or None when it cannot be told (then nothing is memoised): the
    weights' bytes, the model's classes, configuration and scalar attributes module by module (a norm's epsilon, an
    attention's scaling, training or eval), the device and dtype, whether this CPU packs the dtype, torch's thread
    count and numeric settings, and the very functions the probe runs (a patched one is another key). A module with
    an instance-level forward or with hooks is never memoised."""
    if torch_shim.global_hooks_set():
        return None
    structure = []
    for name, m in model.named_modules(remove_duplicate=False):
        if "forward" in m.__dict__ or m._forward_hooks or m._forward_pre_hooks:
            return None
        scalars = tuple(sorted((k, v) for k, v in m.__dict__.items()
                               if isinstance(v, (bool, int, float, str, type(None))) and not k.startswith("_")))
        structure.append((name, type(m), scalars))
    p = next(model.parameters(), None)
    if p is None:
        return None
    weights = _content_hash(model)
    if weights is None:
        return None
    cfg = model.config
    return (weights, type(model), tuple(structure), cfg.to_json_string(use_diff=False),
            getattr(cfg, "_attn_implementation", None), str(p.device), p.dtype, lean._packable(p.device, p.dtype),
            prepack, pad_single, compile, torch.get_num_threads(), torch.backends.mkldnn.enabled,
            torch.get_float32_matmul_precision(), torch.are_deterministic_algorithms_enabled(),
            torch.backends.cpu.get_cpu_capability(), torch.__version__,
            lean.build, lean.unsupported, lean.LeanForward, lean.LeanForward.__init__, lean.LeanForward.forward,
            lean.LeanForward.lm_head, lean.LeanForward._attend, lean.fastest_pad, lean.batch_invariant,
            lean.median_time, timing.median_time, timing.time.perf_counter, lean._rms_norm, lean._linear, lean._blocks,
            lean._weights, lean._block_fns, lean.apply_rotary_pos_emb, lean.cache_kw, F.scaled_dot_product_attention)


def probe(model, prepack: bool = True, pad_single: bool = True,
          compile: bool = False) -> tuple[str | None, bool, int]:
    """`lean.build`'s decision for `model` -> (why the lean forward declines it or None, batch invariant, pad rows),
    memoised by `fingerprint`: a model with the same weights, structure and settings in the same process gets the
    decision and the measured pad row count of the first probe (as the same model object always did) without
    running the probe again (~2-5 s on a 135M target). Not kept across processes: the pad row count is a timing
    and the checks depend on the kernels at hand."""
    try:
        key = fingerprint(model, prepack, pad_single, compile)
    except Exception:  # noqa: BLE001 - e.g. a configuration that does not serialise: probed, not memoised
        key = None
    if key is not None and key in _PROBES:
        _PROBES.move_to_end(key)
        return _PROBES[key]
    fwd, why = lean.build(model, prepack=prepack, pad_single=pad_single, compile=compile)
    decision = (why, *((fwd.batch_invariant, fwd.pad_rows) if fwd is not None else (False, 0)))
    if key is not None:
        _PROBES[key] = decision
        while len(_PROBES) > PROBES_KEPT:
            _PROBES.popitem(last=False)
    return decision
