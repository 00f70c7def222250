"""Prompt-set generators, one module per set, each with `prompts() -> list[tuple[str, str]]`: (group, prompt) pairs
in a fixed order. `scripts/freeze_prompts.py` freezes them to `data_gen/prompts/<set>.jsonl`."""
