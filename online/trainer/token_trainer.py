"""The online trainer: served feedback in, updated drafter weights out.

`OnlineTrainer` is the in-process core (tested directly): one updater per drafter (OGD, optimistic OGD or the Hedge
ensemble, whose state lives as long as the trainer), a round = `epochs` steps of each drafter's updater on the mean
loss of a feedback batch, and a guard per drafter (online/trainer/guard.py) that lets a version out only when its
acceptance, on feedback none of the versions compared trained on, is within `guard_margin` of the best version it
knows, the offline one included, never blind, and rolls back to that best version when the served one falls below it.
The rows it judges on: each round's new records before they are trained on (the version judged is the one the round
started from: it is published a round later) and held-out records (the first record and every `holdout_every`-th after
it, never trained on). The held-out records and the guard's versions are part of the trainer's state: a restarted
trainer guards with them at once.

Which drafters learn from a request: the one that served it (`full_information=False`, what OSD / OnlineSpec do), or
every drafter of the pool (`full_information=True`): the verified tokens and the target's distributions do not
depend on who drafted, so each drafter's loss on them is computed from its own forward, exactly the counterfactual
information the selection stack uses.

Draft-vocabulary adaptation (`vocab_every` > 0, EAGLE-3 heads; online/updaters/vocab.py): every `vocab_every` rounds
each head swaps its least-used draft slots for the most frequent target tokens it could not propose. A version is then
the trainable weights plus `d2t` / `t2d`: published, guarded, hot-swapped and exported together.
"""

from __future__ import annotations

from collections import deque

import torch

from draftpool.models import get_kind
from draftpool.pool import Member
from online.trainer.config import TrainerConfig
from online.trainer.feedback import Feedback, TopK
from online.trainer.guard import Guard, Verdict
from online.trainer.payoff import PaySchedule
from online.updaters.ensemble import HedgeEnsemble
from online.updaters.losses import distill_loss, request_steps
from online.updaters.ogd import OGD
from online.updaters.optimistic import OptimisticOGD
from online.updaters.vocab import VocabCounter, remap_vocab, swap_plan


def trainable(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {n: p.detach() for n, p in module.named_parameters() if p.requires_grad}


def versioned(kind: str, module: torch.nn.Module, vocab: bool) -> dict[str, torch.Tensor]:
    """What a version of this drafter holds: its trainable weights, plus its draft vocabulary (an EAGLE-3 head's
    d2t, t2d) when the vocabulary adapts."""
    out = trainable(module)
    if vocab:
        out.update(get_kind(kind).vocab_buffers(module))
    return out


def make_updater(cfg: TrainerConfig, params: dict[str, torch.Tensor]):
    if cfg.updater == "ogd":
        return OGD(params, cfg.lr, cfg.optimizer, clip=cfg.clip)
    if cfg.updater == "optimistic":
        return OptimisticOGD(params, cfg.lr, cfg.optimizer, clip=cfg.clip)
    return HedgeEnsemble(params, [cfg.lr * 2**i for i in range(cfg.ensemble_size)], cfg.eps, cfg.optimizer,
                         cfg.clip)


@torch.no_grad()
def held_out_acceptance(kind: str, model: torch.nn.Module, params: dict[str, torch.Tensor],
                        records: list[Feedback]) -> float:
    """Greedy step-0 acceptance (drafter top-1 == target top-1) over the response positions of held-out records
    (under the version's own draft vocabulary when `params` carry one)."""
    hits = total = 0
    for fb in records:
        s = request_steps(get_kind(kind), model, params, fb, 1, response_only=False)
        t = torch.arange(max(fb.prompt_len - s.offset, 0), fb.tokens.numel() - s.offset)  # rows predicting answers
        pred = s.target_ids(s.logits[0][0, t].argmax(-1))  # [n]
        want = fb.target.ids[t + s.offset - fb.prompt_len, 0]
        hits += int((pred == want).sum())
        total += len(want)
    return hits / max(1, total)


class OnlineTrainer:
    """The token drafters' trainer (the trainer process's `Trainer`: online/trainer/child.py)."""

    def __init__(self, members: list[Member], cfg: TrainerConfig, out_embed: torch.Tensor | None = None):
        """out_embed [V,H]: the target's output embedding, where new draft tokens' lm_head rows start (needed when
        the vocabulary adapts)."""
        cfg.validate()
        if cfg.updater in ("dpo", "sft"):
            raise ValueError(f"updater {cfg.updater} trains lookahead step drafters "
                             f"(online.lookahead.step_trainer.StepTrainer)")
        self.cfg, self.members = cfg, {m.name: m for m in members}
        self.names = list(self.members)
        self.vocab = cfg.vocab_every > 0
        heads = [m.name for m in members if get_kind(m.kind).vocab_buffers(m.module)]  # adaptable vocabularies
        if self.vocab and heads and out_embed is None:
            raise ValueError("trainer.vocab_every > 0 needs the target's output embedding (out_embed)")
        self.out_embed = out_embed
        # the counts do not depend on the head (every head sees the same committed tokens): one counter, shared
        head = self.members[heads[0]] if heads else None
        seen = VocabCounter(get_kind(head.kind).vocab_size(head.module)) if self.vocab and heads else None
        self.counters = {n: seen for n in heads} if seen is not None else {}
        self.vocab_swaps = {n: 0 for n in self.counters}  # tokens swapped in so far
        self.last_vocab: dict[str, dict] = {}  # the latest round's swaps: name -> {"swapped", "coverage"}
        self.updaters = {m.name: make_updater(cfg, trainable(m.module)) for m in members}
        self.holdout: deque[Feedback] = deque(maxlen=cfg.holdout_size)
        self.guards = {m.name: Guard(versioned(m.kind, m.module, self.vocab), cfg.guard_margin, cfg.holdout_every > 0)
                       for m in members}
        self.seen = 0
        self.rounds = 0
        self.holdout_changes = 0  # bumped whenever the guard's rows change (every round)
        self.judged: dict[str, dict[str, torch.Tensor]] = {}  # per drafter: the weights the guard judges next
        self.rows: list[Feedback] = []  # what it judges them on
        # rule: rounds train while the guard measures gains, then rest (online/trainer/payoff.py); no guard, no rest
        self.schedule = PaySchedule(cfg.pay_patience if cfg.holdout_every else 0, cfg.pay_max_rest, cfg.pay_wake_drop)
        self.gained: bool | None = None  # the last trained round's outcome, as the guard saw it (None: taken)
        self.trained = True  # whether the last round trained (False: it rested)

    @property
    def min_records(self) -> int:
        """A round trains on `batch` records (the guard judges them), no fewer but at the stop."""
        return self.cfg.batch

    def round_event(self) -> dict:
        out = {"trained": self.trained, "rest": self.schedule.rest}
        return {**out, "vocab": self.last_vocab} if self.last_vocab else out

    def waiting_event(self, batch: list[Feedback]) -> dict:
        return {}  # every round trains at once

    def beat_with(self, beat) -> None:
        pass  # a round is short: the process beats between rounds

    def forget(self, records: list[Feedback]) -> None:
        """The records of a failed round leave the guard's rows and held-out set."""
        drop = {id(r) for r in records}
        self.rows = [x for x in self.rows if id(x) not in drop]
        kept = [x for x in self.holdout if id(x) not in drop]
        if len(kept) != len(self.holdout):
            self.holdout.clear()
            self.holdout.extend(kept)
            self.holdout_changes += 1

    @property
    def published(self) -> dict[str, dict[str, torch.Tensor]]:
        """The version of each drafter the server was last given (what an export writes)."""
        return {n: g.published for n, g in self.guards.items()}

    @property
    def rejected(self) -> int:
        return sum(g.rejected for g in self.guards.values())

    def loss(self, name: str, params: dict[str, torch.Tensor], batch: list[Feedback]) -> torch.Tensor:
        m = self.members[name]
        device = next(iter(params.values())).device
        # rule: trainer.precision bfloat16 autocasts the forward (and so its backward); weights stay fp32 ("auto" is
        # resolved by the server before the trainer starts: unresolved, fp32)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=self.cfg.precision == "bfloat16"):
            return torch.stack([distill_loss(get_kind(m.kind), m.module, params, fb, self.cfg.steps,
                                             self.cfg.positions) for fb in batch]).mean()

    def round(self, batch: list[Feedback]) -> dict:
        """One update round on a feedback batch; returns the drafters updated and their losses. The first record and
        every `holdout_every`-th after it go to the guard's held-out set instead of training. Before the update, each
        drafter's weights are set aside for the guard (`guard`), with this round's rows to judge them on."""
        train = []
        for fb in batch:
            self.seen += 1
            if self.cfg.holdout_every and (self.seen - 1) % self.cfg.holdout_every == 0:  # the 1st, then every n-th
                for m in self.members.values():  # rule: a record the guard cannot measure raises here, not at
                    held_out_acceptance(m.kind, m.module, self.published[m.name], [fb])  # every later guard
                self.holdout.append(fb)
                self.holdout_changes += 1
            else:
                train.append(fb)
        if self.counters:
            seen = next(iter(self.counters.values()))
            for fb in batch:
                seen.add(fb.tokens[fb.prompt_len:])  # the target's committed tokens: what a head should propose
        if self.gained is not None:
            self.schedule.result(self.gained)
            self.gained = None
        self.trained = self.schedule.train_now()
        if not self.trained:  # rule: a resting round measures what is served on its fresh records, and trains nothing
            if train:
                served = [held_out_acceptance(m.kind, m.module, self.published[m.name], train)
                          for m in self.members.values()]
                self.schedule.fresh(sum(served) / len(served))
            self.rounds += 1
            self.last_vocab = {}
            return {}
        # rule: the guard judges the weights as they were before this round's update, on rows none of its versions
        # trained on: this round's records and the held-out ones (prequential: a stream that moves on shows a
        # version fitted to its past at once, before the new records are trained on)
        self.judged = {n: {k: v.clone() for k, v in self.candidate(n).items()} for n in self.names}
        self.rows = train + list(self.holdout)
        self.holdout_changes += 1
        losses = {}
        for name in self.names:
            mine = train if self.cfg.full_information else [fb for fb in train if self._served_by(fb) == name]
            if mine:
                fn = lambda p, n=name, b=mine: self.loss(n, p, b)  # noqa: E731
                losses[name] = self.updaters[name].step(fn, self.cfg.epochs)
        self.rounds += 1
        self.gained = False
        self.last_vocab = {}
        if self.vocab and self.rounds % self.cfg.vocab_every == 0:
            for name in self.counters:
                self.last_vocab[name] = self.adapt_vocab(name)
        return losses

    @torch.no_grad()
    def adapt_vocab(self, name: str) -> dict:
        """Swap the head's least-used draft slots for the most frequent uncovered tokens (online/updaters/vocab.py);
        the module's d2t / t2d (what training reads) and its updater's lm_head rows move to the new vocabulary."""
        head = self.members[name].module
        counter = self.counters[name]
        drop, add = swap_plan(counter.seen, head.t2d.cpu(), self.cfg.vocab_swaps, self.cfg.vocab_min_count)
        if add.numel():
            d2t, t2d, index = remap_vocab(head.d2t.cpu(), head.t2d.cpu(), drop, add)
            new_ids = torch.arange(d2t.numel()) + d2t  # [Vd]
            fill = self.out_embed[new_ids.to(self.out_embed.device)].float()  # [Vd,H] (rows of new tokens used)
            self.updaters[name].remap("lm_head.weight", index.to(head.d2t.device), fill.to(head.d2t.device))
            head.d2t.copy_(d2t)
            head.t2d.copy_(t2d)
            self.vocab_swaps[name] += int(add.numel())
        return {"swapped": int(add.numel()), "coverage": round(counter.coverage(head.t2d), 4)}

    def _served_by(self, fb: Feedback) -> str | None:
        return self.names[fb.drafter] if 0 <= fb.drafter < len(self.names) else (
            self.names[0] if len(self.names) == 1 else None)

    def candidate(self, name: str) -> dict[str, torch.Tensor]:
        m = self.members[name]
        out = dict(self.updaters[name].served())
        if self.vocab:
            out.update(get_kind(m.kind).vocab_buffers(m.module))
        return out

    def guard(self, name: str) -> Verdict:
        """Which version of `name` the server may take now (online/trainer/guard.py): the candidate (the weights the
        last round started from, judged on that round's records and the held-out ones), the best version again (a
        rollback: training restarts from it, with fresh optimizer state), or nothing new."""
        m = self.members[name]
        rows = self.rows
        # guard off (holdout_every 0): the newest weights go out at once
        judged = self.judged.get(name, {}) if self.cfg.holdout_every else self.candidate(name)
        verdict = self.guards[name].check(judged, lambda w: held_out_acceptance(m.kind, m.module, w, rows),
                                          self.holdout_changes, bool(rows) and name in self.judged)
        if verdict.action == "rollback":
            self._restart_from(name, verdict.weights)
        v = verdict
        if v.ok and None not in (v.candidate, v.best, v.offline) and v.candidate > v.best and \
                v.candidate >= v.offline + self.cfg.pay_min_gain:
            self.gained = True  # a round paid: its weights beat every version known, the offline one by a margin
        return verdict

    @torch.no_grad()
    def _restart_from(self, name: str, weights: dict[str, torch.Tensor]) -> None:
        m = self.members[name]
        vocab = get_kind(m.kind).vocab_buffers(m.module) if self.vocab else {}
        for key, buf in vocab.items():  # the version's draft vocabulary, which its lm_head rows belong to
            buf.copy_(weights[key].to(buf.device))
        self.updaters[name] = make_updater(self.cfg, {k: v for k, v in weights.items() if k not in vocab})

    def state(self) -> dict:
        """Everything a restarted trainer needs to go on where this one stopped: updater weights, optimizer
        moments, ensemble losses, each guard's versions (offline, best, published) and its held-out records, the
        counters."""
        return {"updaters": {n: u.state() for n, u in self.updaters.items()}, "published": self.published,
                "guards": {n: g.state() for n, g in self.guards.items()},
                "holdout": [pack_feedback(fb.to("cpu")) for fb in self.holdout],
                "seen": self.seen, "rounds": self.rounds, "rejected": self.rejected,
                "schedule": self.schedule.state(),
                "vocab": {n: {"d2t": self.members[n].module.d2t.clone(), "t2d": self.members[n].module.t2d.clone(),
                              "seen": c.seen.clone(), "swaps": self.vocab_swaps[n]} for n, c in self.counters.items()}}

    def load_state(self, state: dict) -> None:
        if set(state["updaters"]) != set(self.updaters):
            raise ValueError(f"trainer state for drafters {sorted(state['updaters'])}, this pool has "
                             f"{sorted(self.updaters)}")
        for n, u in self.updaters.items():
            u.load_state(state["updaters"][n])
        for n, g in self.guards.items():
            if "guards" in state:
                g.load_state(state["guards"][n])
            else:  # a state written before the guard kept its versions: what was published is all it knows
                g.load_state({"offline": state["published"][n], "best": state["published"][n],
                              "published": state["published"][n], "rejected": 0})
        self.holdout.clear()
        device = next(iter(self.guards.values())).offline_device
        self.holdout.extend(unpack_feedback(d).to(device) for d in state.get("holdout", []))
        self.holdout_changes += 1
        self.seen, self.rounds = state["seen"], state["rounds"]
        if "schedule" in state:
            self.schedule.load_state(state["schedule"])
        for n, v in state.get("vocab", {}).items():
            if n in self.counters:  # the vocabulary the restored lm_head rows belong to
                head = self.members[n].module
                head.d2t.copy_(v["d2t"])
                head.t2d.copy_(v["t2d"])
                self.counters[n].seen = v["seen"].clone()
                self.vocab_swaps[n] = v["swaps"]


def pack_feedback(fb: Feedback) -> dict:
    """A feedback record as plain tensors, numbers and strings (a trainer state loads with weights_only=True)."""
    return {"request_id": fb.request_id, "tokens": fb.tokens, "prompt_len": fb.prompt_len, "logp": fb.target.logp,
            "ids": fb.target.ids, "feats": fb.feats, "version": fb.version, "drafter": fb.drafter,
            "accepted": list(fb.accepted)}


def unpack_feedback(d: dict) -> Feedback:
    return Feedback(d["request_id"], d["tokens"], d["prompt_len"], TopK(d["logp"], d["ids"]), d["feats"],
                    d["version"], d["drafter"], list(d["accepted"]))
