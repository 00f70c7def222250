"""The trainer's settings: what it learns and how (`TrainerConfig`, `trainer.*` of online_adapt.py: the updater,
its rate, the guard, vocabulary adaptation, the lookahead step trainer's DPO / SFT) and its process (`ProcessConfig`,
`process.*`: device, threads, feedback buffer, exports, timeouts and restarts). Read by the server's handle
(online/trainer/process.py) and by the trainer process (online/trainer/child.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from online.updaters.losses import check_positions

UPDATERS = ("ogd", "optimistic", "ensemble", "dpo", "sft")  # dpo / sft: lookahead step drafters (step_trainer.py)


@dataclass
class TrainerConfig:
    updater: str = field(default="ogd", metadata={"help": "ogd | optimistic | ensemble (token drafters); dpo "
                                                          "(Online-LR) | sft (OSD-LR) (lookahead step drafters)"})
    lr: float = field(default=1e-4, metadata={"help": "OGD / optimistic rate (ensemble: the smallest rate); 1e-4 "
                                                      "suits a trained head (docs/benchmarks.md, the guard)"})
    optimizer: str = field(default="adam", metadata={"help": "OGD / optimistic direction: sgd or adam (0.9, 0.95)"})
    ensemble_size: int = field(default=3, metadata={"help": "base learners, rates lr * 2^i"})
    eps: float = field(default=0.0, metadata={"help": "ensemble: Hedge meta rate on losses scaled to [0, 1] (0: the "
                                                      "anytime rate sqrt(8 ln N / t))"})
    clip: float = field(default=0.5, metadata={"help": "global gradient-norm clip (<= 0: off)"})
    steps: int = field(default=3, metadata={"help": "training-time-test steps of EAGLE-3 heads"})
    positions: str = field(default="all", metadata={"help": "all | mismatch (OSD): positions that give loss"})
    batch: int = field(default=4, metadata={"help": "feedback records per round"})
    epochs: int = field(default=2, metadata={"help": "updates per round on its records (OnlineSpec EAGLE-3: 2)"})
    full_information: bool = field(default=True, metadata={"help": "every drafter learns from every request"})
    holdout_every: int = field(default=10, metadata={"help": "the first record and every n-th after it are held out "
                                                             "for the guard (0: no guard, every version is "
                                                             "published)"})
    holdout_size: int = field(default=16, metadata={"help": "held-out records kept (most recent)"})
    guard_margin: float = field(default=0.0, metadata={"help": "publish a version only when its held-out "
                                                                "acceptance is at most this much below the best "
                                                                "version known (the offline one included); roll back "
                                                                "to that one when the served version falls below it"})
    pay_patience: int = field(default=4, metadata={"help": "trained rounds in a row without a guard-measured gain "
                                                           "before the trainer rests (trains one round in 2, 4, ... "
                                                           "pay_max_rest; a gain or a drop in acceptance wakes it); "
                                                           "0: every round trains (online/trainer/payoff.py)"})
    pay_min_gain: float = field(default=0.02, metadata={"help": "a round gains when its weights beat the best known "
                                                                "version and the offline one by this much in "
                                                                "held-out acceptance"})
    pay_max_rest: int = field(default=16, metadata={"help": "a resting trainer trains at least one round in this "
                                                            "many"})
    pay_wake_drop: float = field(default=0.08, metadata={"help": "a fall of the served version's acceptance on fresh "
                                                                 "records below its resting level that wakes the "
                                                                 "trainer"})
    beta: float = field(default=0.1, metadata={"help": "dpo: preference scale of the sigmoid loss"})
    round_every: int = field(default=25, metadata={"help": "dpo / sft: requests per update round"})
    pair_batch: int = field(default=16, metadata={"help": "dpo / sft: preference pairs per optimizer step"})
    precision: str = field(default="auto", metadata={"help": "the token trainer's forward and backward: float32, "
                                                             "bfloat16 (autocast; weights, moments and updates "
                                                             "stay fp32) or auto (resolved at the start: bf16 where "
                                                             "the measured choice for batched forwards on the "
                                                             "trainer's device is bf16, draftpool/precision.py)"})
    vocab_every: int = field(default=0, metadata={"help": "EAGLE-3 heads: rounds between draft-vocabulary swaps "
                                                          "(0: the offline vocabulary stays)"})
    vocab_swaps: int = field(default=256, metadata={"help": "most draft slots replaced per swap"})
    vocab_min_count: int = field(default=2, metadata={"help": "times a token must be seen before it may enter"})

    def validate(self) -> None:
        if self.updater not in UPDATERS:
            raise ValueError(f"updater must be one of {', '.join(UPDATERS)}, got {self.updater!r}")
        check_positions(self.positions)
        if self.precision not in ("auto", "float32", "bfloat16"):
            raise ValueError(f"trainer.precision must be auto, float32 or bfloat16, got {self.precision!r}")
        if self.batch < 1 or self.steps < 1 or self.epochs < 1 or self.ensemble_size < 1 or self.holdout_size < 1:
            raise ValueError("trainer.batch, steps, epochs, ensemble_size and holdout_size must be >= 1")
        if self.optimizer not in ("sgd", "adam"):
            raise ValueError(f"trainer.optimizer must be sgd or adam, got {self.optimizer!r}")
        if not (self.lr > 0 and self.eps >= 0):  # also refuses NaN
            raise ValueError(f"trainer.lr must be > 0 and trainer.eps >= 0, got lr={self.lr}, eps={self.eps}")
        if self.holdout_every < 0 or not self.guard_margin >= 0:
            raise ValueError("trainer.holdout_every (0: off) and trainer.guard_margin must be >= 0")
        if self.vocab_every < 0 or self.vocab_swaps < 1 or self.vocab_min_count < 1:
            raise ValueError("trainer.vocab_every must be >= 0 (0: off), vocab_swaps and vocab_min_count >= 1")
        if self.pay_patience < 0 or self.pay_max_rest < 1 or not self.pay_wake_drop > 0 or not self.pay_min_gain >= 0:
            raise ValueError(f"trainer.pay_patience must be >= 0 (0: off), pay_max_rest >= 1, pay_wake_drop > 0 and "
                             f"pay_min_gain >= 0 (got {self.pay_patience}, {self.pay_max_rest}, "
                             f"{self.pay_wake_drop}, {self.pay_min_gain})")
        if not self.beta > 0 or self.round_every < 1 or self.pair_batch < 1:
            raise ValueError(f"trainer.beta must be > 0, round_every and pair_batch >= 1 (got beta={self.beta}, "
                             f"round_every={self.round_every}, pair_batch={self.pair_batch})")



@dataclass
class ProcessConfig:
    device: str = field(default="cpu", metadata={"help": "the trainer's device (cpu, cuda:1, ...)"})
    threads: int = field(default=1, metadata={"help": "torch threads of the trainer process (its own core(s))"})
    nice: int = field(default=0, metadata={"help": "added to the trainer's nice value at its start (0-19; 19: it runs "
                                                   "on the cycles serving leaves idle, online/trainer/throttle.py)"})
    duty: float = field(default=1.0, metadata={"help": "the most of the wall time the trainer computes while a "
                                                       "request decodes (0-1]; 1: no bound "
                                                       "(online/trainer/throttle.py)"})
    queue_size: int = field(default=64, metadata={"help": "feedback records buffered by the server (drop-oldest)"})
    export_every: int = field(default=100, metadata={"help": "rounds between pool-version exports (0: at stop only)"})
    keep_versions: int = field(default=3, metadata={"help": "exported pool versions kept on disk"})
    heartbeat_timeout: float = field(default=120.0, metadata={"help": "seconds without a heartbeat = hung"})
    start_timeout: float = field(default=600.0, metadata={"help": "seconds a starting trainer may take"})
    max_restarts: int = field(default=3, metadata={"help": "restarts after crashes or hangs, then serving goes on "
                                                           "with the last good weights and no adaptation"})

    def validate(self) -> None:
        if self.threads < 1 or self.queue_size < 1 or self.keep_versions < 1 or self.max_restarts < 0:
            raise ValueError("process.threads, queue_size and keep_versions must be >= 1, max_restarts >= 0")
        if not 0 <= self.nice <= 19 or not 0 < self.duty <= 1:
            raise ValueError(f"process.nice must be in 0..19 and process.duty in (0, 1], got {self.nice}, "
                             f"{self.duty}")
        if self.export_every < 0 or not (self.heartbeat_timeout > 0 and self.start_timeout > 0):
            raise ValueError("process.export_every must be >= 0 (0: at stop only), heartbeat_timeout and "
                             "start_timeout > 0")
