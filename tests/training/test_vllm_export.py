"""Opt-in outside check (slow, not in CI): vLLM's CPU build serves the embedded target with the exported SQL head.

    bash scripts/setup_vllm.sh && accelerate launch train_drafter.py --domain sql && python -m pytest -m slow

Checks that vLLM's speculative output equals its plain greedy output and HF greedy, and that vLLM's measured acceptance
(accepted draft tokens per draft) matches the prediction of draftpool's own held-out evaluation at the same depth.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import torch

from data_gen.generate import load_distilled
from draftpool.models.eagle3 import load_eagle3
from training.evaluate import evaluate

ROOT = Path(__file__).resolve().parents[2]
K = 3
N_PROMPTS = 12


@pytest.mark.vllm
def test_vllm_serves_exported_head_losslessly_with_predicted_acceptance(target_info, target, tmp_path):
    vllm_py = Path(os.environ.get("DRAFTPOOL_VLLM_PYTHON", ROOT / ".venv-vllm" / "bin" / "python"))
    head_dir = Path(os.environ.get("DRAFTPOOL_HEAD", ROOT / "pools" / target_info.slug / "sql-eagle3"))
    data_dir = Path(os.environ.get("DRAFTPOOL_DATA", ROOT / "runs" / "data" / target_info.slug / "sql"))
    assert vllm_py.exists(), f"{vllm_py} missing: run scripts/setup_vllm.sh (or set DRAFTPOOL_VLLM_PYTHON)"
    assert (head_dir / "config.json").exists(), f"{head_dir} missing: run train_drafter.py --domain sql first"
    model, tok = target
    rows = [r for r in load_distilled(data_dir, "held_out") if r["temperature"] == 0.0][:N_PROMPTS]
    prompts = [list(r["prompt_ids"]) for r in rows]
    (tmp_path / "prompts.json").write_text(json.dumps(prompts))
    out = subprocess.run([str(vllm_py), str(ROOT / "scripts" / "vllm_check.py"), "--target", target_info.path,
                          "--head", str(head_dir), "--prompts", str(tmp_path / "prompts.json"), "--k", str(K),
                          "--max-tokens", "64"], capture_output=True, text=True, timeout=1500,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    line = [x for x in out.stdout.splitlines() if x.startswith("VLLM_RESULT ")]
    assert out.returncode == 0 and line, out.stderr[-4000:]
    res = json.loads(line[0][len("VLLM_RESULT "):])
    # 1. lossless: speculative output == vLLM plain greedy, token for token
    assert res["eagle3"]["token_ids"] == res["plain"]["token_ids"]
    # 2. and == HF greedy of the same target (fp32 kernels may differ in a rare near-tie; allow one prompt)
    same = 0
    for p, v in zip(prompts, res["plain"]["token_ids"]):
        hf = model.generate(torch.tensor([p]), max_new_tokens=64, do_sample=False)[0, len(p):].tolist()
        same += hf[: len(v)] == v
    assert same >= len(prompts) - 1, f"HF greedy equals vLLM greedy on {same}/{len(prompts)} prompts"
    # 3. acceptance: vLLM accepted draft tokens per draft vs our evaluation's greedy chain at depth K
    m = res["eagle3"]["metrics"]
    drafts = float(m["vllm:spec_decode_num_drafts"])
    accepted = float(m["vllm:spec_decode_num_accepted_tokens"])
    measured = accepted / drafts
    head = load_eagle3(head_dir, target_info, model.get_input_embeddings().weight)
    ev = evaluate("eagle3", head, model, rows, K, 1024, tok.pad_token_id, 4)
    predicted = ev["empirical_greedy_chain_length"] - 1.0
    print(f"vLLM accepted/draft {measured:.3f} vs draftpool prediction {predicted:.3f} "
          f"(from rates {ev['expected_chain_length_greedy'] - 1:.3f}); vLLM tok/s plain "
          f"{res['plain']['tokens'] / res['plain']['seconds']:.1f}, eagle3 "
          f"{res['eagle3']['tokens'] / res['eagle3']['seconds']:.1f}")
    assert abs(measured - predicted) <= 0.1 + 0.2 * predicted, (measured, predicted)
