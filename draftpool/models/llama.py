"""Small independent Llama drafters on the target's tokenizer (usable as transformers `assistant_model`).

Presets: `llama-68m` is the MetaSD / JackFram shape (2 layers, hidden 768, 12 heads, intermediate 3072); on a 49k vocab
with tied embeddings it has ~57M parameters, 40% of a 135M target, far too costly to speed it up. `llama-tiny` is sized
for small targets (~14M parameters with a 49k vocab). `auto` picks llama-tiny for targets under 1B parameters.
"""

from __future__ import annotations

import copy

import torch
from transformers import LlamaConfig, LlamaForCausalLM

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
