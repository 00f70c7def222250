"""The decode loop: plain, chain-speculative and tree-speculative generation over one target KV cache.

Every cycle: drafter.sync (feed what was committed since last time) -> draft -> one target pass over
[last committed token, drafts] -> accept -> roll the target cache back to the accepted prefix (or compact it to the
accepted tree path) -> append tokens and target features to the state. Batch size 1; the state keeps per-request
lengths so a batched version can hold one per row.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass, field

import torch

from specsel.sampling import SamplingParams, probs_from_logits, sample
from specsel.target_runner import TargetPass, TargetRunner
from specsel.tree import TreeSpec, ancestor_mask
from specsel.verify import verify_chain_greedy, verify_chain_sampling, verify_tree_greedy

MODES = ("plain", "chain", "tree")
GREEDY = SamplingParams()


class SpecError(ValueError):
    """A bad decoding setup or request."""


@dataclass
class DecodeState:
    tokens: list[int]  # committed tokens, prompt included
    prompt_len: int
    feats: torch.Tensor | None = None  # [n_feat,3H] target aux features of positions 0..n_feat-1 (EAGLE-3 drafters)


@dataclass
class RequestMetrics:
    new_tokens: int = 0
    target_forwards: int = 0  # the prefill included
    accepted: list[int] = field(default_factory=list)  # draft tokens accepted per verification cycle
    draft_s: float = 0.0  # drafter: sync with the committed tokens + drafting
    verify_s: float = 0.0  # target forward + logits rows + acceptance rule + cache rollback
    target_s: float = 0.0  # of verify_s: the target's forward over the verified tokens
    total_s: float = 0.0

    @property
    def mat(self) -> float:
        """Mean accepted tokens per target forward, bonus token included (prefill counted as one forward)."""
        return self.new_tokens / max(self.target_forwards, 1)

    @property
    def tokens_per_s(self) -> float:
        return self.new_tokens / self.total_s if self.total_s > 0 else 0.0

    @property
    def other_s(self) -> float:
        return max(self.total_s - self.draft_s - self.verify_s, 0.0)

    def to_dict(self) -> dict:
        return {"new_tokens": self.new_tokens, "target_forwards": self.target_forwards, "cycles": len(self.accepted),
                "accepted": self.accepted, "mat": self.mat, "tokens_per_s": self.tokens_per_s,
                "draft_s": self.draft_s, "verify_s": self.verify_s, "target_s": self.target_s,
                "other_s": self.other_s, "total_s": self.total_s}


def sync_device(device: torch.device) -> None:
    """Wait for queued GPU work so wall-clock timings are real (no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def cut_at_stop(tokens: list[int], stop_ids: Collection[int], max_new_tokens: int) -> list[int]:
    """The first max_new_tokens tokens, ending after the first stop token."""
    tokens = tokens[:max_new_tokens]
    for i, t in enumerate(tokens):
        if t in stop_ids:
            return tokens[:i + 1]
    return tokens


def check_drafter(target: TargetRunner, drafter) -> None:
    """One clear error when a drafter cannot serve this target."""
    if drafter.vocab_size != target.vocab_size:
        raise SpecError(f"drafter vocabulary {drafter.vocab_size} does not match the target's {target.vocab_size}")
    if drafter.kind == "eagle3":
        cfg = drafter.head.config
        hidden = getattr(cfg, "target_hidden_size", cfg.hidden_size)
        layers = getattr(cfg, "target_num_hidden_layers", target.config.num_hidden_layers)
        if hidden != target.config.hidden_size or layers != target.config.num_hidden_layers or \
                max(drafter.aux_layers) >= target.config.num_hidden_layers:
            raise SpecError(f"EAGLE-3 head made for a target with hidden {hidden}, {layers} layers, aux layers "
                            f"{drafter.aux_layers}; this target has hidden {target.config.hidden_size} and "
                            f"{target.config.num_hidden_layers} layers")


class SpecDecoder:
    """mode 'plain' (no drafter), 'chain' (k drafts, any drafter) or 'tree' (EAGLE-3 heads, greedy)."""

    def __init__(self, target_model, drafter=None, mode: str = "chain", k: int = 4, tree: TreeSpec | None = None,
                 stop_ids: list[int] | None = None):
        if mode not in MODES:
            raise SpecError(f"unknown mode {mode!r}; choose from {', '.join(MODES)}")
        if mode != "plain" and drafter is None:
            raise SpecError(f"mode {mode!r} needs a drafter")
        if mode == "chain" and k < 1:
            raise SpecError(f"k (draft tokens per cycle) must be >= 1, got {k}")
        if mode == "tree" and not hasattr(drafter, "draft_tree"):
            raise SpecError("tree drafting needs an EAGLE-3 head; use mode 'chain' for independent drafters")
        self.mode, self.k = mode, k
        self.tree = tree or TreeSpec()
        self.drafter = drafter if mode != "plain" else None
        aux = self.drafter.aux_layers if self.drafter is not None else None
        self.target = TargetRunner(target_model, aux)
        self.stop_ids = set(stop_ids or [])
        self.state: DecodeState | None = None  # the last request's final state
        self.collector = None  # online/feedback.FeedbackCollector: keeps the target rows of committed positions
        if self.drafter is not None:
            check_drafter(self.target, self.drafter)
        if mode == "tree":
            try:
                self.tree.validate(getattr(self.drafter, "draft_vocab_size", self.drafter.vocab_size))
            except ValueError as e:
                raise SpecError(str(e)) from None

    @property
    def lookahead(self) -> int:
        return {"plain": 0, "chain": self.k, "tree": self.tree.depth}[self.mode]

    def check_request(self, prompt: list[int], max_new_tokens: int, params: SamplingParams) -> None:
        if not prompt:
            raise SpecError("empty prompt")
        if max_new_tokens < 1:
            raise SpecError(f"max_new_tokens must be >= 1, got {max_new_tokens}")
        need = len(prompt) + max_new_tokens + self.lookahead + 1
        if need > self.target.max_positions:
            raise SpecError(f"prompt of {len(prompt)} tokens + {max_new_tokens} new + {self.lookahead} lookahead "
                            f"exceeds the target's context of {self.target.max_positions} positions")
        if self.mode == "tree" and not params.greedy:
            raise SpecError("tree drafting verifies greedily (temperature 0); use mode 'chain' to sample")

    @staticmethod
    def emit(out: TargetPass, row: int, params: SamplingParams, gen: torch.Generator | None) -> int:
        if params.greedy:
            return out.choice(row)
        return int(sample(probs_from_logits(out.logits(row), params), gen))

    def generate(self, prompt: list[int], max_new_tokens: int, params: SamplingParams = GREEDY,
                 seed: int = 0) -> tuple[list[int], RequestMetrics]:
        """-> (new tokens, stopping after a stop token or max_new_tokens, and the request's metrics)."""
        self.check_request(prompt, max_new_tokens, params)
        gen = torch.Generator(device=self.target.device).manual_seed(seed)
        m = RequestMetrics()
        dev = self.target.device
        t_start = time.perf_counter()
        # 1. prefill: the target reads the prompt and emits the first token
        self.target.reset()
        if self.drafter is not None:
            self.drafter.reset()
        out = self.target.forward(prompt)
        m.target_forwards += 1
        state = self.state = DecodeState(tokens=list(prompt) + [self.emit(out, -1, params, gen)],
                                         prompt_len=len(prompt), feats=out.feats)
        self.record(out, [-1])
        # 2. cycles until a stop token or the length limit
        while not self.done(state, max_new_tokens):
            if self.mode == "plain":
                out = self.target.forward(state.tokens[-1:])
                m.target_forwards += 1
                state.tokens.append(self.emit(out, -1, params, gen))
                self.record(out, [-1])
                continue
            t0 = time.perf_counter()
            self.drafter.sync(state)
            if self.mode == "chain":
                draft, q = self.drafter.draft_chain(self.k, params, gen)
            else:
                tree = self.drafter.draft_tree(self.tree)
            sync_device(dev)
            t1 = time.perf_counter()
            if self.mode == "chain":
                n_acc, _ = self.verify_chain(state, draft, q, params, gen, m)
            else:
                n_acc, _ = self.verify_tree(state, tree, m)
            sync_device(dev)
            m.draft_s += t1 - t0
            m.verify_s += time.perf_counter() - t1
            m.target_forwards += 1
            m.accepted.append(n_acc)
        new = self.finish(state, max_new_tokens)
        sync_device(dev)
        m.total_s = time.perf_counter() - t_start
        m.new_tokens = len(new)
        return new, m

    def verify_chain(self, state: DecodeState, draft: torch.Tensor, q: torch.Tensor | None,
                     params: SamplingParams, gen: torch.Generator | None, m: RequestMetrics) -> tuple[int, TargetPass]:
        """One target pass over [last committed, drafts]; commits the accepted drafts and the next token.
        -> (accepted drafts, the pass: row j holds the target's distribution for committed position len_before + j)"""
        base = len(self.target)  # cached positions = every committed token but the last
        t0 = time.perf_counter()
        out = self.target.forward([state.tokens[-1]] + draft.tolist())  # rows: root + K drafts
        m.target_s += self._elapsed(t0)
        if params.greedy:
            n, nxt = verify_chain_greedy(draft.tolist(), out.choice)
        else:
            n, nxt = verify_chain_sampling(draft, q, probs_from_logits(out.logits(slice(None)), params), gen)
        # keep the root and the n accepted drafts in the cache; their features are now committed
        self.target.truncate(base + 1 + n)
        self._commit(state, draft[:n].tolist() + [nxt], None if out.feats is None else out.feats[:1 + n])
        self.record(out, list(range(n + 1)))
        return n, out

    def verify_tree(self, state: DecodeState, tree, m: RequestMetrics) -> tuple[int, TargetPass]:
        """Greedy tree verification; commits the longest accepted path and the next token -> (its length, the pass)."""
        base = len(self.target)
        allowed = torch.ones(len(tree) + 1, base + len(tree) + 1, dtype=torch.bool)
        allowed[:, base:] = ancestor_mask(tree.parents)
        positions = [base] + [base + d for d in tree.depths]
        t0 = time.perf_counter()
        out = self.target.forward([state.tokens[-1]] + tree.tokens, positions, allowed)  # rows: root + N nodes
        m.target_s += self._elapsed(t0)
        path, nxt = verify_tree_greedy(tree.tokens, tree.parents, out.choice)
        keep = [0] + [i + 1 for i in path]  # root + accepted nodes, in path order
        self.target.keep(base, keep)
        self._commit(state, [tree.tokens[i] for i in path] + [nxt], None if out.feats is None else out.feats[keep])
        self.record(out, keep)
        return len(path), out

    def record(self, out: TargetPass, rows: list[int]) -> None:
        """Hand the target's distributions behind newly committed tokens to the feedback collector, if any."""
        if self.collector is not None:
            self.collector.add(out, rows)

    def _elapsed(self, t0: float) -> float:
        sync_device(self.target.device)
        return time.perf_counter() - t0

    @staticmethod
    def _commit(state: DecodeState, tokens: list[int], feats: torch.Tensor | None) -> None:
        state.tokens.extend(tokens)
        if feats is not None:
            state.feats = torch.cat([state.feats, feats], dim=0)

    def done(self, state: DecodeState, max_new_tokens: int) -> bool:
        n = len(state.tokens)
        if n - state.prompt_len >= max_new_tokens:
            return True
        # a cycle adds at most lookahead + 1 tokens: only those can hold a new stop token
        tail = state.tokens[max(state.prompt_len, n - self.lookahead - 1):]
        return any(t in self.stop_ids for t in tail)

    def finish(self, state: DecodeState, max_new_tokens: int) -> list[int]:
        return cut_at_stop(state.tokens[state.prompt_len:], self.stop_ids, max_new_tokens)
