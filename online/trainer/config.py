"""The trainer process's settings (`process.*` of online_adapt.py): device, threads, feedback buffer, exports,
timeouts and restarts. Read by the server's handle (online/trainer/process.py) and by the trainer process
(online/trainer/child.py)."""

from __future__ import annotations

from dataclasses import dataclass, field


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
