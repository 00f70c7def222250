"""Opt-in outside check (slow, not in CI): head versions loaded in place into a running vLLM engine's drafter.

    bash scripts/setup_vllm.sh && python build_pool.py
    python -m pytest -m slow tests/online/vllm/test_reload.py

vLLM starts with the pool's python head as its EAGLE-3 drafter, then `online.vllm.reload` (vLLM's worker extension)
swaps in the SQL head and back. After each swap the engine's drafter computes with the published tensors (every packed
linear layer's output on a probe, every kept tensor), the target's digest never changes, greedy output equals vLLM's
plain greedy output through every swap, and a head folder that is not there is refused with its reason.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from data_gen.domains import domain_prompts
from draftpool.chat import render_prompt

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.vllm
def test_head_versions_swap_in_place_and_output_stays_greedy(target_info, target, tmp_path):
    vllm_py = Path(os.environ.get("DRAFTPOOL_VLLM_PYTHON", ROOT / ".venv-vllm" / "bin" / "python"))
    pool = Path(os.environ.get("DRAFTPOOL_POOL", ROOT / "pools" / target_info.slug))
    assert vllm_py.exists(), f"{vllm_py} missing: run scripts/setup_vllm.sh (or set DRAFTPOOL_VLLM_PYTHON)"
    entries = json.loads((pool / "pool.json").read_text())["drafters"]
    a, b = (str(pool / entries[n]["path"]) for n in ("python-eagle3", "sql-eagle3"))
    _, tok = target
    prompts = [render_prompt(tok, r["prompt"]) for r in domain_prompts("sql")["held_out"][:6]]
    (tmp_path / "prompts.json").write_text(json.dumps(prompts))
    out = subprocess.run([str(vllm_py), str(ROOT / "scripts" / "vllm_reload_check.py"), "--target", target_info.path,
                          "--heads", f"{a},{b},{a}", "--prompts", str(tmp_path / "prompts.json")],
                         capture_output=True, text=True, timeout=1500, cwd=ROOT,
                         env={**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)})
    line = [x for x in out.stdout.splitlines() if x.startswith("RELOAD_RESULT ")]
    assert out.returncode == 0 and line, out.stderr[-4000:]
    res = json.loads(line[0][len("RELOAD_RESULT "):])
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
    print(f"accepted per draft, python -> sql -> python head on SQL prompts: {rate}; swap "
          f"{steps[1]['swap']['seconds'] * 1e3:.0f} ms in the worker, {steps[1]['swap']['wall_s'] * 1e3:.0f} ms wall")
    assert rate[0] == rate[2], "the same head gave other acceptance after a round trip"
