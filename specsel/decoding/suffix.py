"""Model-free drafters at decode time: proposals from token indexes, no weights (draftpool/models/suffix_index.py).

`NgramDrafter` is prompt lookup: the longest n-gram ending the request that occurred earlier in it (prompt or answer)
is continued with what followed its latest occurrence. `SuffixDrafter` adds a global suffix index (seeded from
self-distilled answers, grown by served answers): the request's own continuation where its match is at least as long
as the corpus's, else whichever proposal scores higher (SuffixDecoding's rule; `proposal.choose`).
In tree cycles (greedy) the suffix drafter drafts SuffixDecoding's tree: the index's continuations best-first by path
probability; prompt lookup drafts its chain as a one-path tree.

A proposal is deterministic: its draft distribution is one-hot, so sampled verification stays exact (accept with
probability p(token), else resample from p without it). A drafter proposes at most k tokens and fewer where its
estimate of the path's probability falls below the index's `min_prob` (its own speculation length); a position it
cannot continue is a "no draft" column (`draft_vocab_size` = V + 1, target id -1, zero probability).

For full-information selection (`deterministic`) a tracking drafter keeps the chain it would have proposed after every
committed position (one lookup each, no network: the suffix index's `Matcher` grows its match with each token instead
of searching for it again), and the selector scores those chains exactly (`take_chain_hits`):
its acceptance at depth j of a chain is whether the chain's j-th token is the verified one, not whether its
next-token guess one position on would be. Under sampling that indicator along the realised tokens is also the
unbiased estimate: a one-hot chain accepts its first j drafts with probability prod p(c_i | c_<i), which is the
probability that the target's own samples are c_0..c_{j-1}.

The members that read one request share its prompt-lookup index (`request_index`: one per request and n-gram sizes),
so a pool of eight suffix members indexes a long prompt once, not eight times; each keeps how far it has read, and
reads the shared index as of that length. Syncing costs the new tokens only: a member that synced to the same request
state before (same object, same prompt length, not shorter) reads on; anything else is checked in full.
"""

from __future__ import annotations

import functools
import weakref

import numpy as np
import torch

from draftpool.forward.sampling import SamplingParams
from draftpool.models.proposal import Proposal, choose
from draftpool.models.request_index import RequestIndex
from draftpool.models.suffix import NGRAM, SUFFIX, NgramModel, SuffixModel
from specsel.decoding.rows import take_rows
from specsel.decoding.tree import DraftTree, TreeSpec

_SHARED: dict[int, tuple[weakref.ref, dict[tuple[int, int], RequestIndex]]] = {}  # id(state) -> its indexes


def _forget(key: int, ref: weakref.ref) -> None:
    entry = _SHARED.get(key)
    if entry is not None and entry[0] is ref:
        del _SHARED[key]


def request_index(state, n_min: int, n_max: int) -> RequestIndex | None:
    """The prompt-lookup index of `state`'s request for these n-gram sizes, shared by every member that syncs to the
    state (it lives as long as the state does); None for a state that cannot be weakly referenced."""
    key = id(state)
    entry = _SHARED.get(key)
    if entry is None or entry[0]() is not state:
        try:
            ref = weakref.ref(state, functools.partial(_forget, key))
        except TypeError:
            return None
        entry = _SHARED[key] = (ref, {})
    index = entry[1].get((n_min, n_max))
    if index is None:
        index = entry[1][n_min, n_max] = RequestIndex(n_min, n_max)
    return index


def one_path(tokens: list[int]) -> DraftTree:
    """A chain as a tree: each draft the only child of the one before."""
    n = len(tokens)
    return DraftTree(tokens=list(tokens), parents=list(range(-1, n - 1)), depths=list(range(1, n + 1)))


class NgramDrafter:
    kind = NGRAM.name
    aux_layers = None
    can_tree = NGRAM.capabilities.tree  # its chain as a one-path tree; the suffix drafter's corpus proposals branch
    self_limiting = NGRAM.capabilities.self_limiting  # auto gives it the whole k: its proposal stops at min_prob
    module = None  # nothing to run: the cost model measures it as a drafter with no network
    track = False  # keep the chain it would propose after every committed position (counterfactual evaluation)
    deterministic = True  # its chain is a function of the committed tokens: selectors score the chain itself
    track_k = 1  # the chain length kept per position when tracking (the selector sets its k)

    def __init__(self, model: NgramModel):
        self.model = model
        self.vocab_size = model.vocab_size
        self.draft_vocab_size = model.vocab_size + 1  # the last column: no draft
        self.reset()

    def reset(self) -> None:
        # its own index until it syncs to a request state, then the one the state's members share
        self.request = RequestIndex(self.model.n_min, self.model.n_max)
        self._read, self._done = self.request.tokens, 0  # it has read _read[:_done] (and kept their chains)
        self._state: weakref.ref | None = None  # the state it synced to last (its token list, its prompt length)
        self._tokens: list[int] | None = None
        self._prompt_len = -1
        self._shared: RequestIndex | None = None  # the state's shared index, while it reads one
        self._memo = None
        self.chains: dict[int, list[int]] = {}  # position s -> the chain it would draft for tokens s, s+1, ...
        self.chain_logits: list[torch.Tensor] = []
        self.last_score = 0.0

    def check_target(self, config) -> None:
        if config.vocab_size != self.vocab_size:
            raise ValueError(f"{self.kind} drafter made for a vocabulary of {self.vocab_size} tokens, the target has "
                             f"{config.vocab_size}")

    def propose(self, k: int):
        """The chain it would draft now (a Proposal: tokens, probabilities, match length); asked twice in one cycle
        (a hybrid selector scores it, then it drafts) it is computed once."""
        return self._at(len(self.request.tokens), k)

    def _at(self, n: int, k: int) -> Proposal:
        """The chain it would draft after the request's first n tokens (n <= what its index holds)."""
        memo, toks = self._memo, self.request.tokens
        if memo is None or memo[0] is not toks or memo[1] != (n, k, self._corpus_key()):
            memo = self._memo = (toks, (n, k, self._corpus_key()), self._propose(n, k))
        return memo[2]

    def _corpus_key(self) -> int:
        return 0

    def _propose(self, n: int, k: int) -> Proposal:
        return self.request.propose(k, upto=n)

    def sync(self, state) -> None:
        """Index the committed tokens; when tracking, record the chain it would propose after each new one."""
        tokens = state.tokens
        sizes = self.model.n_min, self.model.n_max
        req = request_index(state, *sizes)
        shared = req is not None
        if not shared:  # a state that cannot be weakly referenced: an index of its own, checked in full
            req = self.request if self.request is not self._shared else RequestIndex(*sizes)
        done = self._done
        seen = shared and self._state is not None and self._state() is state and self._tokens is tokens and \
            self._prompt_len == state.prompt_len
        # rule: the state it synced to last reads on (a request's tokens only grow); anything else is checked in full
        read_on = (seen and req is self.request and req.tokens is self._read and done <= len(tokens)) or \
            tokens[:done] == self._read[:done]
        n = len(req.tokens)
        if n > len(tokens) or (n and req.tokens[n - 1] != tokens[n - 1]) or (not shared and tokens[:n] != req.tokens):
            req.reset()  # rewritten under the index: it reads the request again
        self.request, self._shared = req, req if shared else None
        self._state, self._tokens, self._prompt_len = (weakref.ref(state), tokens, state.prompt_len) if shared else \
            (None, None, -1)
        if not self.track or not read_on:
            req.advance(tokens, len(tokens))
            self._read, self._done = req.tokens, len(tokens)
            return
        first = max(done, min(state.prompt_len, len(tokens)))  # rule: selectors evaluate generated positions only
        req.advance(tokens, first)
        for p in range(first, len(tokens)):  # the chain for positions p + 1, p + 2, ... reads tokens[:p + 1]
            req.advance(tokens, p + 1)
            self.chains[p + 1] = self._at(p + 1, self.track_k).tokens
        self._read, self._done = req.tokens, len(tokens)

    def _row(self, token: int | None) -> torch.Tensor:
        """[V+1] logits of a deterministic draft: 0 at its token (or at the no-draft column), -inf elsewhere."""
        row = torch.full((self.draft_vocab_size,), float("-inf"))
        row[self.vocab_size if token is None else token] = 0.0
        return row

    def draft_chain(self, k: int, params: SamplingParams, generator: torch.Generator | None
                    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """-> at most k drafts [K'] and, when sampling, their one-hot distributions [K',V]."""
        prop = self.propose(k)
        self.last_score = prop.score
        drafted = prop.tokens[:k]
        # rule: the chain's rows stay k long (the BD reward reads k rows); past the drafts, no draft
        self.chain_logits = [self._row(t) for t in drafted] + [self._row(None)] * (k - len(drafted))
        q = None
        if not params.greedy:  # [K',V] one-hot ([0,V] with no draft: the cycle is a plain step)
            q = torch.nn.functional.one_hot(torch.tensor(drafted, dtype=torch.long), self.vocab_size).float()
        return torch.tensor(drafted, dtype=torch.long), q

    def learn(self, tokens: list[int]) -> bool:
        return False  # prompt lookup keeps nothing across requests

    def draft_tree(self, spec: TreeSpec) -> DraftTree:
        """Its chain of at most spec.depth drafts as a one-path tree (prompt lookup has one continuation)."""
        prop = self.propose(min(spec.depth, spec.tokens))
        self.last_score = prop.score
        return one_path(prop.tokens)

    def confidence(self) -> float | None:
        return None  # its proposal's score is its signal (`propose`)

    def take_predictions(self, start: int, end: int) -> torch.Tensor:
        """[end-start, V+1] its next-token guesses (each kept chain's first token) at positions start..end-1."""
        firsts = {p: self._row(c[0] if c else None) for p, c in self.chains.items() if start <= p < end}
        rows, _ = take_rows(firsts, start, end)
        return rows

    def take_chain_hits(self, start: int, end: int, tokens: list[int]) -> torch.Tensor:
        """-> [track_k, end-start]: 1 at (j, p) where the chain kept at position p - j drafts tokens[p] at depth j (its
        per-depth acceptance under greedy decoding), 0 where it drafts another token, stops earlier or is unknown
        (before the first evaluated position). Chains that can still reach past `end` are kept."""
        k = self.track_k
        if any(p not in self.chains for p in range(start, end)):
            raise RuntimeError(f"no chain kept for positions {start}..{end - 1} (tracking was off or not synced)")
        hits = np.zeros((k, end - start), dtype=np.float32)  # (numpy: torch's per-element writes cost more)
        for p in range(start, end):
            for j in range(k):  # rule: depth j of the chain started at p - j is position p
                chain = self.chains.get(p - j)
                if chain is not None and j < len(chain) and chain[j] == tokens[p]:
                    hits[j, p - start] = 1.0
        self.chains = {s: c for s, c in self.chains.items() if s > end - k}
        return torch.from_numpy(hits)

    def to_target_ids(self, ids: torch.Tensor) -> torch.Tensor:
        """Columns -> target ids; the no-draft column -> -1 (never a token)."""
        return torch.where(ids == self.vocab_size, torch.full_like(ids, -1), ids)

    def full_logits(self, logits: torch.Tensor) -> torch.Tensor:
        """[..., V+1] -> [..., V]; a no-draft row is all -inf (the zero distribution)."""
        return logits[..., :self.vocab_size].float()


class SuffixDrafter(NgramDrafter):
    kind = SUFFIX.name

    def __init__(self, model: SuffixModel):
        self.index = model.index  # shared with the model: answers added to it are matched from then on
        self.matcher = self.index.matcher()  # the corpus's match of this request, grown token by token
        super().__init__(model)

    def reset(self) -> None:
        super().reset()
        self.matcher.reset()

    def learn(self, tokens: list[int]) -> bool:
        self.index.add([tokens])
        return True

    def _corpus_key(self) -> int:
        return self.index.version

    def draft_tree(self, spec: TreeSpec) -> DraftTree:
        """SuffixDecoding's tree from the global index (best-first by path probability, spec.tokens nodes, spec.depth
        levels, spec.top_k children per node), or this request's chain where `choose` prefers it."""
        self.matcher.follow(self.request.tokens)
        tree = self.matcher.propose_tree(spec.tokens, spec.depth, spec.top_k)
        mine = self.request.propose(min(spec.depth, spec.tokens), most_frequent=True)
        best = choose(tree, mine)
        self.last_score = best.score
        if best is mine:
            return one_path(mine.tokens)
        return DraftTree(tokens=tree.tokens, parents=tree.parents, depths=tree.depths)

    def _propose(self, n: int, k: int) -> Proposal:
        """The global index's or this request's proposal (frequency walk for both; `proposal.choose`)."""
        self.matcher.follow(self.request.tokens, n)
        return choose(self.matcher.propose(k), self.request.propose(k, most_frequent=True, upto=n))
