"""benchmarks.online_vllm's figures from its runs' windows (the vLLM runs themselves are the opt-in checks)."""

import pytest

from benchmarks.online_vllm import over, summarize
from draftpool.config import ConfigError


def run(acc_drafts: list[tuple[int, int]], outputs: list[list[int]], swaps: list[float] = ()) -> dict:
    windows = [{"requests": [1 + 2 * i, 2 + 2 * i], "accepted": a, "drafts": d,
                "accepted_per_draft": a / d if d else 0.0, "tok_s": 10.0, "tokens": 10,
                "wall_s": 1.0 + i, "in_flight_mean": 2.0 + i, "versions": i}
               for i, (a, d) in enumerate(acc_drafts)]
    return {"windows": windows, "outputs": outputs, "failed": 0, "versions_swapped": len(swaps),
            "swap_ms": sorted(swaps), "trainer_faults": [], "trainer_restarts": 0, "feedback_dropped": 0}


def test_the_goal_figure_counts_only_the_last_requests_and_pools_their_drafts():
    static = run([(10, 40), (10, 40), (10, 40)], [[1], [2], [3], [4], [5], [6]])
    adapted = run([(0, 40), (15, 40), (5, 20)], [[1], [2], [3], [9], [5], [6]], [200.0, 100.0, 300.0])
    fig, lines = summarize({"static": static, "adapted": adapted}, 6, 4)
    # last 4 requests = windows 3-4 and 5-6: (15 + 5) / (40 + 20), not the mean of 0.375 and 0.25
    assert fig["accepted_per_draft_last_4"] == {"static": 0.25, "adapted": pytest.approx(1 / 3)}
    assert fig["gain_last"] == pytest.approx(1 / 3 / 0.25 - 1)
    assert fig["accepted_per_draft"]["adapted"] == pytest.approx(20 / 100)
    assert fig["identical_to_static"] == {"adapted": 5}
    # in flight: each window's mean weighted by its wall time (1, 2, 3 s)
    assert fig["in_flight_mean"]["static"] == pytest.approx((2 * 1 + 3 * 2 + 4 * 3) / 6)
    assert "median 200 ms, 100-300 ms" in lines[-1]
    assert len([x for x in lines if x.startswith("| ") and x[2].isdigit()]) == 3


def test_outputs_are_checked_against_plain_decoding_when_it_ran():
    plain = run([(0, 0), (0, 0)], [[1], [2], [3], [4]])
    static = run([(1, 4), (1, 4)], [[1], [2], [3], [7]])
    adapted = run([(1, 4), (2, 4)], [[1], [2], [3], [4]])
    fig, lines = summarize({"plain": plain, "static": static, "adapted": adapted}, 4, 2)
    assert fig["identical_to_plain"] == {"static": 3, "adapted": 4}
    assert set(fig["accepted_per_draft"]) == {"static", "adapted"}  # plain drafts nothing
    assert fig["tok_s"]["plain"] == pytest.approx(20 / 3)
    assert lines[0].count("tok/s") == 3 and "static 3/4, adapted 4/4" in lines[-1]


def test_a_goal_span_that_does_not_start_a_window_is_refused():
    r = run([(1, 4), (1, 4)], [[1]] * 4)
    with pytest.raises(ConfigError, match="multiple of --window"):
        summarize({"static": r, "adapted": r}, 4, 3)


def test_over_an_empty_span_is_zero_not_a_division_error():
    assert over(run([(1, 4)], [[1]])["windows"], 5) == 0.0
