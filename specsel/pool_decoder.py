"""Speculative decoding over a pool of drafters with online drafter selection (HedgeSpec and bandit baselines).

Every cycle: the selector picks a drafter -> that drafter catches up on the verified tokens it has not seen (prefill
of the missing suffix; the time is the switching cost) -> draft -> one target pass -> commit. Then the feedback:
- full-information selectors (Hedge family): the verified chunk is prefilled into EVERY drafter (they were synced
  anyway, so the chosen one's next sync is free) and each drafter's acceptance probability at each verified position
  is read from its own prediction there and the target's distribution from the same verification pass: no extra
  target forward. The gammas go to the delayed-feedback game (specsel/delayed_feedback.py);
- bandit selectors see only the chosen drafter: MetaSD's block-divergence reward (mean 1 - TV over the drafted
  positions), the block-efficiency reward (accepted / K) or the normalised accepted length.
Output is the target's own (lossless) whichever drafter is picked: the selector changes speed only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

import torch

from specsel.delayed_feedback import DelayedFeedback, GameConfig
from specsel.engine import GREEDY, DecodeState, RequestMetrics, SpecDecoder, SpecError, check_drafter, sync_device
from specsel.estimators import block_divergence_reward, block_efficiency_reward, chain_gamma, greedy_gamma
from specsel.head_bank import HeadBank, same_shape
from specsel.sampling import SamplingParams, probs_from_logits
from specsel.tree import TreeSpec

Reward = Literal["bd", "be", "length", "none"]


@dataclass
class PoolMetrics(RequestMetrics):
    choices: list[int] = field(default_factory=list)  # drafter index per cycle
    select_s: float = 0.0  # learner: drain the feedback queue + choose
    eval_s: float = 0.0  # counterfactual evaluation (prefill of every drafter + gammas) or the bandit reward
    switches: int = 0  # cycles whose drafter differs from the previous cycle's
    switch_s: float = 0.0  # catch-up prefill time of a drafter on a switch (part of draft_s)
    catchup_tokens: int = 0  # tokens prefilled into the chosen drafter beyond the last chunk, on switches
    weight_swaps: int = 0  # drafter weight versions swapped in during the request (online adaptation)

    def to_dict(self) -> dict:
        return {**super().to_dict(), "choices": self.choices, "select_s": self.select_s, "eval_s": self.eval_s,
                "switches": self.switches, "switch_s": self.switch_s, "catchup_tokens": self.catchup_tokens,
                "weight_swaps": self.weight_swaps}


class Selector:
    """A learner plus the feedback it needs: counterfactual gammas through the delayed-feedback game (full
    information) or the chosen drafter's reward (bandit)."""

    def __init__(self, learner, n_drafters: int, k: int, game: GameConfig | None = None, reward: Reward = "bd"):
        self.learner = learner
        self.full_information = bool(getattr(learner, "full_information", False))
        self.game = DelayedFeedback(learner, n_drafters, k, game) if self.full_information else None
        if reward not in ("bd", "be", "length", "none"):
            raise SpecError(f"unknown bandit reward {reward!r}; choose bd, be, length or none")
        self.reward = reward
        self.k = k

    def select(self) -> int:
        return self.game.select() if self.game is not None else self.learner.select()

    def wants_evaluation(self, round_index: int) -> bool:
        return self.game is not None and self.game.wants_evaluation(round_index)

    def start_request(self) -> None:
        if self.game is not None:
            self.game.reset_request()

    def finish_request(self) -> None:
        if self.game is not None:
            self.game.finish_request()


class PoolDecoder:
    """mode 'chain' (any drafters, greedy or sampling) or 'tree' (EAGLE-3 heads, greedy); one target cache, one
    cache per drafter."""

    def __init__(self, target_model, drafters: dict[str, object], selector: Selector, mode: str = "chain", k: int = 4,
                 tree: TreeSpec | None = None, stop_ids: list[int] | None = None, batched_eval: bool = True):
        if not drafters:
            raise SpecError("the pool has no drafters")
        if mode not in ("chain", "tree"):
            raise SpecError(f"pool decoding mode must be chain or tree, got {mode!r}")
        self.names, self.drafters = list(drafters), list(drafters.values())
        heads = [d for d in self.drafters if d.kind == "eagle3"]
        if len({tuple(d.aux_layers) for d in heads}) > 1:
            raise SpecError("the pool's EAGLE-3 heads read different target layers "
                            f"({sorted({tuple(d.aux_layers) for d in heads})}); one pool shares one feature set")
        self.engine = SpecDecoder(target_model, heads[0] if heads else self.drafters[0], mode, k, tree, stop_ids)
        for d in self.drafters:
            check_drafter(self.engine.target, d)
            if mode == "tree" and not hasattr(d, "draft_tree"):
                raise SpecError("tree drafting needs EAGLE-3 heads only; use mode 'chain' with independent drafters")
            if mode == "tree":
                try:
                    self.engine.tree.validate(d.draft_vocab_size)
                except ValueError as e:
                    raise SpecError(str(e)) from None
            d.track = selector.full_information
        self.selector = selector
        self.mode, self.k = mode, k
        # counterfactual prefill of same-shape EAGLE-3 heads in one batched pass (specsel/head_bank.py)
        self.bank, self.in_bank = None, [i for i, d in enumerate(self.drafters) if d.kind == "eagle3"]
        if batched_eval and selector.full_information and len(self.in_bank) > 1 and same_shape(heads):
            self.bank = HeadBank(heads)
        else:
            self.in_bank = []
        self.heads = heads
        # called at every cycle boundary (online/hotswap.HotSwap.poll): -> indices of drafters whose weights changed
        self.on_cycle = None
        self.swaps = 0

    def weights_changed(self, changed: list[int], synced: list[int]) -> None:
        """Drafters `changed` got new weights between two cycles: their caches were computed by the old weights, so
        they start over (the next sync prefills the committed tokens again), and the bank restacks its weights."""
        for j in changed:
            d = self.drafters[j]
            d.rewind(0) if d.kind == "eagle3" else d.reset()
            synced[j] = 0
        if self.bank is not None and any(j in self.in_bank for j in changed):
            self.bank = HeadBank(self.heads)
        self.swaps += len(changed)

    def generate(self, prompt: list[int], max_new_tokens: int, params: SamplingParams = GREEDY,
                 seed: int = 0) -> tuple[list[int], PoolMetrics]:
        eng, sel = self.engine, self.selector
        eng.check_request(prompt, max_new_tokens, params)
        gen = torch.Generator(device=eng.target.device).manual_seed(seed)
        dev = eng.target.device
        m = PoolMetrics()
        t_start = time.perf_counter()
        # 1. prefill the target; every drafter starts empty
        eng.target.reset()
        for d in self.drafters:
            d.reset()
        synced = [0] * len(self.drafters)  # committed length at each drafter's last sync
        out = eng.target.forward(prompt)
        m.target_forwards += 1
        state = eng.state = DecodeState(tokens=list(prompt) + [eng.emit(out, -1, params, gen)],
                                        prompt_len=len(prompt), feats=out.feats)
        eng.record(out, [-1])
        sel.start_request()
        if self.bank is not None:  # every head will need the prompt for the first evaluation: one batched prefill
            t0 = time.perf_counter()
            self.bank.sync(state)
            for j in self.in_bank:
                synced[j] = len(state.tokens)
            sync_device(dev)
            m.eval_s += time.perf_counter() - t0
        eval_from, pending = len(state.tokens), []  # first unevaluated position; chunks since the last evaluation
        p_rows: dict[int, torch.Tensor] = {}  # position -> target distribution (sampling only)
        prev = None
        # 2. cycles: select -> catch up -> draft -> verify -> feedback
        while not eng.done(state, max_new_tokens):
            t0 = time.perf_counter()
            if self.on_cycle is not None:  # rule: weights change only here, between two cycles
                changed = self.on_cycle()
                if changed:
                    self.weights_changed(changed, synced)
                    m.weight_swaps += len(changed)
            i = sel.select()
            t1 = time.perf_counter()
            d = self.drafters[i]
            behind = len(state.tokens) - synced[i]
            d.sync(state)
            synced[i] = len(state.tokens)
            sync_device(dev)
            if prev is not None and i != prev:
                m.switches += 1
                m.switch_s += time.perf_counter() - t1
                m.catchup_tokens += max(0, behind - (1 + (m.accepted[-1] if m.accepted else 0)))
            if self.mode == "chain":
                draft, q = d.draft_chain(self.k, params, gen)
            else:
                tree = d.draft_tree(eng.tree)
            sync_device(dev)
            t2 = time.perf_counter()
            before = len(state.tokens)
            if self.mode == "chain":
                n_acc, out = eng.verify_chain(state, draft, q, params, gen, m)
            else:
                n_acc, out = eng.verify_tree(state, tree, m)
            sync_device(dev)
            t3 = time.perf_counter()
            m.target_forwards += 1
            m.accepted.append(n_acc)
            m.choices.append(i)
            pending.append(n_acc)
            if not params.greedy:
                p_rows.update((before + j, probs_from_logits(out.logits(j), params)) for j in range(n_acc + 1))
            # 3. feedback: counterfactual gammas for every drafter, or the chosen drafter's reward
            if sel.full_information:
                if sel.wants_evaluation(len(m.accepted) - 1):
                    sel.game.observe(self._gammas(state, eval_from, params, p_rows, synced), pending)
                    eval_from, pending = len(state.tokens), []
            elif sel.reward != "none":
                sel.learner.update(i, self._reward(d, out, n_acc, params))
            sync_device(dev)
            t4 = time.perf_counter()
            m.select_s += t1 - t0
            m.draft_s += t2 - t1
            m.verify_s += t3 - t2
            m.eval_s += t4 - t3
            prev = i
        # 3b. the chunks not yet evaluated (batched feedback) are fed at the end of the request
        if sel.full_information and pending:
            t4 = time.perf_counter()
            sel.game.observe(self._gammas(state, eval_from, params, p_rows, synced), pending)
            m.eval_s += time.perf_counter() - t4
        sel.finish_request()
        new = eng.finish(state, max_new_tokens)
        sync_device(dev)
        m.total_s = time.perf_counter() - t_start
        m.new_tokens = len(new)
        return new, m

    @torch.inference_mode()
    def _gammas(self, state: DecodeState, start: int, params: SamplingParams, p_rows: dict[int, torch.Tensor],
                synced: list[int]) -> torch.Tensor:
        """[N, end-start] acceptance probability of every drafter at the verified positions start..end-1."""
        end = len(state.tokens)
        tokens = torch.tensor(state.tokens[start:end])
        p = None if params.greedy else torch.stack([p_rows.pop(s) for s in range(start, end)])  # [m, V]
        # prefill the verified chunk(s) into every drafter: its own prediction at every position
        if self.bank is not None:
            self.bank.sync(state)
        rows = []
        for j, d in enumerate(self.drafters):
            if j not in self.in_bank:
                d.sync(state)
            synced[j] = end
            logits = d.take_predictions(start, end)  # [m, Vd or V]
            if self.mode == "tree":
                # rule (Theorem 2): greedy tree verification accepts iff the token is among the node's top-L children
                top = d.to_target_ids(logits.topk(self.engine.tree.top_k, dim=-1).indices).cpu()  # [m, L]
                rows.append((top == tokens[:, None]).any(-1).float())
            elif params.greedy:
                rows.append(greedy_gamma(d.to_target_ids(logits.argmax(-1)).cpu(), tokens))
            else:
                rows.append(chain_gamma(p, probs_from_logits(d.full_logits(logits), params).to(p.device)).cpu())
        return torch.stack(rows)

    def _reward(self, d, out, n_acc: int, params: SamplingParams) -> float:
        sel = self.selector
        if sel.reward == "be":
            return block_efficiency_reward(n_acc, self.k)
        if sel.reward == "length" or self.mode == "tree":
            return (n_acc + 1) / (self.k + 1)
        # MetaSD BD: the drafter's and the target's distributions at the K drafted positions (temperature 1 when
        # decoding greedily, the decoding transform otherwise)
        dist = params if not params.greedy else SamplingParams(temperature=1.0)
        p = probs_from_logits(out.logits(slice(0, self.k)), dist)  # [K, V]
        q = probs_from_logits(d.full_logits(torch.stack(d.chain_logits)), dist).to(p.device)  # [K, V]
        return float(block_divergence_reward(p, q))
