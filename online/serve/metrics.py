"""The native server's Prometheus metrics (`GET /metrics`, docs/metrics.md) and each request's speculative figures.

`ServerMetrics` owns its own `CollectorRegistry` (never prometheus_client's global one: several servers or tests in
one process do not collide). The serve loop hands it every request once, after its decode (`observe_request`): the
counters move then, never inside a decode cycle. What describes the server's state now (the HTTP queue, the
selector's weights, the drafter versions and their ages, the trainer's restarts) is read from callables when a
scrape asks (`_Live`), so a scrape reads the current state. Spec-decode counters keep vLLM's names and meaning with
the prefix `draftpool:` and a `drafter` label; they are counted by `specsel.decoding.request.spec_counts`, the same
function that counts a request's figures for its reply (`request_spec`) and for the benchmarks, and `counters()`
reads them back from the same prometheus objects: what a benchmark reports is what an operator scrapes.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from specsel.decoding.request import DrafterCounts, spec_counts

if TYPE_CHECKING:  # types only: the server and the front end import this module
    from online.http.api import HttpFrontend
    from online.serve.request import Served
    from online.serve.server import Server
    from online.trainer.process import TrainerHandle

__all__ = ["CONTENT_TYPE_LATEST", "PREFIX", "ServerMetrics", "request_spec"]

PREFIX = "draftpool:"
LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0)
TOKENS_PER_S_BUCKETS = (1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 50.0, 75.0, 100.0, 150.0, 200.0, 300.0, 500.0, 1000.0)
SPEC = ("num_drafts", "num_draft_tokens", "num_accepted_tokens")
# the routes an HTTP response is counted under; any other path is "other" (a client probing paths cannot grow the
# number of series)
ROUTES = ("/v1/completions", "/v1/chat/completions", "/v1/models", "/health", "/metrics", "/openapi.json")


def request_spec(metrics: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """One request's speculative figures, as its reply carries them (`spec_metrics: true`): MAT and vLLM's counts
    over the whole request, and the drafts of each drafter that drafted."""
    counts = spec_counts(metrics, names)
    total = DrafterCounts()
    for c in counts.values():
        total = total.add(c)
    return {"mat": metrics.get("mat"), "num_drafts": total.num_drafts, "num_draft_tokens": total.num_draft_tokens,
            "num_accepted_tokens": total.num_accepted_tokens, "accepted_per_pos": total.accepted_per_pos,
            "drafters": {n: c.num_drafts for n, c in counts.items() if c.num_drafts}}


class _Live:
    """The families read when a scrape asks: one callable each; a callable that fails leaves its family out of that
    scrape (the scrape itself never fails)."""

    def __init__(self, owner: ServerMetrics):
        self.owner = owner

    def describe(self) -> list[Metric]:
        return []  # nothing is called at registration

    def collect(self) -> Iterator[Metric]:
        o = self.owner
        for make in (self._queue, self._weights, self._versions, self._trainer):
            try:
                yield from make(o)
            except Exception:  # noqa: BLE001 - a source mid-change (or gone) skips this scrape's family
                continue

    @staticmethod
    def _queue(o: ServerMetrics) -> list[Metric]:
        if o.queue_depth is None:
            return []
        return [GaugeMetricFamily(f"{PREFIX}num_requests_waiting", "Requests waiting in the HTTP front end's queue",
                                  value=o.queue_depth())]

    @staticmethod
    def _weights(o: ServerMetrics) -> list[Metric]:
        weights = o.weights() if o.weights is not None else None
        if weights is None:
            return []
        g = GaugeMetricFamily(f"{PREFIX}selection_weight", "The selector's current probability of each drafter",
                              labels=["drafter"])
        for name, w in zip(o.names, weights):
            g.add_metric([name], w)
        return [g]

    @staticmethod
    def _versions(o: ServerMetrics) -> list[Metric]:
        out = []
        if o.versions is not None:
            g = GaugeMetricFamily(f"{PREFIX}drafter_version", "The adaptation's version each drafter serves now "
                                  "(0: the offline pool)", labels=["drafter"])
            for name, v in o.versions().items():
                g.add_metric([name], v)
            out.append(g)
        if o.ages is not None:
            g = GaugeMetricFamily(f"{PREFIX}drafter_version_age_seconds", "Seconds since each drafter's served "
                                  "version was swapped in (since the start for the start version)", labels=["drafter"])
            for name, s in o.ages().items():
                g.add_metric([name], s)
            out.append(g)
        return out

    @staticmethod
    def _trainer(o: ServerMetrics) -> list[Metric]:
        if o.trainer is None:
            return []
        t = o.trainer()
        helps = {"trainer_restarts": "Trainer process restarts (after a crash or a hang)",
                 "trainer_faults": "Trainer crashes and hangs seen",
                 "trainer_skipped_records": "Feedback records the trainer skipped (their round failed even alone)",
                 "feedback_dropped_records": "Feedback records dropped before reaching the trainer"}
        return [CounterMetricFamily(f"{PREFIX}{key}", text, value=t[key]) for key, text in helps.items()]


class ServerMetrics:
    """Counters and histograms moved once per request (`observe_request`), gauges read at scrape time from the
    callables given (each optional: absent where the server has no such thing), the text exposition
    (`exposition`), the counters as a dict (`counters`) and an atomic file copy (`write`).

    names: the speculative drafters, in the decoder's order (a request's `choices` index them); [] where nothing
    drafts tokens (lookahead mode: its spec counters stay empty, the request counters still count).
    queue_depth: requests waiting; weights: the selector's probabilities in `names` order (or None);
    versions / ages: drafter -> served version / seconds since it was swapped in;
    trainer: -> {"trainer_restarts", "trainer_faults", "trainer_skipped_records", "feedback_dropped_records"}."""

    def __init__(self, names: list[str], queue_depth: Callable[[], int] | None = None,
                 weights: Callable[[], list[float] | None] | None = None,
                 versions: Callable[[], dict[str, int]] | None = None,
                 ages: Callable[[], dict[str, float]] | None = None,
                 trainer: Callable[[], dict[str, int]] | None = None):
        self.names = list(names)
        self.queue_depth, self.weights, self.versions, self.ages, self.trainer = \
            queue_depth, weights, versions, ages, trainer
        self.registry = r = CollectorRegistry()
        self.spec = {
            "num_drafts": Counter(f"{PREFIX}spec_decode_num_drafts", "Verification cycles that verified at least one "
                                  "drafted token", ["drafter"], registry=r),
            "num_draft_tokens": Counter(f"{PREFIX}spec_decode_num_draft_tokens", "Tokens drafted in those cycles (a "
                                        "tree: its nodes)", ["drafter"], registry=r),
            "num_accepted_tokens": Counter(f"{PREFIX}spec_decode_num_accepted_tokens", "Drafted tokens accepted",
                                           ["drafter"], registry=r)}
        self.per_pos = Counter(f"{PREFIX}spec_decode_num_accepted_tokens_per_pos", "Drafts whose draft position "
                               "`position` (0-based) was accepted", ["drafter", "position"], registry=r)
        for name in self.names:  # every drafter's counters exist from the start, at 0
            for c in self.spec.values():
                c.labels(name)
        self.served = Counter(f"{PREFIX}request_success", "Requests decoded (a cancelled one included)", registry=r)
        self.failed = Counter(f"{PREFIX}request_failure", "Requests answered with an error: a bad request line, a "
                              "request the target cannot take, a decode failure", registry=r)
        self.prompt_tokens = Counter(f"{PREFIX}prompt_tokens", "Prompt tokens of the requests decoded", registry=r)
        self.generation_tokens = Counter(f"{PREFIX}generation_tokens", "Tokens generated (committed by the decoder)",
                                         registry=r)
        self.latency = Histogram(f"{PREFIX}request_inference_time_seconds", "Seconds each request spent decoding "
                                 "(queueing not included)", registry=r, buckets=LATENCY_BUCKETS)
        self.queue_time = Histogram(f"{PREFIX}request_queue_time_seconds", "Seconds each HTTP request waited in the "
                                    "queue before its decode began", registry=r, buckets=LATENCY_BUCKETS)
        self.e2e = Histogram(f"{PREFIX}e2e_request_latency_seconds", "Seconds from each HTTP request's arrival in the "
                             "queue to the end of its decode", registry=r, buckets=LATENCY_BUCKETS)
        self.http = Counter(f"{PREFIX}http_responses", "HTTP responses by route (one of the served paths, else "
                            "`other`) and status code, refusals (400, 401, 404, 413, 503 ...) included",
                            ["route", "code"], registry=r)
        self.tokens_per_s = Histogram(f"{PREFIX}request_tokens_per_second", "Generated tokens per second of decoding, "
                                      "per request", registry=r, buckets=TOKENS_PER_S_BUCKETS)
        r.register(_Live(self))

    @classmethod
    def of(cls, server: Server, handle: TrainerHandle | None = None, front: HttpFrontend | None = None
           ) -> ServerMetrics:
        """For a serve loop's server (its drafters, selection weights and hot swap; lookahead serving: no spec
        drafters), its trainer handle and its HTTP front end, each read at scrape time."""
        names, swap = list(server.names), server.swap
        return cls(names,
                   queue_depth=(lambda: front.queue.qsize()) if front is not None else None,
                   weights=server.selection_weights if names else None,
                   versions=swap.versions if swap is not None else None,
                   ages=swap.ages if swap is not None else None,
                   trainer=(lambda: {"trainer_restarts": handle.restarts, "trainer_faults": len(handle.faults),
                                     "trainer_skipped_records": handle.skipped,
                                     "feedback_dropped_records": handle.dropped}) if handle is not None else None)

    def observe_request(self, served: Served, prompt_tokens: int | None = None,
                        queued_s: float | None = None) -> dict[str, DrafterCounts]:
        """One served request (a `Server.serve` result: tokens, metrics, seconds; an error for a failed or refused
        one) -> its spec counts per drafter (now counted). queued_s: the seconds an HTTP request waited before its
        decode (None: a request file's line)."""
        if served.error is not None:
            self.failed.inc()
            return {}
        counts = spec_counts(served.metrics, self.names)
        new, seconds = len(served.tokens), served.seconds
        self.served.inc()
        self.generation_tokens.inc(new)
        if prompt_tokens is not None:
            self.prompt_tokens.inc(prompt_tokens)
        self.latency.observe(seconds)
        if queued_s is not None:
            self.queue_time.observe(queued_s)
            self.e2e.observe(queued_s + seconds)
        if seconds > 0:
            self.tokens_per_s.observe(new / seconds)
        for name, c in counts.items():
            for key, counter in self.spec.items():
                if getattr(c, key):
                    counter.labels(name).inc(getattr(c, key))
            for j, n in enumerate(c.accepted_per_pos):
                if n:
                    self.per_pos.labels(name, str(j)).inc(n)
        return counts

    def observe_http(self, path: str, code: int) -> None:
        """One HTTP response's status, as it goes out (online/http/asgi.py's Edge calls this for every response)."""
        self.http.labels(path if path in ROUTES else "other", str(code)).inc()

    def request_spec(self, served: Served) -> dict[str, Any]:
        """A served request's figures for its reply (`request_spec` over this server's drafters)."""
        return request_spec(served.metrics, self.names)

    def exposition(self) -> bytes:
        """The Prometheus text format of everything, gauges read now."""
        return generate_latest(self.registry)

    def counters(self) -> dict[str, Any]:
        """The counters as numbers, read from the prometheus objects themselves: requests served / failed, prompt /
        generated tokens, and per drafter vLLM's spec-decode counts (accepted_per_pos as a list, position j at j)."""
        samples: dict[str, list] = {}
        for family in (*self.spec.values(), self.per_pos, self.served, self.failed, self.prompt_tokens,
                       self.generation_tokens):
            for family_ in family.collect():
                for s in family_.samples:
                    if s.name.endswith("_total"):
                        samples.setdefault(s.name, []).append(s)
        total = lambda name: int(sum(s.value for s in samples.get(f"{PREFIX}{name}_total", [])))  # noqa: E731
        spec: dict[str, dict[str, Any]] = {n: {k: 0 for k in SPEC} | {"accepted_per_pos": []} for n in self.names}
        for key in SPEC:
            for s in samples.get(f"{PREFIX}spec_decode_{key}_total", []):
                spec[s.labels["drafter"]][key] = int(s.value)
        for s in samples.get(f"{PREFIX}spec_decode_num_accepted_tokens_per_pos_total", []):
            pos = spec[s.labels["drafter"]]["accepted_per_pos"]
            j = int(s.labels["position"])
            pos.extend([0] * (j + 1 - len(pos)))
            pos[j] = int(s.value)
        return {"requests_served": total("request_success"), "requests_failed": total("request_failure"),
                "prompt_tokens": total("prompt_tokens"), "generation_tokens": total("generation_tokens"),
                "spec": spec}

    def write(self, path: str | Path) -> Path:
        """The exposition to `path` atomically (a temporary file in the same folder, then os.replace)."""
        path = Path(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(self.exposition())
            os.chmod(tmp, 0o644)  # mkstemp's is 0600: a textfile collector running as another user reads it too
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return path
