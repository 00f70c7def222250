"""The decode loop's side of an OpenAI request (`online_adapt.py serve.http=...`): the prompt, with chat content
tokenized apart from the template's own markers; the request's sampling settings; a watch that streams each cycle's
new text and stops at a stop string; the answer, streamed or whole.

The HTTP thread (online/http/api.py) validates and queues; everything here runs in the one decode loop, so the text a
stream sends and the text of the whole answer come from the same tokens through the same rule (`AnswerText`): a
client sees the same answer streamed or not.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from typing import Any

from draftpool.chat import chat_prompt_ids, token_ids
from draftpool.forward.sampling import SamplingParams
from online.http.api import HttpFrontend, Job, error_body, openai_chunk, openai_reply, usage
from online.serve.metrics import request_spec
from online.serve.request import Request, Served
from specsel.decoding.request import cut_at_stop


class AnswerText:
    """Committed tokens -> the answer a client sees: cut after a stop token or at max_new tokens, ended before the
    first stop string; `ready()` is the part that can no longer change (a stream sends it)."""

    def __init__(self, tok, stop_ids: set[int], max_new: int, stop: tuple[str, ...] = ()):
        self.tok, self.stop_ids, self.max_new, self.stop = tok, stop_ids, max_new, stop
        self.tokens: list[int] = []
        self.text = ""
        self.hit: int | None = None  # where the first stop string starts in `text`

    def _decode(self, tokens: list[int]) -> str:
        return self.tok.decode(tokens, skip_special_tokens=True)

    def update(self, new: list[int]) -> bool:
        """The new tokens committed so far -> True when a stop string ends the answer."""
        if self.hit is not None:
            return True
        self.tokens = cut_at_stop(new, self.stop_ids, self.max_new)
        # rule: a stop token is not text (a special one decodes to nothing anyway; a request's own stop id neither)
        self.text = self._decode(self.tokens[:-1] if self.stopped else self.tokens)
        hits = [i for s in self.stop if (i := self.text.find(s)) >= 0]
        self.hit = min(hits) if hits else None
        return self.hit is not None

    @property
    def stopped(self) -> bool:
        """The tokens end with a stop token."""
        return bool(self.tokens) and self.tokens[-1] in self.stop_ids

    def ready(self) -> str:
        """The text no later token can change: up to the stop string once one is seen; else without a trailing
        incomplete character (its bytes span tokens) and without a tail that may grow into a stop string."""
        if self.hit is not None:
            return self.text[:self.hit]
        text = self.text.rstrip("\ufffd")
        for n in range(min(len(text), max((len(s) for s in self.stop), default=1) - 1), 0, -1):
            if any(s.startswith(text[-n:]) for s in self.stop):
                return text[:-n]
        return text

    def final(self, tokens: list[int]) -> tuple[str, int, str]:
        """The whole answer from the request's final tokens -> (text, completion tokens, finish reason)."""
        self.update(tokens)
        if self.hit is None:
            done = self.stopped or len(self.tokens) < self.max_new
            return self.text, len(self.tokens), "stop" if done else "length"
        lo, hi = 1, len(self.tokens)  # the fewest tokens whose text holds a stop string (prefixes only grow)
        while lo < hi:
            mid = (lo + hi) // 2
            if any(s in self._decode(self.tokens[:mid]) for s in self.stop):
                hi = mid
            else:
                lo = mid + 1
        return self.text[:self.hit], lo, "stop"


class HttpRun:
    """One HTTP job through the decode loop (a `Request`'s `Reply`): its watch (client gone, stop strings, stream
    chunks) and its answer."""

    def __init__(self, front: HttpFrontend, job: Job, tok, stop_ids: list[int], prompt_len: int):
        self.front, self.job, self.prompt_len = front, job, prompt_len
        self.queued = job.queued
        st = job.settings
        self.params = SamplingParams(temperature=st.temperature, top_p=st.top_p if st.temperature > 0 else 1.0)
        # rule: a sampled request without a seed draws a fresh one (OpenAI's behaviour); greedy needs none
        self.seed = st.seed % (1 << 63) if st.seed is not None else (secrets.randbits(63) if st.temperature else 0)
        self.answer = AnswerText(tok, set(stop_ids) | set(st.stop_ids), st.max_new, st.stop)
        self.sent = ""  # streamed text so far
        self.started = False  # the stream's first chunk (chat: the assistant role) went out

    def request(self, ids: list[int]) -> Request:
        """The job as the decode loop serves it: its prompt ids, length, sampling settings and this reply."""
        return Request(self.job.id, ids, self.job.max_new, params=self.params, seed=self.seed,
                       keyed=self.job.settings.seed is not None, reply=self)

    def cancelled(self) -> bool:
        """Stop decoding: the client hung up, or a stop's drain ran out of time."""
        return self.job.cancelled.is_set() or self.front.drain_over()

    def watcher(self) -> Callable[[list[int]], bool] | None:
        """`watch` where the decode loop must show this job every cycle (a stream, stop strings or extra stop ids)."""
        st = self.job.settings
        return self.watch if st.stream or st.stop or st.stop_ids else None

    def refuse(self, message: str) -> None:
        self.front.finish(self.job, 400, error_body(message))

    def watch(self, new: list[int]) -> bool:
        """After the prefill and every cycle: -> True to stop decoding (a stop string or stop id was reached)."""
        stop = self.answer.update(new) or self.answer.stopped  # the decoder stops at its own stop ids, not these
        if self.job.settings.stream:
            self._stream(self.answer.ready())
        return stop

    def _stream(self, text: str, **extra) -> None:
        if not self.started:
            self.started = True
            if self.job.kind == "chat":
                self.front.send(self.job, openai_chunk(self.job, self.front.model, "", role=True))
        delta = text[len(self.sent):] if text.startswith(self.sent) else ""
        if delta:
            self.front.send(self.job, openai_chunk(self.job, self.front.model, delta))
            self.sent = text

    def answer_fields(self, served: Served) -> dict[str, Any]:
        """What the answers file keeps beyond the usual record: the answer as the client got it (stop strings
        applied) and the sampling it asked for."""
        if served.error is not None:
            return {}
        text, n, finish = self.answer.final(served.tokens)
        out: dict[str, Any] = {"text": text, "new_tokens": n, "finish_reason": finish}
        st = self.job.settings
        if st.temperature > 0:
            out["sampling"] = {"temperature": st.temperature, "top_p": st.top_p, "seed": self.seed}
        return out

    def finish(self, served: Served, answer: dict[str, Any]) -> None:
        """The job's answer: the whole reply, or the stream's last text, finish reason and usage, then [DONE]. The
        "draftpool" object (the last chunk's, streamed) has the answer record's figures, and with `spec_metrics` the
        request's speculative counts ("spec")."""
        front, job = self.front, self.job
        if served.error is not None:
            front.finish(job, 500, error_body(served.error, "server_error"))
            return
        if served.cancelled and not job.cancelled.is_set():  # the drain's time ran out
            front.finish(job, 503, error_body("the server stopped before answering (serve.drain_s ran out)",
                                              "server_error"))
            return
        if served.cancelled:
            front.finish(job, 499, error_body("the client closed the connection", "client_closed"))
            return
        extra = {k: answer.get(k) for k in ("mat", "tok_s", "seconds", "versions_at_start", "versions_at_end")}
        if job.settings.spec_metrics:  # counted as GET /metrics counts it (online/serve/metrics.py)
            extra["spec"] = front.metrics.request_spec(served) if front.metrics is not None else \
                request_spec(served.metrics, front.drafters)
        used = usage(self.prompt_len, answer["new_tokens"])
        if not job.settings.stream:
            front.finish(job, 200, openai_reply(job, front.model, answer["text"], self.prompt_len,
                                                answer["new_tokens"], answer["finish_reason"], extra))
            return
        self._stream(answer["text"])
        front.send(job, openai_chunk(job, front.model, finish=answer["finish_reason"], draftpool=extra))
        if job.settings.include_usage:
            front.send(job, {**openai_chunk(job, front.model), "choices": [], "usage": used})
        front.finish(job, 200, None)


def http_requests(front: HttpFrontend, tok, stop_ids: list[int], allow_special: bool = False) -> Iterator[Request]:
    """Jobs of the HTTP front end as requests: prompt ids ready (the chat template for chat jobs), the job's
    `HttpRun` as their reply. A prompt that cannot be built is the job's 400."""
    for job in front.jobs():
        b = job.body
        try:
            if job.kind == "chat":
                ids = chat_prompt_ids(tok, b["messages"], allow_special)
            else:  # rule: a completion's prompt is the client's own text, markers included: tokenized as sent
                ids = token_ids(tok(b["prompt"], add_special_tokens=True))
            if not ids:
                raise ValueError("the prompt tokenizes to nothing")
        except Exception as e:  # noqa: BLE001 - e.g. a chat template that rejects these roles: this request's 400
            front.finish(job, 400, error_body(f"cannot build the prompt: {type(e).__name__}: {e}"))
            continue
        yield HttpRun(front, job, tok, stop_ids, len(ids)).request(ids)
