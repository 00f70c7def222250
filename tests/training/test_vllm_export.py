"""Outside check (CI's second tier, marker `vllm`, after `bash scripts/setup_vllm.sh`): vLLM's CPU build serves the
embedded target with an exported SQL head.

The head is the trained test pool's SQL head, trained briefly by train_drafter.py on tiny self-distilled SQL data;
vLLM is started with it and answers the data's held-out prompts (tests/vllm_pool.py: `sql_head_run`'s first step,
before the reload check swaps anything; DRAFTPOOL_HEAD and DRAFTPOOL_DATA point it at a long-trained head and its
data). Checks that vLLM's speculative output equals its plain greedy output and the target's greedy answers in
draftpool's data, and that vLLM's measured acceptance (accepted draft tokens per draft) matches the prediction of
draftpool's own held-out evaluation at the same depth.
"""

from __future__ import annotations

import pytest

from draftpool.models.eagle3 import load_eagle3
from tests.vllm_pool import RUN, held_out_rows, sql_head_run, trained_pool  # noqa: F401 - fixtures
from training.evaluate import evaluate

# the short-trained head predicts ~0.4 accepted tokens per draft (a long-trained one ~1): enough that a vLLM that
# dropped or mis-read the head's weights (its acceptance then ~0) fails the comparison
MIN_PREDICTED = 0.15


@pytest.mark.vllm
def test_vllm_serves_exported_head_losslessly_with_predicted_acceptance(target_info, target, trained_pool,  # noqa: F811
                                                                        sql_head_run):  # noqa: F811
    model, tok = target
    rows = held_out_rows(trained_pool.data, RUN["prompts"])
    assert sql_head_run["prompts"] == [list(r["prompt_ids"]) for r in rows]
    res = sql_head_run["result"]
    first = res["steps"][0]  # the engine as started with the exported head, before any swap
    assert first["head"] == str(trained_pool.sql) and first["swap"] is None
    # 1. lossless: speculative output == vLLM plain greedy, token for token
    assert first["outputs"] == res["plain"]
    # 2. and == the target's greedy answers in draftpool's data (the lean forward's, itself checked against
    # transformers in tests/data_gen/test_continuous.py; fp32 kernels may differ in a rare near-tie: allow one prompt)
    same = sum(list(r["response_ids"])[:len(v)] == v for r, v in zip(rows, res["plain"]))
    assert same >= len(rows) - 1, f"draftpool's greedy answers equal vLLM greedy on {same}/{len(rows)} prompts"
    # 3. acceptance: vLLM accepted draft tokens per draft vs our evaluation's greedy chain at depth k
    c = first["counters"]
    measured = c["vllm:spec_decode_num_accepted_tokens"] / c["vllm:spec_decode_num_drafts"]
    head = load_eagle3(trained_pool.sql, target_info, model.get_input_embeddings().weight)
    ev = evaluate("eagle3", head, model, rows, RUN["k"], 1024, tok.pad_token_id, 4)
    predicted = ev["empirical_greedy_chain_length"] - 1.0
    print(f"vLLM accepted/draft {measured:.3f} vs draftpool prediction {predicted:.3f} "
          f"(from rates {ev['expected_chain_length_greedy'] - 1:.3f})")
    assert predicted >= MIN_PREDICTED, f"the head predicts {predicted:.3f} accepted per draft: too little to compare"
    assert abs(measured - predicted) <= 0.1 + 0.2 * predicted, (measured, predicted)
