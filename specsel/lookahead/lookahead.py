"""Lookahead reasoning (Fu et al., 2025): step-level speculation. Each round the step drafter drafts up to `gamma`
steps ahead, the target writes its own step for every prefix of that draft in one batch, the judge compares them,
and the round commits the agreeing drafted steps plus one target step (`accept.accept_steps`). Not lossless: an
accepted step is the drafter's wording of what the judge took for the target's step, so answers are measured.

Every round's first rejected step gives a preference pair (prompt = the exact ids both steps came from); the
online trainer turns them into DPO updates of the step drafter (Online-LR).

Thinking budget (OnlineSpec Table 7): once `budget` new tokens are written, the transition instruction's ids are
appended to the context once and generation goes on from there (the answer phase). `decode_alone` applies the same
budget, so the target-alone and drafter-alone baselines see the same context rule.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from specsel.decoding.request import cut_at_stop
from specsel.lookahead.accept import PreferencePair, accept_steps
from specsel.lookahead.generate import StepLM
from specsel.lookahead.judges import Judge
from specsel.lookahead.steps import StepCutter

TRANSITION = ("\n\nConsidering the limited time by the user, I have to give the solution based on the thinking "
              "directly now.\n\n")


@dataclass
class LookaheadMetrics:
    rounds: int = 0
    accepted_steps: list[int] = field(default_factory=list)  # drafted steps accepted per round
    drafted_steps: list[int] = field(default_factory=list)  # drafted steps per round
    accepted_tokens: int = 0  # tokens of accepted drafted steps
    new_tokens: int = 0
    judge_calls: int = 0
    transitions: int = 0  # thinking-budget transitions injected
    draft_s: float = 0.0
    target_s: float = 0.0
    judge_s: float = 0.0  # judging after the target's batch (verdicts given while it runs count in target_s)
    total_s: float = 0.0

    @property
    def accept_ratio(self) -> float:
        """Accepted / drafted steps over the request."""
        return sum(self.accepted_steps) / max(1, sum(self.drafted_steps))

    @property
    def tokens_per_s(self) -> float:
        return self.new_tokens / self.total_s if self.total_s > 0 else 0.0

    def to_dict(self) -> dict:
        return {"rounds": self.rounds, "accepted_steps": sum(self.accepted_steps),
                "drafted_steps": sum(self.drafted_steps), "accept_ratio": self.accept_ratio,
                "steps_per_round": sum(self.accepted_steps) / max(1, self.rounds),
                "accepted_tokens": self.accepted_tokens, "new_tokens": self.new_tokens,
                "judge_calls": self.judge_calls, "transitions": self.transitions, "draft_s": self.draft_s,
                "target_s": self.target_s, "judge_s": self.judge_s, "seconds": self.total_s,
                "tok_s": self.tokens_per_s}


class Budget:
    """The thinking budget: after `budget` new tokens (0: never), the transition ids are appended once."""

    def __init__(self, budget: int = 0, transition: list[int] | None = None):
        if budget < 0:
            raise ValueError(f"thinking budget must be >= 0 (0: off), got {budget}")
        if budget and not transition:
            raise ValueError("a thinking budget needs the transition instruction's ids")
        self.budget, self.transition = budget, list(transition or [])

    def due(self, new_tokens: int, given: bool) -> bool:
        """Whether to append the transition now: the budget is on and crossed, and it was not given yet."""
        return bool(self.budget) and not given and new_tokens >= self.budget


def decode_alone(lm: StepLM, prompt: list[int], max_new_tokens: int, budget: Budget | None = None
                 ) -> tuple[list[int], float]:
    """One model alone, step after step on its kept cache (the baseline rows of the benchmark) -> (new ids, s)."""
    t0 = time.perf_counter()
    budget = budget or Budget()
    ctx, given = list(prompt), False
    lm.sync(ctx)
    while len(ctx) - len(prompt) < max_new_tokens and not (len(ctx) > len(prompt) and ctx[-1] in lm.eos):
        if budget.due(len(ctx) - len(prompt), given):
            ctx += budget.transition
            given = True
            lm.sync(ctx)
        step = lm.steps([[]])[0]
        if not step:
            break
        ctx += step
    return cut_at_stop(ctx[len(prompt):], lm.eos, max_new_tokens), time.perf_counter() - t0


class LookaheadReasoner:
    """target / drafter: `StepLM`s on one tokenizer; judge: `judges.make_judge`; gamma: steps drafted per round.
    `on_round`, when set, runs before every round (the hot swap: it returns the drafter indices whose weights
    changed, and the drafter's cache is then dropped)."""

    def __init__(self, target: StepLM, drafter: StepLM, judge: Judge, cutter: StepCutter, gamma: int = 4,
                 budget: Budget | None = None):
        if gamma < 1:
            raise ValueError(f"gamma (steps drafted per round) must be >= 1, got {gamma}")
        self.target, self.drafter, self.judge, self.cutter, self.gamma = target, drafter, judge, cutter, gamma
        self.eos = target.eos
        self.budget = budget or Budget()
        self.pairs: list[PreferencePair] = []  # every round's pair, drained by the online trainer
        self.on_round: Callable[[], list[int]] | None = None

    def _complete(self, step: list[int]) -> bool:
        """A step that ends the answer (EOS) or holds the delimiter can be judged."""
        return bool(step) and (step[-1] in self.eos or self.cutter.delimited(step))

    def _same(self, drafted: list[int], target: list[int]) -> bool:
        return self.judge(self.cutter.text(drafted), self.cutter.text(target))

    def _target_steps(self, ctx: list[int], drafted: list[list[int]]):
        """The target's step for every prefix ctx, ctx + d_0, ..., ctx + d_0..d_{n-1}, in one batch. A target step is
        judged as soon as it completes, and once one disagrees the later rows are cancelled (they could only follow
        a rejected draft); rows after an unfinished drafted step are never started (placeholders, never read).
        -> (target steps, the memoised judge, its verdicts)."""
        self.target.sync(ctx)
        need = next((j for j, d in enumerate(drafted) if not self._complete(d)), len(drafted))
        verdicts: dict[tuple, bool] = {}

        def same(d: list[int], t: list[int]) -> bool:
            key = (tuple(d), tuple(t))
            if key not in verdicts:
                verdicts[key] = self._same(d, t)
            return verdicts[key]

        def keep(j: int, step: list[int]) -> bool:
            return j >= need or same(drafted[j], step)

        target = self.target.steps([[t for d in drafted[:j] for t in d] for j in range(need + 1)], keep)
        return target + [[] for _ in range(len(drafted) + 1 - len(target))], same, verdicts

    def generate(self, prompt: list[int], max_new_tokens: int) -> tuple[list[int], LookaheadMetrics]:
        """-> (new token ids, stopping after an EOS or once max_new_tokens are reached, and the request's metrics)."""
        if not prompt or max_new_tokens < 1:
            raise ValueError("lookahead reasoning needs a non-empty prompt and max_new_tokens >= 1")
        m, start = LookaheadMetrics(), time.perf_counter()
        ctx = list(prompt)
        while len(ctx) - len(prompt) < max_new_tokens and not (len(ctx) > len(prompt) and ctx[-1] in self.eos):
            if self.on_round is not None and self.on_round():
                self.drafter.reset()  # new weights: the kept keys came from the old ones
            if self.budget.due(len(ctx) - len(prompt), m.transitions > 0):
                ctx += self.budget.transition
                m.transitions += 1
            # 1. the drafter writes up to gamma steps, each from the context extended by its own earlier steps
            t0 = time.perf_counter()
            self.drafter.sync(ctx)
            drafted: list[list[int]] = []
            for _ in range(self.gamma):
                step = self.drafter.steps([[]])[0]
                drafted.append(step)
                if not self._complete(step) or step[-1] in self.eos:
                    break  # rule: steps after an unfinished or final one would never be judged
            # 2. the target writes its own step for every prefix; 3. judge, accept, commit one target step at least
            t1 = time.perf_counter()
            target, same, verdicts = self._target_steps(ctx, drafted)
            t2 = time.perf_counter()
            res = accept_steps(ctx, drafted, target, same, self._complete)
            t3 = time.perf_counter()
            ctx += res.committed
            if res.pair is not None:
                self.pairs.append(res.pair)
            m.rounds += 1
            m.accepted_steps.append(res.accepted)
            m.drafted_steps.append(len(drafted))
            m.accepted_tokens += sum(len(d) for d in drafted[:res.accepted])
            m.judge_calls += len(verdicts)
            m.draft_s, m.target_s, m.judge_s = m.draft_s + t1 - t0, m.target_s + t2 - t1, m.judge_s + t3 - t2
            if not res.committed:
                break  # the target wrote nothing: stop
        new = cut_at_stop(ctx[len(prompt):], self.eos, max_new_tokens)
        m.new_tokens, m.total_s = len(new), time.perf_counter() - start
        return new, m
