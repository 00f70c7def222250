"""The target's chat template and stop tokens: how a prompt becomes the ids the target answers, and which ids end an
answer. One place below data generation (self-distillation renders its prompts here) and serving (a request is
rendered the same way), so a drafter is trained on the very prompt form it is later asked to draft for."""

from __future__ import annotations

from typing import Any


def chat_messages(prompt: str, system_prompt: str = "") -> list[dict[str, str]]:
    """One user turn, after a system turn when system_prompt is set ('' = the template's default)."""
    return ([{"role": "system", "content": system_prompt}] if system_prompt else []) + [
        {"role": "user", "content": prompt}]


def token_ids(encoded: Any) -> list[int]:
    """A tokenizer's output (a list, or a BatchEncoding) -> its ids."""
    return list(encoded["input_ids"] if hasattr(encoded, "keys") else encoded)


def special_texts(tok: Any) -> list[str]:
    """The texts the tokenizer turns into special tokens (<|im_start|>, <|eot_id|>, ...)."""
    return [t.content for t in tok.added_tokens_decoder.values() if t.special and t.content]


class TemplateError(ValueError):
    """A chat template that changes message content: its text cannot be kept apart from the markers."""


def chat_prompt_ids(tok: Any, messages: list[dict[str, str]], allow_special: bool = False) -> list[int]:
    """The target's chat template over `messages`, the generation prompt (the assistant turn's opening) included ->
    prompt ids. Content that spells a special token (a user's "hi<|im_end|>\\n<|im_start|>system\\n...") stays text
    unless `allow_special`: only the template's own markers are special tokens, so no message can forge another turn.
    Content without such text tokenizes exactly as `apply_chat_template` does."""
    ids = token_ids(tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=True))
    marks = special_texts(tok)
    if allow_special or not any(mark in m["content"] for m in messages for mark in marks):
        return ids
    # rule: the template is rendered around placeholders; its own text is tokenized as usual (its markers become
    # special tokens) and each message's content with special-token text split into plain tokens
    holes = [f"\ue000draftpool-{i}\ue001" for i in range(len(messages))]
    shell = tok.apply_chat_template([{**m, "content": h} for m, h in zip(messages, holes)],
                                    add_generation_prompt=True, tokenize=False)
    pieces, rest = [], shell
    for hole in holes:
        before, found, rest = rest.partition(hole)
        if not found or hole in rest:
            raise TemplateError("this target's chat template does not place each message's content once")
        pieces.append(before)
    contents = [m["content"] for m in messages]
    whole = tok.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    if "".join(p + c for p, c in zip(pieces, contents)) + rest != whole:
        raise TemplateError("this target's chat template changes message content (e.g. trims it), so special-token "
                            "text in it cannot be kept as text: remove it, or serve with serve.chat_special_tokens="
                            "true")
    out: list[int] = []
    for piece, content in zip(pieces, contents):
        out += token_ids(tok(piece, add_special_tokens=False))
        out += token_ids(tok(content, add_special_tokens=False, split_special_tokens=True))
    return out + token_ids(tok(rest, add_special_tokens=False))


def render_prompt(tok: Any, prompt: str, system_prompt: str = "") -> list[int]:
    """One user turn (after a system turn when `system_prompt` is set) -> its prompt ids (`chat_prompt_ids`), the
    project's own prompt text taken as written."""
    return chat_prompt_ids(tok, chat_messages(prompt, system_prompt), allow_special=True)


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
