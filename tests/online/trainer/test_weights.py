"""The shared-memory weight board: versions, consistency checks, and 1,000 hot-swaps against a live writer process."""

import pytest
import torch
import torch.multiprocessing as mp

from online.trainer.weights import SEQ, WeightBoard


def template():
    return {"a": torch.zeros(3, 4), "b": torch.zeros(200, 250, dtype=torch.bfloat16)}


def filled(v: float):
    return {k: torch.full_like(t, v) for k, t in template().items()}


def test_publish_then_read_round_trips_and_versions_only_grow():
    board = WeightBoard(template())
    assert board.read(0) is None and board.latest() == 0
    board.publish(filled(1.0), 1)
    version, w = board.read(0)
    assert version == 1 and w["b"].dtype == torch.bfloat16 and w["a"].shape == (3, 4)
    assert torch.all(w["a"] == 1) and torch.all(w["b"] == 1)
    assert board.read(1) is None  # nothing newer
    board.publish(filled(2.0), 5)
    assert board.read(1)[0] == 5
    with pytest.raises(ValueError, match="not newer"):
        board.publish(filled(3.0), 5)
    with pytest.raises(ValueError, match="template"):
        board.publish({"a": torch.zeros(3, 4)}, 6)


def test_a_slot_being_written_is_never_read():
    board = WeightBoard(template())
    board.publish(filled(1.0), 1)
    slot = int(board.header[2])
    board.header[SEQ[slot]] += 1  # as if a writer were half-way through this slot
    assert board.read(0) is None
    board.header[SEQ[slot]] += 1
    assert board.read(0)[0] == 1


def _writer(board, stop):
    v = 1
    while not stop.is_set():
        board.publish(filled(float(v % 200)), v)  # every element of version v holds v % 200 (exact in bf16)
        v += 1


@pytest.mark.tier2
def test_thousand_hot_swaps_against_a_live_writer_serve_no_torn_version():
    ctx = mp.get_context("spawn")
    board = WeightBoard(template())
    stop = ctx.Event()
    proc = ctx.Process(target=_writer, args=(board, stop), daemon=True)
    proc.start()
    swaps, torn, current = 0, 0, 0
    try:
        while swaps < 1000:
            got = board.read(current)
            if got is None:
                continue
            current, w = got
            expect = float(current % 200)
            torn += int(not (torch.all(w["a"] == expect) and torch.all(w["b"] == expect)))
            swaps += 1
    finally:
        stop.set()
        proc.join(timeout=30)
    assert proc.exitcode == 0
    assert swaps == 1000 and torn == 0


class _DiesOnCopy(torch.Tensor):
    """A tensor whose copy into the board kills its process: a writer dying half-way through a publish."""

    def detach(self):
        import os

        os._exit(3)


def _crash_mid_publish(board):
    """Publish a version whose second tensor kills the writer: the slot's counter was already moved, the first tensor
    copied, the second not; nothing cleans up."""
    params = filled(7.0)
    params["b"] = torch.Tensor._make_subclass(_DiesOnCopy, params["b"])
    board.publish(params, 2)


def _restarted_writer(board, first, last):
    for v in range(first, last + 1):
        board.publish(filled(float(v % 200)), v)


@pytest.mark.tier2
def test_a_writer_killed_mid_publish_leaves_later_versions_visible_and_untorn():
    ctx = mp.get_context("spawn")
    board = WeightBoard(template())
    board.publish(filled(1.0), 1)
    crashed = ctx.Process(target=_crash_mid_publish, args=(board,))
    crashed.start()
    crashed.join(timeout=60)
    assert crashed.exitcode == 3
    assert board.read(0)[0] == 1  # the complete version is still served
    # a restarted writer: every version it publishes is visible at once (a flipped parity hid them)
    for v in (2, 3, 4):
        board.publish(filled(float(v)), v)
        got = board.read(v - 1)
        assert got is not None and got[0] == v and torch.all(got[1]["a"] == v) and torch.all(got[1]["b"] == v)
    # and a concurrent reader against a restarted writer process sees no torn copy and reaches the last version
    writer = ctx.Process(target=_restarted_writer, args=(board, 5, 1000), daemon=True)
    writer.start()
    current, torn, reads = 4, 0, 0
    while current < 1000:
        got = board.read(current)
        if got is None:
            if not writer.is_alive() and board.read(current) is None:
                break
            continue
        current, w = got
        expect = float(current % 200)
        torn += int(not (torch.all(w["a"] == expect) and torch.all(w["b"] == expect)))
        reads += 1
    writer.join(timeout=60)
    assert writer.exitcode == 0
    assert torn == 0 and current == 1000 and reads > 0
