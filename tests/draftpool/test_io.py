"""draftpool.io.run_lock: one run per folder, and a folder the lock made and the run left empty is removed."""

import pytest

from draftpool.io import LockedError, run_lock


def test_a_second_run_is_refused_naming_the_holder(tmp_path):
    with run_lock(tmp_path / "run") as folder:
        (folder / "out.txt").write_text("x")
        with pytest.raises(LockedError, match="in use by another run"):
            with run_lock(tmp_path / "run"):
                pass
    assert (tmp_path / "run" / "out.txt").exists()  # what the run wrote stays
    with run_lock(tmp_path / "run"):  # released with the first run
        pass


def test_a_folder_the_lock_made_and_the_run_left_empty_is_removed(tmp_path):
    with pytest.raises(ValueError):
        with run_lock(tmp_path / "new"):
            raise ValueError("bad input found after the lock")
    assert not (tmp_path / "new").exists()


def test_a_folder_that_was_there_stays(tmp_path):
    (tmp_path / "old").mkdir()
    with run_lock(tmp_path / "old"):
        pass
    assert (tmp_path / "old").is_dir()
