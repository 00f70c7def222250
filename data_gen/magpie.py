"""Prompts written by the target itself (Magpie): the chat template's user turn is left open and the target writes it.

    python -m data_gen.magpie --domain sql [--target ID] [prompts=400 out=... system_prompt=... key=value ...]

The pre-query template (the chat template rendered up to where a user message's text starts) is the whole input; the
target samples the user turn until its end-of-turn token. A sample becomes a prompt when it
1. ended by itself within `max_tokens` and has `min_words`..`max_words` words,
2. reads as the domain's: a naive-Bayes classifier over word tokens, fitted on the shipped prompt sets' train splits
   (one class per set), puts it in the domain's set (`general`: any set),
3. is new: no shipped prompt of the domain (train or held-out: a held-out look-alike would leak into the evaluation)
   and no earlier kept sample is a near-duplicate of it (token Jaccard >= 0.7, `data_gen.diversity`).
Samples are drawn in rounds of `round_size` by continuous batching on the engine's slot forward
(`data_gen/continuous.py`), sample i with its own seed (seed, domain, i), until `prompts` are kept or `max_samples`
are drawn. Every round's samples are saved (`<out>.samples.jsonl`), so a killed run resumes where it stopped and draws
the same samples. Output (written atomically each round): `out`, one {"prompt"} object a line (the `user_prompts`
input of `data_gen.generate`), and `<out>.report.json` (samples drawn, kept, each rejection's count, tok/s).
Whether the prompts help is judged on the shipped held-out prompts: `python -m benchmarks.data_curve ... --also`.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from data_gen.diversity import near_duplicate_pairs
from data_gen.domains import GENERAL, PROMPT_SETS, check_domain, domain_prompts, prompt_set, prompt_tokens
from draftpool.config import ConfigError, field, load_config
from draftpool.io import atomic_write_json, atomic_write_text
from draftpool.target import DEFAULT_TARGET, TargetError

_SENTINEL = "\x00MAGPIE-USER-TURN\x00"
REJECTIONS = ("unfinished", "length", "other_domain", "near_duplicate")


@dataclass
class MagpieConfig:
    domain: str = field(help="a shipped domain: the classifier keeps samples that read as its prompt set")
    target: str = field(DEFAULT_TARGET, help="hub id, local folder, or the embedded default")
    prompts: int = field(400, help="prompts to keep")
    max_samples: int = field(0, help="stop after drawing this many samples (0 = 20 x prompts)")
    round_size: int = field(256, help="samples drawn between two filter passes and saves")
    slots: int = field(128, help="KV-cache slots of the continuous batching")
    system_prompt: str = field("", help="system message of the pre-query template ('' = the template's default); "
                                        "a domain hint here steers the samples toward the domain")
    temperature: float = field(1.0, help="sampling temperature of the user turn (Magpie: 1.0)")
    top_p: float = field(1.0, help="nucleus threshold")
    max_tokens: int = field(96, help="a user turn not ended by then is dropped (unfinished)")
    min_words: int = field(4, help="shorter samples are dropped")
    max_words: int = field(120, help="longer samples are dropped")
    seed: int = field(0, help="base seed; sample i draws with a seed from (seed, domain, i)")
    out: str = field("runs/magpie/{target_slug}/{domain}.jsonl", help="the prompt file ({target_slug}, {domain})")

    def validate(self) -> None:
        check_domain(self.domain)
        if self.prompts < 1 or self.round_size < 1 or self.slots < 1 or self.max_tokens < 1:
            raise ConfigError("prompts, round_size, slots and max_tokens must be >= 1")
        if self.max_samples < 0 or self.temperature <= 0 or not 0 < self.top_p <= 1:
            raise ConfigError("max_samples must be >= 0, temperature > 0 and top_p in (0, 1]")
        if not 1 <= self.min_words <= self.max_words:
            raise ConfigError("need 1 <= min_words <= max_words")


def pre_query_ids(tok, system_prompt: str = "") -> list[int]:
    """The chat template rendered up to where the user message's text starts, as token ids."""
    from draftpool.chat import chat_messages

    try:
        text = tok.apply_chat_template(chat_messages(_SENTINEL, system_prompt), tokenize=False,
                                       add_generation_prompt=False)
    except ValueError as e:  # no chat template
        raise ConfigError(f"the target's tokenizer has no usable chat template: {e}") from None
    if _SENTINEL not in text:
        raise ConfigError("the chat template does not place the user message's text verbatim: no pre-query template")
    return list(tok(text[:text.index(_SENTINEL)], add_special_tokens=False)["input_ids"])


class DomainClassifier:
    """Multinomial naive Bayes over lowercase word tokens (token sets, Laplace smoothing, uniform prior), one class per
    shipped prompt set, fitted on the sets' train splits. Torch-free."""

    def __init__(self, texts_by_class: dict[str, list[str]]):
        self.counts = {c: Counter(t for x in texts for t in prompt_tokens(x)) for c, texts in texts_by_class.items()}
        self.totals = {c: sum(cnt.values()) for c, cnt in self.counts.items()}
        self.vocab = len(set().union(*self.counts.values())) + 1

    def scores(self, text: str) -> dict[str, float]:
        """{class: log P(text's tokens | class)}"""
        toks = prompt_tokens(text)
        return {c: sum(math.log((self.counts[c][t] + 1) / (self.totals[c] + self.vocab)) for t in toks)
                for c in self.counts}

    def predict(self, text: str) -> str:
        s = self.scores(text)
        return max(s, key=s.get)


def shipped_classifier() -> DomainClassifier:
    return DomainClassifier({name: [r["prompt"] for r in prompt_set(name) if r["split"] == "train"]
                             for name in PROMPT_SETS})


def select(samples: list[dict], domain: str, classifier: DomainClassifier, shipped: list[str], min_words: int,
           max_words: int, limit: int) -> tuple[list[str], Counter]:
    """The prompts kept from samples [{"text", "finished"}] in order (at most `limit`), and each rejection's count
    (REJECTIONS). Deterministic in the samples' order: a longer list keeps every prompt a shorter one kept."""
    why: Counter = Counter()
    fit = []
    for s in samples:
        text = s["text"].strip()
        if not s["finished"]:
            why["unfinished"] += 1
        elif not min_words <= len(text.split()) <= max_words:
            why["length"] += 1
        elif domain != GENERAL and classifier.predict(text) != domain:
            why["other_domain"] += 1
        else:
            fit.append(text)
    pairs = near_duplicate_pairs(shipped + fit)
    n0, dup = len(shipped), set()
    for i, j in pairs:  # i < j: j is a copy of something shipped or drawn before it
        if j >= n0 and (i < n0 or i - n0 not in dup):
            dup.add(j - n0)
    kept = [t for k, t in enumerate(fit) if k not in dup]
    why["near_duplicate"] += len(dup)
    if len(kept) > limit:
        kept = kept[:limit]
    return kept, why


def draw(forward, tok, jobs: list, stop_ids: list[int]) -> list[dict]:
    """Sample every job's user turn -> [{"i": job key, "text", "finished", "tokens"}] in job-key order."""
    import torch

    from data_gen.continuous import Stats, generate

    drawn: dict[int, dict] = {}

    def on_done(job, answer: list[int], finished: bool) -> None:
        ids = answer[:-1] if finished else answer  # the end-of-turn token is not part of the prompt
        drawn[job.key] = {"i": job.key, "text": tok.decode(ids, skip_special_tokens=True), "finished": finished,
                          "tokens": len(answer)}

    with torch.no_grad():
        generate(forward, jobs, stop_ids, on_done, Stats())
    return [drawn[k] for k in sorted(drawn)]


def run(cfg: MagpieConfig, model=None, tok=None, info=None) -> Path:
    """Draw samples until cfg.prompts are kept (or max_samples drawn); returns the prompt file."""
    from data_gen.continuous import Job
    from data_gen.plan import shard_seed
    from draftpool.chat import stop_token_ids
    from draftpool.forward.slots import SlotForward
    from draftpool.target import load_target, resolve_device, resolve_target, target_dtype

    # 1. target, template, filter
    info = info or resolve_target(cfg.target)
    if model is None:
        device = resolve_device("auto")
        model, tok = load_target(info, device, target_dtype("auto", device, info, "batch"))
    out = Path(cfg.out.format(target_slug=info.slug, domain=cfg.domain))
    samples_path, report_path = out.with_suffix(".samples.jsonl"), out.with_suffix(".report.json")
    prefix = pre_query_ids(tok, cfg.system_prompt)
    stop_ids = stop_token_ids(tok, model, info.path)
    classifier = shipped_classifier()
    shipped = [r["prompt"] for split in domain_prompts(cfg.domain).values() for r in split]
    max_samples = cfg.max_samples or 20 * cfg.prompts
    samples = [json.loads(line) for line in samples_path.read_text().splitlines()] if samples_path.exists() else []
    settings = {k: getattr(cfg, k) for k in ("target", "system_prompt", "temperature", "top_p", "max_tokens", "seed")}
    if samples and samples[0].get("settings") != settings:
        raise ConfigError(f"{samples_path} was drawn with other settings ({samples[0].get('settings')}): "
                          f"remove it or set another out")
    forward = SlotForward(model, cfg.slots + 1, len(prefix) + cfg.max_tokens)
    kept, why = select(samples, cfg.domain, classifier, shipped, cfg.min_words, cfg.max_words, cfg.prompts)
    seconds, new_tokens = 0.0, 0
    # 2. draw rounds until enough are kept
    while len(kept) < cfg.prompts and len(samples) < max_samples:
        first = len(samples)
        jobs = [Job(i, prefix, cfg.temperature, cfg.top_p, shard_seed(cfg.seed, f"magpie:{cfg.domain}:{i}"),
                    cfg.max_tokens) for i in range(first, min(first + cfg.round_size, max_samples))]
        t0 = time.perf_counter()
        drawn = draw(forward, tok, jobs, stop_ids)
        seconds += time.perf_counter() - t0
        new_tokens += sum(d["tokens"] for d in drawn)
        samples += [{**d, **({"settings": settings} if d["i"] == 0 else {})} for d in drawn]
        atomic_write_text(samples_path, "".join(json.dumps(s) + "\n" for s in samples))
        kept, why = select(samples, cfg.domain, classifier, shipped, cfg.min_words, cfg.max_words, cfg.prompts)
        print(f"magpie {cfg.domain}: {len(samples)} samples drawn, {len(kept)} kept "
              f"({', '.join(f'{k} {why[k]}' for k in REJECTIONS)})", file=sys.stderr, flush=True)
    # 3. save
    atomic_write_text(out, "".join(json.dumps({"prompt": p}) + "\n" for p in kept))
    atomic_write_json(report_path, {"domain": cfg.domain, "target": info.name, "samples": len(samples),
                                    "kept": len(kept), "rejected": {k: why[k] for k in REJECTIONS},
                                    "settings": settings, "this_run_seconds": round(seconds, 1),
                                    "this_run_tok_per_s": round(new_tokens / seconds, 1) if seconds else None})
    if len(kept) < cfg.prompts:
        print(f"magpie {cfg.domain}: only {len(kept)} of {cfg.prompts} prompts kept after {len(samples)} samples "
              f"(max_samples); a domain hint in system_prompt raises the yield", file=sys.stderr)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--domain", required=True)
    ap.add_argument("--target", default=None)
    args, overrides = ap.parse_known_args(argv)
    try:
        extra = [f"domain={args.domain}"] + ([f"target={args.target}"] if args.target else [])
        out = run(load_config(MagpieConfig, None, overrides + extra))
    except (ConfigError, ValueError, TargetError) as e:
        sys.exit(f"error: {e}")
    print(f"target-written prompts in {out}")


if __name__ == "__main__":
    main()
