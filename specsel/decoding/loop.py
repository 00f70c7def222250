"""The decode loop: plain, chain-speculative and tree-speculative generation over one target KV cache and a pool of
drafters. A single drafter is a pool of one with a fixed selector.

Every cycle: the selector picks a drafter -> that drafter catches up on the tokens committed since it last read
(`sync`; on a switch this catch-up is the switching cost) -> it drafts a chain or a tree -> one target pass over
[last committed token, drafts] -> accept -> the target cache is rolled back to the accepted prefix (or packed to the
accepted tree path) -> tokens and target features are committed -> the selector gets its feedback. Output is the
target's own whichever drafter drafts (lossless at temperature 0, distribution-exact when sampling).

Shaped as gpt-fast's: `generate` = `prefill`, then `plain_step` or `spec_cycle` until done; phase times are taken
at the edges by one `PhaseTimer`. Drafters are read through the `Drafter` protocol only (`drafter.py`).
The selector is the selection layer's business (`specsel/selection/selector.py`); this loop only calls its hooks.
Batch size 1; the state keeps per-request lengths so a batched version can hold one per row.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Protocol

import torch

from draftpool.forward.sampling import SamplingParams, probs_from_logits, sample
from draftpool.forward.timing import sync_device
from specsel.decoding import costs as cost_model
from specsel.decoding.auto import AutoChooser, AutoSpec
from specsel.decoding.request import DecodeState, RequestMetrics, cut_at_stop
from specsel.decoding.target import CacheError, TargetPass, TargetRunner
from specsel.decoding.tree import TreeSpec, ancestor_mask
from specsel.decoding.verify import verify_chain_greedy, verify_chain_sampling, verify_tree_greedy

MODES = ("plain", "chain", "auto", "tree")
GREEDY = SamplingParams()


class ReducedPrecisionWarning(UserWarning):
    """Speculative greedy decoding in bf16 / fp16: not token-exact against plain decoding in the same dtype."""


class SpecError(ValueError):
    """A bad decoding setup or request."""


class SelectorProtocol(Protocol):
    """Picks the drafter of every cycle and takes the cycle's feedback (the selection layer implements it)."""

    full_information: bool  # drafters keep their predictions at every committed position (counterfactual feedback)

    def bind(self, dec: SpecDecoder) -> None: ...

    def start_request(self, dec: SpecDecoder, state: DecodeState) -> None: ...

    def select(self) -> int: ...

    def after_cycle(self, dec: SpecDecoder, state: DecodeState, i: int, n_acc: int, out: TargetPass,
                    params: SamplingParams) -> None: ...

    def finish_request(self, dec: SpecDecoder, state: DecodeState, params: SamplingParams) -> None: ...

    def weights_changed(self, changed: list[int]) -> None: ...


class FixedSelector:
    """Always the same drafter, no feedback: what a single drafter is."""

    full_information = False

    def __init__(self, arm: int = 0):
        self.arm = arm

    def bind(self, dec: SpecDecoder) -> None:
        if not 0 <= self.arm < len(dec.drafters):
            raise SpecError(f"fixed drafter {self.arm} is not in a pool of {len(dec.drafters)}")

    def select(self) -> int:
        return self.arm

    def start_request(self, dec, state) -> None:
        pass

    def after_cycle(self, dec, state, i, n_acc, out, params) -> None:
        pass

    def finish_request(self, dec, state, params) -> None:
        pass

    def weights_changed(self, changed: list[int]) -> None:
        pass


def check_drafter(target: TargetRunner, drafter) -> None:
    """One clear error when a drafter cannot serve this target: its vocabulary, then the drafter's own check."""
    if drafter.vocab_size != target.vocab_size:
        raise SpecError(f"drafter vocabulary {drafter.vocab_size} does not match the target's {target.vocab_size}")
    try:
        drafter.check_target(target.config)
    except ValueError as e:
        raise SpecError(str(e)) from None


class PhaseTimer:
    """Wall seconds of a request's phases into its RequestMetrics: `lap(*fields)` waits for queued device work and
    adds the seconds since the previous lap to each field named (none: the time is left to other_s)."""

    def __init__(self, metrics: RequestMetrics, device: torch.device):
        self.m, self.device = metrics, device
        self.start = self.last = time.perf_counter()

    def lap(self, *fields: str) -> float:
        """-> the seconds since the previous lap, added to every field named."""
        sync_device(self.device)
        now = time.perf_counter()
        seconds, self.last = now - self.last, now
        for f in fields:
            setattr(self.m, f, getattr(self.m, f) + seconds)
        return seconds

    def total(self) -> float:
        """Seconds since the timer started (device work waited for)."""
        sync_device(self.device)
        return time.perf_counter() - self.start


class SpecDecoder:
    """mode 'plain' (no drafter), 'chain' (k drafts, any drafter), 'auto' (chains of 0..k drafts, the length chosen
    every cycle from measured costs and acceptance, 0 = a plain step) or 'tree' (EAGLE-3 heads, greedy).

    drafters: one drafter, or {name: drafter} for a pool; `selector` picks among them every cycle (default: always
    the first). backend: the target's forward (`TargetRunner`: auto, lean, hf); compile: torch.compile it."""

    def __init__(self, target_model, drafters=None, mode: str = "chain", k: int = 4, tree: TreeSpec | None = None,
                 stop_ids: list[int] | None = None, selector: SelectorProtocol | None = None,
                 auto: AutoSpec | None = None, backend: str = "auto", compile: bool = False):
        if mode not in MODES:
            raise SpecError(f"unknown mode {mode!r}; choose from {', '.join(MODES)}")
        if mode == "plain" and selector is not None:
            raise SpecError("mode 'plain' decodes without drafters: a selector needs mode chain or tree")
        if drafters is not None and not isinstance(drafters, dict):
            drafters = {"drafter": drafters}
        drafters = {} if mode == "plain" or drafters is None else drafters
        if mode != "plain" and not drafters:
            raise SpecError(f"mode {mode!r} needs a drafter")
        if mode in ("chain", "auto") and k < 1:
            raise SpecError(f"k (draft tokens per cycle{', at most' if mode == 'auto' else ''}) must be >= 1, "
                            f"got {k}")
        self.auto = (auto or AutoSpec()) if mode == "auto" else None
        named = set(self.auto.priors) | set(self.auto.sampled_priors) if self.auto is not None else set()
        if named - set(drafters):
            unknown = sorted(named - set(drafters))
            raise SpecError(f"auto priors for drafters not in the pool: {unknown}")
        # per (drafter, greedy): kept across requests (the estimate goes on); greedy and sampled requests accept
        # differently, so each has its own estimate
        self.choosers: dict[tuple[int, bool], AutoChooser] = {}
        self.mode, self.k = mode, k
        self.tree = tree or TreeSpec()
        self.names, self.drafters = list(drafters), list(drafters.values())
        aux = {tuple(d.aux_layers) for d in self.drafters if d.aux_layers}
        if len(aux) > 1:
            raise SpecError(f"the pool's EAGLE-3 heads read different target layers ({sorted(aux)}); one pool shares "
                            f"one feature set")
        try:
            self.target = TargetRunner(target_model, list(aux.pop()) if aux else None, backend=backend,
                                       compile=compile)
            if mode == "tree":
                self.target.check_cache(tree=True)
        except CacheError as e:
            raise SpecError(str(e)) from None
        for name, d in drafters.items():
            check_drafter(self.target, d)
            if mode == "tree" and not d.can_tree:
                raise SpecError(f"tree drafting needs drafters that draft trees (EAGLE-3 heads); {name!r} "
                                f"({d.kind}) drafts chains only: use mode 'chain' or 'auto'")
            if mode == "tree":
                try:
                    self.tree.validate(d.draft_vocab_size)
                except ValueError as e:
                    raise SpecError(str(e)) from None
        # rule: speculation is token-exact by construction where every verified row is computed bit for bit as a
        # one-token step computes it: the lean forward's chains on kernels measured row-invariant. Elsewhere fp32
        # differs only in the last bits; bf16 / fp16 logits are coarse (steps of 0.125 near 20), so a near-tie can
        # resolve differently in a pass over several tokens
        invariant = self.target.lean is not None and self.target.lean.batch_invariant and mode != "tree"
        self.token_exact = mode == "plain" or invariant or self.target.dtype in (torch.float32, torch.float64)
        if not self.token_exact:
            name = str(self.target.dtype).removeprefix("torch.")
            why = ("tree verification attends through one masked pass" if mode == "tree" and self.target.lean
                   else f"this target's forward ({self.target.backend}) is not batch-invariant here")
            warnings.warn(f"speculative decoding in {name} is not token-exact against plain decoding in that dtype: "
                          f"{why}, so a verification pass over several tokens rounds differently from one-token "
                          f"steps and near-tied logits can pick another token (each emitted token is still the "
                          f"target's argmax in the pass that verified it); use float32, or mode chain / auto with "
                          f"the lean forward, for exact output", ReducedPrecisionWarning, stacklevel=2)
        self.auto_trees = self._auto_trees()
        self.stop_ids = set(stop_ids or [])
        self.state: DecodeState | None = None  # the last request's final state
        self.collector = None  # online/feedback.FeedbackCollector: keeps the target rows of committed positions
        # called at every cycle boundary (online/hotswap.HotSwap.poll): -> indices of drafters whose weights changed
        self.on_cycle: Callable[[], list[int]] | None = None
        self.swaps = 0
        self.watch: Callable[[list[int]], bool] | None = None  # the current request's (generate)
        self.selector: SelectorProtocol = FixedSelector()
        if self.drafters:
            self.set_selector(selector or FixedSelector())

    def set_selector(self, selector: SelectorProtocol) -> None:
        if self.auto is not None and getattr(selector, "game", None) is None and \
                getattr(selector, "reward", "none") != "none":
            raise SpecError("mode 'auto' varies k per cycle (0 = a plain step); bandit rewards are defined on fixed-k "
                            "drafts: use auto with a full-information or fixed selector, or mode 'chain'")
        selector.bind(self)
        self.selector = selector

    def _auto_trees(self) -> tuple:
        """The trees `auto` may weigh: its grid, where every drafter drafts trees within its vocabulary, the target
        cache packs a tree's path and tree verification is token-exact (fp32 / fp64: a masked pass is not
        row-invariant in 16-bit dtypes); else none."""
        if self.auto is None or not self.auto.trees or self.target.dtype not in (torch.float32, torch.float64):
            return ()
        if not all(d.can_tree for d in self.drafters):
            return ()
        try:
            self.target.check_cache(tree=True)
        except CacheError:
            return ()
        vocab = min(d.draft_vocab_size for d in self.drafters)
        return tuple(t for t in self.auto.trees if t[1] <= vocab)

    @property
    def lookahead(self) -> int:
        auto = max([self.k] + [t[0] for t in getattr(self, "auto_trees", ())])
        return {"plain": 0, "chain": self.k, "auto": auto, "tree": self.tree.depth}[self.mode]

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

    def weights_changed(self, changed: list[int], state: DecodeState | None = None) -> None:
        """Drafters `changed` got new weights between two cycles (or requests): their caches were computed by the old
        weights, so they start over (the next sync prefills the committed tokens again); the selector restacks what
        it keeps."""
        for j in changed:
            self.drafters[j].reset()
            if state is not None:
                state.synced[j] = 0
        self.selector.weights_changed(changed)
        self.swaps += len(changed)

    def generate(self, prompt: list[int], max_new_tokens: int, params: SamplingParams = GREEDY,
                 seed: int = 0, watch: Callable[[list[int]], bool] | None = None) -> tuple[list[int], RequestMetrics]:
        """-> (new tokens, stopping after a stop token or max_new_tokens, and the request's metrics).

        watch: called after the prefill and after every cycle with the new tokens committed so far (not yet cut at
        a stop token or max_new_tokens); True stops decoding there (a client that hung up, a stop string, a stream
        that sends each cycle's text)."""
        self.check_request(prompt, max_new_tokens, params)
        self.watch = watch
        try:
            return self._generate(prompt, max_new_tokens, params, seed)
        finally:
            self.watch = None

    def _generate(self, prompt: list[int], max_new_tokens: int, params: SamplingParams, seed: int
                  ) -> tuple[list[int], RequestMetrics]:
        gen = torch.Generator(device=self.target.device).manual_seed(seed)
        m = RequestMetrics()
        clock = PhaseTimer(m, self.target.device)
        state = self.prefill(prompt, params, gen, m)
        if self.mode == "plain":
            while not self.done(state, max_new_tokens):
                self.plain_step(state, params, gen, m)
            return self._finish(state, max_new_tokens, clock)
        clock.lap()  # the prefill: other_s
        self.selector.start_request(self, state)
        clock.lap("eval_s")
        prev = None  # the drafter of the last speculative cycle
        while not self.done(state, max_new_tokens):
            prev = self.spec_cycle(state, params, gen, clock, prev)
        self.selector.finish_request(self, state, params)
        clock.lap("eval_s")
        return self._finish(state, max_new_tokens, clock)

    def prefill(self, prompt: list[int], params: SamplingParams, gen: torch.Generator, m: RequestMetrics
                ) -> DecodeState:
        """The target reads the prompt and emits the first token; every drafter starts empty."""
        self.target.reset()
        self.target.rollback = self.mode != "plain"
        for d in self.drafters:
            d.reset()
        out = self.target.forward(prompt)
        m.target_forwards += 1
        state = self.state = DecodeState(tokens=list(prompt) + [self.emit(out, -1, params, gen)],
                                         prompt_len=len(prompt), feats=out.feats, synced=[0] * len(self.drafters))
        self.record(out, [-1])
        return state

    def plain_step(self, state: DecodeState, params: SamplingParams, gen: torch.Generator, m: RequestMetrics
                   ) -> TargetPass:
        """One target pass over the last token, no draft: commits the next token (mode plain, auto's k = 0)."""
        out = self.target.forward(state.tokens[-1:])  # rows: 1
        m.target_forwards += 1
        self._commit(state, [self.emit(out, 0, params, gen)], None if out.feats is None else out.feats[:1])
        self.record(out, [0])
        return out

    def spec_cycle(self, state: DecodeState, params: SamplingParams, gen: torch.Generator, clock: PhaseTimer,
                   prev: int | None) -> int | None:
        """select -> catch up -> draft -> verify -> feedback (or, as auto decides, select -> a plain step ->
        feedback) -> the drafter of the last speculative cycle (switches are counted between those)."""
        m, sel = clock.m, self.selector
        if self.on_cycle is not None:  # rule: weights change only here, between two cycles
            changed = self.on_cycle()
            if changed:
                self.weights_changed(changed, state)
                m.weight_swaps += len(changed)
        i = sel.select()
        # rule: auto chooses the chain length of model drafters; a self-limiting drafter (model-free: its proposal
        # stops where its confidence does, and costs microseconds) gets the whole k
        auto = self.auto is not None and not self.drafters[i].self_limiting
        chooser = self.chooser(i, state, params.greedy) if auto else None  # first use: costs measured
        clock.lap("select_s")
        mark = clock.last  # the chooser learns from the time of draft + verify
        # rule: trees verify greedily, and selectors read a cycle's rows as a chain's: auto weighs trees only for
        # greedy requests with a fixed drafter
        trees = params.greedy and isinstance(sel, FixedSelector)
        k, plan = chooser.next_plan(trees) if chooser is not None else (self.k, None)
        if k == 0 and plan is None:  # auto: plain decoding pays more than this drafter now: one step, no draft
            out = self.plain_step(state, params, gen, m)
            chooser.observe_time(0, clock.lap("verify_s"))
            m.drafted.append(0)
            m.plans.append("plain")
            sel.after_cycle(self, state, i, 0, out, params)  # a one-token chunk for full-information selectors
            clock.lap("eval_s")
            return prev
        self.catch_up(state, i, prev, clock)
        d = self.drafters[i]
        is_tree = self.mode == "tree" or plan is not None
        if is_tree:
            tree = d.draft_tree(TreeSpec(*plan) if plan is not None else self.tree)
            clock.lap("draft_s")
            n_acc, out = self.verify_tree(state, tree, clock)
        else:
            draft, q = d.draft_chain(k, params, gen)  # rule: at most k; a drafter may stop early (even at 0)
            k = len(draft)
            clock.lap("draft_s")
            n_acc, out = self.verify_chain(state, draft, q, params, gen, clock)
        clock.lap("verify_s")
        if chooser is not None:
            if plan is not None:
                chooser.observe_tree(plan, n_acc)
            else:
                chooser.observe(k, n_acc)
            chooser.observe_time(k, clock.last - mark, plan)
            m.plans.append(chooser.last_plan)
        m.target_forwards += 1
        m.accepted.append(n_acc)
        m.choices.append(i)
        m.drafted.append(len(tree) if is_tree else k)
        # feedback: counterfactual acceptance of every drafter, or the chosen drafter's reward
        sel.after_cycle(self, state, i, n_acc, out, params)
        clock.lap("eval_s")
        return i

    def catch_up(self, state: DecodeState, i: int, prev: int | None, clock: PhaseTimer) -> None:
        """Drafter i reads the tokens committed since its last sync. On a switch that catch-up is the switching cost
        (switch_s, part of draft_s) and the tokens it reads beyond the last cycle's chunk are catch-up tokens."""
        behind = len(state.tokens) - state.synced[i]
        self.drafters[i].sync(state)
        state.synced[i] = len(state.tokens)
        if prev is not None and i != prev:
            m = clock.m
            clock.lap("switch_s", "draft_s")
            m.switches += 1
            m.catchup_tokens += max(0, behind - (1 + m.accepted[-1]))

    def chooser(self, i: int, state: DecodeState, greedy: bool = True) -> AutoChooser:
        """Drafter i's `auto` chooser for greedy or sampled requests, made on first use (costs from the cache, else
        measured on this request's prefix)."""
        if (i, greedy) not in self.choosers:
            a = self.auto
            costs = a.costs
            ranks = a.rank_priors.get(self.names[i]) if self.auto_trees and greedy else None
            trees = self.auto_trees if ranks else ()  # trees are weighed only with the drafter's rank rates
            if costs is None:
                key = cost_model.cost_key(self.target.model, self.drafters[i], self.k, self.target.forward_id)
                # rule: drafters of one shape cost the same: measured once per AutoSpec, even without a cache file
                costs = a.measured.get(key) or cost_model.load_cached(a.costs_cache, key)
                if costs is None or (trees and not costs.tree_step):
                    costs = cost_model.measure(self.target, self.drafters[i], state, self.k, a.repeats, trees)
                    state.synced[i] = len(state.tokens)  # measure synced it (its draft is dropped at the next sync)
                    cost_model.store(a.costs_cache, key, costs)
                a.measured[key] = costs
            prior = (a.priors if greedy else a.sampled_priors).get(self.names[i], [a.no_prior])
            self.choosers[i, greedy] = AutoChooser(costs, prior, self.k, a.margin, a.prior_weight, a.probe_every,
                                           a.time_weight, ranks, trees, a.window)
        return self.choosers[i, greedy]

    def _finish(self, state: DecodeState, max_new_tokens: int, clock: PhaseTimer
                ) -> tuple[list[int], RequestMetrics]:
        new = cut_at_stop(state.tokens[state.prompt_len:], self.stop_ids, max_new_tokens)
        clock.m.total_s = clock.total()
        clock.m.new_tokens = len(new)
        return new, clock.m

    def verify_chain(self, state: DecodeState, draft: torch.Tensor, q: torch.Tensor | None,
                     params: SamplingParams, gen: torch.Generator | None, clock: PhaseTimer
                     ) -> tuple[int, TargetPass]:
        """One target pass over [last committed, drafts]; commits the accepted drafts and the next token.
        -> (accepted drafts, the pass: row j holds the target's distribution for committed position len_before + j)"""
        base = len(self.target)  # cached positions = every committed token but the last
        out = self.target.forward([state.tokens[-1]] + draft.tolist())  # rows: root + K drafts
        clock.lap("target_s", "verify_s")
        if params.greedy:
            tokens = draft.tolist()
            if tokens and out.choice(0) == tokens[0]:
                # rule: row 0 alone first (a weak drafter's chain stops there); past it, the other rows in one
                # batched projection instead of one lm_head read per accepted row
                out.project(list(range(1, len(tokens) + 1)))
            n, nxt = verify_chain_greedy(tokens, out.choice)
        else:
            n, nxt = verify_chain_sampling(draft, q, probs_from_logits(out.logits(slice(None)), params), gen)
        # keep the root and the n accepted drafts in the cache; their features are now committed
        self.target.truncate(base + 1 + n)
        self._commit(state, draft[:n].tolist() + [nxt], None if out.feats is None else out.feats[:1 + n])
        self.record(out, list(range(n + 1)))
        return n, out

    def verify_tree(self, state: DecodeState, tree, clock: PhaseTimer) -> tuple[int, TargetPass]:
        """Greedy tree verification; commits the longest accepted path and the next token -> (its length, the pass)."""
        base = len(self.target)
        allowed = torch.ones(len(tree) + 1, base + len(tree) + 1, dtype=torch.bool)
        allowed[:, base:] = ancestor_mask(tree.parents)
        positions = [base] + [base + d for d in tree.depths]
        clock.lap("verify_s")  # the masks
        out = self.target.forward([state.tokens[-1]] + tree.tokens, positions, allowed)  # rows: root + N nodes
        clock.lap("target_s", "verify_s")
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

    @staticmethod
    def _commit(state: DecodeState, tokens: list[int], feats: torch.Tensor | None) -> None:
        state.tokens.extend(tokens)
        if feats is not None:
            state.feats = torch.cat([state.feats, feats], dim=0)

    def done(self, state: DecodeState, max_new_tokens: int) -> bool:
        n = len(state.tokens)
        if n - state.prompt_len >= max_new_tokens or (self.watch is not None and self.watch(state.tokens[
                state.prompt_len:])):
            return True
        # a cycle adds at most lookahead + 1 tokens: only those can hold a new stop token
        tail = state.tokens[max(state.prompt_len, n - self.lookahead - 1):]
        return any(t in self.stop_ids for t in tail)
