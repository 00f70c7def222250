"""Self-distillation at tiny settings: rows, columns, provenance, greedy parity with one-at-a-time generation,
samples_per_prompt (plumbing: on the tiny random Llama over the real vocabulary, with the real prompts, chat template
and stop tokens), and resume after a SIGKILL of the real CLI on the real embedded target (the second tier)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import draftpool
from data_gen.generate import is_complete, load_distilled, run
from data_gen.plan import DataGenConfig, plan_shards, prompt_table, shard_seed
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.config import ConfigError, load_config
from draftpool.target import DEFAULT_TARGET

ROOT = Path(__file__).resolve().parents[2]
RECIPE = ROOT / "recipes" / "sql" / "data_gen.yaml"
N_PROMPTS, MAX_NEW = 5, 8
# every setting the tests rely on is given here, so edits of the shipped recipe do not change what is tested
TINY = [f"max_prompts_per_split={N_PROMPTS}", f"max_new_tokens={MAX_NEW}", "batch_size=4", "shard_size=3",
        "train_temperatures=[0.0,0.7]", "held_out_temperatures=[0.0]", "samples_per_prompt=0", "top_p=1.0",
        "system_prompt=", "device=cpu", "seed=0"]
COLUMNS = {"id", "prompt_id", "source", "domain", "split", "temperature", "seed", "prompt", "prompt_ids",
           "response_ids", "response", "finished"}


def make_cfg(data_dir: Path, *extra: str, target: str) -> DataGenConfig:
    """The config the CLI would build for `--domain sql data_dir=... <TINY> target=... <extra>`."""
    return load_config(DataGenConfig, RECIPE, [f"data_dir={data_dir}", *TINY, f"target={target}", *extra,
                                               "domain=sql"])


def rows_by_id(data_dir: Path) -> dict[str, dict]:
    ds = load_distilled(data_dir)
    rows = ds.to_list()
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate row ids"
    return {r["id"]: r for r in rows}


def complete_run(data_dir: Path, info, model, tok) -> tuple[DataGenConfig, Path, dict[str, dict]]:
    """One complete tiny run: (cfg, data_dir, {id: row})."""
    cfg = make_cfg(data_dir, target=info.name)
    assert not is_complete(data_dir)
    out = run(cfg, info=info, model=model, tok=tok)
    assert out == data_dir
    return cfg, data_dir, rows_by_id(data_dir)


@pytest.fixture(scope="module")
def reference(tmp_path_factory, tiny_target_info, tiny_real_target):
    """One complete tiny run with the tiny real-vocabulary target."""
    return complete_run(tmp_path_factory.mktemp("reference") / "sql", tiny_target_info, *tiny_real_target)


def test_rows_and_columns(reference, tiny_real_target):
    cfg, data_dir, rows = reference
    _, tok = tiny_real_target
    table = prompt_table(cfg)
    expected = {f"{p['id']}-t{t:.2f}": (split, t, p)
                for split, temps in (("train", [0.0, 0.7]), ("held_out", [0.0]))
                for t in temps for p in table[split]}
    assert len(table["train"]) == len(table["held_out"]) == N_PROMPTS
    assert len(rows) == N_PROMPTS * 3
    assert set(rows) == set(expected)
    ds = load_distilled(data_dir)
    assert set(ds.column_names) == COLUMNS
    for rid, r in rows.items():
        split, temp, p = expected[rid]
        assert (r["split"], r["temperature"], r["prompt_id"], r["prompt"]) == (split, temp, p["id"], p["prompt"])
        assert r["source"] == "sql" and r["domain"] == "sql"
        assert isinstance(r["seed"], int)
    assert len(load_distilled(data_dir, "train")) == 2 * N_PROMPTS
    assert len(load_distilled(data_dir, "held_out")) == N_PROMPTS
    assert {r["temperature"] for r in load_distilled(data_dir, "held_out")} == {0.0}


def test_prompt_and_response_ids(reference, tiny_real_target):
    cfg, _, rows = reference
    model, tok = tiny_real_target
    stop = stop_token_ids(tok, model)
    msgs = [{"role": "user", "content": "x"}]
    with_header = tok.apply_chat_template(msgs, add_generation_prompt=True, tokenize=False)
    without = tok.apply_chat_template(msgs, add_generation_prompt=False, tokenize=False)
    assert with_header.startswith(without) and len(with_header) > len(without)
    header_ids = tok.encode(with_header[len(without):], add_special_tokens=False)
    assert header_ids
    for r in rows.values():
        assert r["prompt_ids"] == render_prompt(tok, r["prompt"])
        assert r["prompt_ids"][-len(header_ids):] == header_ids, "prompt must end with the assistant header"
        assert r["prompt"] in tok.decode(r["prompt_ids"])
        assert 1 <= len(r["response_ids"]) <= MAX_NEW
        assert tok.decode(r["response_ids"], skip_special_tokens=True) == r["response"]
        assert r["finished"] == (r["response_ids"][-1] in stop)
        assert not any(t in stop for t in r["response_ids"][:-1]), "nothing after the stop token"
        if not r["finished"]:
            assert len(r["response_ids"]) == MAX_NEW


def test_seeds_follow_shard_names(reference):
    cfg, _, rows = reference
    shards = plan_shards(cfg, prompt_table(cfg))
    assert len(shards) == 6  # (3 + 2 prompts) x (2 train temperatures + 1 held-out)
    for s in shards:
        for p in s["rows"]:
            assert rows[f"{p['id']}-t{s['temperature']:.2f}"]["seed"] == shard_seed(cfg.seed, s["name"])


def test_provenance(reference, tiny_target_info, tiny_real_target):
    cfg, data_dir, _ = reference
    _, tok = tiny_real_target
    prov = json.loads((data_dir / "provenance.json").read_text())
    assert prov["target"] == tiny_target_info.name
    assert prov["target_weights_sha256"] == tiny_target_info.weights_sha256
    assert len(prov["target_weights_sha256"]) == 64
    assert prov["chat_template"] == tok.chat_template and prov["chat_template"]
    assert prov["train_temperatures"] == [0.0, 0.7] and prov["held_out_temperatures"] == [0.0]
    assert prov["seed"] == 0
    assert prov["draftpool_version"] == draftpool.__version__
    assert prov["max_new_tokens"] == MAX_NEW and prov["domain"] == "sql"
    assert prov["n_shards"] == 6
    assert prov["dtype"] == "float32" and prov["precision"] == {"dtype": "float32", "setting": "given", "use": "batch"}
    assert len(list((data_dir / "shards").glob("*.parquet"))) == 6
    assert is_complete(data_dir)


def test_greedy_matches_one_at_a_time(reference, tiny_real_target):
    """Batched, left-padded fp32 greedy must give the same tokens as an unpadded one-prompt `model.generate`."""
    _, _, rows = reference
    model, tok = tiny_real_target
    stop = stop_token_ids(tok, model)
    greedy = [r for r in rows.values() if r["temperature"] == 0.0]
    assert len(greedy) == 2 * N_PROMPTS
    mismatches = []
    with torch.no_grad():
        for r in greedy:
            ids = torch.tensor([r["prompt_ids"]])
            out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=MAX_NEW,
                                 do_sample=False, pad_token_id=tok.pad_token_id, eos_token_id=stop)
            single = out[0, ids.shape[1]:].tolist()
            for i, t in enumerate(single):
                if t in stop:
                    single = single[: i + 1]
                    break
            if single != r["response_ids"]:
                mismatches.append((r["id"], single, r["response_ids"]))
    assert not mismatches, f"batched greedy differs from one-at-a-time greedy: {mismatches}"


def test_sampled_rows_are_sampled(reference):
    _, _, rows = reference
    pairs = [(r, rows[r["id"].replace("-t0.70", "-t0.00")]) for r in rows.values() if r["temperature"] == 0.7]
    assert len(pairs) == N_PROMPTS
    assert any(a["response_ids"] != b["response_ids"] for a, b in pairs), "t=0.7 rows all equal the greedy rows"


def test_samples_per_prompt(tmp_path, tiny_target_info, tiny_real_target):
    model, tok = tiny_real_target
    cfg = make_cfg(tmp_path / "spp", "samples_per_prompt=1", "max_prompts_per_split=4", "max_new_tokens=2",
                   target=tiny_target_info.name)
    out = run(cfg, info=tiny_target_info, model=model, tok=tok)
    rows = rows_by_id(out)
    train = [r for r in rows.values() if r["split"] == "train"]
    table = prompt_table(cfg)
    assert sorted(r["prompt_id"] for r in train) == sorted(p["id"] for p in table["train"])  # once each
    for i, p in enumerate(table["train"]):
        (r,) = [r for r in train if r["prompt_id"] == p["id"]]
        assert r["temperature"] == [0.0, 0.7][i % 2], "temperatures must be taken in turn"
    held = [r for r in rows.values() if r["split"] == "held_out"]
    assert len(held) == 4 and {r["temperature"] for r in held} == {0.0}
    assert is_complete(out)


def test_plan_shards_samples_per_prompt_two_of_three(tmp_path):
    cfg = make_cfg(tmp_path / "plan", "samples_per_prompt=2", "train_temperatures=[0.0,0.5,1.0]",
                   target=DEFAULT_TARGET)
    table = prompt_table(cfg)
    shards = plan_shards(cfg, table)
    temps_of: dict[str, list[float]] = {}
    for s in shards:
        if s["split"] == "train":
            for p in s["rows"]:
                temps_of.setdefault(p["id"], []).append(s["temperature"])
    temps = [0.0, 0.5, 1.0]
    for i, p in enumerate(table["train"]):
        assert sorted(temps_of[p["id"]]) == sorted([temps[i % 3], temps[(i + 1) % 3]])
    names = [s["name"] for s in shards]
    assert len(names) == len(set(names))
    assert all(1 <= len(s["rows"]) <= cfg.shard_size for s in shards)


def test_other_settings_in_same_dir_rejected(reference, tiny_target_info, tiny_real_target):
    model, tok = tiny_real_target
    _, data_dir, rows = reference
    prov_before = (data_dir / "provenance.json").read_text()
    for override, key in (("max_new_tokens=9", "max_new_tokens"), ("seed=1", "seed"),
                          ("train_temperatures=[0.0,0.3]", "train_temperatures")):
        with pytest.raises(ConfigError, match=key):
            run(make_cfg(data_dir, override, target=tiny_target_info.name), info=tiny_target_info, model=model,
                tok=tok)
    assert (data_dir / "provenance.json").read_text() == prov_before
    assert rows_by_id(data_dir) == rows


def test_complete_data_is_reused_unless_its_split_moved(reference, tiny_target_info, tiny_real_target,
                                                         monkeypatch):
    """ensure_data: complete data made with other sampling settings is used as it is (a quick profile's subset);
    data whose prompts sit in another split than today's is refused (it could train on held-out prompts)."""
    import data_gen.generate as generate

    _, data_dir, rows = reference
    model, tok = tiny_real_target
    quick = make_cfg(data_dir, "max_prompts_per_split=2", "max_new_tokens=9", target=tiny_target_info.name)
    assert generate.ensure_data(quick, tiny_target_info, tok) == data_dir
    real = generate.prompt_table

    def moved(cfg):  # one prompt of the data moves from train to held-out, as under another split
        table = real(cfg)
        pid = next(r["prompt_id"] for r in rows.values() if r["split"] == "train")
        row = next(r for r in table["train"] if r["id"] == pid)
        return {"train": [r for r in table["train"] if r is not row], "held_out": table["held_out"] + [row]}

    monkeypatch.setattr(generate, "prompt_table", moved)
    with pytest.raises(ConfigError, match="another prompt set or split"):
        generate.ensure_data(make_cfg(data_dir, target=tiny_target_info.name), tiny_target_info, tok)
    assert rows_by_id(data_dir) == rows


def test_temp_file_ignored(reference, tiny_target_info, tiny_real_target):
    model, tok = tiny_real_target
    cfg, data_dir, rows = reference
    tmp = data_dir / "shards" / ".x.tmp"
    tmp.write_bytes(b"half a parquet")
    try:
        assert is_complete(data_dir)
        assert rows_by_id(data_dir) == rows
        mtimes = {p.name: p.stat().st_mtime_ns for p in (data_dir / "shards").glob("*.parquet")}
        assert run(cfg, info=tiny_target_info, model=model, tok=tok) == data_dir  # nothing left to do
        assert {p.name: p.stat().st_mtime_ns for p in (data_dir / "shards").glob("*.parquet")} == mtimes
    finally:
        tmp.unlink()


@pytest.mark.tier2
def test_resume_after_sigkill(tmp_path, target_info, target):
    """On the real target: its passes are slow enough to kill the CLI between two shards."""
    model, tok = target
    _, _, ref_rows = complete_run(tmp_path / "reference" / "sql", target_info, model, tok)
    data_dir = tmp_path / "resumed"
    assert not is_complete(data_dir)
    cmd = [sys.executable, "-m", "data_gen.generate", "--domain", "sql", f"data_dir={data_dir}", *TINY,
           f"target={target_info.name}"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    shard_dir = data_dir / "shards"
    deadline = time.monotonic() + 120
    try:
        while not list(shard_dir.glob("*.parquet")):
            if proc.poll() is not None:
                pytest.fail(f"generator exited early (rc {proc.returncode}): {proc.stdout.read().decode()[-2000:]}")
            if time.monotonic() > deadline:
                pytest.fail("no shard written within 120 s")
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    survivors = {p.name: p.stat().st_mtime_ns for p in shard_dir.glob("*.parquet")}
    assert 1 <= len(survivors) < 6, f"the kill should leave a partial run, found {sorted(survivors)}"
    assert not is_complete(data_dir)
    (shard_dir / ".x.tmp").write_bytes(b"leftover of a killed write")

    run(make_cfg(data_dir, target=target_info.name), info=target_info, model=model, tok=tok)
    assert is_complete(data_dir)
    for name, mtime in survivors.items():
        assert (shard_dir / name).stat().st_mtime_ns == mtime, f"{name} was regenerated"
    rows = rows_by_id(data_dir)  # also asserts no duplicate ids
    assert set(rows) == set(ref_rows)
    assert len(load_distilled(data_dir)) == len(ref_rows)
    diff = [rid for rid in rows if rows[rid]["response_ids"] != ref_rows[rid]["response_ids"]]
    greedy_diff = [rid for rid in diff if rows[rid]["temperature"] == 0.0]
    assert not greedy_diff, f"greedy rows differ after resume: {greedy_diff}"
    assert not diff, f"sampled rows differ after resume: {diff}"
    for rid, r in rows.items():
        assert r == ref_rows[rid], f"row {rid} differs after resume"
    assert json.loads((data_dir / "provenance.json").read_text())["n_shards"] == 6


def test_log_gets_progress_lines_not_parquet_bars(tmp_path, tiny_target_info, tiny_real_target, capfd):
    """stderr not a terminal (as under pytest): plain progress lines, and none of `datasets`' per-shard bars."""
    import datasets

    model, tok = tiny_real_target
    datasets.enable_progress_bars()  # as in a fresh process: generation itself must silence them
    cfg = make_cfg(tmp_path / "sql", "max_prompts_per_split=2", "max_new_tokens=2", target=tiny_target_info.name)
    run(cfg, info=tiny_target_info, model=model, tok=tok)
    load_distilled(tmp_path / "sql", "train")
    err = capfd.readouterr().err
    assert "Creating parquet" not in err and "Generating train split" not in err and "Filter" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("self-distill sql (engine): ")]
    assert lines[0] == "self-distill sql (engine): 0/6 sample (0.0%), started"
    assert lines[-1].startswith("self-distill sql (engine): 6/6 sample (100.0%), ") and "done in" in lines[-1]
