"""The step drafter's online trainer for lookahead reasoning: preference pairs in, updated step-drafter weights out.

Online-LR (`updater=dpo`) and its OSD-LR baseline (`updater=sft`) in the trainer process, with the same interface as
`OnlineTrainer` (round, guard, candidate, published, state) so the process loop, weight boards, hot swap, restarts and
pool-version exports serve both. A served lookahead request hands over its rounds' pairs as one `StepFeedback`;
the pairs wait in a buffer and a round runs once `round_every` requests have come in (OnlineSpec's chunk of 25
requests), on every pair buffered since the last round. Every `holdout_every`-th pair is held out for the guard
instead: a candidate is published only if its step acceptance on the held-out pairs (the drafter's greedy step for
each held-out context, judged against the target's step with the serving judge) is not more than `guard_margin`
below the last published version's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from draftpool.models import get_kind
from draftpool.pool import Member
from online.lookahead.dpo import DPOUpdater, PairUpdater
from online.lookahead.sft import SFTUpdater
from online.trainer.guard import Verdict
from specsel.lookahead.accept import PreferencePair
from specsel.lookahead.generate import StepLM
from specsel.lookahead.judges import make_judge
from specsel.lookahead.steps import StepCutter, StepSpec

STEP_UPDATERS = ("dpo", "sft")


@dataclass
class StepFeedback:
    """One served lookahead request's preference pairs (token ids, ready to cross a process boundary)."""

    request_id: str
    pairs: list[PreferencePair] = field(default_factory=list)
    version: int = 0  # the step drafter's version that served the request
    accepted: int = 0  # drafted steps accepted over the request
    drafted: int = 0  # drafted steps

    def to(self, device) -> StepFeedback:
        return self  # ids only: moved to the device when batched


@dataclass(frozen=True)
class StepEnv:
    """What the trainer process needs to judge held-out steps the way the server does (plain values: picklable)."""

    tokenizer: str  # folder of the target's tokenizer
    eos_ids: tuple[int, ...]
    pad_id: int
    spec: StepSpec = StepSpec()
    judge: str = "embedding"
    threshold: float = 0.697
    judge_model: str = ""  # the llm judge's model folder (the target's, by default)


def make_pair_updater(cfg, model: torch.nn.Module, pad_id: int) -> PairUpdater:
    if cfg.updater == "dpo":
        return DPOUpdater(model, pad_id, cfg.lr, cfg.beta, cfg.epochs, cfg.pair_batch, cfg.clip)
    if cfg.updater == "sft":
        return SFTUpdater(model, pad_id, cfg.lr, cfg.epochs, cfg.pair_batch, cfg.clip)
    raise ValueError(f"a step trainer takes updater {' or '.join(STEP_UPDATERS)}, got {cfg.updater!r}")


@torch.no_grad()
def step_acceptance(model: torch.nn.Module, pairs: list[PreferencePair], cutter: StepCutter, eos: set[int],
                    judge, on_step: Callable[[], None] | None = None) -> float:
    """Share of held-out contexts where the drafter's greedy step is complete and judged the same as the target's."""
    lm = StepLM(model, eos, cutter)
    hits = 0
    for p in pairs:
        if on_step is not None:
            on_step()
        lm.sync(p.prompt)
        step = lm.steps([[]])[0]
        complete = bool(step) and (step[-1] in eos or cutter.delimited(step))
        hits += complete and judge(cutter.text(step), cutter.text(p.chosen))
    return hits / max(1, len(pairs))


class StepTrainer:
    """The step drafter's trainer (the trainer process's `Trainer`: online/trainer/child.py)."""

    min_records = 1  # pairs are taken as they come; its own rounds run every `round_every` requests

    def __init__(self, members: list[Member], cfg, env: StepEnv):
        cfg.validate()
        if len(members) != 1 or not get_kind(members[0].kind).capabilities.step_drafter:
            raise ValueError(f"lookahead reasoning adapts one Llama step drafter (a kind with the step_drafter "
                             f"capability), got {sorted(m.name for m in members)}")
        self.cfg, self.env = cfg, env
        self.names = [members[0].name]
        self.name = self.names[0]
        self.model = members[0].module
        self.updater = make_pair_updater(cfg, self.model, env.pad_id)
        self.buffer: list[PreferencePair] = []
        self.requests = 0  # requests since the last round
        self.holdout: deque[PreferencePair] = deque(maxlen=cfg.holdout_size)
        self.published = {self.name: self._weights()}
        self.seen = self.rounds = self.rejected = 0
        self.pairs_seen = 0
        self.last_pairs = 0  # pairs the last round trained on
        self._judge = None
        self.on_step: Callable[[], None] | None = None  # the process's heartbeat, beaten inside long work
        self._published_acc: tuple[int, float] | None = None  # (holdout changes, acceptance) of the published
        self.holdout_changes = 0

    def round_event(self) -> dict:
        return {"pairs": self.last_pairs, "held_out_pairs": len(self.holdout)}

    def waiting_event(self, batch: list[StepFeedback]) -> dict:
        return {"pending_pairs": self.pending, "pairs": sum(len(fb.pairs) for fb in batch)}

    def beat_with(self, beat: Callable[[], None]) -> None:
        self.on_step = beat  # its DPO rounds and guard can outlast the hang timeout: beat inside them

    def forget(self, records: list[StepFeedback]) -> None:
        """The pairs of a failed round leave the held-out set and the pair buffer."""
        drop = {id(p) for r in records for p in r.pairs}
        kept = [x for x in self.holdout if id(x) not in drop]
        if len(kept) != len(self.holdout):
            self.holdout.clear()
            self.holdout.extend(kept)
            self.holdout_changes += 1
        self.buffer = [p for p in self.buffer if id(p) not in drop]

    def _weights(self) -> dict[str, torch.Tensor]:
        return {n: p.detach().clone() for n, p in self.model.named_parameters() if p.requires_grad}

    @property
    def pending(self) -> int:
        return len(self.buffer)

    def round(self, batch: list[StepFeedback]) -> dict | None:
        """Buffer the requests' pairs; train once `round_every` requests came in. -> {drafter: last epoch's mean loss}
        after a round (empty when it had no pair), None while waiting."""
        for fb in batch:
            self.seen += 1
            self.requests += 1
            for pair in fb.pairs:
                self.pairs_seen += 1
                if self.cfg.holdout_every and self.pairs_seen % self.cfg.holdout_every == 0:
                    self.holdout.append(pair)
                    self.holdout_changes += 1
                else:
                    self.buffer.append(pair)
        if self.requests < self.cfg.round_every:
            return None
        pairs, self.buffer, self.requests = self.buffer, [], 0
        losses = self.updater.round(pairs, self.on_step)
        self.rounds += 1
        self.last_pairs = len(pairs)
        return {self.name: losses[-1]} if losses else {}

    def candidate(self, name: str) -> dict[str, torch.Tensor]:
        return self._weights()

    def _acceptance(self, params: dict[str, torch.Tensor]) -> float:
        if self._judge is None:
            from transformers import AutoTokenizer

            tok = AutoTokenizer.from_pretrained(self.env.tokenizer)
            self._cutter = StepCutter(tok, self.env.spec)
            model_path = self.env.judge_model or (self.env.tokenizer if self.env.judge == "llm" else None)
            self._judge = make_judge(self.env.judge, self.env.threshold, model_path)
        saved = self._weights()
        with torch.no_grad():
            for k, v in params.items():
                self.model.get_parameter(k).copy_(v)
            try:
                return step_acceptance(self.model, list(self.holdout), self._cutter, set(self.env.eos_ids),
                                       self._judge, self.on_step)
            finally:
                for k, v in saved.items():
                    self.model.get_parameter(k).copy_(v)

    def guard(self, name: str) -> Verdict:
        """Publish the candidate unless its held-out step acceptance is `guard_margin` below the published
        version's (then training goes back to the published weights); never blind: no held-out pairs, no publish
        (holdout_every 0: no guard, every candidate is published)."""
        cand = self.candidate(name)
        if not self.cfg.holdout_every:
            self.published[name] = cand
            return Verdict("publish", cand, reason="guard off (no held-out pairs asked for)")
        if not self.holdout:
            return Verdict("hold", None, reason="no held-out pairs yet")
        acc = self._acceptance(cand)
        if self._published_acc is not None and self._published_acc[0] == self.holdout_changes:
            last = self._published_acc[1]
        else:
            last = self._acceptance(self.published[name])
        if acc < last - self.cfg.guard_margin:
            self.rejected += 1
            with torch.no_grad():  # rule: training goes on from the published weights, not the rejected ones
                for k, v in self.published[name].items():
                    self.model.get_parameter(k).copy_(v)
            self._published_acc = (self.holdout_changes, last)
            return Verdict("hold", None, acc, last, last, "the candidate is below the published version")
        self.published[name] = cand
        self._published_acc = (self.holdout_changes, acc)
        return Verdict("publish", cand, acc, last, last)

    def state(self) -> dict:
        return {"updater": self.updater.state(), "published": self.published, "seen": self.seen,
                "rounds": self.rounds, "rejected": self.rejected, "pairs_seen": self.pairs_seen}

    def load_state(self, state: dict) -> None:
        if set(state["published"]) != {self.name}:
            raise ValueError(f"trainer state for drafters {sorted(state['published'])}, this pool serves {self.name}")
        self.published = {n: {k: v.clone() for k, v in p.items()} for n, p in state["published"].items()}
        with torch.no_grad():
            for k, v in self.published[self.name].items():
                self.model.get_parameter(k).copy_(v)
        self.updater.load_state(state["updater"])
        self.seen, self.rounds, self.rejected = state["seen"], state["rounds"], state["rejected"]
        self.pairs_seen = state.get("pairs_seen", 0)


class StepTrainers:
    """The trainer process's factory of the step drafter's trainer (`TrainerFactory`), with what it judges with."""

    updaters = STEP_UPDATERS

    def __init__(self, env: StepEnv):
        self.env = env

    def __call__(self, members: list[Member], tcfg, out_embed=None) -> StepTrainer:
        return StepTrainer(members, tcfg, self.env)
