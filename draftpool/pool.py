"""The pool format: `pools/<target-slug>/<domain>-<kind>/` drafter folders plus `pools/<target-slug>/pool.json`.

EAGLE-3 heads are written in the flat layout vLLM and SGLang load unchanged (config.json with
`architectures: ["LlamaForCausalLMEagle3"]`; tensors `fc.weight`, `midlayer.*`, `norm.weight`, `lm_head.weight`, `d2t`,
`t2d`), optionally also in the speculators layout (`speculators/` inside the drafter folder). Independent drafters are
plain `LlamaForCausalLM` folders with the target's tokenizer. Every drafter folder also holds `draftpool.json` (kind,
domain, target, provenance, eval). Writes are atomic: a killed export leaves the previous pool intact, and the
manifest is checked before anything is written (`check_manifest`), so a corrupt pool.json never leaves a half-updated
pool. Loading is strict: architecture, target (weights hash, sizes, layer count), every tensor name and shape.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from draftpool.io import atomic_write_json
from draftpool.models import KINDS, get_kind
from draftpool.models.folder import DrafterLoadError, read_json
from draftpool.target import TargetInfo

log = logging.getLogger(__name__)

# the pool format's API; each kind's folder code (load, write) lives with its model: draftpool.models.get_kind(kind)
__all__ = ["Member", "check_manifest", "drafter_eval", "load_members", "note_precision", "read_manifest",
           "update_pool_manifest"]


@dataclass(frozen=True)
class Member:
    """One loaded drafter of a pool: its manifest name, its kind (`draftpool.models.get_kind(member.kind)`) and the
    module (or model-free index) that kind loaded."""

    name: str
    kind: str
    module: Any


def drafter_eval(path: str | Path) -> dict[str, Any] | None:
    """The offline evaluation a drafter was exported with (draftpool.json "eval": per-step acceptance, chain
    lengths), or None for a folder without one (e.g. a head trained elsewhere); a corrupt draftpool.json is a
    DrafterLoadError."""
    meta_path = Path(path) / "draftpool.json"
    if not meta_path.is_file():
        return None
    ev = read_json(meta_path).get("eval")
    if ev is not None and not isinstance(ev, dict):
        raise DrafterLoadError(f"{meta_path}: \"eval\" must be a JSON object, not a {type(ev).__name__}")
    return ev


def read_manifest(pool_dir: str | Path) -> dict[str, Any]:
    """pool.json of a pool folder, checked: a JSON object whose `drafters` maps names to entries with a `path` and a
    `kind`. -> {} when the folder has no pool.json yet. Every error names the file."""
    path = Path(pool_dir) / "pool.json"
    if not path.is_file():
        return {}
    manifest = read_json(path)
    if not isinstance(manifest.get("drafters"), dict):
        raise DrafterLoadError(f"{path} is not a draftpool manifest (a JSON object with a \"drafters\" mapping)")
    root = Path(pool_dir).resolve()
    for name, entry in manifest["drafters"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or \
                entry.get("kind") not in KINDS:
            raise DrafterLoadError(f"{path}: drafter {name!r} needs a \"path\" and a \"kind\" "
                                   f"({' or '.join(KINDS)})")
        # a drafter lives in the pool folder: no absolute path, "..", or symlink leading out of it
        try:
            where = (root / entry["path"]).resolve()
        except (OSError, ValueError, RuntimeError) as e:  # a NUL byte, a symlink loop
            raise DrafterLoadError(f"{path}: drafter {name!r} has path {entry['path']!r}: {e}") from None
        if where == root or not where.is_relative_to(root):
            raise DrafterLoadError(f"{path}: drafter {name!r} has path {entry['path']!r}, which leads out of the "
                                   f"pool folder {root}; a drafter's path is its folder inside the pool")
    return manifest


def check_manifest(pool_dir: str | Path, target: TargetInfo) -> dict[str, Any]:
    """The pool's manifest, refused if it is corrupt or belongs to another target (call before writing into it)."""
    manifest = read_manifest(pool_dir)
    if manifest and not isinstance(manifest.get("target_weights_sha256"), str):
        raise DrafterLoadError(f"{Path(pool_dir) / 'pool.json'} has no \"target_weights_sha256\": it does not say "
                               f"which target its drafters were trained for; rebuild the pool with build_pool.py / "
                               f"train_drafter.py (or use another pools_dir)")
    if manifest and manifest.get("target_weights_sha256") != target.weights_sha256:
        raise DrafterLoadError(f"{Path(pool_dir) / 'pool.json'} belongs to another target "
                               f"({manifest.get('target')}); use another pools_dir")
    return manifest


def update_pool_manifest(pool_dir: Path, target: TargetInfo, name: str, entry: dict[str, Any]) -> None:
    """Add or replace one drafter's entry ({"path", "kind", ...}) in pool.json (written atomically)."""
    if not isinstance(entry.get("path"), str) or entry.get("kind") not in KINDS:
        raise ValueError(f"pool entry {name!r} needs a \"path\" and a \"kind\" ({' or '.join(KINDS)}), got {entry}")
    manifest = check_manifest(pool_dir, target)
    manifest.update({"format": "draftpool-pool/1", "target": target.name, "target_path": target.path,
                     "target_weights_sha256": target.weights_sha256})
    manifest.setdefault("drafters", {})[name] = entry
    atomic_write_json(Path(pool_dir) / "pool.json", manifest)


def load_members(pool_dir: str | Path, info: TargetInfo, target_model,
                 kinds: list[str] | tuple[str, ...] = tuple(KINDS), at_least: int = 1,
                 names: Collection[str] | None = None) -> list[Member]:
    """Every drafter of the given kinds in a pool (only those `names`, when given), loaded and checked, in name
    order. EAGLE-3 heads share the target's token embedding."""
    pool_dir = Path(pool_dir)
    manifest = read_manifest(pool_dir)
    if not manifest:
        raise DrafterLoadError(f"no pool at {pool_dir} (pool.json missing): run build_pool.py first")
    chosen = {name: e for name, e in sorted(manifest["drafters"].items())
              if e["kind"] in kinds and (names is None or name in names)}
    members = [Member(name, e["kind"], get_kind(e["kind"]).load(pool_dir / e["path"], info, target_model))
               for name, e in chosen.items()]
    note_precision(pool_dir, chosen, target_model)
    if len(members) < at_least:
        raise DrafterLoadError(f"{pool_dir} has {len(members)} drafter(s) of kind {list(kinds)}: this needs "
                               f">= {at_least}")
    return members


def note_precision(pool_dir: Path, entries: dict[str, dict[str, Any]], target_model) -> str | None:
    """One log line when members were trained against the target in another precision than it runs in now (a head
    trained on a bf16 target's features served by an fp32 target: it works, the features differ a little; measured
    in docs/precision.md). Returns the line (None: every member matches, or records no precision)."""
    first = next(iter(target_model.parameters()), None) if hasattr(target_model, "parameters") else None
    if first is None:
        return None
    now = str(first.dtype).removeprefix("torch.")
    other: dict[str, list[str]] = {}
    for name, e in entries.items():
        if e.get("target_dtype") not in (None, now):
            other.setdefault(e["target_dtype"], []).append(name)
    if not other:
        return None
    line = (f"pool {pool_dir}: the target runs in {now}; "
            + "; ".join(f"{', '.join(names)} trained against it in {d}" for d, names in sorted(other.items()))
            + " (it serves unchanged; acceptance may differ a little: docs/precision.md)")
    log.warning(line)
    return line
