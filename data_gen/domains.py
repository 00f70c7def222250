"""Shipped domains, their prompt sets and the fixed train / held-out split.

The prompt sets are data: `data_gen/prompts/<set>.jsonl`, one {"id", "prompt", "group", "split"} object a line, frozen
by `scripts/freeze_prompts.py` from the generators in `scripts/prompt_sets/`. A group is the template family a prompt
came from; the split is by group and leak-free: no held-out prompt is a near-duplicate (token Jaccard >= 0.7) of a
train prompt of any set. `general` is the general mix: general-chat prompts plus a share of every specialist domain
(train from train, held-out from held-out, so no held-out prompt of any domain is ever trained on).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

DOMAINS = ("sql", "python", "math", "biology", "chemistry", "medical", "summarization")
GENERAL = "general"
ALL_DOMAINS = (*DOMAINS, GENERAL)
PROMPT_SETS = ("chat", *DOMAINS)  # one jsonl file each; the chat set only feeds the general mix
PROMPTS_DIR = Path(__file__).parent / "prompts"
ROW_KEYS = ("id", "prompt", "group", "split")
SPLITS = ("train", "held_out")
GENERAL_SHARE = {"train": 20, "held_out": 5}  # prompts taken from each specialist domain into the mix
NEAR_DUPLICATE_JACCARD = 0.7  # token Jaccard from which two prompts count as near-duplicates


class UnknownDomainError(ValueError):
    pass


def check_domain(domain: str) -> str:
    if domain not in ALL_DOMAINS:
        raise UnknownDomainError(f"unknown domain {domain!r}; known domains: {', '.join(ALL_DOMAINS)}")
    return domain


def prompt_tokens(text: str) -> frozenset[str]:
    """The set of lowercase word tokens (`\\w+`) of a text."""
    return frozenset(re.findall(r"\w+", text.lower()))


def token_jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a & b| / |a | b| of two token sets (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


@cache
def _rows(name: str) -> tuple[dict[str, str], ...]:
    """A shipped prompt set's rows in file order, read once per process."""
    path = PROMPTS_DIR / f"{name}.jsonl"
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}, line {n}: not a JSON object ({e})") from None
        if (not isinstance(row, dict) or set(row) != set(ROW_KEYS) or not all(isinstance(v, str) for v in row.values())
                or row["split"] not in SPLITS):
            raise ValueError(f"{path}, line {n}: expected a JSON object with the string fields "
                             f"{', '.join(ROW_KEYS)} and split in {SPLITS}, got {line[:200]!r}")
        rows.append(row)
    return tuple(rows)


def prompt_set(name: str) -> tuple[dict[str, str], ...]:
    """The rows {"id", "prompt", "group", "split"} of one shipped prompt set (PROMPT_SETS), in file order."""
    if name not in PROMPT_SETS:
        raise UnknownDomainError(f"unknown prompt set {name!r} (known: {', '.join(PROMPT_SETS)})")
    return _rows(name)


def domain_prompts(domain: str) -> dict[str, list[dict[str, str]]]:
    """{"train": [{"id", "prompt", "source", "group"}], "held_out": [...]} for a shipped domain, in file order."""
    check_domain(domain)
    sources = [domain] if domain != GENERAL else list(PROMPT_SETS)
    out: dict[str, list[dict[str, str]]] = {split: [] for split in SPLITS}
    for src in sources:
        for split in SPLITS:
            rows = [r for r in _rows(src) if r["split"] == split]
            if domain == GENERAL and src != "chat":
                rows = rows[: GENERAL_SHARE[split]]
            out[split] += [{"id": r["id"], "prompt": r["prompt"], "source": src, "group": r["group"]} for r in rows]
    return out
