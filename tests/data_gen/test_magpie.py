"""Target-written prompts (data_gen/magpie.py): the pre-query template, the domain classifier on the shipped sets, the
filter's rejections, and a resumed run drawing exactly what an uninterrupted one draws (real target)."""

from __future__ import annotations

import json

import pytest

from data_gen.domains import PROMPT_SETS, domain_prompts, prompt_set
from data_gen.magpie import MagpieConfig, pre_query_ids, run, select, shipped_classifier
from draftpool.chat import render_prompt
from draftpool.config import ConfigError, load_config


@pytest.fixture(scope="module")
def classifier():
    return shipped_classifier()


def test_pre_query_template_is_the_rendered_prompt_up_to_the_user_text(target):
    _, tok = target
    pre = pre_query_ids(tok)
    full = render_prompt(tok, "List every table.")
    assert full[:len(pre)] == pre
    assert tok.decode(full[len(pre):]).startswith("List every table.")
    with_system = pre_query_ids(tok, "You write SQL questions.")
    assert "You write SQL questions." in tok.decode(with_system) and with_system != pre


def test_no_chat_template_is_one_clear_error(target):
    _, tok = target

    class NoTemplate:
        def apply_chat_template(self, *a, **k):
            raise ValueError("no chat template")

    with pytest.raises(ConfigError, match="chat template"):
        pre_query_ids(NoTemplate())
    assert pre_query_ids(tok)  # the real one has a template


def test_classifier_puts_held_out_prompts_in_their_own_set(classifier):
    """Fitted on train splits only; on each set's held-out prompts (never seen): at least 70% of every set named right
    (measured 2026-11-28: chat 0.73, biology 0.79, chemistry 0.80, the closest pairs), 90% of the sets with their own
    vocabulary (sql 0.98, python 0.94, math 0.95, summarization 0.98)."""
    for name in PROMPT_SETS:
        held = [r["prompt"] for r in prompt_set(name) if r["split"] == "held_out"]
        right = sum(classifier.predict(p) == name for p in held) / len(held)
        assert right >= (0.9 if name in ("sql", "python", "math", "summarization") else 0.7), (name, right)


def test_select_rejects_each_kind_and_keeps_the_first_copy(classifier):
    sql = domain_prompts("sql")
    shipped = [r["prompt"] for split in sql.values() for r in split]
    held = sql["held_out"][0]["prompt"]
    new = "Write a SQL query that returns the ten customers with the highest total order value in 2023."
    samples = [
        {"text": new, "finished": True},
        {"text": "Write a SQL query that returns the", "finished": False},  # unfinished
        {"text": "Hi!", "finished": True},  # too short
        {"text": "What is the capital of France and what is its population today?", "finished": True},  # not SQL
        {"text": held, "finished": True},  # a held-out prompt: would leak into the evaluation
        {"text": new + " ", "finished": True},  # a copy of an earlier kept sample
        {"text": "Using SQL, count the rows of the orders table grouped by status and sort by count.",
         "finished": True},
    ]
    kept, why = select(samples, "sql", classifier, shipped, 4, 120, limit=10)
    assert kept == [new, samples[-1]["text"]]
    assert dict(why) == {"unfinished": 1, "length": 1, "other_domain": 1, "near_duplicate": 2}
    first, _ = select(samples, "sql", classifier, shipped, 4, 120, limit=1)
    assert first == [new]
    anything, why = select(samples[3:4], "general", classifier, [], 4, 120, limit=10)
    assert anything == [samples[3]["text"]] and not why["other_domain"]


def test_bad_config_is_refused():
    with pytest.raises(ConfigError):
        load_config(MagpieConfig, None, ["domain=sql", "prompts=0"])
    with pytest.raises(ValueError, match="unknown domain"):
        load_config(MagpieConfig, None, ["domain=poetry"])


@pytest.mark.tier2
def test_a_resumed_run_draws_what_one_run_draws(tiny_real_target, tiny_target_info, tmp_path):
    """8 samples, then 8 more in a second call, against 16 in one call: the same samples in the same order; the
    prompt file holds what `select` keeps from them; other settings on the same file are refused (the tiny
    real-vocabulary target writes the samples: the bookkeeping of a run, not what a real target writes)."""
    model, tok = tiny_real_target
    target_info = tiny_target_info

    def go(out: str, max_samples: int, **kw) -> list[dict]:
        cfg = load_config(MagpieConfig, None, ["domain=sql", f"out={out}", "prompts=100", f"max_samples={max_samples}",
                                               "round_size=8", "slots=4", "max_tokens=24"]
                          + [f"{k}={v}" for k, v in kw.items()])
        path = run(cfg, model, tok, target_info)
        return [json.loads(line) for line in path.with_suffix(".samples.jsonl").read_text().splitlines()]

    split = tmp_path / "split.jsonl"
    go(str(split), 8)
    resumed = go(str(split), 16)
    whole = go(str(tmp_path / "whole.jsonl"), 16)
    assert len(whole) == 16 and resumed == whole
    assert len({s["text"] for s in whole}) > 8  # sampled, not one answer repeated
    kept = [json.loads(line)["prompt"] for line in split.read_text().splitlines()]
    sql = domain_prompts("sql")
    ref, _ = select(whole, "sql", shipped_classifier(), [r["prompt"] for s in sql.values() for r in s], 4, 120, 100)
    assert kept == ref
    report = json.loads(split.with_suffix(".report.json").read_text())
    assert report["samples"] == 16 and report["kept"] == len(kept)
    with pytest.raises(ConfigError, match="other settings"):
        go(str(split), 24, temperature=0.7)
