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

import json
from pathlib import Path
from typing import Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

from draftpool.io import atomic_dir, atomic_write_json
from draftpool.models.eagle3 import Eagle3Head, default_aux_layers
from draftpool.target import TargetInfo

EAGLE3_ARCH = "LlamaForCausalLMEagle3"


class DrafterLoadError(ValueError):
    """A drafter folder that does not fit the target, the kind, or is corrupt."""


def eagle3_config_dict(head: Eagle3Head) -> dict[str, Any]:
    cfg = head.config.to_dict()
    cfg["architectures"] = [EAGLE3_ARCH]
    cfg["tie_word_embeddings"] = False
    cfg["num_hidden_layers"] = 1
    for k in ("_name_or_path", "transformers_version", "dtype", "torch_dtype"):
        cfg.pop(k, None)
    cfg["torch_dtype"] = "float32"
    return cfg


def speculators_config_dict(head: Eagle3Head, target: TargetInfo, k: int) -> dict[str, Any]:
    layer = eagle3_config_dict(head)
    for key in ("draft_vocab_size", "target_hidden_size", "eagle_aux_hidden_state_layer_ids",
                "norm_before_residual", "target_num_hidden_layers", "architectures"):
        layer.pop(key, None)
    layer["architectures"] = ["LlamaForCausalLM"]
    return {
        "architectures": ["Eagle3Speculator"], "speculators_model_type": "eagle3",
        "speculators_version": "0.9.0", "transformer_layer_config": layer,
        "draft_vocab_size": head.config.draft_vocab_size, "norm_before_residual": False,
        "norm_before_fc": False, "fc_norm": False, "norm_output": False,
        "target_hidden_size": head.config.target_hidden_size,
        "eagle_aux_hidden_state_layer_ids": list(head.config.eagle_aux_hidden_state_layer_ids),
        "embed_requires_grad": False,
        "speculators_config": {
            "algorithm": "eagle3", "default_proposal_method": "greedy",
            "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": k}],
            "verifier": {"name_or_path": target.path, "architectures": ["LlamaForCausalLM"]},
        },
    }


def write_eagle3(head: Eagle3Head, out: Path, target: TargetInfo, meta: dict[str, Any],
                 speculators: bool = False, k: int = 5) -> None:
    """Write one head folder atomically (replacing a previous one only once the new one is complete)."""
    tensors = {k_: v.float().cpu() for k_, v in head.export_state_dict().items()}
    with atomic_dir(out) as tmp:
        (tmp / "config.json").write_text(json.dumps(eagle3_config_dict(head), indent=2) + "\n")
        save_file(tensors, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        if speculators:
            (tmp / "speculators").mkdir()
            spec = {("layers.0." + k_[len("midlayer."):] if k_.startswith("midlayer.") else k_): v
                    for k_, v in tensors.items()}
            (tmp / "speculators" / "config.json").write_text(
                json.dumps(speculators_config_dict(head, target, k), indent=2) + "\n")
            save_file(spec, str(tmp / "speculators" / "model.safetensors"), metadata={"format": "pt"})
        (tmp / "draftpool.json").write_text(json.dumps(meta, indent=2) + "\n")


def write_llama(model, tokenizer, out: Path, meta: dict[str, Any]) -> None:
    with atomic_dir(out) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        (tmp / "draftpool.json").write_text(json.dumps(meta, indent=2) + "\n")


def _read_json(path: Path) -> dict[str, Any]:
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


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_config(raw: dict[str, Any], path: Path, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> None:
    """config.json sizes that must be positive integers (required ones present; optional ones may be null), and a
    positive rms_norm_eps when given."""
    for key in required + optional:
        if key not in raw or (raw[key] is None and key in optional):
            if key in required:
                raise DrafterLoadError(f"{path}/config.json lacks {key!r}")
            continue
        if not _is_int(raw[key]) or raw[key] < 1:
            raise DrafterLoadError(f"{path}/config.json: {key!r} must be a positive integer, got {raw[key]!r}")
    eps = raw.get("rms_norm_eps", 1e-6)
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not 0 < eps < 1:
        raise DrafterLoadError(f"{path}/config.json: 'rms_norm_eps' must be a number in (0, 1), got {eps!r}")


def _read_meta(path: Path, kind: str, target: TargetInfo) -> dict[str, Any]:
    """draftpool.json, checked against the target. An EAGLE-3 head reads the target's hidden states, so it must name
    the target's weights hash; an independent Llama drafter only needs the target's tokenizer (load_llama checks it),
    so one from elsewhere (no draftpool.json, or no hash) loads, and a hash, when given, must match."""
    if not (path / "config.json").is_file():
        raise DrafterLoadError(f"{path} is not a drafter folder (no config.json)")
    meta_path = path / "draftpool.json"
    rebuild = "rebuild it with build_pool.py / train_drafter.py for this target"
    if not meta_path.is_file():
        if kind == "llama":
            return {"kind": kind}
        raise DrafterLoadError(f"{path} has no draftpool.json: it does not say which target it was trained for; "
                               f"{rebuild}")
    meta = _read_json(meta_path)
    if meta.get("kind") != kind:
        raise DrafterLoadError(f"{path} holds a {meta.get('kind')!r} drafter, not a {kind!r} one")
    theirs = meta.get("target_weights_sha256")
    if theirs is None and kind == "llama":
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


def drafter_eval(path: str | Path) -> dict[str, Any] | None:
    """The offline evaluation a drafter was exported with (draftpool.json "eval": per-step acceptance, chain
    lengths), or None for a folder without one (e.g. a head trained elsewhere); a corrupt draftpool.json is a
    DrafterLoadError."""
    meta_path = Path(path) / "draftpool.json"
    if not meta_path.is_file():
        return None
    ev = _read_json(meta_path).get("eval")
    if ev is not None and not isinstance(ev, dict):
        raise DrafterLoadError(f"{meta_path}: \"eval\" must be a JSON object, not a {type(ev).__name__}")
    return ev


def load_eagle3(path: str | Path, target: TargetInfo, target_embedding: torch.Tensor) -> Eagle3Head:
    """Load and check an exported head: architecture, sizes against the target, every tensor name and shape."""
    from transformers import LlamaConfig

    path = Path(path)
    _read_meta(path, "eagle3", target)
    raw = _read_json(path / "config.json")
    arch = raw.get("architectures")
    if not isinstance(arch, list) or EAGLE3_ARCH not in arch:
        raise DrafterLoadError(f"{path}: config architectures {arch} are not [{EAGLE3_ARCH!r}]")
    _check_config(raw, path, ("hidden_size", "vocab_size", "draft_vocab_size", "intermediate_size",
                             "num_attention_heads"), ("num_key_value_heads", "target_hidden_size",
                                                      "target_num_hidden_layers", "head_dim"))
    layers = raw.get("eagle_aux_hidden_state_layer_ids")
    if layers is not None and (not isinstance(layers, list) or not all(_is_int(x) and x >= 0 for x in layers)):
        raise DrafterLoadError(f"{path}/config.json: 'eagle_aux_hidden_state_layer_ids' must be a list of target "
                               f"layer indices (integers >= 0), got {layers!r}")
    t_hidden = raw.get("target_hidden_size", raw["hidden_size"])
    if t_hidden != target.hidden_size or raw["vocab_size"] != target.vocab_size:
        raise DrafterLoadError(
            f"{path}: head made for a target with hidden {t_hidden} and vocab {raw['vocab_size']}, "
            f"but {target.name} has hidden {target.hidden_size} and vocab {target.vocab_size}")
    layers = raw.get("eagle_aux_hidden_state_layer_ids") or default_aux_layers(target.num_layers)
    n_layers = raw.get("target_num_hidden_layers", target.num_layers)
    if max(layers) >= target.num_layers or n_layers != target.num_layers:
        raise DrafterLoadError(f"{path}: aux layers {layers} made for a {n_layers}-layer target, "
                               f"{target.name} has {target.num_layers}")
    try:  # what the checks above do not cover (e.g. heads that do not divide the width) fails here
        cfg = LlamaConfig(**{k: v for k, v in raw.items() if k != "architectures"})
        cfg.eagle_aux_hidden_state_layer_ids = layers
        cfg.target_hidden_size = raw.get("target_hidden_size", raw["hidden_size"])
        head = Eagle3Head(cfg)
    except Exception as e:  # noqa: BLE001 - transformers' config validators raise their own classes
        raise DrafterLoadError(f"{path}/config.json does not describe an EAGLE-3 head: {type(e).__name__}: {e}") \
            from None
    try:
        tensors = load_file(str(path / "model.safetensors"))
    except (SafetensorError, OSError, ValueError) as e:
        raise DrafterLoadError(f"{path}/model.safetensors is missing or corrupt: {e}") from None
    expected = {k: v.shape for k, v in head.export_state_dict().items()}
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected) - {"embed_tokens.weight"})
    wrong = sorted(k for k in expected if k in tensors and tensors[k].shape != expected[k])
    if missing or unexpected or wrong:
        raise DrafterLoadError(f"{path}: tensors do not match an EAGLE-3 head (missing {missing}, unexpected "
                               f"{unexpected}, wrong shape {wrong})")
    tensors.setdefault("embed_tokens.weight", target_embedding.detach().float().cpu())
    head.load_state_dict(tensors, strict=False)
    return head


def load_llama(path: str | Path, target: TargetInfo):
    from transformers import AutoTokenizer, LlamaForCausalLM

    path = Path(path)
    _read_meta(path, "llama", target)
    raw = _read_json(path / "config.json")
    arch = raw.get("architectures")
    if not isinstance(arch, list) or "LlamaForCausalLM" not in arch:
        raise DrafterLoadError(f"{path}: not a LlamaForCausalLM drafter (architectures {arch})")
    if raw.get("vocab_size") != target.vocab_size:
        raise DrafterLoadError(f"{path}: drafter vocab {raw.get('vocab_size')} != target vocab {target.vocab_size}")
    _check_config(raw, path, ("hidden_size", "intermediate_size", "num_attention_heads", "num_hidden_layers"),
                 ("num_key_value_heads", "head_dim", "max_position_embeddings"))
    try:
        tok_d = AutoTokenizer.from_pretrained(path)
    except Exception as e:  # noqa: BLE001 - a corrupt tokenizer file fails in many ways
        raise DrafterLoadError(f"{path}: cannot load its tokenizer: {type(e).__name__}: {e}") from None
    tok_t = AutoTokenizer.from_pretrained(target.path)
    if tok_d.get_vocab() != tok_t.get_vocab():
        raise DrafterLoadError(f"{path}: its tokenizer differs from the target's ({target.name})")
    try:
        return LlamaForCausalLM.from_pretrained(path)
    except Exception as e:  # noqa: BLE001 - bad weights or a config transformers' validators refuse
        raise DrafterLoadError(f"{path}: cannot load weights: {type(e).__name__}: {e}") from None


def read_manifest(pool_dir: str | Path) -> dict[str, Any]:
    """pool.json of a pool folder, checked: a JSON object whose `drafters` maps names to entries with a `path` and a
    `kind`. -> {} when the folder has no pool.json yet. Every error names the file."""
    path = Path(pool_dir) / "pool.json"
    if not path.is_file():
        return {}
    manifest = _read_json(path)
    if not isinstance(manifest.get("drafters"), dict):
        raise DrafterLoadError(f"{path} is not a draftpool manifest (a JSON object with a \"drafters\" mapping)")
    root = Path(pool_dir).resolve()
    for name, entry in manifest["drafters"].items():
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or \
                entry.get("kind") not in ("eagle3", "llama"):
            raise DrafterLoadError(f"{path}: drafter {name!r} needs a \"path\" and a \"kind\" (eagle3 or llama)")
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
    if not isinstance(entry.get("path"), str) or entry.get("kind") not in ("eagle3", "llama"):
        raise ValueError(f"pool entry {name!r} needs a \"path\" and a \"kind\" (eagle3 or llama), got {entry}")
    manifest = check_manifest(pool_dir, target)
    manifest.update({"format": "draftpool-pool/1", "target": target.name, "target_path": target.path,
                     "target_weights_sha256": target.weights_sha256})
    manifest.setdefault("drafters", {})[name] = entry
    atomic_write_json(Path(pool_dir) / "pool.json", manifest)


def load_pool(pool_dir: str | Path, info: TargetInfo, target_model, kinds: list[str] | tuple[str, ...] = ("eagle3",
              "llama"), at_least: int = 1) -> tuple[list[str], dict[str, tuple[str, torch.nn.Module]]]:
    """Every drafter of the given kinds in a pool, loaded and checked, in name order: (names, {name: (kind,
    model)}). EAGLE-3 heads share the target's token embedding."""
    pool_dir = Path(pool_dir)
    manifest = read_manifest(pool_dir)
    if not manifest:
        raise DrafterLoadError(f"no pool at {pool_dir} (pool.json missing): run build_pool.py first")
    models: dict[str, tuple[str, torch.nn.Module]] = {}
    for name, e in sorted(manifest["drafters"].items()):
        if e["kind"] not in kinds:
            continue
        if e["kind"] == "eagle3":
            head = load_eagle3(pool_dir / e["path"], info, target_model.get_input_embeddings().weight)
            models[name] = ("eagle3", head.eval())
        else:
            models[name] = ("llama", load_llama(pool_dir / e["path"], info).eval())
    if len(models) < at_least:
        raise DrafterLoadError(f"{pool_dir} has {len(models)} drafter(s) of kind {list(kinds)}: this needs "
                               f">= {at_least}")
    return list(models), models
