"""The decode loop's steps, as gpt-fast's: short functions over one request in flight (`Run`: its `DecodeState`,
sampling, generator, observer and hooks). Steps write no metrics: they mark the phase boundaries inside them
(`run.obs.lap`) and return what happened; the loop reports it to the request's observer (`observer.py`).

`prefill` (the prompt -> the first token), `plain_step` (one token, no draft), `catch_up` (a drafter reads the tokens
committed since its last sync), `draft` (a chain or a tree), `verify` (one target pass over [last committed token,
drafts], the acceptance rule, the target cache rolled back to the accepted prefix or packed to the accepted tree path)
and `commit` (tokens, target features and the rows that chose them). Output is the target's own whichever drafter
drafts (lossless at temperature 0, distribution-exact when sampling).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from draftpool.forward.keyed import KeyedNoise
from draftpool.forward.sampling import SamplingParams, probs_from_logits, sample
from specsel.decoding.hooks import Hooks
from specsel.decoding.observer import Observer
from specsel.decoding.request import DecodeState
from specsel.decoding.target import TargetPass, TargetRunner
from specsel.decoding.tree import DraftTree, TreeSpec, ancestor_mask
from specsel.decoding.verify import verify_chain_greedy, verify_chain_sampling, verify_tree_greedy


@dataclass
class Run:
    """One request in flight."""

    state: DecodeState
    params: SamplingParams
    gen: torch.Generator | KeyedNoise  # KeyedNoise: a seeded request's draws keyed by position (reproducible)
    obs: Observer
    hooks: Hooks


@dataclass
class Chain:
    """A drafted chain: tokens [n] (n <= k: a drafter may stop early, even at 0) and, when sampling, the drafter's
    distributions q [n, V] they were drawn from."""

    tokens: torch.Tensor
    q: torch.Tensor | None

    def __len__(self) -> int:
        return self.tokens.numel()


def emit(out: TargetPass, row: int, run: Run) -> int:
    """The target's token at a row of its pass, for the next position: its argmax (greedy), a sample of its
    distribution, or the keyed sample at that position."""
    if run.params.greedy:
        return out.choice(row)
    probs = probs_from_logits(out.logits(row), run.params)
    if isinstance(run.gen, KeyedNoise):
        return run.gen.choose(probs, len(run.state.tokens))
    return int(sample(probs, run.gen))


def commit(run: Run, out: TargetPass, rows: list[int], tokens: list[int], feats: torch.Tensor | None) -> None:
    """rule: tokens are committed with their target features and, to the collector, the pass rows that chose them."""
    state = run.state
    state.tokens.extend(tokens)
    if feats is not None:
        state.feats = feats if state.feats is None else torch.cat([state.feats, feats], dim=0)
    if run.hooks.collector is not None:
        run.hooks.collector.add(out, rows)


def prefill(target: TargetRunner, drafters: list, run: Run, rollback: bool) -> None:
    """The target reads the prompt (the state's tokens) and emits the first token; every drafter starts empty.
    rollback: keep what a cache rollback needs (speculative modes)."""
    target.reset()
    target.rollback = rollback
    for d in drafters:
        d.reset()
    out = target.forward(run.state.tokens)
    commit(run, out, [-1], [emit(out, -1, run)], out.feats)


def plain_step(target: TargetRunner, run: Run) -> TargetPass:
    """One target pass over the last token, no draft: commits the next token (mode plain, auto's k = 0)."""
    out = target.forward(run.state.tokens[-1:])  # rows: 1
    commit(run, out, [0], [emit(out, 0, run)], None if out.feats is None else out.feats[:1])
    return out


def catch_up(drafter, i: int, run: Run, chunk: int | None) -> int:
    """Drafter i reads the tokens committed since its last sync. chunk: on a switch, the tokens the last speculative
    cycle committed (None: no switch). On a switch that catch-up is the switching cost (switch_s, part of draft_s)
    -> the catch-up tokens: those it read beyond that chunk (0 without a switch)."""
    state = run.state
    behind = len(state.tokens) - state.synced[i]
    drafter.sync(state)
    state.synced[i] = len(state.tokens)
    if chunk is None:
        return 0
    run.obs.lap("switch_s", "draft_s")
    return max(0, behind - chunk)


def draft(drafter, k: int, tree: TreeSpec | None, run: Run) -> Chain | DraftTree:
    """A tree of shape `tree`, or a chain of at most k tokens."""
    if tree is not None:
        return drafter.draft_tree(tree)
    if isinstance(run.gen, KeyedNoise):
        run.gen.cursor = len(run.state.tokens)  # rule: a drafter draws with the target's noise at each position
    return Chain(*drafter.draft_chain(k, run.params, run.gen))


def verify(target: TargetRunner, run: Run, drafted: Chain | DraftTree) -> tuple[int, TargetPass]:
    """Verify a chain or a tree; commits the accepted drafts and the next token -> (accepted drafts, the pass)."""
    if isinstance(drafted, Chain):
        return verify_chain(target, run, drafted)
    return verify_tree(target, run, drafted)


def verify_chain(target: TargetRunner, run: Run, chain: Chain) -> tuple[int, TargetPass]:
    """One target pass over [last committed, drafts]. -> (accepted drafts, the pass: row j holds the target's
    distribution for committed position len_before + j)"""
    state, params, draft_ids = run.state, run.params, chain.tokens
    tokens = draft_ids.tolist()  # read back to the host once
    base = len(target)  # cached positions = every committed token but the last
    out = target.forward([state.tokens[-1]] + tokens)  # rows: root + K drafts
    run.obs.lap("target_s", "verify_s")
    if params.greedy:
        if tokens and out.choice(0) == tokens[0]:
            # rule: row 0 alone first (a weak drafter's chain stops there); past it, the other rows in one batched
            # projection instead of one lm_head read per accepted row
            out.project(list(range(1, len(tokens) + 1)))
        n, nxt = verify_chain_greedy(tokens, out.choice)
    elif isinstance(run.gen, KeyedNoise):  # [1 + K, V]: row j is the distribution at position len(tokens) + j
        p, pos = probs_from_logits(out.logits(slice(None)), params), len(state.tokens)
        # rule: accept the longest prefix where the draft equals the target's keyed sample at its position
        n, nxt = verify_chain_greedy(tokens, lambda j: run.gen.choose(p[j], pos + j))
    else:
        n, nxt = verify_chain_sampling(draft_ids, chain.q, probs_from_logits(out.logits(slice(None)), params),
                                       run.gen)
    # rule: keep the root and the n accepted drafts in the cache; their features are now committed
    target.truncate(base + 1 + n)
    commit(run, out, list(range(n + 1)), tokens[:n] + [nxt],
           None if out.feats is None else out.feats[:1 + n])
    return n, out


def verify_tree(target: TargetRunner, run: Run, tree: DraftTree) -> tuple[int, TargetPass]:
    """Greedy tree verification of the longest accepted path -> (its length, the pass)."""
    base = len(target)
    allowed = torch.ones(len(tree) + 1, base + len(tree) + 1, dtype=torch.bool)
    allowed[:, base:] = ancestor_mask(tree.parents)
    positions = [base] + [base + d for d in tree.depths]
    run.obs.lap("verify_s")  # the masks
    out = target.forward([run.state.tokens[-1]] + tree.tokens, positions, allowed)  # rows: root + N nodes
    run.obs.lap("target_s", "verify_s")
    path, nxt = verify_tree_greedy(tree.tokens, tree.parents, out.choice)
    keep = [0] + [i + 1 for i in path]  # root + accepted nodes, in path order
    target.keep(base, keep)  # rule: the cache keeps the accepted path only, packed after the committed prefix
    commit(run, out, keep, [tree.tokens[i] for i in path] + [nxt], None if out.feats is None else out.feats[keep])
    return len(path), out
