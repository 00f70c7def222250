"""The engine backend of self-distillation: the slot forward against the transformers forward on the real target,
continuous batching's slot reuse and answers independent of which jobs share a pass (plumbing: on a tiny random
Llama over the real vocabulary, with real prompts and stop tokens), and greedy answers identical to the transformers
backend's on the real target (the second tier)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from data_gen.continuous import Job, generate, shared_prefix
from data_gen.domains import domain_prompts
from data_gen.generate import load_distilled, run
from data_gen.plan import DataGenConfig
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.config import load_config
from draftpool.forward.slots import SlotError, SlotForward
from draftpool.target import DEFAULT_TARGET

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def prompts(tiny_real_target):
    _, tok = tiny_real_target
    return [render_prompt(tok, r["prompt"]) for r in domain_prompts("sql")["held_out"][:6]]


def test_slot_passes_give_the_models_logits(target):
    """Two prefills in one pass, then decode rows beside a new prefill and a multi-token append: every row's logits
    are the transformers forward's over the same sequence (fp32, 1e-4 of the logits' scale)."""
    model, _ = target
    fwd = SlotForward(model, slots=3, capacity=40)
    a, b, c = [1, 2, 3, 400, 500, 600, 7], [9, 8, 77, 66], [5, 6, 7, 8, 9]

    def ref(seq: list[int]) -> torch.Tensor:
        with torch.no_grad():
            return model(input_ids=torch.tensor([seq])).logits[0]

    h, _ = fwd.forward([(0, a), (2, b)], all_rows=True)
    got = fwd.lm_head(h)
    tol = 1e-4 * float(ref(a).abs().max())
    assert torch.allclose(got[:7], ref(a), atol=tol, rtol=0) and torch.allclose(got[7:], ref(b), atol=tol, rtol=0)
    h, _ = fwd.forward([(0, [11]), (1, c), (2, [12, 13, 14])])  # one step, a new prefill, an append of 3
    got = fwd.lm_head(h)
    for row, seq in enumerate([a + [11], c, b + [12, 13, 14]]):
        assert torch.allclose(got[row], ref(seq)[-1], atol=tol, rtol=0), f"segment {row}"
    assert fwd.lengths == [8, 5, 7]


def test_slot_forward_refuses_what_it_cannot_hold(target):
    model, _ = target
    fwd = SlotForward(model, slots=2, capacity=4)
    with pytest.raises(SlotError, match="capacity"):
        fwd.forward([(0, [1, 2, 3, 4, 5])])
    with pytest.raises(SlotError, match="two segments"):
        fwd.forward([(0, [1]), (0, [2])])
    with pytest.raises(SlotError, match="slot 2"):
        fwd.forward([(2, [1])])
    assert fwd.lengths == [0, 0]


def test_shared_prefix_leaves_each_prompt_a_token():
    assert shared_prefix([[1, 2, 3, 4], [1, 2, 3, 9], [1, 2, 3, 4, 5]]) == 3
    assert shared_prefix([[1, 2, 3], [1, 2, 3, 4]]) == 2  # the shorter prompt keeps its last token
    assert shared_prefix([[1, 2], [3, 4]]) == 0
    assert shared_prefix([]) == 0


def _answers(model, prompts, stop, slots: int, share_prefix: bool = True, record=None) -> dict:
    jobs = [Job(i, p, temperature=0.0 if i % 2 == 0 else 0.9, seed=100 + i, max_new_tokens=12)
            for i, p in enumerate(prompts)]
    fwd = SlotForward(model, slots, max(map(len, prompts)) + 12)
    if record is not None:
        real = fwd.forward

        def spy(segments, **kw):
            record.append([(s, len(t)) for s, t in segments])
            return real(segments, **kw)

        fwd.forward = spy
    out = {}
    generate(fwd, jobs, stop, lambda job, ans, fin: out.__setitem__(job.key, (list(ans), fin)),
             share_prefix=share_prefix)
    return out


def test_a_freed_slot_takes_the_next_job_in_the_next_pass(tiny_real_target, prompts):
    """No job slot idles while a job waits: every pass holds one segment per job slot until the queue is empty."""
    model, tok = tiny_real_target
    stop = stop_token_ids(tok, model)
    passes: list[list[tuple[int, int]]] = []
    out = _answers(model, prompts, stop, slots=3, record=passes)  # 2 job slots + the shared prefix's
    assert sorted(out) == list(range(len(prompts)))
    assert passes[0] == [(2, shared_prefix(prompts))], "the shared prefix runs once, in the last slot"
    started = 0
    for p, segs in enumerate(passes[1:], 1):
        assert {s for s, _ in segs} <= {0, 1}
        started += sum(n > 1 or s not in {t for t, _ in passes[p - 1]} for s, n in segs)
        if started < len(prompts):
            assert len(segs) == 2, f"pass {p} left a slot idle with {len(prompts) - started} jobs waiting"
    assert started == len(prompts)  # every prompt's own part ran once
    assert len(passes) - 1 < len(prompts) * 12 / 2 + 2  # the jobs overlap: about half the one-by-one pass count


def test_answers_do_not_depend_on_the_passes_they_share(tiny_real_target, prompts):
    """Greedy and sampled answers (each job's own seed) are the same with 1, 2 or 5 job slots and without the shared
    prefix: what a resumed run relies on."""
    model, tok = tiny_real_target
    stop = stop_token_ids(tok, model)
    base = _answers(model, prompts, stop, slots=2)
    assert any(base[i] != base[i - 1] for i in range(1, len(prompts)))
    for slots, share in ((3, True), (6, True), (6, False)):
        assert _answers(model, prompts, stop, slots=slots, share_prefix=share) == base, (slots, share)


def test_sampled_answers_follow_their_seed(tiny_real_target, prompts):
    model, tok = tiny_real_target
    stop = stop_token_ids(tok, model)
    fwd = SlotForward(model, 3, max(map(len, prompts)) + 24)
    got = {}
    jobs = [Job(s, prompts[0], temperature=1.0, seed=s, max_new_tokens=24) for s in (1, 1, 2, 3)]
    jobs = [Job((k, j.seed), j.prompt, j.temperature, 1.0, j.seed, 24) for k, j in enumerate(jobs)]
    generate(fwd, jobs, stop, lambda job, ans, fin: got.__setitem__(job.key, ans))
    assert got[(0, 1)] == got[(1, 1)]
    assert len({tuple(got[(0, 1)]), tuple(got[(2, 2)]), tuple(got[(3, 3)])}) == 3


def _cfg(data_dir: Path, *extra: str) -> DataGenConfig:
    over = [f"data_dir={data_dir}", "max_prompts_per_split=4", "max_held_out_prompts=2", "max_new_tokens=28",
            "shard_size=4", "train_temperatures=[0.0]", "held_out_temperatures=[0.0]", "samples_per_prompt=0",
            "system_prompt=", "device=cpu", "seed=0", f"target={DEFAULT_TARGET}", "domain=sql", *extra]
    return load_config(DataGenConfig, ROOT / "recipes" / "sql" / "data_gen.yaml", over)


@pytest.mark.tier2
def test_engine_greedy_answers_equal_the_transformers_backends(tmp_path, target_info, target):
    model, tok = target
    rows = {}
    for backend, batch in (("hf", 4), ("engine", 3), ("auto", 5)):
        out = run(_cfg(tmp_path / backend, f"backend={backend}", f"batch_size={batch}"), target_info, model, tok)
        rows[backend] = {r["id"]: r["response_ids"] for r in load_distilled(out).to_list()}
    assert len(rows["hf"]) == 6 and max(len(a) for a in rows["hf"].values()) > 20  # 6 jobs: slots are reused
    assert rows["engine"] == rows["hf"]
    assert rows["auto"] == rows["hf"]
    assert '"backend": "engine"' in (tmp_path / "auto" / "provenance.json").read_text()  # auto resolved, recorded
