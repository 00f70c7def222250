"""Verification feedback for online adaptation: the target's distributions kept as top-k + log normaliser, and a
bounded drop-oldest queue that never blocks the server.

A served request yields, at no extra target cost, the verified tokens, the target's logits at every verified position
(from the verification passes) and, for EAGLE-3 heads, the target's aux hidden states of the same passes. Full logit
rows are V floats per position (49152 here, 128k for Llama 3); `compress` keeps the k largest logits and the
logsumexp of the whole row, which is enough to rebuild the target's probability of every kept token exactly and to
train against the top-k part of the distribution (`sparse_teacher`).

Shapes: T positions, V target vocabulary, k kept logits, Vs student vocabulary (the draft vocabulary of a head).
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from dataclasses import dataclass, field

import torch

from draftpool.models.kind import aux_features


@dataclass
class TopK:
    """The target's distribution at T positions: log p of the k most likely tokens per row."""

    logp: torch.Tensor  # [T,k] float: log-probabilities (logit - logsumexp of the full row)
    ids: torch.Tensor  # [T,k] int64: their token ids

    @property
    def mass(self) -> torch.Tensor:
        """[T] probability mass the kept tokens carry (1 - the dropped tail)."""
        return self.logp.exp().sum(-1)


def compress(logits: torch.Tensor, k: int) -> TopK:
    """logits [T,V] -> the top-k log-probabilities, normalised by the full row's logsumexp."""
    if k < 1:
        raise ValueError(f"top-k must be >= 1, got {k}")
    logits = logits.float()
    top = logits.topk(min(k, logits.shape[-1]), dim=-1)
    return TopK(top.values - logits.logsumexp(-1, keepdim=True), top.indices)


def sparse_teacher(t: TopK, to_student: torch.Tensor, width: int) -> torch.Tensor:
    """Teacher logits on the student's vocabulary: log p at the kept tokens the student has, -inf elsewhere.

    to_student [V] int64: the student id of each target token, -1 where the student has none (identity for a drafter
    with the target's vocabulary). -> [T,width]; a softmax renormalises on what is kept (rows with no kept token
    in the student vocabulary come back all -inf: mask them with `has_teacher`).
    """
    out = torch.full((t.ids.shape[0], width), float("-inf"), device=t.logp.device)
    sid = to_student[t.ids]  # [T,k]
    ok = sid >= 0
    rows = torch.arange(t.ids.shape[0], device=t.ids.device)[:, None].expand_as(sid)
    out[rows[ok], sid[ok]] = t.logp[ok].float()
    return out


def has_teacher(teacher: torch.Tensor) -> torch.Tensor:
    """[T,width] -> [T] bool: rows with at least one finite entry."""
    return torch.isfinite(teacher).any(-1)


@dataclass
class Feedback:
    """One served request's training signal, on the CPU, ready to cross a process boundary."""

    request_id: str
    tokens: torch.Tensor  # [T] int64: prompt + generated
    prompt_len: int
    target: TopK  # row r: the target's distribution of token prompt_len + r (from the prefill and verifications)
    feats: torch.Tensor | None = None  # [T,3H] the target's aux hidden states (EAGLE-3 heads), None otherwise
    version: int = 0  # the weights version that served the request
    drafter: int = -1  # the drafter chosen most often (selection stacks), -1 when single
    accepted: list[int] = field(default_factory=list)  # accepted drafts per cycle

    def aux(self) -> torch.Tensor:
        """[1,T,3H] the aux features of every token, a zero row for the last (no target pass has read it yet)."""
        if self.feats is None:
            raise ValueError("EAGLE-3 feedback needs the target's aux hidden states (collect with keep_feats=True)")
        return torch.cat([self.feats, self.feats.new_zeros(1, self.feats.shape[1])])[None]

    def to(self, device) -> Feedback:
        t = TopK(self.target.logp.to(device), self.target.ids.to(device))
        feats = self.feats.to(device) if self.feats is not None else None
        return Feedback(self.request_id, self.tokens.to(device), self.prompt_len, t, feats, self.version,
                        self.drafter, list(self.accepted))

    def nbytes(self) -> int:
        ts = [self.tokens, self.target.logp, self.target.ids] + ([self.feats] if self.feats is not None else [])
        return sum(t.numel() * t.element_size() for t in ts)


def greedy_prefix_len(logits: torch.Tensor, ids: torch.Tensor, p0: int) -> int:
    """logits [T,V] of the target over ids [T] (row u-1 predicts token u), prompt length p0 -> the length up to the
    first answer token that is not the target's greedy choice (another engine's or batch's kernels can differ in the
    last bits)."""
    wrong = (logits[p0 - 1:-1].argmax(-1) != ids[p0:]).nonzero()
    return len(ids) if len(wrong) == 0 else p0 + int(wrong[0])


@torch.inference_mode()
def feedback_from_ids(model, request_id: str, prompt_ids: list[int], answer_ids: list[int], aux_layers: list[int],
                      top_k: int) -> Feedback:
    """What a server collects when it serves a request at temperature 0, recomputed from the ids alone with one
    target forward over prompt + answer (for answers served by another engine, e.g. vLLM, and for replays): the
    verified tokens (the answer cut where it stops being this target's greedy continuation), the target's top-k
    distribution of every generated token and the aux features of every verified token but the last."""
    ids = torch.tensor([list(prompt_ids) + list(answer_ids)], device=next(model.parameters()).device)
    out = model(input_ids=ids, output_hidden_states=True)
    logits = out.logits[0].float()  # [T,V]; row u-1 predicts token u
    p0 = len(prompt_ids)
    t_len = greedy_prefix_len(logits, ids[0], p0)
    feats = aux_features(out.hidden_states, aux_layers)[0, :t_len - 1].float()  # [T-1,3H]
    top = compress(logits[p0 - 1:t_len - 1], top_k)
    return Feedback(request_id, ids[0, :t_len].cpu().clone(), p0, TopK(top.logp.cpu(), top.ids.cpu()),
                    feats.cpu().clone())


class DropOldestQueue:
    """The producer's side of a bounded feedback channel that never blocks: records wait in a local deque of
    `maxsize` (when it is full the oldest is dropped and counted) and move to the transport queue (queue.Queue in a
    thread, a torch.multiprocessing queue across processes; keep it small, 1-2) whenever it has room: on every `put`
    and on `flush`, which the server calls between decode cycles. The consumer reads the transport with `get_batch`.
    Producer-side calls may come from two threads (vLLM mode: feedback thread puts, control thread flushes): a lock
    keeps a record from being sent twice."""

    def __init__(self, transport=None, maxsize: int = 64):
        if maxsize < 1:
            raise ValueError(f"feedback queue size must be >= 1, got {maxsize}")
        self.q = transport if transport is not None else queue.Queue(maxsize=1)
        self.local: deque = deque()
        self.lock = threading.Lock()
        self.maxsize = maxsize
        self.dropped = 0
        self.sent = 0

    def put(self, item) -> None:
        with self.lock:
            if len(self.local) == self.maxsize:
                self.local.popleft()  # rule: back-pressure drops the oldest record, never blocks the server
                self.dropped += 1
            self.local.append(item)
        self.flush()

    def flush(self) -> None:
        with self.lock:
            while self.local:
                try:
                    self.q.put_nowait(self.local[0])
                except queue.Full:
                    return
                self.local.popleft()
                self.sent += 1

    def get_batch(self, n: int, timeout: float | None = None) -> list:
        """(consumer) up to n records from the transport: waits up to `timeout` for the first."""
        return get_batch(self.q, n, timeout)


def get_batch(q, n: int, timeout: float | None = None) -> list:
    """Up to n records from a queue: waits up to `timeout` for the first, then takes what is there."""
    out = []
    try:
        out.append(q.get(timeout=timeout))
        while len(out) < n:
            out.append(q.get_nowait())
    except queue.Empty:
        pass
    return out


class FeedbackCollector:
    """A decode loop's `Hooks.collector` (specsel/decoding/hooks.py; online/serve/server.py hands it to every request):
    keeps, for every committed token, the target's distribution that chose it (the rows the verification already
    projected, so no extra lm_head work under greedy verification), top-k compressed as each pass arrives; `finish`
    packs the request into a `Feedback` on the CPU."""

    def __init__(self, k: int = 64, keep_feats: bool = True):
        self.k, self.keep_feats = k, keep_feats
        self.parts: list[TopK] = []

    def start(self) -> None:
        self.parts = []

    def add(self, out, rows: list[int]) -> None:
        t = compress(out.logits_of(rows), self.k)
        self.parts.append(TopK(t.logp.cpu(), t.ids.cpu()))

    def finish(self, request_id: str, state, version: int = 0, drafter: int = -1,
               accepted: list[int] | None = None) -> Feedback:
        target = TopK(torch.cat([p.logp for p in self.parts]), torch.cat([p.ids for p in self.parts]))
        if target.ids.shape[0] != len(state.tokens) - state.prompt_len:
            raise RuntimeError(f"feedback holds {target.ids.shape[0]} rows for "
                               f"{len(state.tokens) - state.prompt_len} committed tokens")
        feats = state.feats.detach().cpu() if self.keep_feats and state.feats is not None else None
        self.parts = []
        return Feedback(request_id, torch.tensor(state.tokens), state.prompt_len, target, feats, version, drafter,
                        list(accepted or []))
