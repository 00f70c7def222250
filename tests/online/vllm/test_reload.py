"""Outside check (CI's second tier, marker `vllm`, after `bash scripts/setup_vllm.sh`): head versions loaded in place
into a running vLLM engine's drafter.

vLLM starts with the trained test pool's SQL head as its EAGLE-3 drafter, then `online.vllm.reload` (vLLM's worker
extension) swaps in the pool's other (random) head and back: scripts/vllm_reload_check.py on the SQL data's held-out
prompts, run once per session (tests/vllm_pool.py, `sql_head_run`; its first step is the exported-head check's too).
After each swap the engine's drafter computes with the published tensors (every packed linear layer's output on a
probe, every kept tensor), the target's digest never changes, greedy output equals vLLM's plain greedy output through
every swap, the SQL head's acceptance on SQL prompts is the same before and after the round trip (and above the random
head's: the head swapped in is the one drafting), and a head folder that is not there is refused with its reason.
"""

from __future__ import annotations

import pytest

from tests.vllm_pool import sql_head_run, trained_pool  # noqa: F401 - fixtures


@pytest.mark.vllm
def test_head_versions_swap_in_place_and_output_stays_greedy(sql_head_run):  # noqa: F811
    a, b = sql_head_run["heads"][:2]  # the trained head first: its acceptance after the round trip
    res = sql_head_run["result"]
    steps = res["steps"]
    assert [s["head"] for s in steps] == [a, b, a] and steps[1]["swap"]["loaded"] > 0
    for s in steps:
        # the engine computes with the head it should hold, and not with the other one
        assert max(s["diffs"].values()) < 1e-3, s["diffs"]
        assert all(max(d.values()) > 1e-2 for d in s["diffs_to_other_heads"].values())
        assert s["target_digest"] == steps[0]["target_digest"], "the target's weights changed"
        assert s["outputs"] == res["plain"], "speculative output differs from plain greedy"
        assert s["counters"]["vllm:spec_decode_num_drafts"] > 0
    assert res["bad_head_error"] and "no-such-head" in res["bad_head_error"]
    rate = [s["counters"]["vllm:spec_decode_num_accepted_tokens"] / s["counters"]["vllm:spec_decode_num_drafts"]
            for s in steps]
    print(f"accepted per draft, sql -> random -> sql head on SQL prompts: {rate}; swap "
          f"{steps[1]['swap']['seconds'] * 1e3:.0f} ms in the worker, {steps[1]['swap']['wall_s'] * 1e3:.0f} ms wall")
    assert rate[0] == rate[2], "the same head gave other acceptance after a round trip"
    assert rate[0] > rate[1], "the trained head drafts no better than the random one swapped in: which one drafts?"
