"""Every use of accelerate's and DeepSpeed's internals in draftpool, in one place, checked on accelerate 1.15 (1.15.0)
and DeepSpeed 0.19 (0.19.8).

- `no_zero3_init`: loads the frozen target whole under ZeRO-3 (DeepSpeed plugin's `zero3_init_context_manager`);
- `fix_deepspeed_cpu_ranks`: writes `PartialState` / `AcceleratorState` fields (`num_processes`, `process_index`,
  `local_process_index`) from outside, where accelerate under DeepSpeed on CPU counts one process per rank;
- `use_the_cores`: undoes `accelerate launch`'s OMP_NUM_THREADS=1 on a CPU run;
- `forget_accelerate_state`: clears accelerate's process-wide state (`AcceleratorState._reset_state`,
  `GradientState._reset_state`), which otherwise refuses a second Accelerator of another precision in one process;
- `quiet_checkpoint_rotation`: drops the one line accelerate's `save_state` logs per save under `total_limit`
  ("[RANK 0] Deleting 1 checkpoints to make room for new checkpoint."), matched on its text.

`check_accelerate()` refuses, with one clear error (draftpool/version_guard.py, shared by every shim), an accelerate
major.minor these were not checked on (pyproject.toml bounds accelerate to the same); `make_accelerator` runs it first.
"""

from __future__ import annotations

import logging
import os
import re

import torch

from draftpool.version_guard import UncheckedVersionError, check_version

CHECKED = "accelerate 1.15.0, deepspeed 0.19.8"  # the exact versions the uses below were read and tested on
ACCELERATE_RANGE = ((1, 15), (1, 16))  # accelerate major.minor: low <= v < high (pyproject.toml: the same bound)

__all__ = ["UncheckedVersionError", "check_accelerate", "fix_deepspeed_cpu_ranks", "forget_accelerate_state",
           "no_zero3_init", "quiet_checkpoint_rotation", "use_the_cores"]


def check_accelerate(version: str | None = None) -> None:
    """Raise UncheckedVersionError unless accelerate's major.minor (`version`, default the installed one) is in the
    range the shim was checked on."""
    if version is None:
        import accelerate

        version = accelerate.__version__
    check_version("accelerate", version, *ACCELERATE_RANGE, "training/accelerate_shim.py", CHECKED)


class no_zero3_init:
    """Load the frozen target whole even under DeepSpeed ZeRO-3 (only the drafter is partitioned)."""

    def __init__(self, accelerator):
        plugin = accelerator.state.deepspeed_plugin
        self.cm = plugin.zero3_init_context_manager(enable=False) if plugin is not None else None

    def __enter__(self):
        return self.cm.__enter__() if self.cm is not None else None

    def __exit__(self, *exc):
        return self.cm.__exit__(*exc) if self.cm is not None else False


def use_the_cores(accelerator) -> None:
    """`accelerate launch` without a config file exports OMP_NUM_THREADS=1, which leaves all but one CPU core idle in
    a single-process CPU run (data generation included): share the cores among the local processes instead.
    DRAFTPOOL_CPU_THREADS overrides the count."""
    if accelerator.device.type != "cpu":
        return
    local = max(1, int(os.environ.get("LOCAL_WORLD_SIZE", accelerator.num_processes)))
    threads = int(os.environ.get("DRAFTPOOL_CPU_THREADS", 0)) or max(1, (os.cpu_count() or 1) // local)
    torch.set_num_threads(threads)


def forget_accelerate_state() -> None:
    """Clear accelerate's process-wide state (AcceleratorState, PartialState, GradientState: shared by every
    Accelerator of the process), so the next Accelerator is built from its own arguments. Without it a second run in
    one process fails when its precision differs from the first's ("AcceleratorState has already been initialized and
    cannot be changed"). An Accelerator built before it is not to be used after it."""
    from accelerate.state import AcceleratorState, GradientState

    AcceleratorState._reset_state(reset_partial_state=True)
    GradientState._reset_state()


def fix_deepspeed_cpu_ranks(accelerator) -> None:
    """accelerate (1.15) under DeepSpeed on CPU counts one process per rank although torchrun started several:
    start the gloo group and record the real ranks, so data is sharded and only rank 0 writes."""
    if accelerator.distributed_type != "DEEPSPEED" or int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return
    if accelerator.num_processes > 1:
        return
    import deepspeed

    deepspeed.comm.init_distributed(dist_backend="gloo", auto_mpi_discovery=False)
    from accelerate.state import PartialState

    for state in (PartialState(), accelerator.state):
        state.num_processes = torch.distributed.get_world_size()
        state.process_index = torch.distributed.get_rank()
        state.local_process_index = int(os.environ.get("LOCAL_RANK", state.process_index))


# accelerate/accelerator.py `save_state` (1.15), prefixed "[RANK n] " by accelerate.logging.MultiProcessAdapter
ROTATION_LINE = re.compile(r"(\[RANK \d+\] )?Deleting \d+ checkpoints? to make room for new checkpoint\.")


class DropCheckpointRotation(logging.Filter):
    """Drops accelerate's per-save checkpoint-rotation line; every other record passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not ROTATION_LINE.fullmatch(record.getMessage())


def quiet_checkpoint_rotation() -> None:
    """Install `DropCheckpointRotation` on accelerate's logger (once per process)."""
    logger = logging.getLogger("accelerate.accelerator")
    if not any(isinstance(f, DropCheckpointRotation) for f in logger.filters):
        logger.addFilter(DropCheckpointRotation())
