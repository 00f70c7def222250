"""Small independent Llama drafters on the target's tokenizer (usable as transformers `assistant_model`).

Presets: `llama-68m` is the MetaSD / JackFram shape (2 layers, hidden 768, 12 heads, intermediate 3072); on a 49k vocab
with tied embeddings it has ~57M parameters, 40% of a 135M target, far too costly to speed it up. `llama-tiny` is sized
for small targets (~14M parameters with a 49k vocab). `auto` picks llama-tiny for targets under 1B parameters.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

from draftpool.io import atomic_dir
from draftpool.models.folder import DrafterLoadError, check_config, read_json, read_meta
from draftpool.models.kind import Capabilities, DrafterKind, Steps, call, shift_left

if TYPE_CHECKING:
    from draftpool.target import TargetInfo

PRESETS = {
    "llama-68m": dict(num_hidden_layers=2, hidden_size=768, num_attention_heads=12, num_key_value_heads=12,
                      intermediate_size=3072),
    "llama-tiny": dict(num_hidden_layers=2, hidden_size=256, num_attention_heads=4, num_key_value_heads=4,
                       intermediate_size=1024),
}


def pick_preset(preset: str, target_params: int) -> str:
    if preset == "auto":
        return "llama-tiny" if target_params < 1_000_000_000 else "llama-68m"
    if preset not in PRESETS:
        raise ValueError(f"unknown drafter preset {preset!r}; known: auto, {', '.join(PRESETS)}")
    return preset


def drafter_config(preset: str, target_config) -> LlamaConfig:
    t = getattr(target_config, "text_config", target_config)
    cfg = LlamaConfig(vocab_size=t.vocab_size, max_position_embeddings=t.max_position_embeddings,
                      rms_norm_eps=t.rms_norm_eps, rope_parameters=getattr(t, "rope_parameters", None),
                      tie_word_embeddings=True, bos_token_id=t.bos_token_id, eos_token_id=t.eos_token_id,
                      pad_token_id=getattr(t, "pad_token_id", None), **PRESETS[preset])
    cfg.architectures = ["LlamaForCausalLM"]
    return cfg


def from_target_layers(target, n_layers: int) -> LlamaForCausalLM:
    """A drafter cut from a Llama target: its first `n_layers` decoder layers with its embeddings, final norm and
    output head (copies; the target is untouched). A cheap start for a step drafter that already writes the target's
    language (LayerSkip-style early exit made independent); train it by distillation before use."""
    cfg = copy.deepcopy(target.config)
    kind = getattr(cfg, "model_type", None)
    if kind != "llama":
        raise ValueError(f"init target:N needs a Llama-family target, this one is {kind!r}")
    if not 1 <= n_layers < cfg.num_hidden_layers:
        raise ValueError(f"target:N takes 1 <= N < {cfg.num_hidden_layers} (the target's layers), got {n_layers}")
    cfg.num_hidden_layers = n_layers
    if getattr(cfg, "layer_types", None):
        cfg.layer_types = cfg.layer_types[:n_layers]
    cfg.architectures = ["LlamaForCausalLM"]
    model = LlamaForCausalLM(cfg)
    own = {k: v for k, v in target.state_dict().items()
           if not k.startswith("model.layers.") or int(k.split(".")[2]) < n_layers}
    missing, unexpected = model.load_state_dict(own, strict=False)
    if unexpected or [k for k in missing if k != "lm_head.weight"]:
        raise ValueError(f"cannot cut a drafter from this target: missing {missing}, unexpected {unexpected}")
    if cfg.tie_word_embeddings:
        model.tie_weights()
    return model.to(next(target.parameters()).dtype)


def build_drafter(preset: str, target_config, seed: int = 0) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    return LlamaForCausalLM(drafter_config(preset, target_config))


# --- the drafter folder: a plain LlamaForCausalLM folder with the target's tokenizer ---------------------------------
def write_llama(model, tokenizer, out: Path, meta: dict[str, Any]) -> None:
    with atomic_dir(out) as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        (tmp / "draftpool.json").write_text(json.dumps(meta, indent=2) + "\n")

def load_llama(path: str | Path, target: TargetInfo):
    path = Path(path)
    read_meta(path, "llama", target, bound_to_weights=False)
    raw = read_json(path / "config.json")
    arch = raw.get("architectures")
    if not isinstance(arch, list) or "LlamaForCausalLM" not in arch:
        raise DrafterLoadError(f"{path}: not a LlamaForCausalLM drafter (architectures {arch})")
    if raw.get("vocab_size") != target.vocab_size:
        raise DrafterLoadError(f"{path}: drafter vocab {raw.get('vocab_size')} != target vocab {target.vocab_size}")
    check_config(raw, path, ("hidden_size", "intermediate_size", "num_attention_heads", "num_hidden_layers"),
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


class LlamaKind(DrafterKind):
    """Independent causal LMs on the target's tokenizer: read tokens only; every draft depth is a next-token step."""

    name = "llama"
    label = "independent Llama drafter"
    folder = "llama68m"  # older than the kind's name, kept for existing pools: it also holds the 14M llama-tiny preset
    architecture = "LlamaForCausalLM"
    offset = 1  # row t predicts x_{t+1}
    bound_to_weights = False
    capabilities = Capabilities(trained=True, tree=False, self_limiting=False, step_drafter=True, stackable=False,
                                vllm=False)
    decoder = "specsel.decoding.llama:LlamaDrafter"
    trainer = "training.kinds.llama:TRAINING"

    def load(self, path: str | Path, target: TargetInfo, target_model) -> LlamaForCausalLM:
        return load_llama(path, target).eval()

    def write(self, model: LlamaForCausalLM, out: Path, target: TargetInfo, meta: dict[str, Any], *,
              source: Path | None = None, tokenizer=None) -> None:
        """A plain LlamaForCausalLM folder with the target's tokenizer (no export options)."""
        if tokenizer is None and source is None:
            raise ValueError("writing an independent drafter needs its tokenizer (or the folder to take it from)")
        write_llama(model, tokenizer or AutoTokenizer.from_pretrained(source), out, meta)

    def steps(self, model: LlamaForCausalLM, feats: torch.Tensor | None, input_ids: torch.Tensor,
              attention_mask: torch.Tensor, depth: int, loss_mask: torch.Tensor | None = None,
              params: dict[str, torch.Tensor] | None = None) -> Steps:
        logits = call(model, params, input_ids=input_ids, attention_mask=attention_mask).logits  # [B,T,V]
        if loss_mask is not None:
            logits = logits[shift_left(loss_mask, self.offset).bool()]  # [N,V] rows predicting response tokens
        return Steps([logits], self.offset, shared=True)


LLAMA = LlamaKind()
