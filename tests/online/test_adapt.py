"""online_adapt.py end to end on the real embedded target with a two-head pool: answers equal plain greedy decoding,
a malformed request line gets an error record and serving goes on, the trainer exports the adapted pool at stop, a
second run resumes from that version and skips answered requests; bad configuration fails with one message and
writes nothing."""

import json
import os
import signal
import socket
import threading
import time
import urllib.error
import urllib.request

import pytest

import online.adapt as online_adapt
from data_gen.domains import domain_prompts
from data_gen.generate import render_prompt, stop_token_ids
from draftpool.pool import update_pool_manifest, write_eagle3
from specsel.decoding.loop import SpecDecoder
from tests.stubs import random_head

NEW = 10


@pytest.fixture(scope="module")
def pool(tmp_path_factory, target, target_info):
    model, _ = target
    root = tmp_path_factory.mktemp("adapt") / "pool"
    for seed, name in enumerate(("sql-eagle3", "python-eagle3")):
        head = random_head(model, target_info, seed, 1024)
        meta = {"kind": "eagle3", "target_weights_sha256": target_info.weights_sha256}
        write_eagle3(head, root / name, target_info, meta)
        update_pool_manifest(root, target_info, name, {"kind": "eagle3", "path": name, "domain": name[:-7]})
    return root


def requests(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def args(tmp_path, pool, reqs, *extra):
    return [f"serve.pool={pool}", f"serve.out_dir={tmp_path}/online", f"serve.requests={reqs}",
            f"serve.max_new_tokens={NEW}", "trainer.batch=1", "trainer.holdout_every=0", "trainer.lr=0.001",
            "process.export_every=0", *extra]


def test_serve_adapt_export_resume(tmp_path, pool, target, capsys):
    model, tok = target
    prompts = [p["prompt"] for p in domain_prompts("sql")["held_out"][:3]]
    plain = SpecDecoder(model, mode="plain", stop_ids=stop_token_ids(tok, model))
    want = [tok.decode(plain.generate(render_prompt(tok, p), NEW)[0], skip_special_tokens=True) for p in prompts]
    rows = [{"id": "a", "prompt": prompts[0]}, "{not json", {"id": "b", "prompt": prompts[1]}]
    assert online_adapt.main(args(tmp_path, pool, requests(tmp_path / "r1.jsonl", rows))) == 0
    out = capsys.readouterr()
    summary = json.loads(out.out)
    assert summary["served"] == 2 and summary["failed"] == 0 and summary["errors"] == 1
    assert summary["rounds"] >= 1 and len(summary["exports"]) == 1 and summary["trainer_faults"] == []
    assert "request line 2" in out.err
    answers = [json.loads(line) for line in (tmp_path / "online" / "answers.jsonl").read_text().splitlines()]
    assert [a["id"] for a in answers] == ["a", "line-2", "b"]
    assert [answers[0]["text"], answers[2]["text"]] == want[:2]  # lossless at temperature 0
    assert "error" in answers[1]
    latest = json.loads((tmp_path / "online" / "latest.json").read_text())
    exported = tmp_path / "online" / latest["path"]
    assert (exported / "trainer_state.pt").is_file() and set(json.loads((exported / "pool.json").read_text())
                                                              ["drafters"]) == {"sql-eagle3", "python-eagle3"}

    # a second run (e.g. after a kill) starts from the exported version and skips what was answered
    rows = [{"id": "a", "prompt": prompts[0]}, {"id": "c", "prompt": prompts[2]}]
    assert online_adapt.main(args(tmp_path, pool, requests(tmp_path / "r2.jsonl", rows))) == 0
    out = capsys.readouterr()
    summary = json.loads(out.out)
    assert f"resuming from exported pool version {latest['version']}" in out.err
    assert summary["served"] == 1 and summary["skipped_answered"] == 3 and summary["failed"] == 0
    answers = [json.loads(line) for line in (tmp_path / "online" / "answers.jsonl").read_text().splitlines()]
    assert answers[-1]["id"] == "c" and answers[-1]["text"] == want[2]
    assert min(answers[-1]["versions_at_start"].values()) >= latest["version"]


@pytest.mark.parametrize("extra,msg", [
    (["serve.selection=fixed:nope"], "nope"), (["serve.selection=ucb"], "selection"),
    (["trainer.updater=adagrad"], "updater"), (["serve.oops=1"], "serve.oops"), (["process.fault=explode"], "fault")])
def test_bad_config(tmp_path, pool, extra, msg, capsys):
    reqs = requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}])
    assert online_adapt.main(args(tmp_path, pool, reqs, *extra)) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("error:") == 1
    assert not (tmp_path / "online").exists()  # nothing written


def test_missing_pool(tmp_path, capsys):
    reqs = requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}])
    assert online_adapt.main(args(tmp_path, tmp_path / "nopool", reqs)) == 2
    assert "no pool" in capsys.readouterr().err and not (tmp_path / "online").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _call(url, body=None):
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_http_endpoint(tmp_path, pool, target, capsys):
    """OpenAI-compatible completions and chat completions through the real server (trainer on): greedy answers equal
    plain decoding, refusals are 400s with one message, SIGTERM stops server and trainer cleanly."""
    model, tok = target
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    chat_prompt = domain_prompts("sql")["held_out"][0]["prompt"]
    raw_prompt = "SELECT name FROM users WHERE"
    plain = SpecDecoder(model, mode="plain", stop_ids=stop_token_ids(tok, model))
    want_chat = tok.decode(plain.generate(render_prompt(tok, chat_prompt), NEW)[0], skip_special_tokens=True)
    want_raw = tok.decode(plain.generate(tok(raw_prompt)["input_ids"], NEW)[0], skip_special_tokens=True)
    got = {}
    returned = threading.Event()

    def client():
        while not returned.is_set():  # the server loads the target first
            try:
                if _call(base + "/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.25)
        else:
            return  # main returned without serving (its failure is asserted below): no signal to send
        try:
            got["models"] = _call(base + "/v1/models")
            got["chat"] = _call(base + "/v1/chat/completions",
                                {"model": "x", "messages": [{"role": "user", "content": chat_prompt}]})
            got["raw"] = _call(base + "/v1/completions", {"prompt": raw_prompt, "max_tokens": NEW, "temperature": 0})
            got["hot"] = _call(base + "/v1/completions", {"prompt": raw_prompt, "temperature": 0.7})
            got["zero"] = _call(base + "/v1/completions", {"prompt": raw_prompt, "max_tokens": 0})
            got["stream"] = _call(base + "/v1/chat/completions",
                                  {"messages": [{"role": "user", "content": "hi"}], "stream": True})
            got["route"] = _call(base + "/v1/embeddings", {"input": "x"})
        finally:
            os.kill(os.getpid(), signal.SIGTERM)

    th = threading.Thread(target=client)
    th.start()
    try:
        code = online_adapt.main(args(tmp_path, pool, "unused.jsonl", f"serve.http=127.0.0.1:{port}"))
    finally:
        returned.set()
        th.join()
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["stopped_by"] == "SIGTERM" and summary["served"] == 2 and summary["failed"] == 0
    assert summary["rounds"] >= 1 and len(summary["exports"]) == 1
    status, chat = got["chat"]
    assert status == 200 and chat["object"] == "chat.completion"
    assert chat["choices"][0]["message"]["content"] == want_chat  # lossless at temperature 0
    status, raw = got["raw"]
    assert status == 200 and raw["choices"][0]["text"] == want_raw
    assert raw["usage"]["prompt_tokens"] == len(tok(raw_prompt)["input_ids"])
    assert raw["usage"]["completion_tokens"] <= NEW and raw["choices"][0]["finish_reason"] in ("stop", "length")
    assert raw["draftpool"]["mat"] >= 1.0 and raw["draftpool"]["versions_at_start"]
    assert got["models"][0] == 200
    assert sorted(got["models"][1]["data"][0]["draftpool"]["drafters"]) == ["python-eagle3", "sql-eagle3"]
    assert got["hot"][0] == 400 and "temperature" in got["hot"][1]["error"]["message"]
    assert got["zero"][0] == 400 and "max_tokens" in got["zero"][1]["error"]["message"]
    assert got["stream"][0] == 400 and "stream" in got["stream"][1]["error"]["message"]
    assert got["route"][0] == 404
    answers = [json.loads(line) for line in (tmp_path / "online" / "answers.jsonl").read_text().splitlines()]
    assert [a["id"] for a in answers] == [chat["id"], raw["id"]]


def test_http_bad_address(tmp_path, pool, capsys):
    assert online_adapt.main(args(tmp_path, pool, "unused.jsonl", "serve.http=localhost")) == 2
    assert "host:port" in capsys.readouterr().err and not (tmp_path / "online").exists()
