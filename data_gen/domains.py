"""Shipped domains, their prompt sets and the fixed train / held-out split.

The split of a prompt depends only on its text (a sha1 bucket): adding or reordering prompts never moves one.
`general` is the general mix: general-chat prompts plus a share of every specialist domain (train from train,
held-out from held-out, so no held-out prompt of any domain is ever trained on).
"""

from __future__ import annotations

import hashlib
import importlib

DOMAINS = ("sql", "python", "math", "biology", "chemistry", "medical", "summarization")
GENERAL = "general"
ALL_DOMAINS = (*DOMAINS, GENERAL)
HELD_OUT_PERCENT = 20
GENERAL_SHARE = {"train": 20, "held_out": 5}  # prompts taken from each specialist domain into the mix


class UnknownDomainError(ValueError):
    pass


def check_domain(domain: str) -> str:
    if domain not in ALL_DOMAINS:
        raise UnknownDomainError(f"unknown domain {domain!r}; known domains: {', '.join(ALL_DOMAINS)}")
    return domain


def split_of(prompt: str) -> str:
    bucket = int(hashlib.sha1(prompt.encode()).hexdigest()[:8], 16) % 100
    return "held_out" if bucket < HELD_OUT_PERCENT else "train"


def _raw_prompts(name: str) -> list[str]:
    return importlib.import_module(f"data_gen.prompt_sets.{name}").prompts()


def _split(name: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"train": [], "held_out": []}
    for p in _raw_prompts(name):
        out[split_of(p)].append(p)
    return out


def domain_prompts(domain: str) -> dict[str, list[dict[str, str]]]:
    """{"train": [{"id", "prompt", "source"}], "held_out": [...]} for a shipped domain."""
    check_domain(domain)
    sources = [domain] if domain != GENERAL else ["chat", *DOMAINS]
    out: dict[str, list[dict[str, str]]] = {"train": [], "held_out": []}
    for src in sources:
        for split, prompts in _split(src).items():
            if domain == GENERAL and src != "chat":
                prompts = prompts[: GENERAL_SHARE[split]]
            out[split] += [{"id": f"{src}-{hashlib.sha1(p.encode()).hexdigest()[:12]}", "prompt": p, "source": src}
                           for p in prompts]
    return out
