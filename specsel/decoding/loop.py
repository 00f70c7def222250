"""The decode loop: plain, chain-speculative and tree-speculative generation over one target KV cache and a pool of
drafters (`SpecDecoder`). A single drafter is a pool of one with a fixed selector.

Every cycle (`spec_cycle`): new drafter weights are taken (the `poll` hook) -> the selector picks a drafter -> auto
plans the cycle (a chain length, a tree, or a plain step) -> that drafter catches up on the tokens committed since it
last read (on a switch this catch-up is the switching cost) -> it drafts -> one target pass verifies and commits
(`steps.py`) -> the selector takes its feedback and auto learns from the cycle's outcome (`Cycle`). Output is the
target's own whichever drafter drafts.

Shaped as gpt-fast's: `decode` = `prefill`, then `plain_step` or `spec_cycle` until done. A request's one observer
(`Observer`, `observer.py`) records its metrics from every cycle's outcome, plain steps included, and keeps the
optional phase times (`timing`: `timing.py`, off = no device sync at all). Drafters are read through the `Drafter`
protocol only (`drafter.py`); selectors see a `PoolView` (`view.py`), never the decoder; the caller's hooks come in
as a `Hooks` value (`hooks.py`); auto's costs and choosers are its `AutoPolicy` (`policy.py`). Batch size 1; the
state keeps per-request lengths so a batched version can hold one per row.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace

import torch

from draftpool.forward.keyed import KeyedNoise
from draftpool.forward.sampling import SamplingParams
from specsel.decoding.auto import AutoSpec
from specsel.decoding.errors import ReducedPrecisionWarning, SpecError
from specsel.decoding.hooks import Hooks
from specsel.decoding.observer import PLAIN_STEP, Cycle, Observer
from specsel.decoding.policy import AutoPolicy, auto_trees
from specsel.decoding.request import DecodeState, RequestMetrics, cut_at_stop
from specsel.decoding.steps import Run, catch_up, draft, plain_step, prefill, verify
from specsel.decoding.target import CacheError, TargetRunner
from specsel.decoding.tree import TreeSpec
from specsel.decoding.view import FixedSelector, PoolView, SelectorProtocol

__all__ = ["GREEDY", "MODES", "Cycle", "Decoded", "FixedSelector", "Hooks", "ReducedPrecisionWarning",
           "SelectorProtocol", "SpecDecoder", "SpecError", "check_drafter"]

MODES = ("plain", "chain", "auto", "tree")
GREEDY = SamplingParams()


@dataclass(frozen=True)
class Decoded:
    """One request's result (`SpecDecoder.decode`): its new tokens (cut after a stop token or at max_new_tokens), its
    metrics, and its final state (every committed token, past the cut too, and the target features), which the
    online layer's feedback reads."""

    tokens: list[int]
    metrics: RequestMetrics
    state: DecodeState


def check_drafter(target: TargetRunner, drafter) -> None:
    """One clear error when a drafter cannot serve this target: its vocabulary, then the drafter's own check."""
    if drafter.vocab_size != target.vocab_size:
        raise SpecError(f"drafter vocabulary {drafter.vocab_size} does not match the target's {target.vocab_size}")
    try:
        drafter.check_target(target.config)
    except ValueError as e:
        raise SpecError(str(e)) from None


class SpecDecoder:
    """mode 'plain' (no drafter), 'chain' (k drafts, any drafter), 'auto' (chains of 0..k drafts, the length chosen
    every cycle from measured costs and acceptance, 0 = a plain step) or 'tree' (EAGLE-3 heads, greedy).

    drafters: one drafter, or {name: drafter} for a pool; `selector` picks among them every cycle (default: always
    the first). backend: the target's forward (`TargetRunner`: auto, lean, hf); compile: torch.compile it.
    timing: phase times in every request's metrics (a device sync per phase); off: none, total_s only.
    hooks: the default `Hooks` of every request (a request may bring its own to `generate`)."""

    def __init__(self, target_model, drafters=None, mode: str = "chain", k: int = 4, tree: TreeSpec | None = None,
                 stop_ids: list[int] | None = None, selector: SelectorProtocol | None = None,
                 auto: AutoSpec | None = None, backend: str = "auto", compile: bool = False, timing: bool = True,
                 hooks: Hooks | None = None):
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
        self.mode, self.k, self.timing = mode, k, timing
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
            self._check_member(name, d)
        self._check_exact()
        self.auto_trees = auto_trees(self.auto, self.target, self.drafters) if self.auto is not None else ()
        self.policy = AutoPolicy(self.auto, self.names, self.drafters, k, self.auto_trees) if self.auto else None
        self.stop_ids = set(stop_ids or [])
        self.hooks = hooks or Hooks()
        self.swaps = 0
        self.selector: SelectorProtocol = FixedSelector()
        if self.drafters:
            self.set_selector(selector or FixedSelector())

    def _check_member(self, name: str, d) -> None:
        check_drafter(self.target, d)
        if self.mode == "tree" and not d.can_tree:
            raise SpecError(f"tree drafting needs drafters that draft trees (EAGLE-3 heads); {name!r} "
                            f"({d.kind}) drafts chains only: use mode 'chain' or 'auto'")
        if self.mode == "tree":
            try:
                self.tree.validate(d.draft_vocab_size)
            except ValueError as e:
                raise SpecError(str(e)) from None

    def _check_exact(self) -> None:
        # rule: speculation is token-exact by construction where every verified row is computed bit for bit as a
        # one-token step computes it: the lean forward's chains and (in 16-bit dtypes) trees on kernels measured
        # row-invariant. Elsewhere fp32 differs only in the last bits; bf16 / fp16 logits are coarse (steps of
        # 0.125 near 20), so a near-tie can resolve differently in a pass over several tokens
        mode, target = self.mode, self.target
        self.token_exact = mode == "plain" or target.token_exact
        if not self.token_exact:
            name = str(target.dtype).removeprefix("torch.")
            why = f"this target's forward ({target.backend}) is not batch-invariant here"
            warnings.warn(f"speculative decoding in {name} is not token-exact against plain decoding in that dtype: "
                          f"{why}, so a verification pass over several tokens rounds differently from one-token "
                          f"steps and near-tied logits can pick another token (each emitted token is still the "
                          f"target's argmax in the pass that verified it); use float32, or the lean forward on "
                          f"row-invariant kernels (any mode), for exact output", ReducedPrecisionWarning,
                          stacklevel=3)

    def set_selector(self, selector: SelectorProtocol) -> None:
        """Bind a selector to this decoder's pool (it sees a `PoolView`, with the selector it replaces)."""
        if self.auto is not None and selector.bandit:
            raise SpecError("mode 'auto' varies k per cycle (0 = a plain step); bandit rewards are defined on fixed-k "
                            "drafts: use auto with a full-information or fixed selector, or mode 'chain'")
        selector.bind(PoolView(self.names, self.drafters, self.k, self.mode, self.tree, self.target.forward_id,
                               self.selector))
        self.selector = selector

    @property
    def lookahead(self) -> int:
        auto = max([self.k] + [t[0] for t in self.auto_trees])
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

    def prepare(self) -> None:
        """auto: every drafter's costs, from its settings or the cost cache, else measured now after a synthetic
        prefix; `generate` calls it before a request's first token (a no-op once done)."""
        if self.policy is not None and not self.policy.ready:
            self.policy.prepare(self.target)

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
                 seed: int = 0, watch: Callable[[list[int]], bool] | None = None, hooks: Hooks | None = None,
                 keyed: bool = False) -> tuple[list[int], RequestMetrics]:
        """-> (new tokens, stopping after a stop token or max_new_tokens, and the request's metrics): `decode`'s
        tokens and metrics."""
        out = self.decode(prompt, max_new_tokens, params, seed, watch, hooks, keyed)
        return out.tokens, out.metrics

    def decode(self, prompt: list[int], max_new_tokens: int, params: SamplingParams = GREEDY,
               seed: int = 0, watch: Callable[[list[int]], bool] | None = None, hooks: Hooks | None = None,
               keyed: bool = False) -> Decoded:
        """Decode one request -> its `Decoded` (tokens, metrics, final state); the decoder keeps nothing of it.

        hooks: this request's (default: the decoder's); watch: the request's `Hooks.watch` (over `hooks`); keyed:
        sampling keyed by (seed, position) (draftpool/forward/keyed.py): the answer is plain keyed sampling's,
        whatever drafts (a seeded request answered the same every time), at some acceptance; else rejection
        sampling, whose realised sample depends on the drafts."""
        self.check_request(prompt, max_new_tokens, params)
        hooks = hooks or self.hooks
        if watch is not None:
            hooks = replace(hooks, watch=watch)
        self.prepare()
        gen = KeyedNoise(seed, self.target.device) if keyed else \
            torch.Generator(device=self.target.device).manual_seed(seed)
        obs = Observer(self.timing, self.target.device)
        run = Run(DecodeState(tokens=list(prompt), prompt_len=len(prompt), synced=[0] * len(self.drafters)), params,
                  gen, obs, hooks)
        prefill(self.target, self.drafters, run, rollback=self.mode != "plain")
        obs.prefilled()
        if self.mode == "plain":
            while not self.done(run, max_new_tokens):
                plain_step(self.target, run)
                obs.record(PLAIN_STEP)
            return self._finish(run, max_new_tokens)
        obs.lap()  # the prefill: other_s
        self.selector.start_request(run.state)
        obs.lap("eval_s")
        prev = None  # the last speculative cycle
        while not self.done(run, max_new_tokens):
            c = self.spec_cycle(run, prev)
            obs.record(c)
            prev = prev if c.plain else c
        self.selector.finish_request(run.state, params)
        obs.lap("eval_s")
        return self._finish(run, max_new_tokens)

    def spec_cycle(self, run: Run, prev: Cycle | None) -> Cycle:
        """One cycle, as gpt-fast's speculative step: new weights -> select -> plan -> draft -> verify and commit ->
        learn (or, as auto decides, a plain step in place of draft and verify). prev: the last speculative cycle
        (switches are counted between those). -> what it did, for the request's observer to record."""
        sel, params, obs = self.selector, run.params, run.obs
        swaps = self._take_weights(run)  # rule: weights change only here, between two cycles
        t0 = obs.now()
        i = sel.select()
        selected = obs.now()
        k, tree, plan = self.policy.plan(i, params.greedy, sel.fixed) if self.policy else (self.k, None, None)
        # rule: auto learns from the time of draft + verify. Both ends are taken where no device work is pending
        # (selection and feedback read their results back to the host; the cycle ends with its accepted tokens read
        # back), so they need no sync of their own
        planned = obs.lap("select_s")
        plain = k == 0 and tree is None  # auto: plain decoding pays more than this drafter now
        if plain:  # one target pass over the last token, no draft
            out = plain_step(self.target, run)
            n_draft = n_acc = catchup = 0
            switched = False
        else:
            # rule: switches are counted between speculative cycles; on a switch the catch-up is the switching cost
            switched = prev is not None and i != prev.member
            catchup = catch_up(self.drafters[i], i, run, prev.accepted + 1 if switched else None)
            shape = TreeSpec(*tree) if tree is not None else self.tree if self.mode == "tree" else None
            drafted = draft(self.drafters[i], k, shape, run)  # a chain: tokens [n <= k]; a tree: N nodes
            obs.lap("draft_s")
            # one target pass over [last committed, drafts] (rows [1 + n]); commits the accepted + the next token
            n_acc, out = verify(self.target, run, drafted)
            n_draft = len(drafted)
        verified = obs.lap("verify_s")
        # feedback: counterfactual acceptance of every drafter, or the chosen drafter's reward (a plain step: a
        # one-token chunk for full-information selectors)
        sel.after_cycle(run.state, i, n_acc, out, params)
        end = obs.lap("eval_s")
        c = Cycle(i, n_draft, n_acc, plain, plan, tree, swaps, switched, catchup,
                  selection_s=(selected - t0) + (end - verified), work_s=verified - planned, cycle_s=end - t0)
        if plan is not None:  # auto learns from the outcome of a cycle it planned
            self.policy.learn(c, params.greedy)
        return c

    def _take_weights(self, run: Run) -> int:
        """The poll hook's new drafter weights, taken in -> how many drafters changed."""
        changed = run.hooks.poll() if run.hooks.poll is not None else None
        if not changed:
            return 0
        self.weights_changed(changed, run.state)
        return len(changed)

    def done(self, run: Run, max_new_tokens: int) -> bool:
        """max_new_tokens reached, the request cancelled or stopped by its watch, or a stop token committed."""
        state, hooks = run.state, run.hooks
        n = len(state.tokens)
        if n - state.prompt_len >= max_new_tokens:
            return True
        if hooks.cancelled is not None and hooks.cancelled():
            return True
        if hooks.watch is not None and hooks.watch(state.tokens[state.prompt_len:]):
            return True
        # a cycle adds at most lookahead + 1 tokens: only those can hold a new stop token
        tail = state.tokens[max(state.prompt_len, n - self.lookahead - 1):]
        return any(t in self.stop_ids for t in tail)

    def _finish(self, run: Run, max_new_tokens: int) -> Decoded:
        state = run.state
        new = cut_at_stop(state.tokens[state.prompt_len:], self.stop_ids, max_new_tokens)
        return Decoded(new, run.obs.finish(len(new)), state)
