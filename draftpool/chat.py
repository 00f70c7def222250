"""The target's chat template and stop tokens: how a prompt becomes the ids the target answers, and which ids end an
answer. One place below data generation (self-distillation renders its prompts here) and serving (a request is
rendered the same way), so a drafter is trained on the very prompt form it is later asked to draft for."""

from __future__ import annotations

from typing import Any


def chat_messages(prompt: str, system_prompt: str = "") -> list[dict[str, str]]:
    """One user turn, after a system turn when system_prompt is set ('' = the template's default)."""
    return ([{"role": "system", "content": system_prompt}] if system_prompt else []) + [
        {"role": "user", "content": prompt}]


def render_prompt(tok: Any, prompt: str, system_prompt: str = "") -> list[int]:
    """The prompt's ids under the tokenizer's chat template, the generation prompt (the assistant turn's opening)
    included."""
    ids = tok.apply_chat_template(chat_messages(prompt, system_prompt), add_generation_prompt=True, tokenize=True)
    if isinstance(ids, dict) or hasattr(ids, "keys"):
        ids = ids["input_ids"]
    return list(ids)


def stop_token_ids(tok: Any, model: Any = None, path: str | None = None) -> list[int]:
    """The ids that end an answer: the generation config's EOS ids (the model's, or read from the HF folder `path`
    without loading the model) plus the tokenizer's."""
    if model is not None:
        ids = model.generation_config.eos_token_id
    else:
        from transformers import GenerationConfig

        try:
            ids = GenerationConfig.from_pretrained(path).eos_token_id
        except OSError:  # no generation_config.json
            ids = None
    ids = [ids] if isinstance(ids, int) else list(ids or [])
    if tok.eos_token_id is not None and tok.eos_token_id not in ids:
        ids.append(tok.eos_token_id)
    return ids
