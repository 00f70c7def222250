"""The shared-memory weight board: versions, consistency checks, and 1,000 hot-swaps against a live writer process."""

import pytest
import torch
import torch.multiprocessing as mp

from online.weights import SEQ, WeightBoard


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
