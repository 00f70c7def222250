"""online_adapt.py in lookahead mode on the real embedded target with a step drafter cut from it: requests are served
by lookahead reasoning while the trainer process runs DPO rounds on the rejected steps; the trainer crashes after its
second round and is restarted with no failed request; pairs and rounds show in the log and in metrics.jsonl; a
published version is hot-swapped into the served drafter and exported; bad lookahead settings fail with one message
and write nothing."""

import json

import pytest

import online.adapt as online_adapt
import online.lookahead.mode as lookahead_mode
from data_gen.problems import load_problems
from online.lookahead.step_trainer import StepTrainers
from tests.online.faults import CrashInRound
from tests.stubs import cut_step_pool

NEW = 32


@pytest.fixture(scope="module")
def step_pool(tmp_path_factory, target, target_info):
    return cut_step_pool(tmp_path_factory.mktemp("lookahead") / "pool", target, target_info)


@pytest.fixture(scope="module")
def tiny_step_pool(tmp_path_factory, tiny_real_target, tiny_target_info):
    """(a step drafter cut from the tiny real-vocabulary target, the `serve.target=` that serves it): for the
    configuration checks, which never decode."""
    root = cut_step_pool(tmp_path_factory.mktemp("lookahead-tiny") / "pool", tiny_real_target, tiny_target_info)
    return root, f"serve.target={tiny_target_info.name}"


def _args(tmp_path, pool, reqs, *extra):
    return ["--config", "recipes/online/lookahead.yaml", f"serve.pool={pool}", f"serve.out_dir={tmp_path}/online",
            f"serve.requests={reqs}", f"serve.max_new_tokens={NEW}", "lookahead.judge=exact", "lookahead.gamma=2",
            "lookahead.max_step_tokens=16", "trainer.round_every=1", "trainer.holdout_every=0", "trainer.lr=1e-4",
            "process.export_every=1", *extra]


def _requests(path, n):
    rows = [{"id": p["id"], "prompt": p["question"]} for p in load_problems("eval")[:n]]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.tier2
def test_lookahead_serving_survives_a_trainer_crash_and_swaps_dpo_versions(tmp_path, step_pool, capsys, monkeypatch):
    n = 10  # enough requests that the trainer (spawned, loaded, one round) crashes while serving goes on
    reqs = _requests(tmp_path / "r.jsonl", n)
    # the trainer process, a real one, exits in its second round, every time (tests/online/faults.py)
    monkeypatch.setattr(lookahead_mode, "StepTrainers", lambda env: CrashInRound(2, StepTrainers(env)))
    code = online_adapt.main(_args(tmp_path, step_pool, reqs))
    out = capsys.readouterr()
    summary = json.loads(out.out)
    # a crash found only at the stop loses its unexported round: said in the summary, exit 3
    assert code == (3 if summary["adaptation_lost"] else 0)
    assert summary["served"] == n and summary["failed"] == 0 and summary["errors"] == 0
    # the trainer exports after round 1 and crashes in round 2; each restart resumes that export and crashes again;
    # at least one crash was found while serving (a restart), the last may be found only at the stop
    faults = summary["trainer_faults"]
    assert faults and {f["kind"] for f in faults} == {"crash"} and summary["trainer_restarts"] >= 1
    assert summary["swaps"] >= 1 and summary["versions"]["math-llama68m"] >= 1
    assert "[online] round 1 (" in out.err and "pairs" in out.err
    answers = [json.loads(line) for line in (tmp_path / "online" / "answers.jsonl").read_text().splitlines()]
    assert len(answers) == n and all(a["new_tokens"] > 0 and a["lookahead"]["rounds"] >= 1 for a in answers)
    assert sum(a["pairs"] for a in answers) >= 1  # an untrained cut drafter gets steps rejected
    metrics = [json.loads(line) for line in (tmp_path / "online" / "metrics.jsonl").read_text().splitlines()]
    rounds = [m for m in metrics if m["event"] == "round"]
    assert rounds and all(r["pairs"] >= 0 and "guard" in r for r in rounds) and sum(r["pairs"] for r in rounds) >= 1
    assert sum(m["event"] == "request" for m in metrics) == n
    latest = json.loads((tmp_path / "online" / "latest.json").read_text())
    exported = json.loads((tmp_path / "online" / latest["path"] / "pool.json").read_text())
    assert exported["online"]["updater"] == "dpo" and "math-llama68m" in exported["drafters"]


@pytest.mark.parametrize("extra,msg", [
    (["lookahead.judge=oracle"], "unknown judge"), (["lookahead.judge=llm", "lookahead.judge_model=/no/such"],
                                                     "judge_model"),
    (["lookahead.threshold=1.5"], "[0, 1]"), (["lookahead.delimiter="], "delimiter"),
    (["trainer.updater=ogd"], "needs trainer.updater"), (["serve.temperature=0.7"], "greedy"),
    (["trainer.beta=0"], "beta"), (["lookahead.drafter=nope"], "lookahead.drafter")])
def test_bad_lookahead_config(tmp_path, tiny_step_pool, extra, msg, capsys):
    pool, target = tiny_step_pool
    reqs = _requests(tmp_path / "r.jsonl", 1)
    assert online_adapt.main(_args(tmp_path, pool, reqs, target, *extra)) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("error:") == 1
    assert not (tmp_path / "online").exists()  # nothing written
