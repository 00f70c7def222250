"""Outside check (CI's second tier, marker `vllm`, after `bash scripts/setup_vllm.sh`): an online version whose draft
vocabulary was swapped still loads in vLLM's CPU build and decodes losslessly.

The trained test pool's SQL head (tests/vllm_pool.py) goes to a trainer that swaps 512 of its draft slots for tokens
it did not hold (counts from the target's own greedy answers to held-out prompts of another domain, Python), the
version is exported by the trainer's exporter, and vLLM serves the target with it on those prompts: speculative output
== vLLM plain greedy, token for token, and vLLM accepts some drafts (a trained head: the swap broke nothing it knew).
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
from tests.vllm_pool import trained_pool, vllm_python  # noqa: F401 - fixtures

ROOT = Path(__file__).resolve().parents[3]
N_PROMPTS, NEW = 4, 48  # Python prompts and answer tokens: the counts of the swap, then what vLLM answers


@pytest.mark.vllm
def test_vllm_serves_a_vocabulary_swapped_version(target_info, target, vllm_python, trained_pool, tmp_path):  # noqa: F811
    model, tok = target
    pool = trained_pool.pool
    member = {m.name: m for m in load_members(pool, target_info, model, ("eagle3",))}["sql-eagle3"]
    name, head = member.name, member.module
    prompts = [render_prompt(tok, r["prompt"]) for r in domain_prompts("python")["held_out"][:N_PROMPTS]]
    tr = OnlineTrainer([member], TrainerConfig(vocab_every=1, vocab_swaps=512, vocab_min_count=1),
                       out_embed=model.get_output_embeddings().weight.detach())
    old = head.t2d.clone()
    for p in prompts:
        answer = model.generate(torch.tensor([p]), max_new_tokens=NEW, do_sample=False)[0, len(p):]
        tr.counters[name].add(answer)
    info = tr.adapt_vocab(name)
    assert info["swapped"] > 0 and not torch.equal(head.t2d, old)
    path = export_pool(ExportSpec(str(tmp_path / "out"), str(pool), target_info), 1, [Member(name, "eagle3", head)],
                       {name: tr.candidate(name)}, tr.state(), {"note": "vocabulary swap check"})
    (tmp_path / "prompts.json").write_text(json.dumps(prompts))
    out = subprocess.run([str(vllm_python), str(ROOT / "scripts" / "vllm_check.py"), "--target", target_info.path,
                          "--head", str(path / name), "--prompts", str(tmp_path / "prompts.json"), "--k", "3",
                          "--max-tokens", str(NEW)], capture_output=True, text=True, timeout=1500,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    line = [x for x in out.stdout.splitlines() if x.startswith("VLLM_RESULT ")]
    assert out.returncode == 0 and line, out.stderr[-4000:]
    res = json.loads(line[0][len("VLLM_RESULT "):])
    assert res["eagle3"]["token_ids"] == res["plain"]["token_ids"]  # lossless with the swapped vocabulary
    m = res["eagle3"]["metrics"]
    accepted = float(m["vllm:spec_decode_num_accepted_tokens"]) / float(m["vllm:spec_decode_num_drafts"])
    print(f"{name} with {info['swapped']} swapped draft tokens: vLLM accepted {accepted:.3f} per draft")
    assert accepted > 0
