"""Continuous batching over the slot forward: the `engine` backend of self-distillation.

Jobs (one prompt to answer at one temperature) fill the KV-cache slots of `draftpool.forward.slots.SlotForward`; every
pass steps each running answer by one token and prefills the prompts just placed. A finished answer frees its slot and
the next job takes it in the next pass, so no row waits for the longest answer of a batch and no compute goes to
padding (beyond the few pad rows of a long pass, slots.py's docstring).

Sampling: each job draws from its own `torch.Generator` seeded by the job (not by its batch), with the transform
transformers' `generate` applies (temperature, then top-p; `draftpool.forward.sampling.filter_logits`), so an answer
does not depend on which other jobs shared its passes: a resumed run draws what the first attempt would have drawn,
wherever the kernels compute a row alike at every pass width (tests/data_gen/test_continuous.py checks it on the real
target).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from draftpool.forward.sampling import SamplingParams, filter_logits
from draftpool.forward.slots import SlotForward


@dataclass
class Job:
    key: Any  # the caller's handle (shard name, row)
    prompt: list[int]
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    max_new_tokens: int = 128


@dataclass
class _Running:
    job: Job
    answer: list[int] = field(default_factory=list)
    generator: torch.Generator | None = None


@dataclass
class Stats:
    passes: int = 0
    rows: int = 0  # real rows run (prompt and answer tokens)
    new_tokens: int = 0
    busy_slot_passes: int = 0  # sum over passes of the slots holding a job


def next_tokens(logits: torch.Tensor, running: list[_Running]) -> list[int]:
    """logits [n,V] of each running job's last row -> the next token of each: the argmax for greedy jobs, else one draw
    from the job's own generator."""
    out = logits.argmax(-1).tolist()  # [n]
    for i, r in enumerate(running):
        if r.job.temperature > 0:
            params = SamplingParams(temperature=r.job.temperature, top_p=r.job.top_p)
            probs = filter_logits(logits[i], params).softmax(-1)  # [V]
            out[i] = int(torch.multinomial(probs, 1, generator=r.generator))
    return out


def shared_prefix(prompts: list[list[int]]) -> int:
    """The length of the prefix every prompt starts with, less one (each prompt keeps a token of its own to run)."""
    if not prompts:
        return 0
    first, n = prompts[0], min(len(p) for p in prompts) - 1
    for p in prompts[1:]:
        n = next((i for i in range(n) if p[i] != first[i]), n)
    return max(n, 0)


def generate(forward: SlotForward, jobs: list[Job], stop_ids: list[int],
             on_done: Callable[[Job, list[int], bool], None], stats: Stats | None = None,
             share_prefix: bool = True) -> Stats:
    """Answer every job, calling on_done(job, answer ids up to and including the stop token, finished) as each ends
    (in the order they end). Jobs are taken in the given order as slots free.

    share_prefix: the prefix all prompts share (a chat template's system turn) is run once into the last slot and
    copied into each new job's slot, which then runs only the rest of its prompt (used when it is >= 2 tokens and
    there are >= 2 slots)."""
    stats = stats or Stats()
    stops = set(stop_ids)
    queue: Iterator[Job] = iter(jobs)
    slots = forward.slots
    prefix = shared_prefix([j.prompt for j in jobs]) if share_prefix and slots > 1 else 0
    if prefix >= 2:
        slots -= 1  # rule: the last slot holds the shared prefix, run once
        forward.release(slots)
        forward.forward([(slots, list(jobs[0].prompt[:prefix]))])
        stats.passes, stats.rows = stats.passes + 1, stats.rows + prefix
    else:
        prefix = 0
    free = list(range(slots - 1, -1, -1))  # pop() takes slot 0 first
    running: dict[int, _Running] = {}
    pending: list[int] = []  # slots whose last token is not yet in the cache
    exhausted = False
    while True:
        segments = [(slot, [running[slot].answer[-1]]) for slot in pending]
        while free and not exhausted:  # rule: a free slot takes the next job in this very pass
            job = next(queue, None)
            if job is None:
                exhausted = True
                break
            slot = free.pop()
            forward.release(slot)
            if prefix:
                forward.share(slots, slot, prefix)
            gen = None
            if job.temperature > 0:
                gen = torch.Generator(device=forward.lean.device)
                gen.manual_seed(job.seed)
            running[slot] = _Running(job, generator=gen)
            segments.append((slot, list(job.prompt[prefix:])))
        if not segments:
            return stats
        hidden, _ = forward.forward(segments)  # [n,H] last row of each segment
        order = [slot for slot, _ in segments]
        chosen = next_tokens(forward.lm_head(hidden), [running[s] for s in order])
        stats.passes += 1
        stats.rows += sum(len(t) for _, t in segments)
        stats.busy_slot_passes += len(running)
        pending = []
        for slot, tok in zip(order, chosen):
            r = running[slot]
            r.answer.append(tok)
            stats.new_tokens += 1
            if tok in stops or len(r.answer) >= r.job.max_new_tokens:
                on_done(r.job, r.answer, tok in stops)
                del running[slot]
                free.append(slot)
            else:
                pending.append(slot)
