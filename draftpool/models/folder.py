"""A drafter folder's files, checked: its JSON files, config.json sizes and draftpool.json against the target.

The kinds' `load` (draftpool/models/eagle3.py, llama.py) use these; every error is a DrafterLoadError naming the file
and what is wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


class DrafterLoadError(ValueError):
    """A drafter folder that does not fit the target, the kind, or is corrupt."""



def read_json(path: Path) -> dict[str, Any]:
    """A pool file's JSON object; DrafterLoadError naming the file and what is wrong otherwise."""
    try:
        data = json.loads(path.read_bytes())
    except OSError as e:
        raise DrafterLoadError(f"cannot read {path}: {e.strerror or e}") from None
    except (ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise DrafterLoadError(f"{path} is not valid JSON ({e})") from None
    if not isinstance(data, dict):
        raise DrafterLoadError(f"{path} must hold a JSON object, not a {type(data).__name__}")
    return data


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def check_config(raw: dict[str, Any], path: Path, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    """config.json sizes that must be positive integers (required ones present; optional ones may be null), and a
    positive rms_norm_eps when given."""
    for key in required + optional:
        if key not in raw or (raw[key] is None and key in optional):
            if key in required:
                raise DrafterLoadError(f"{path}/config.json lacks {key!r}")
            continue
        if not is_int(raw[key]) or raw[key] < 1:
            raise DrafterLoadError(f"{path}/config.json: {key!r} must be a positive integer, got {raw[key]!r}")
    eps = raw.get("rms_norm_eps", 1e-6)
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not 0 < eps < 1:
        raise DrafterLoadError(f"{path}/config.json: 'rms_norm_eps' must be a number in (0, 1), got {eps!r}")


def read_meta(path: Path, kind: str, target, bound_to_weights: bool) -> dict[str, Any]:
    """draftpool.json, checked against the target (a TargetInfo). A kind `bound_to_weights` (an EAGLE-3 head reads
    the target's hidden states) must name the target's weights hash; one that only needs the target's tokenizer (an
    independent Llama drafter: its load checks the tokenizer) loads from elsewhere (no draftpool.json, or no hash),
    and a hash, when given, must match."""
    if not (path / "config.json").is_file():
        raise DrafterLoadError(f"{path} is not a drafter folder (no config.json)")
    meta_path = path / "draftpool.json"
    rebuild = "rebuild it with build_pool.py / train_drafter.py for this target"
    if not meta_path.is_file():
        if not bound_to_weights:
            return {"kind": kind}
        raise DrafterLoadError(f"{path} has no draftpool.json: it does not say which target it was trained for; "
                               f"{rebuild}")
    meta = read_json(meta_path)
    if meta.get("kind") != kind:
        raise DrafterLoadError(f"{path} holds a {meta.get('kind')!r} drafter, not a {kind!r} one")
    theirs = meta.get("target_weights_sha256")
    if theirs is None and not bound_to_weights:
        return meta
    if not theirs:
        raise DrafterLoadError(f"{meta_path} has no \"target_weights_sha256\": it does not say which target it was "
                               f"trained for; {rebuild}")
    if not isinstance(theirs, str):
        raise DrafterLoadError(f"{meta_path}: \"target_weights_sha256\" must be a string (the target's weights "
                               f"hash), got {theirs!r}")
    if theirs != target.weights_sha256:
        raise DrafterLoadError(f"{path} was trained for target {meta.get('target')!r} "
                               f"(weights {theirs[:12]}), not for {target.name!r} "
                               f"(weights {target.weights_sha256[:12]})")
    return meta
