"""Train only while training pays (`trainer.pay_patience`, torch-free): the rule that keeps an adapting server from
paying a trainer that learns nothing.

On a machine without a separate accelerator every round costs serving speed (the trainer computes on cores the
server would use), and a round pays only through a better drafter. The guard (online/trainer/guard.py) already says,
each round and on feedback no version trained on, whether the round's starting weights beat the best version known:
a *gain*. Rules, one per line of `PaySchedule.round`:

1. while rounds gain, every round trains;
2. after `patience` trained rounds in a row without a gain the trainer rests: it trains one round in `rest`, and each
   further trained round without a gain doubles `rest`, up to `max_rest`;
3. a gain ends the rest at once (every round trains again);
4. a resting trainer still measures the served version on each round's fresh records (a forward, no update): when
   that acceptance falls `wake_drop` below its level since the rest began, the traffic moved, and every round trains
   again (the rest level is measured afresh at the next rest).

`patience` 0 turns the schedule off: every round trains (the guard still decides what is published).
"""

from __future__ import annotations


class PaySchedule:
    def __init__(self, patience: int, max_rest: int = 16, wake_drop: float = 0.08, level_rate: float = 0.25):
        if patience < 0 or max_rest < 1 or not wake_drop > 0 or not 0 < level_rate <= 1:
            raise ValueError(f"pay schedule: patience >= 0, max_rest >= 1, wake_drop > 0 and level_rate in (0, 1] "
                             f"(got {patience}, {max_rest}, {wake_drop}, {level_rate})")
        self.patience, self.max_rest, self.wake_drop, self.level_rate = patience, max_rest, wake_drop, level_rate
        self.rest = 1  # train one round in `rest`
        self.dry = 0  # trained rounds in a row without a gain
        self.since = 0  # rounds since the last trained one
        self.level: float | None = None  # the served version's fresh acceptance while resting (moving average)
        self.trained = self.skipped = self.wakes = 0

    @property
    def resting(self) -> bool:
        return self.rest > 1

    def train_now(self) -> bool:
        """Whether this round trains (then `result` follows it) or only measures (then `fresh` follows it)."""
        if self.patience == 0 or self.since + 1 >= self.rest:
            self.since = 0
            self.trained += 1
            return True
        self.since += 1
        self.skipped += 1
        return False

    def result(self, gained: bool) -> None:
        """A trained round's guard outcome: did its starting weights beat the best version known."""
        if gained:  # rules 1 and 3
            self.rest, self.dry, self.level = 1, 0, None
            return
        self.dry += 1
        if self.patience and self.dry >= self.patience:  # rule 2
            self.rest = min(self.max_rest, self.rest * 2)

    def fresh(self, acceptance: float) -> None:
        """A resting round's measure of the served version on its fresh records (rule 4)."""
        if not self.resting:
            return
        if self.level is not None and acceptance < self.level - self.wake_drop:
            self.rest, self.dry, self.since, self.level = 1, 0, 0, None
            self.wakes += 1
            return
        self.level = acceptance if self.level is None else self.level + self.level_rate * (acceptance - self.level)

    def state(self) -> dict:
        return {k: getattr(self, k) for k in ("rest", "dry", "since", "level", "trained", "skipped", "wakes")}

    def load_state(self, state: dict) -> None:
        for k, v in state.items():
            setattr(self, k, v)
