"""Small independent Llama drafters on the target's tokenizer (usable as transformers `assistant_model`).

Presets: `llama-68m` is the MetaSD / JackFram shape (2 layers, hidden 768, 12 heads, intermediate 3072); on a 49k vocab
with tied embeddings it has ~57M parameters, 40% of a 135M target, far too costly to speed it up. `llama-tiny` is sized
for small targets (~14M parameters with a 49k vocab). `auto` picks llama-tiny for targets under 1B parameters.
"""

from __future__ import annotations

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from training.losses import DISTILL_LOSSES, hard_cross_entropy, masked_mean, tvd

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


def build_drafter(preset: str, target_config, seed: int = 0) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    return LlamaForCausalLM(drafter_config(preset, target_config))


def drafter_loss(logits: torch.Tensor, target_logits: torch.Tensor | None, input_ids: torch.Tensor,
                 loss_mask: torch.Tensor, kind: str, with_metrics: bool = True):
    """Next-token loss on response tokens. logits/target_logits [B,T,V] predict x_{t+1}; input_ids, loss_mask [B,T].

    kind: "ce" (hard cross-entropy on the self-distilled tokens) or a distillation loss against the target logits
    ("fkl", "rkl", "jsd", "tvd"). Metrics: top-1 agreement with the target and acceptance 1 - TV.
    """
    logits, labels, mask = logits[:, :-1], input_ids[:, 1:], loss_mask[:, 1:]  # position t predicts x_{t+1}
    if kind == "ce":
        per_pos = hard_cross_entropy(logits, labels)
    else:
        per_pos = DISTILL_LOSSES[kind](logits, target_logits[:, :-1])
    loss = masked_mean(per_pos, mask)
    metrics: dict[str, float] = {}
    if with_metrics and target_logits is not None:
        with torch.no_grad():
            n = mask.sum().clamp_min(1)
            tl = target_logits[:, :-1]
            metrics["top1_0"] = (((logits.argmax(-1) == tl.argmax(-1)).float() * mask).sum() / n).item()
            metrics["accept_0"] = (((1 - tvd(logits, tl)) * mask).sum() / n).item()
            metrics["n_0"] = mask.sum().item()
    return loss, metrics
