"""Lookahead reasoning (Fu et al., 2025): step-level speculation. Each round the step drafter drafts up to `gamma`
steps ahead, the target writes its own step for every prefix of that draft in one batch, the judge compares them,
and the round commits the agreeing drafted steps plus one target step (`accept.accept_steps`). Not lossless: an
accepted step is the drafter's wording of what the judge took for the target's step, so answers are measured.

Every round's first rejected step gives a preference pair (prompt = the exact ids both steps came from); the
online trainer turns them into DPO updates of the step drafter (Online-LR).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from specsel.decoding.request import cut_at_stop
from specsel.lookahead.accept import PreferencePair, accept_steps
from specsel.lookahead.generate import generate_steps
from specsel.lookahead.judges import Judge
from specsel.lookahead.steps import StepCutter


@dataclass
class LookaheadMetrics:
    rounds: int = 0
    accepted_steps: list[int] = field(default_factory=list)  # drafted steps accepted per round
    drafted_steps: list[int] = field(default_factory=list)  # drafted steps per round
    accepted_tokens: int = 0  # tokens of accepted drafted steps
    new_tokens: int = 0
    judge_calls: int = 0
    draft_s: float = 0.0
    target_s: float = 0.0
    judge_s: float = 0.0
    total_s: float = 0.0

    @property
    def accept_ratio(self) -> float:
        """Accepted / drafted steps over the request."""
        return sum(self.accepted_steps) / max(1, sum(self.drafted_steps))

    @property
    def tokens_per_s(self) -> float:
        return self.new_tokens / self.total_s if self.total_s > 0 else 0.0


class LookaheadReasoner:
    """target / drafter: causal LMs on one tokenizer; judge: `judges.make_judge`; gamma: steps drafted per round."""

    def __init__(self, target, tokenizer, drafter, judge: Judge, cutter: StepCutter, eos_ids: set[int],
                 gamma: int = 4):
        if gamma < 1:
            raise ValueError(f"gamma (steps drafted per round) must be >= 1, got {gamma}")
        if not eos_ids:
            raise ValueError("lookahead reasoning needs the end-of-sequence ids")
        self.target, self.tok, self.drafter, self.judge = target, tokenizer, drafter, judge
        self.cutter, self.eos, self.gamma = cutter, set(eos_ids), gamma
        self.pairs: list[PreferencePair] = []  # every round's pair, drained by the online trainer

    def _complete(self, step: list[int]) -> bool:
        """A step that ends the answer (EOS) or holds the delimiter can be judged."""
        return bool(step) and (step[-1] in self.eos or self.cutter.delimited(step))

    def _same(self, drafted: list[int], target: list[int]) -> bool:
        return self.judge(self.cutter.text(drafted), self.cutter.text(target))

    def generate(self, prompt: list[int], max_new_tokens: int) -> tuple[list[int], LookaheadMetrics]:
        """-> (new token ids, stopping after an EOS or once max_new_tokens are reached, and the request's metrics)."""
        if not prompt or max_new_tokens < 1:
            raise ValueError("lookahead reasoning needs a non-empty prompt and max_new_tokens >= 1")
        m, start = LookaheadMetrics(), time.perf_counter()
        ctx = list(prompt)
        while len(ctx) - len(prompt) < max_new_tokens and not (len(ctx) > len(prompt) and ctx[-1] in self.eos):
            # 1. the drafter writes up to gamma steps, each from the context extended by its own earlier steps
            t0 = time.perf_counter()
            drafted: list[list[int]] = []
            ahead = list(ctx)
            for _ in range(self.gamma):
                step = generate_steps(self.drafter, self.tok, [ahead], self.cutter, self.eos)[0]
                drafted.append(step)
                ahead += step
                if not step or step[-1] in self.eos:
                    break
            # 2. the target writes its own step for every prefix: ctx, ctx + d_0, ..., ctx + d_0..d_{n-1}
            t1 = time.perf_counter()
            prefixes = [ctx + [t for d in drafted[:j] for t in d] for j in range(len(drafted) + 1)]
            target = generate_steps(self.target, self.tok, prefixes, self.cutter, self.eos)
            # 3. judge, accept, commit one target step at least
            t2 = time.perf_counter()
            res = accept_steps(ctx, drafted, target, self._same, self._complete)
            t3 = time.perf_counter()
            ctx += res.committed
            if res.pair is not None:
                self.pairs.append(res.pair)
            m.rounds += 1
            m.accepted_steps.append(res.accepted)
            m.drafted_steps.append(len(drafted))
            m.accepted_tokens += sum(len(d) for d in drafted[:res.accepted])
            m.judge_calls += res.judged
            m.draft_s, m.target_s, m.judge_s = m.draft_s + t1 - t0, m.target_s + t2 - t1, m.judge_s + t3 - t2
            if not res.committed:
                break  # the target wrote nothing (a cap of 0 new tokens left): stop
        new = cut_at_stop(ctx[len(prompt):], self.eos, max_new_tokens)
        m.new_tokens, m.total_s = len(new), time.perf_counter() - start
        return new, m
