"""The native server's Prometheus metrics (online/serve/metrics.py) and per-request speculative figures: the counters
equal what the decoded requests' own cycles add up to (counted here, not with spec_counts), the scrape-time gauges read
the state at the scrape, and through the real serve loop and HTTP front end: GET /metrics behind the API key, its
counters equal to the answers' cycles exactly, `spec_metrics: true` replies (whole and streamed) equal to that
request's counter increments, and the run's last scrape in metrics.prom."""

from __future__ import annotations

import json
import os
import queue
import signal
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from prometheus_client.parser import text_string_to_metric_families

from draftpool.forward.sampling import SamplingParams
from draftpool.models.suffix import NgramModel
from online.config import ServeConfig
from online.http.api import HttpFrontend
from online.serve.loop import serve
from online.serve.metrics import ServerMetrics
from online.serve.request import Request, Served
from online.serve.server import AdaptiveServer, ServingBase
from online.trainer.hotswap import HotSwap
from online.trainer.token_trainer import trainable
from online.trainer.weights import WeightBoard
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import FixedSelector, SpecDecoder
from specsel.decoding.suffix import NgramDrafter
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector
from tests.stubs import BigramLM, successor_table

V = 16
NAMES = ["ngram", "half"]
P = "draftpool:"


def decoder() -> SpecDecoder:
    """An n-gram drafter (nothing to draft until the target's 16-cycle repeats) and a drafter right two times in
    three, under NormalHedge: empty drafts, varied accepted lengths, both drafters drafting."""
    pool = {"ngram": NgramDrafter(NgramModel(V)),
            "half": LlamaDrafter(BigramLM(successor_table(V, lambda t: (t + 1) % V if t % 3 else 0)))}
    return SpecDecoder(BigramLM(successor_table(V, lambda t: (t + 1) % V)), pool,
                       selector=Selector(make_learner("normal_hedge", 2), 2, 4), mode="chain", k=4)


def expected(recs: list[Served], names: list[str] = NAMES) -> dict:
    """vLLM's counts straight from the records' cycles: a draft is a cycle that drafted >= 1 token; position j of a
    draft is accepted when the cycle accepted more than j tokens."""
    out = {n: {"num_drafts": 0, "num_draft_tokens": 0, "num_accepted_tokens": 0, "per_pos": {}} for n in names}
    for rec in recs:
        m = rec.metrics
        for n_acc, i, n_draft in zip(m["accepted"], m["choices"], m["draft_len"], strict=True):
            if n_draft:
                c = out[names[i]]
                c["num_drafts"] += 1
                c["num_draft_tokens"] += n_draft
                c["num_accepted_tokens"] += n_acc
                for j in range(n_acc):
                    c["per_pos"][j] = c["per_pos"].get(j, 0) + 1
    return out


def samples(text: str) -> dict[tuple[str, tuple], float]:
    """(sample name, sorted labels) -> value of a Prometheus text exposition (prometheus_client's own parser)."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for fam in text_string_to_metric_families(text) for s in fam.samples}


def total(vals: dict, name: str, **labels) -> float:
    """Sum of the samples of `name` whose labels include `labels`."""
    return sum(v for (n, lab), v in vals.items() if n == name and set(labels.items()) <= set(lab))


def spec_of(vals: dict, names: list[str] = NAMES) -> dict:
    """The scrape's spec-decode counters in `expected`'s shape."""
    out = {}
    for n in names:
        out[n] = {key: total(vals, f"{P}spec_decode_{key}_total", drafter=n)
                  for key in ("num_drafts", "num_draft_tokens", "num_accepted_tokens")}
        out[n]["per_pos"] = {int(dict(lab)["position"]): v for (name, lab), v in vals.items()
                             if name == f"{P}spec_decode_num_accepted_tokens_per_pos_total" and
                             dict(lab)["drafter"] == n}
    return out


PROMPTS = [[3], [5, 6, 7], list(range(V)) + [0, 1], [9, 9], [2, 4, 6, 8, 10, 12, 14, 0, 2, 4]]


def test_counters_equal_the_cycles_of_the_requests_decoded():
    """Requests through a real pool decoder: the counters (the accessor and the text exposition, which read the same
    prometheus objects) equal the sums over the requests' cycles; failures and lookahead records count apart."""
    server = AdaptiveServer(decoder(), dict.fromkeys(NAMES), None, SamplingParams())
    metrics = ServerMetrics.of(server)
    recs = []
    for i, prompt in enumerate(PROMPTS):
        rec = server.serve(Request(f"r{i}", prompt, 40))
        metrics.observe_request(rec, len(prompt))
        recs.append(rec)
    want = expected(recs)
    assert all(want[n]["num_drafts"] > 0 for n in NAMES)  # both drafted: the check below covers two drafters
    assert sum(m.metrics["draft_len"].count(0) for m in recs) > 0  # and cycles that drafted nothing
    assert max(j for n in NAMES for j in want[n]["per_pos"]) >= 1  # and drafts accepted past position 0
    got = metrics.counters()
    for n in NAMES:
        c = got["spec"][n]
        assert {k: c[k] for k in ("num_drafts", "num_draft_tokens", "num_accepted_tokens")} == \
            {k: want[n][k] for k in ("num_drafts", "num_draft_tokens", "num_accepted_tokens")}
        assert dict(enumerate(c["accepted_per_pos"])) == {j: want[n]["per_pos"].get(j, 0)
                                                         for j in range(len(c["accepted_per_pos"]))}
        assert len(c["accepted_per_pos"]) == max(want[n]["per_pos"]) + 1
    assert sum(c["num_accepted_tokens"] for c in got["spec"].values()) == sum(sum(r.metrics["accepted"])
                                                                             for r in recs)
    vals = samples(metrics.exposition().decode())
    assert spec_of(vals) == {n: {**{k: float(v) for k, v in want[n].items() if k != "per_pos"},
                                 "per_pos": {j: float(v) for j, v in want[n]["per_pos"].items()}} for n in NAMES}
    assert got["requests_served"] == len(PROMPTS) == vals[(f"{P}request_success_total", ())]
    assert got["generation_tokens"] == sum(len(r.tokens) for r in recs) == 40 * len(PROMPTS)
    assert got["prompt_tokens"] == sum(map(len, PROMPTS))
    assert vals[(f"{P}request_inference_time_seconds_count", ())] == len(PROMPTS)
    assert vals[(f"{P}request_inference_time_seconds_sum", ())] == pytest.approx(sum(r.seconds for r in recs))
    assert vals[(f"{P}request_tokens_per_second_count", ())] == len(PROMPTS)
    weights = {dict(lab)["drafter"]: v for (n, lab), v in vals.items() if n == f"{P}selection_weight"}
    assert weights == dict(zip(NAMES, server.dec.selector.probabilities()))
    assert sum(weights.values()) == pytest.approx(1.0)

    metrics.observe_request(Served("bad", error="RuntimeError: boom"))
    metrics.observe_request(Served(None, line=3, error="request line 3: Expecting value", refused=True))
    after = metrics.counters()
    assert after["requests_failed"] == 2 and after["requests_served"] == len(PROMPTS)
    assert after["spec"] == got["spec"] and after["generation_tokens"] == got["generation_tokens"]


def test_lookahead_records_count_requests_and_tokens_only():
    """Lookahead mode drafts no tokens: no spec drafters, its requests and tokens still count."""
    metrics = ServerMetrics.of(ServingBase(None, {}))  # a lookahead server without a trainer: no spec drafters
    metrics.observe_request(Served("la", [1, 2, 3], {"lookahead": {"rounds": 2}}, 0.5, pairs=0), 7)
    vals = samples(metrics.exposition().decode())
    assert metrics.counters() == {"requests_served": 1, "requests_failed": 0, "prompt_tokens": 7,
                                  "generation_tokens": 3, "spec": {}}
    assert not [k for k in vals if k[0].startswith(f"{P}spec_decode") or k[0] == f"{P}selection_weight"]
    assert vals[(f"{P}request_tokens_per_second_sum", ())] == 6.0


def test_scrape_time_gauges_read_the_current_state(tmp_path):
    """Queue depth, selection weights, drafter versions and their ages, trainer restarts / faults / skipped /
    dropped: read when a scrape asks, so the next scrape sees a change made in between."""
    modules = {n: torch.nn.Linear(2, 2) for n in NAMES}
    boards = {n: WeightBoard(trainable(m)) for n, m in modules.items()}
    swap = HotSwap(boards, modules, start=3)
    handle = SimpleNamespace(restarts=0, faults=[], skipped=0, dropped=0)
    front = SimpleNamespace(queue=queue.Queue())
    server = AdaptiveServer(decoder(), dict.fromkeys(NAMES), None, SamplingParams())
    server.swap = swap  # the versions a trainer's swap would serve
    metrics = ServerMetrics.of(server, handle, front)
    first = samples(metrics.exposition().decode())
    assert first[(f"{P}num_requests_waiting", ())] == 0
    assert {n: first[(f"{P}drafter_version", (("drafter", n),))] for n in NAMES} == {"ngram": 3, "half": 3}
    assert first[(f"{P}trainer_restarts_total", ())] == 0 and first[(f"{P}feedback_dropped_records_total", ())] == 0
    assert [first[(f"{P}selection_weight", (("drafter", n),))] for n in NAMES] == [0.5, 0.5]
    time.sleep(0.2)
    boards["half"].publish({k: v + 1 for k, v in trainable(modules["half"]).items()}, 4)
    assert swap.poll() == [1]
    front.queue.put("job")
    front.queue.put("job")
    handle.restarts, handle.skipped, handle.dropped = 1, 5, 2
    handle.faults.append({"kind": "crash"})
    server.dec.selector.learner.update([1.0, 0.0])  # "half" lost nothing
    now = samples(metrics.exposition().decode())
    assert now[(f"{P}num_requests_waiting", ())] == 2
    assert now[(f"{P}drafter_version", (("drafter", "half"),))] == 4
    assert now[(f"{P}drafter_version", (("drafter", "ngram"),))] == 3
    age = {n: now[(f"{P}drafter_version_age_seconds", (("drafter", n),))] for n in NAMES}
    assert age["ngram"] >= 0.2 > age["half"] >= 0  # "half" was swapped in just now
    assert (now[(f"{P}trainer_restarts_total", ())], now[(f"{P}trainer_faults_total", ())],
            now[(f"{P}trainer_skipped_records_total", ())], now[(f"{P}feedback_dropped_records_total", ())]) == \
        (1, 1, 5, 2)
    w = [now[(f"{P}selection_weight", (("drafter", n),))] for n in NAMES]
    assert w == server.dec.selector.probabilities() and w[1] > w[0]
    # a fixed selection reports 1 for its drafter
    server.dec.set_selector(FixedSelector(1))
    fixed = samples(metrics.exposition().decode())
    assert [fixed[(f"{P}selection_weight", (("drafter", n),))] for n in NAMES] == [0.0, 1.0]
    server.dec.set_selector(Selector(make_learner("fixed", 2, arm=0), 2, 4, reward="none"))
    fixed = samples(metrics.exposition().decode())
    assert [fixed[(f"{P}selection_weight", (("drafter", n),))] for n in NAMES] == [1.0, 0.0]
    # a source that fails leaves its family out of that scrape, not the scrape
    front.queue = None
    assert (f"{P}num_requests_waiting", ()) not in samples(metrics.exposition().decode())
    # the file copy: atomic (no temporary file left), the same exposition
    path = metrics.write(tmp_path / "metrics.prom")
    assert samples(path.read_text())[(f"{P}drafter_version", (("drafter", "half"),))] == 4
    assert [p.name for p in tmp_path.iterdir()] == ["metrics.prom"]


# --------------------------------------------------------------------------------------- through the serve loop


class CharTok:
    """A tokenizer of the 16-token stub vocabulary: one token per character (its code mod 16)."""

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": [ord(c) % V for c in text]}

    def decode(self, ids, skip_special_tokens=True):
        return "".join(chr(ord("a") + i) for i in ids)


KEY = "s3cret"


def call(base: str, path: str, body: dict | None = None, key: str | None = KEY) -> tuple[int, str, str]:
    """-> (status, content type, body text)."""
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
    req = urllib.request.Request(base + path, data=None if body is None else json.dumps(body).encode(),
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers.get("content-type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("content-type", ""), e.read().decode()


def stream_draftpool(text: str) -> dict:
    """A streamed answer's events -> the draftpool object of its last chunk (the one with the finish reason)."""
    events = [json.loads(e[len("data: "):]) for e in text.split("\n\n") if e.startswith("data: {")]
    assert text.rstrip().endswith("data: [DONE]")
    last = [e for e in events if e["choices"] and e["choices"][0]["finish_reason"]]
    assert len(last) == 1 and all("draftpool" not in e for e in events if e is not last[0])
    return last[0]["draftpool"]


def scraped(base: str) -> dict:
    status, kind, text = call(base, "/metrics")
    assert status == 200 and kind.startswith("text/plain"), (status, kind, text)
    return samples(text)


def test_http_metrics_behind_the_key_equal_the_answers_and_per_request_spec(tmp_path):
    """The real serve loop behind the HTTP front end with an API key: /metrics needs the key (/health does not), its
    counters equal the served requests' cycles exactly, a `spec_metrics: true` reply (whole or streamed) carries
    that request's counts, equal to the counters' increments over it, a request without it has no "spec", and the
    run ends with its last scrape in metrics.prom."""
    server = AdaptiveServer(decoder(), dict.fromkeys(NAMES), None, SamplingParams())
    recs = []
    real = server.serve

    def serve_one(req):  # the requests decoded, as the serve loop gets them
        served = real(req)
        if served.ok:
            recs.append(served)
        return served

    server.serve = serve_one
    front = HttpFrontend("127.0.0.1:0", "stub", NAMES, 0.0, 24, timeout=5.0, api_key=KEY)
    base = front.address
    got: dict = {}
    returned = threading.Event()

    def client():
        try:
            deadline = time.time() + 60
            while not returned.is_set() and time.time() < deadline:
                try:
                    if call(base, "/health", key=None)[0] == 200:
                        break
                except OSError:
                    time.sleep(0.05)
            got["health"] = call(base, "/health", key=None)
            got["no_key"] = call(base, "/metrics", key=None)
            got["wrong_key"] = call(base, "/metrics", key="wrong")
            got["before"] = scraped(base)
            got["plain"] = call(base, "/v1/completions", {"prompt": "abcdefghijklmnopabcdef", "max_tokens": 24})
            got["stream_plain"] = call(base, "/v1/completions", {"prompt": "hello world", "stream": True})
            got["mid"] = scraped(base)
            got["spec"] = call(base, "/v1/completions", {"prompt": "abcabcabcabc", "spec_metrics": True})
            got["after_spec"] = scraped(base)
            got["stream_spec"] = call(base, "/v1/completions", {"prompt": "0123456789abcdef01", "stream": True,
                                                                 "spec_metrics": True, "max_tokens": 20})
            got["after_stream"] = scraped(base)
            got["bad"] = call(base, "/v1/completions", {"prompt": "x", "spec_metrics": "yes"})
            got["context"] = call(base, "/v1/completions", {"prompt": "y" * 250, "max_tokens": 24})  # > 256 tokens
            got["probe"] = call(base, "/admin/x1", key=None)
            got["end"] = scraped(base)
        finally:
            os.kill(os.getpid(), signal.SIGTERM)

    th = threading.Thread(target=client)
    th.start()
    try:
        summary = serve(ServeConfig(http="127.0.0.1:0", api_key=KEY), server, None, front, CharTok(), tmp_path, [])
    finally:
        returned.set()
        th.join(60)
    assert summary["stopped_by"] == "SIGTERM" and summary["served"] == 4 == len(recs), summary

    # the key: /metrics as /v1 (the error the /v1 routes give), /health open
    for name in ("no_key", "wrong_key"):
        status, _, body = got[name]
        assert status == 401 and json.loads(body)["error"]["type"] == "authentication_error"
    assert got["health"][0] == 200

    # every counter of the last scrape equals the answers' cycles, summed over the drafters
    end, want = got["end"], expected(recs)
    assert total(end, f"{P}spec_decode_num_accepted_tokens_total") == \
        sum(sum(r.metrics["accepted"]) for r in recs) == sum(w["num_accepted_tokens"] for w in want.values())
    assert total(end, f"{P}spec_decode_num_drafts_total") == \
        sum(sum(1 for n in r.metrics["draft_len"] if n) for r in recs)
    assert spec_of(end) == {n: {**{k: float(v) for k, v in want[n].items() if k != "per_pos"},
                                "per_pos": {j: float(v) for j, v in want[n]["per_pos"].items()}} for n in NAMES}
    assert end[(f"{P}request_success_total", ())] == 4 and end[(f"{P}request_failure_total", ())] == 1  # context
    assert end[(f"{P}generation_tokens_total", ())] == sum(len(r.tokens) for r in recs)
    assert end[(f"{P}prompt_tokens_total", ())] == sum(len(p) for p in ("abcdefghijklmnopabcdef", "hello world",
                                                                         "abcabcabcabc", "0123456789abcdef01"))
    assert end[(f"{P}num_requests_waiting", ())] == 0
    assert sum(v for (n, _), v in end.items() if n == f"{P}selection_weight") == pytest.approx(1.0)
    assert not [k for k in end if k[0].startswith(f"{P}drafter_version")]  # no adaptation: no versions
    assert total(got["before"], f"{P}spec_decode_num_drafts_total") == 0

    # HTTP responses by route and code, counted as they went out (the Edge's 401s too; a probed path is "other");
    # the end scrape's own response starts after its text was made
    http = {(dict(lab)["route"], dict(lab)["code"]): v for (n, lab), v in end.items()
            if n == f"{P}http_responses_total"}
    assert got["probe"][0] == 404
    assert {k: v for k, v in http.items() if k[0] != "/health"} == {
        ("/metrics", "401"): 2, ("/metrics", "200"): 4, ("/v1/completions", "200"): 4, ("/v1/completions", "400"): 2,
        ("other", "404"): 1}
    assert http[("/health", "200")] >= 2
    # every decoded HTTP request's queue time, and its end-to-end latency = queue + decode
    for name in ("request_queue_time_seconds", "e2e_request_latency_seconds", "request_inference_time_seconds"):
        assert end[(f"{P}{name}_count", ())] == 4
    assert end[(f"{P}e2e_request_latency_seconds_sum", ())] == pytest.approx(
        end[(f"{P}request_queue_time_seconds_sum", ())] + end[(f"{P}request_inference_time_seconds_sum", ())])
    assert end[(f"{P}request_queue_time_seconds_sum", ())] >= 0

    # a request without spec_metrics has no "spec", whole or streamed
    status, _, body = got["plain"]
    assert status == 200 and "spec" not in json.loads(body)["draftpool"]
    assert got["stream_plain"][0] == 200 and "spec" not in stream_draftpool(got["stream_plain"][2])
    assert got["bad"][0] == 400 and "spec_metrics" in json.loads(got["bad"][2])["error"]["message"]

    # with it: the request's own counts, which are the counters' increments over that request
    status, _, body = got["spec"]
    reply = json.loads(body)
    assert status == 200
    streamed = stream_draftpool(got["stream_spec"][2])
    for spec, before, after, rid in ((reply["draftpool"]["spec"], got["mid"], got["after_spec"], reply["id"]),
                                     (streamed["spec"], got["after_spec"], got["after_stream"], None)):
        rec = [r for r in recs if r.id == rid][0] if rid else recs[-1]
        mine = expected([rec])
        m = rec.metrics
        assert spec["num_drafts"] == sum(1 for n in m["draft_len"] if n) == \
            total(after, f"{P}spec_decode_num_drafts_total") - total(before, f"{P}spec_decode_num_drafts_total")
        assert spec["num_accepted_tokens"] == sum(m["accepted"]) == \
            total(after, f"{P}spec_decode_num_accepted_tokens_total") - \
            total(before, f"{P}spec_decode_num_accepted_tokens_total")
        assert spec["num_draft_tokens"] == sum(m["draft_len"]) == \
            total(after, f"{P}spec_decode_num_draft_tokens_total") - \
            total(before, f"{P}spec_decode_num_draft_tokens_total")
        per_pos = [total(after, f"{P}spec_decode_num_accepted_tokens_per_pos_total", position=str(j)) -
                   total(before, f"{P}spec_decode_num_accepted_tokens_per_pos_total", position=str(j))
                   for j in range(len(spec["accepted_per_pos"]) + 1)]
        assert spec["accepted_per_pos"] + [0] == per_pos
        assert spec["accepted_per_pos"] == [sum(mine[n]["per_pos"].get(j, 0) for n in NAMES)
                                            for j in range(len(spec["accepted_per_pos"]))]
        assert spec["drafters"] == {n: mine[n]["num_drafts"] for n in NAMES if mine[n]["num_drafts"]}
        assert spec["mat"] == m["mat"] and spec["num_drafts"] > 0
    assert reply["draftpool"]["spec"]["num_accepted_tokens"] > 0  # a prompt that repeats: the n-gram drafter copies

    # the run's last scrape, written at the end: the counters as the server held them
    final = samples((tmp_path / "metrics.prom").read_text())
    decode = lambda vals: {k: v for k, v in vals.items()  # noqa: E731
                           if k[0].endswith("_total") and not k[0].startswith(f"{P}http_")}
    assert decode(final) == decode(end)
    assert final[(f"{P}http_responses_total", (("code", "200"), ("route", "/metrics")))] == 5  # + the end scrape
    assert not [p for p in Path(tmp_path).iterdir() if p.name.startswith(".metrics.prom")]


def test_metrics_route_without_a_metrics_object_is_a_404_behind_the_key():
    front = HttpFrontend("127.0.0.1:0", "stub", NAMES, 0.0, 8, api_key=KEY)
    front.start()
    try:
        base = front.address
        assert call(base, "/metrics", key=None)[0] == 401
        status, _, body = call(base, "/metrics")
        assert status == 404 and json.loads(body)["error"]["type"] == "not_found_error"
        assert "/metrics" not in json.loads(call(base, "/openapi.json")[2])["paths"]
    finally:
        front.close()
