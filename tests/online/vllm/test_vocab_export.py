"""Opt-in outside check (slow, not in CI): an online version whose draft vocabulary was swapped still loads in vLLM's
CPU build and decodes losslessly.

    bash scripts/setup_vllm.sh && python build_pool.py
    python -m pytest -m slow tests/online/vllm/test_vocab_export.py

A pool head's trainer swaps 512 of its draft slots for tokens it did not hold (counts from the target's own greedy
answers to held-out prompts of another domain), the version is exported by the trainer's exporter, and vLLM serves the
target with it: speculative output == vLLM plain greedy, token for token, and vLLM accepts some drafts.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import torch

from data_gen.domains import domain_prompts
from draftpool.chat import render_prompt
from draftpool.pool import Member, load_members
from online.trainer.config import TrainerConfig
from online.trainer.token_trainer import OnlineTrainer
from online.trainer.versions import ExportSpec, export_pool

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.vllm
def test_vllm_serves_a_vocabulary_swapped_version(target_info, target, tmp_path):
    vllm_py = Path(os.environ.get("DRAFTPOOL_VLLM_PYTHON", ROOT / ".venv-vllm" / "bin" / "python"))
    pool = Path(os.environ.get("DRAFTPOOL_POOL", ROOT / "pools" / target_info.slug))
    assert vllm_py.exists(), f"{vllm_py} missing: run scripts/setup_vllm.sh (or set DRAFTPOOL_VLLM_PYTHON)"
    assert (pool / "pool.json").exists(), f"{pool} missing: run build_pool.py first"
    model, tok = target
    members = {m.name: m for m in load_members(pool, target_info, model, ("eagle3",))}
    member = members.get("python-eagle3") or next(iter(members.values()))
    name, head = member.name, member.module
    prompts = [render_prompt(tok, r["prompt"]) for r in domain_prompts("sql")["held_out"][:6]]
    tr = OnlineTrainer([member], TrainerConfig(vocab_every=1, vocab_swaps=512, vocab_min_count=1),
                       out_embed=model.get_output_embeddings().weight.detach())
    old = head.t2d.clone()
    for p in prompts:
        answer = model.generate(torch.tensor([p]), max_new_tokens=64, do_sample=False)[0, len(p):]
        tr.counters[name].add(answer)
    info = tr.adapt_vocab(name)
    assert info["swapped"] > 0 and not torch.equal(head.t2d, old)
    path = export_pool(ExportSpec(str(tmp_path / "out"), str(pool), target_info), 1, [Member(name, "eagle3", head)],
                       {name: tr.candidate(name)}, tr.state(), {"note": "vocabulary swap check"})
    (tmp_path / "prompts.json").write_text(json.dumps(prompts))
    out = subprocess.run([str(vllm_py), str(ROOT / "scripts" / "vllm_check.py"), "--target", target_info.path,
                          "--head", str(path / name), "--prompts", str(tmp_path / "prompts.json"), "--k", "3",
                          "--max-tokens", "64"], capture_output=True, text=True, timeout=1500,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    line = [x for x in out.stdout.splitlines() if x.startswith("VLLM_RESULT ")]
    assert out.returncode == 0 and line, out.stderr[-4000:]
    res = json.loads(line[0][len("VLLM_RESULT "):])
    assert res["eagle3"]["token_ids"] == res["plain"]["token_ids"]  # lossless with the swapped vocabulary
    m = res["eagle3"]["metrics"]
    accepted = float(m["vllm:spec_decode_num_accepted_tokens"]) / float(m["vllm:spec_decode_num_drafts"])
    print(f"{name} with {info['swapped']} swapped draft tokens: vLLM accepted {accepted:.3f} per draft")
    assert accepted > 0
