"""training/accelerate_shim.py: an accelerate version it was not checked on is refused with one clear error, and a
checkpoint save under a rotation limit logs no "Deleting ... checkpoints" line while accelerate's other lines stay."""

from __future__ import annotations

import logging

import pytest
import torch

from draftpool.version_guard import minor
from training import accelerate_shim
from training.accelerate_shim import ACCELERATE_RANGE, DropCheckpointRotation, UncheckedVersionError, check_accelerate


def test_the_installed_accelerate_is_a_checked_one():
    import accelerate

    check_accelerate()  # what make_accelerator runs first
    low, high = ACCELERATE_RANGE
    assert low <= minor(accelerate.__version__) < high


def test_an_unchecked_accelerate_is_refused_with_one_clear_error():
    for version in ("1.16.0", "2.0.1", "1.14.9", "nightly"):
        with pytest.raises(UncheckedVersionError, match=rf"^accelerate {version} is outside the versions "
                                                        r"training/accelerate_shim.py was checked on \(accelerate "
                                                        r">= 1.15, < 1.16; read against accelerate 1.15.0"):
            check_accelerate(version)
    check_accelerate("1.15.7")  # a patch release of a checked major.minor passes


def test_make_accelerator_checks_the_version_first(monkeypatch, capsys, tmp_path):
    import accelerate

    from training.config import TrainConfig
    from training.train_drafter import main, make_accelerator

    monkeypatch.setattr(accelerate, "__version__", "9.9.0")
    with pytest.raises(UncheckedVersionError):
        make_accelerator(TrainConfig(domain="sql"))
    # the entry point: one error line, exit 2, before anything runs
    assert main(["--domain", "sql", f"run_dir={tmp_path}/run", f"export.pools_dir={tmp_path}/pools"]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "accelerate 9.9.0 is outside the versions" in err
    assert not (tmp_path / "pools").exists()


def test_a_rotating_save_logs_no_deleting_line(tmp_path, caplog):
    from accelerate import Accelerator

    from training.loop import resume_point, save_checkpoint

    acc = Accelerator(cpu=True)
    model = acc.prepare(torch.nn.Linear(2, 2))
    assert model is not None
    resume_point(acc, tmp_path, keep=1)  # rotation on: where training installs the filter
    caplog.set_level(logging.INFO, logger="accelerate")
    for step in range(3):
        save_checkpoint(acc, step, 0, step)
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("accelerate")]
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["checkpoint_2"]  # it did rotate
    assert not [m for m in lines if "Deleting" in m], lines
    assert any("Saving current state" in m for m in lines), lines  # accelerate's other lines are kept
    # the same save without the filter logs the line: what the filter drops is there to drop
    logger = logging.getLogger("accelerate.accelerator")
    dropped = [f for f in logger.filters if isinstance(f, DropCheckpointRotation)]
    for f in dropped:
        logger.removeFilter(f)
    try:
        caplog.clear()
        save_checkpoint(acc, 3, 0, 3)
        assert any(accelerate_shim.ROTATION_LINE.fullmatch(r.getMessage()) for r in caplog.records)
    finally:
        for f in dropped:
            logger.addFilter(f)
