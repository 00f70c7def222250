"""The offline domain router's training, shared by the router and selection benchmarks: a PromptRouter fitted on the
shipped domains' train prompts, cached by a hash of what it was fitted on."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from data_gen.domains import DOMAINS, GENERAL, check_domain, domain_prompts
from specsel.selection.router import ENCODER_SHA256, ROUTER_FORMAT, PromptRouter, RouterError


def _train_rows(domains: Sequence[str], max_per_domain: int | None) -> tuple[list[str], list[str]]:
    prompts, labels = [], []
    for d in domains:
        rows = domain_prompts(d)["train"]
        if d == GENERAL:  # the general mix holds specialist prompts too: only its own chat prompts are "general"
            rows = [r for r in rows if r["source"] == "chat"]
        rows = rows[:max_per_domain] if max_per_domain is not None else rows
        prompts += [r["prompt"] for r in rows]
        labels += [d] * len(rows)
    return prompts, labels


def train_domain_router(domains: Sequence[str] = DOMAINS, seed: int = 0, cache_dir: str | Path | None = None,
                        max_per_domain: int | None = None, **fit_kwargs: Any) -> PromptRouter:
    """A PromptRouter trained on the train split of `domains` (label = domain; for `general`, its chat prompts).

    max_per_domain: the first n train prompts of each domain (smaller, faster fits). cache_dir: the fitted router is
    kept there as router-<key>.json, the key hashing the training prompts, labels, settings and encoder, and reused.
    """
    domains = list(dict.fromkeys(check_domain(d) for d in domains))
    if len(domains) < 2:
        raise ValueError(f"a router needs at least two domains, got {domains}")
    if max_per_domain is not None and max_per_domain < 1:
        raise ValueError(f"max_per_domain must be >= 1, got {max_per_domain}")
    prompts, labels = _train_rows(domains, max_per_domain)
    cache = None
    if cache_dir is not None:
        h = hashlib.sha256(json.dumps([ROUTER_FORMAT, ENCODER_SHA256, seed, sorted(fit_kwargs.items()),
                                       prompts, labels]).encode()).hexdigest()[:16]
        cache = Path(cache_dir) / f"router-{h}.json"
        if cache.is_file():
            try:
                return PromptRouter.load(cache)
            except RouterError:
                pass  # a damaged cache entry is refitted and overwritten
    router = PromptRouter().fit(prompts, labels, seed=seed, **fit_kwargs)
    router.info["domains"] = domains
    if cache is not None:
        router.save(cache)
    return router
