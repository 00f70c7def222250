"""benchmarks.suffix_stream on a tiny stream: every variant is lossless, the learning variants index every answer
and the frozen one keeps its seed."""

from __future__ import annotations

import json

import pytest

from benchmarks.suffix_stream import main, stream


def test_stream_is_seeded_and_repetitive():
    a, b = stream(40, 0), stream(40, 0)
    assert a == b and len(set(a)) < 40  # the same questions come back


@pytest.mark.tier2
def test_tiny_stream(tmp_path, capsys):
    out = tmp_path / "s"
    assert main(["--requests", "3", "--window", "2", "--max-new-tokens", "6", "--k", "4", "--out", str(out)]) == 0
    capsys.readouterr()
    res = json.loads((out / "results.json").read_text())
    assert res["exact_match"] == {"plain": 1.0, "online": 1.0, "frozen": 1.0, "noseed": 1.0}
    assert res["indexed_tokens"]["frozen"] == 0 and res["indexed_tokens"]["online"] > 0
    assert res["indexed_tokens"]["online"] == res["indexed_tokens"]["noseed"]  # no seed given: the same learning
    assert [len(res["windows"][v]) for v in ("online", "frozen", "noseed")] == [2, 2, 2]
    assert (out / "stream.png").is_file()
