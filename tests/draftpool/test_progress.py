"""draftpool.progress: a tqdm bar on a terminal, otherwise one log line (done/total, rate, ETA) per interval."""

from __future__ import annotations

import io

from draftpool.progress import LineProgress, progress


class FakeClock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class TTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_lines_at_the_interval_with_rate_and_eta():
    clock, out = FakeClock(), io.StringIO()
    bar = progress(100, "self-distill sql (hf)", unit="sample", stream=out, interval=30, clock=clock)
    assert isinstance(bar, LineProgress)
    assert out.getvalue().splitlines() == ["self-distill sql (hf): 0/100 sample (0.0%), started"]
    for _ in range(4):  # 10 samples every 10 s: a line at 30 s only
        clock.t += 10
        bar.update(10)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[1] == "self-distill sql (hf): 30/100 sample (30.0%), 1.00 sample/s, ETA 1m10s"
    bar.set_postfix(tok_s="412")
    clock.t += 30
    bar.update(30)  # 60 in 70 s
    assert out.getvalue().splitlines()[2] == ("self-distill sql (hf): 70/100 sample (70.0%), 1.00 sample/s, "
                                              "ETA 30s, tok_s=412")
    clock.t += 5
    bar.update(30)
    assert len(out.getvalue().splitlines()) == 3  # under the interval since the last line
    bar.close()
    bar.close()  # closing twice writes one last line
    lines = out.getvalue().splitlines()
    assert len(lines) == 4
    assert lines[3] == "self-distill sql (hf): 100/100 sample (100.0%), 1.33 sample/s, done in 1m15s, tok_s=412"


def test_resumed_rate_counts_only_new_work():
    clock, out = FakeClock(), io.StringIO()
    bar = progress(1000, "train", unit="step", initial=400, stream=out, interval=60, clock=clock)
    clock.t += 60
    bar.update(120)
    assert out.getvalue().splitlines()[1] == "train: 520/1000 step (52.0%), 2.00 step/s, ETA 4m00s"
    bar.close()
    assert out.getvalue().splitlines()[2].endswith("stopped after 1m00s")


def test_iterable_and_unknown_total():
    clock, out = FakeClock(), io.StringIO()

    def ticking(n):
        for i in range(n):
            clock.t += 1
            yield i

    bar = progress(range(3), "eval", stream=out, interval=1, clock=clock)
    assert bar.total == 3  # from len()
    assert list(progress(ticking(3), "eval", total=3, stream=out, interval=1, clock=clock)) == [0, 1, 2]
    assert out.getvalue().splitlines()[-1] == "eval: 3/3 it (100.0%), 1.00 it/s, done in 3s"
    out = io.StringIO()
    clock.t = 0
    items = list(progress(ticking(2), "gen", stream=out, interval=100, clock=clock))
    assert items == [0, 1]
    assert out.getvalue().splitlines() == ["gen: 0 it, started", "gen: 2 it, 1.00 it/s, done in 2s"]


def test_disable_writes_nothing():
    out = io.StringIO()
    with progress(5, "x", stream=out, disable=True, interval=0) as bar:
        bar.update(5)
    assert out.getvalue() == ""


def test_terminal_gets_tqdm():
    from tqdm import tqdm

    out = TTY()
    bar = progress(5, "x", stream=out)
    assert isinstance(bar, tqdm)
    bar.update(5)
    bar.close()
    assert "5/5" in out.getvalue()
