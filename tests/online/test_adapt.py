"""online_adapt.py end to end on the real embedded target with a two-head pool: answers equal plain greedy decoding,
a malformed request line gets an error record and serving goes on, the trainer exports the adapted pool at stop, a
second run resumes from that version and skips answered requests; bad configuration fails with one message and
writes nothing."""

import io
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
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.forward.sampling import SamplingParams
from draftpool.io import run_lock
from draftpool.models.eagle3 import write_eagle3
from draftpool.pool import update_pool_manifest
from online.serve.requests import read_requests
from specsel.decoding.loop import SpecDecoder
from tests.stubs import random_head

NEW = 10


def two_head_pool(root, model, info):
    for seed, name in enumerate(("sql-eagle3", "python-eagle3")):
        head = random_head(model, info, seed, 1024)
        meta = {"kind": "eagle3", "target_weights_sha256": info.weights_sha256}
        write_eagle3(head, root / name, info, meta)
        update_pool_manifest(root, info, name, {"kind": "eagle3", "path": name, "domain": name[:-7]})
    return root


@pytest.fixture(scope="module")
def pool(tmp_path_factory, target, target_info):
    """Two random heads of the real target (the second tier's end-to-end runs)."""
    return two_head_pool(tmp_path_factory.mktemp("adapt") / "pool", target[0], target_info)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, tiny_real_target, tiny_target_info):
    """(a pool of two random heads of the tiny real-vocabulary target, the `serve.target=` that serves it): for the
    fast tier's checks of what happens around the decode loop (answers files, configuration, locks)."""
    root = two_head_pool(tmp_path_factory.mktemp("adapt-tiny") / "pool", tiny_real_target[0], tiny_target_info)
    return root, f"serve.target={tiny_target_info.name}"


def requests(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def args(tmp_path, pool, reqs, *extra):
    return [f"serve.pool={pool}", f"serve.out_dir={tmp_path}/online", f"serve.requests={reqs}",
            f"serve.max_new_tokens={NEW}", "trainer.batch=1", "trainer.holdout_every=0", "trainer.lr=0.001",
            "process.export_every=0", f"serve.auto_costs={tmp_path}/auto_costs.json", *extra]


def tiny_args(tmp_path, tiny, reqs, *extra):
    """args() for the tiny real-vocabulary target's pool (the `tiny` fixture), served by that target."""
    pool, target = tiny
    return args(tmp_path, pool, reqs, target, *extra)


@pytest.mark.tier2
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
    # serving began once the trainer had started, and the log says its rounds take the server's cores
    assert "trainer ready in" in out.err and "slow serving while they run" in out.err
    answers = [json.loads(line) for line in (tmp_path / "online" / "answers.jsonl").read_text().splitlines()]
    assert [a["id"] for a in answers] == ["a", None, "b"]  # a bad line has no id a request could also use
    assert [answers[0]["text"], answers[2]["text"]] == want[:2]  # lossless at temperature 0
    assert "error" in answers[1] and answers[1]["line"] == 2
    # serve.mode auto measured its costs once: the two heads have one shape, so one cache entry
    assert len(json.loads((tmp_path / "auto_costs.json").read_text())) == 1
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


BAD_LINES = [
    b'{"id": "ok", "prompt": "hi"}',
    b'{"id": "bytes", "prompt": "caf\xe9 \xed\xa0\x80"}',  # latin-1 and a CESU surrogate: not UTF-8
    b'{"id": "alias", "prompt": "hi", "max_tokens": 4}',
    b'{"id": "both", "prompt": "hi", "max_tokens": 4, "max_new_tokens": 5}',
    b'{"id": "same", "prompt": "hi", "max_tokens": 4, "max_new_tokens": 4}',
    b'{"id": "typo", "prompt": "hi", "max_token": 4}',
    b'{"id": "ok", "prompt": "again"}',
    b'{"id": "lone", "prompt": "a \\ud800 b"}',
    b'{"id": "\\udfff", "prompt": "hi"}',
    b'{"id": "float", "prompt": "hi", "max_new_tokens": 4.5}',
    b'{"id": ["x"], "prompt": "hi"}',
    b'',
    b'{"prompt": "no id"}',
]


def test_request_lines_each_get_a_record_or_an_error_naming_the_line():
    reqs = list(read_requests(io.BytesIO(b"\n".join(BAD_LINES) + b"\n"), 30, set()))
    good = {r.id: r.max_new_tokens for r in reqs if r.error is None}
    assert good == {"ok": 30, "alias": 4, "same": 4, "line-13": 30}  # max_tokens is max_new_tokens' alias
    errors = {r.line: r.error for r in reqs if r.error is not None}
    assert all(r.id is None for r in reqs if r.error is not None)  # no user-space id: "line-N" is a request's
    assert sorted(errors) == [2, 4, 6, 7, 8, 9, 10, 11]
    assert "not valid UTF-8 (byte 0xe9" in errors[2] and "disagree" in errors[4] and "'max_token'" in errors[6]
    assert "already used at line 1" in errors[7] and "not valid Unicode" in errors[8] and '"id"' in errors[9]
    assert "max_new_tokens must be an integer" in errors[10] and '"id" must be' in errors[11]
    assert all(e.startswith(f"request line {n}: ") for n, e in errors.items())
    # a rerun skips what the first run recorded (answers by id, bad lines by number): nothing is recorded twice
    ids, lines = {r.id for r in reqs if r.error is None}, {r.line for r in reqs if r.error is not None}
    assert list(read_requests(io.BytesIO(b"\n".join(BAD_LINES)), 30, ids, lines)) == []


def _records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.tier2
def test_stdin_bad_lines_and_a_stop_mid_decode_then_a_rerun(tmp_path, pool, target, capsys, monkeypatch):
    """Through the real server (serve.requests=-, adapt off): every bad line gets its one record; max_tokens is
    honoured; SIGTERM mid-decode stops the run at once and the interrupted request gets no record; the rerun serves it
    and records nothing twice."""
    model, tok = target
    long_prompt = "Write a very long story about a dragon who learns to cook, with many chapters."
    lines = BAD_LINES[:11] + [json.dumps({"id": "huge", "prompt": "hi", "max_tokens": 10**7}).encode(),
                              json.dumps({"id": "long", "prompt": long_prompt, "max_new_tokens": 120}).encode(),
                              json.dumps({"id": "after", "prompt": "hi", "max_new_tokens": 3}).encode()]
    data = b"\n".join(lines) + b"\n"
    run = args(tmp_path, pool, "-", "serve.adapt=false")
    answers = tmp_path / "online" / "answers.jsonl"

    def stop_during_long():
        while not answers.is_file() or '"huge"' not in answers.read_text():
            time.sleep(0.05)
        time.sleep(1.0)  # "long" is being decoded
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    th = threading.Thread(target=stop_during_long)
    th.start()
    try:
        assert online_adapt.main(run) == 0
    finally:
        th.join()
    summary = json.loads(capsys.readouterr().out)
    assert summary["stopped_by"] == "SIGTERM" and summary["failed"] == 0
    got = _records(answers)
    ids = [r["id"] for r in got]
    assert "long" not in ids and "after" not in ids  # interrupted: no record, so a restart serves it
    assert ids == ["ok", None, "alias", None, "same", None, None, None, None, None, None, "huge"]
    assert [r["line"] for r in got if r["id"] is None] == [2, 4, 6, 7, 8, 9, 10, 11]
    by_id = {r["id"]: r for r in got}
    assert by_id["alias"]["new_tokens"] <= 4 and by_id["ok"]["new_tokens"] > 4  # max_tokens honoured, not ignored
    assert "context" in by_id["huge"]["error"] and by_id["huge"]["line"] == 12
    assert summary["served"] == 3 and summary["errors"] == 9

    # the rerun reads the same lines, "long" asking for fewer tokens (120 only kept it decoding until the SIGTERM)
    rerun = lines[:-2] + [json.dumps({"id": "long", "prompt": long_prompt, "max_new_tokens": 32}).encode(), lines[-1]]
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"\n".join(rerun) + b"\n")))
    assert online_adapt.main(run) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["stopped_by"] == "end of requests" and summary["served"] == 2 and summary["errors"] == 0
    assert [r["id"] for r in _records(answers)] == ids + ["long", "after"]  # nothing recorded twice
    plain = SpecDecoder(model, mode="plain", stop_ids=stop_token_ids(tok, model))
    want = tok.decode(plain.generate(render_prompt(tok, long_prompt), 32)[0], skip_special_tokens=True)
    assert _records(answers)[-2]["text"] == want


@pytest.mark.tier2
def test_a_request_whose_id_looks_like_a_bad_lines_record_is_served_after_a_restart(tmp_path, pool, capsys):
    """Bad line 2 is recorded by its line number, not as id "line-2": a request "line-2" added before a restart (an
    appended input) is served, not taken for that bad line; nothing is recorded twice."""
    run = args(tmp_path, pool, tmp_path / "r.jsonl", "serve.adapt=false")
    requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}, "{not json"])
    assert online_adapt.main(run) == 0
    assert json.loads(capsys.readouterr().out)["errors"] == 1
    requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}, "{not json", {"id": "line-2", "prompt": "hello"}])
    assert online_adapt.main(run) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["served"] == 1 and summary["errors"] == 0 and summary["skipped_answered"] == 2
    got = _records(tmp_path / "online" / "answers.jsonl")
    assert [(r["id"], r.get("line")) for r in got] == [("a", None), (None, 2), ("line-2", None)]
    assert got[2]["new_tokens"] > 0


@pytest.mark.parametrize("content", [b"# my notes\nnot an answers file", b'{"id": "a"}\n{"prompt": "x"}\n',
                                     b'{"id": "a"}\n{oops\n{"id": "b"}\n', b'{"id": "a"}\n[1, 2]',
                                     b'{"id": "q1", "question": "What is 2 + 2?", "answer": "4"}\n'])
def test_a_file_that_is_not_an_answers_file_is_refused_untouched(tmp_path, tiny, content, capsys):
    """serve.answers naming some other file (or a corrupt answers file): one error naming the file and line, the file
    unchanged (it was once cut to its last newline; a dataset with string ids was appended to), nothing served."""
    other = tmp_path / "notes.txt"
    other.write_bytes(content)
    reqs = requests(tmp_path / "r.jsonl", [{"id": "z", "prompt": "hi"}])
    assert online_adapt.main(tiny_args(tmp_path, tiny, reqs, "serve.adapt=false", f"serve.answers={other}")) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "Traceback" not in err
    assert f"{other} line " in err and "not an answers record of online_adapt" in err
    assert other.read_bytes() == content


def test_the_requests_file_as_serve_answers_is_refused(tmp_path, tiny, capsys):
    """serve.answers naming the requests file itself: its requests were taken for answered ones (served 0, exit 0).
    Now one error naming the file and line 1, exit 2, the file unchanged, no summary."""
    reqs = requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}, {"id": "b", "prompt": "ho"}])
    before = reqs.read_bytes()
    assert online_adapt.main(tiny_args(tmp_path, tiny, reqs, "serve.adapt=false", f"serve.answers={reqs}")) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("error:") == 1 and f"{reqs} line 1 is not an answers record" in out.err
    assert reqs.read_bytes() == before and not (tmp_path / "online" / "answers.jsonl").exists()


def test_an_answers_file_of_every_record_kind_is_resumed(tmp_path, tiny, capsys):
    """An answers file as the JSONL and HTTP front ends write it (answers, an HTTP answer with its end versions, a
    cancelled one, failed requests with and without a line, a bad line) is accepted: a restart skips what it records,
    serves the rest and appends."""
    recorded = [{"id": "a", "text": "Hello", "new_tokens": 2, "mat": 1.5, "tok_s": 4.0, "seconds": 0.5,
                 "versions_at_start": {"sql-eagle3": 0, "python-eagle3": 0}},
                {"id": "cmpl-1", "text": " x", "new_tokens": 1, "mat": None, "tok_s": None, "seconds": 0.0,
                 "versions_at_start": {"sql-eagle3": 0}, "versions_at_end": {"sql-eagle3": 3}},
                {"id": "cmpl-2", "text": "", "new_tokens": 0, "mat": None, "tok_s": None, "seconds": 0.1,
                 "versions_at_start": {"sql-eagle3": 3}, "versions_at_end": {"sql-eagle3": 3},
                 "cancelled": "the client closed the connection: decoding stopped early"},
                {"id": "huge", "line": 2, "error": "request line 2: beyond the target's context"},
                {"id": "chatcmpl-3", "error": "RuntimeError: boom"},
                {"id": None, "line": 3, "error": "request line 3: Expecting value"}]
    (tmp_path / "online").mkdir()
    answers = requests(tmp_path / "online" / "answers.jsonl", recorded)
    reqs = requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}, {"id": "huge", "prompt": "x"}, "{not json",
                                           {"id": "b", "prompt": "ho"}])
    assert online_adapt.main(tiny_args(tmp_path, tiny, reqs, "serve.adapt=false")) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["served"] == 1 and summary["errors"] == 0 and summary["skipped_answered"] == 6
    got = _records(answers)
    assert got[:-1] == recorded and got[-1]["id"] == "b" and got[-1]["new_tokens"] > 0


@pytest.mark.parametrize("extra,msg", [
    (["serve.selection=fixed:nope"], "nope"), (["serve.selection=ucb"], "selection"),
    (["serve.selection=per_cycle", "serve.mode=tree"], "per_cycle"), (["serve.selection=per_cycle"], "model-free"),
    (["serve.dtype=float16"], "serve.dtype"), (["serve.dtype=bfloat16", "serve.engine=vllm"], "serve.dtype"),
    (["trainer.updater=adagrad"], "updater"), (["serve.oops=1"], "serve.oops"),
    (["process.fault=crash_after:1"], "process.fault"), (["process.threads=0"], "process.threads"),
    (["trainer.lr=-1"], "trainer.lr"), (["trainer.holdout_every=-1"], "holdout_every"),
    (["trainer.optimizer=lion"], "optimizer"), (["process.export_every=-2"], "export_every"),
    (["process.device=cuda:7"], "cuda:7"), (["serve.device=tpu"], "tpu"), (["serve.target=NOTMODEL"], "config"),
    (["serve.top_k=8"], "serve.top_k was renamed to serve.feedback_top_k")])
def test_bad_config(tmp_path, tiny, extra, msg, capsys):
    reqs = requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}])
    (tmp_path / "notmodel").mkdir()
    (tmp_path / "notmodel" / "config.json").write_text('{"hidden": 1}')
    extra = [e.replace("NOTMODEL", str(tmp_path / "notmodel")) for e in extra]
    assert online_adapt.main(tiny_args(tmp_path, tiny, reqs, *extra)) == 2
    err = capsys.readouterr().err
    assert msg in err and err.count("error:") == 1
    assert not (tmp_path / "online").exists()  # nothing written


def test_one_run_per_out_dir(tmp_path, tiny, capsys):
    reqs = requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}])
    with run_lock(tmp_path / "online"):  # another run holds it
        assert online_adapt.main(tiny_args(tmp_path, tiny, reqs)) == 2
    assert "in use by another run" in capsys.readouterr().err
    assert not (tmp_path / "online" / "answers.jsonl").exists()


def test_missing_pool(tmp_path, capsys):
    reqs = requests(tmp_path / "r.jsonl", [{"id": "a", "prompt": "hi"}])
    assert online_adapt.main(args(tmp_path, tmp_path / "nopool", reqs)) == 2
    assert "no pool" in capsys.readouterr().err and not (tmp_path / "online").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _call(url, body=None, key=None):
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
    req = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


COUNTING = "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,"


def _stalled_body(port: int) -> bytes:
    """Send a request whose body never comes in full; -> what the server answers (before closing)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"prompt\": ")
        reply = b""
        while chunk := sock.recv(4096):
            reply += chunk
        return reply


@pytest.mark.tier2
def test_http_endpoint(tmp_path, pool, target, capsys):
    """OpenAI-compatible completions and chat completions through the real server (trainer on): greedy answers equal
    plain decoding, a seeded sampled request is answered the same twice (plain keyed sampling's answer) while the
    trainer learns, refusals are 400s with one message, a stalled body gets a 408 and serving goes on, SIGTERM during
    a decode with serve.drain_s=0 stops server and trainer at once, cleanly: the request in flight and the one queued
    get 503s, no record (the drain: test_http_sigterm_drains_what_was_accepted)."""
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
                                {"messages": [{"role": "user", "content": chat_prompt}]})
            got["raw"] = _call(base + "/v1/completions", {"prompt": raw_prompt, "max_tokens": NEW, "temperature": 0})
            got["hot"] = _call(base + "/v1/completions", {"prompt": raw_prompt, "temperature": 0.7})
            seeded = {"prompt": raw_prompt, "temperature": 0.7, "seed": 5, "max_tokens": NEW}
            got["seeded"] = [_call(base + "/v1/completions", seeded) for _ in range(2)]  # the trainer learns between
            got["zero"] = _call(base + "/v1/completions", {"prompt": raw_prompt, "max_tokens": 0})
            got["n"] = _call(base + "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "n": 2})
            got["route"] = _call(base + "/v1/embeddings", {"input": "x"})
            got["penalty"] = _call(base + "/v1/completions", {"prompt": raw_prompt, "presence_penalty": 0.5})
            got["unknown"] = _call(base + "/v1/completions", {"prompt": raw_prompt, "logit_bias": {"5": 1}})
            got["huge"] = _call(base + "/v1/completions", {"prompt": raw_prompt, "max_tokens": 10**7})
            got["context"] = _call(base + "/v1/completions", {"prompt": "word " * 9000, "max_tokens": 1})
            got["stalled"] = _stalled_body(port)
            got["after_stall"] = _call(base + "/health")
            # a long request in flight and one queued behind it when SIGTERM comes: both 503, then no server
            for name, body in (("in_flight", {"prompt": COUNTING, "max_tokens": 1500}),
                               ("queued", {"prompt": raw_prompt, "max_tokens": NEW})):
                threading.Thread(target=lambda n=name, b=body: got.__setitem__(n, _call(base + "/v1/completions", b)),
                                 daemon=True).start()
                time.sleep(1.5)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)

    th = threading.Thread(target=client)
    th.start()
    try:
        code = online_adapt.main(args(tmp_path, pool, "unused.jsonl", f"serve.http=127.0.0.1:{port}",
                                      "serve.http_timeout=1", "serve.drain_s=0"))  # no drain: the stop at once
    finally:
        returned.set()
        th.join()
    deadline = time.time() + 30
    while not {"in_flight", "queued"} <= set(got) and time.time() < deadline:
        time.sleep(0.1)
    with pytest.raises(OSError):  # stopped: nothing listens any more
        _call(base + "/health")
    summary = json.loads(capsys.readouterr().out)
    assert code == 0 and summary["stopped_by"] == "SIGTERM" and summary["served"] == 5 and summary["failed"] == 0
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
    # a request's own temperature is served (trainer on: its feedback is the target's distribution, as any other)
    assert got["hot"][0] == 200 and got["hot"][1]["usage"]["completion_tokens"] >= 1
    assert got["zero"][0] == 400 and "max_tokens" in got["zero"][1]["error"]["message"]
    assert got["n"][0] == 400 and "n and best_of" in got["n"][1]["error"]["message"]
    assert got["route"][0] == 404
    assert got["penalty"][0] == 400 and "presence_penalty" in got["penalty"][1]["error"]["message"]
    assert got["unknown"][0] == 400 and "logit_bias" in got["unknown"][1]["error"]["message"]
    for key in ("huge", "context"):  # the caller's mistake, not a server error
        assert got[key][0] == 400 and "context" in got[key][1]["error"]["message"], got[key]
    assert got["stalled"].startswith(b"HTTP/1.1 408") and got["after_stall"][0] == 200
    assert got["in_flight"][0] == 503 and got["queued"][0] == 503
    answers = [json.loads(line) for line in (tmp_path / "online" / "answers.jsonl").read_text().splitlines()]
    assert [a["id"] for a in answers] == [chat["id"], raw["id"], got["hot"][1]["id"]] + \
        [r[1]["id"] for r in got["seeded"]]
    # a seeded sampled request, trainer on: the same text both times, plain keyed sampling's with that seed
    ids = tok(raw_prompt)["input_ids"]
    keyed = plain.generate(ids, NEW, SamplingParams(0.7), seed=5, keyed=True)[0]
    assert [r[0] for r in got["seeded"]] == [200, 200]
    assert [r[1]["choices"][0]["text"] for r in got["seeded"]] == [tok.decode(keyed, skip_special_tokens=True)] * 2
    assert answers[2]["sampling"]["temperature"] == 0.7 and "sampling" not in answers[0]


@pytest.mark.tier2
def test_http_sigterm_drains_what_was_accepted(tmp_path, pool, target):
    """The CLI with serve.adapt=false (no trainer to wait for at stop): SIGTERM mid-decode drains: the request in
    flight and the one queued behind it are answered in full (their greedy answers), one sent after the signal gets
    a 503, then the process ends (SIGTERM in its summary); the API key from the environment is asked for."""
    import subprocess
    import sys
    from pathlib import Path

    model, tok = target
    root = Path(__file__).resolve().parents[2]
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "online_adapt.py", *args(tmp_path, pool, "unused.jsonl",
                                                                      f"serve.http=127.0.0.1:{port}",
                                                                      "serve.adapt=false", "serve.drain_s=600")],
                            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(root), "DRAFTPOOL_API_KEY": "k"})
    got = {}
    asks = {"in_flight": {"prompt": COUNTING, "max_tokens": 96}, "queued": {"prompt": COUNTING, "max_tokens": 8}}
    try:
        t0 = time.time()
        while True:
            assert proc.poll() is None and time.time() - t0 < 300, proc.stderr.read() if proc.poll() else "timeout"
            try:
                if _call(base + "/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.25)
        got["no_key"] = _call(base + "/v1/completions", {"prompt": COUNTING, "max_tokens": 4})
        threads = []
        for name, body in asks.items():
            threads.append(threading.Thread(target=lambda n=name, b=body: got.__setitem__(n, _call(
                base + "/v1/completions", {**b, "temperature": 0}, key="k")), daemon=True))
            threads[-1].start()
            time.sleep(1.0)  # the first decoding its 96 tokens, the second queued behind it
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        try:
            got["late"] = _call(base + "/v1/completions", {"prompt": COUNTING, "max_tokens": 4}, key="k")
        except OSError as e:  # the drain ended before this request came: nothing listens any more
            got["late"] = (None, str(e))
        out, err = proc.communicate(timeout=600)
        for th in threads:
            th.join(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err[-3000:]
    summary = json.loads(out)
    assert summary["stopped_by"] == "SIGTERM" and summary["served"] == 2 and summary["failed"] == 0
    assert "SIGTERM: no new requests" in err
    assert got["no_key"][0] == 401
    plain = SpecDecoder(model, mode="plain", stop_ids=stop_token_ids(tok, model))
    for name, body in asks.items():  # answered in full: the greedy answer, not a cut one
        status, reply = got[name]
        assert status == 200, (name, got[name])
        want = plain.generate(tok(body["prompt"])["input_ids"], body["max_tokens"])[0]
        assert reply["choices"][0]["text"] == tok.decode(want, skip_special_tokens=True), name
    assert got["late"][0] in (503, None), got["late"]  # refused, or the server was gone already
    if got["late"][0] == 503:
        assert "shutting down" in got["late"][1]["error"]["message"]


def test_http_bad_address(tmp_path, tiny, capsys):
    assert online_adapt.main(tiny_args(tmp_path, tiny, "unused.jsonl", "serve.http=localhost")) == 2
    assert "host:port" in capsys.readouterr().err and not (tmp_path / "online").exists()


def test_server_threads_zero_takes_the_cores_the_trainer_leaves():
    """serve.threads 0: every core while the trainer waits; while it computes beside the server at the server's
    priority, the cores less its threads (a niced trainer or adaptation off: every core); a number given is taken
    as it is."""
    import os

    from online.config import AdaptConfig
    from online.trainer.process import server_threads

    cores = len(os.sched_getaffinity(0))
    cfg = AdaptConfig()
    cfg.serve.threads, cfg.serve.adapt, cfg.process.nice, cfg.process.threads = 0, True, 0, 1
    assert server_threads(cfg) == (cores, max(1, cores - 1))
    cfg.process.nice = 19
    assert server_threads(cfg) == (cores, cores)
    cfg.process.nice, cfg.serve.adapt = 0, False
    assert server_threads(cfg) == (cores, cores)
    cfg.serve.threads = 3
    assert server_threads(cfg) == (3, 3)
