"""Online drafter selection for the decode loop (HedgeSpec and the bandit baselines): `Selector` picks the drafter of
every cycle and takes the cycle's feedback through the loop's hooks (`specsel/decoding/view.py`: it is bound to a
`PoolView` of the decoder, never the decoder itself).

- Full-information learners (Hedge family): after a verification the verified chunk is prefilled into EVERY drafter
  (the chosen one's next sync becomes free) and each drafter's acceptance probability at each verified position is
  read from its own prediction there and the target's distribution from the same verification pass, with no extra
  target forward. The gammas go to the delayed-feedback game (`delayed_feedback.py`). Same-shape EAGLE-3 heads are
  prefilled together in one batched pass (`head_bank.py`).
- Bandit learners see only the chosen drafter: MetaSD's block-divergence reward (mean 1 - TV over the drafted
  positions), the block-efficiency reward (accepted / K) or the normalised accepted length.
Output is the target's own (lossless) whichever drafter is picked: the selector changes speed only.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F

from draftpool.forward.sampling import SamplingParams, probs_from_logits
from specsel.decoding.errors import SpecError
from specsel.decoding.request import DecodeState
from specsel.decoding.target import TargetPass
from specsel.decoding.view import PoolView
from specsel.selection.delayed_feedback import DelayedFeedback, GameConfig
from specsel.selection.estimators import (
    block_divergence_reward,
    block_efficiency_reward,
    chain_gamma,
    greedy_gamma,
    realised_beta,
    tree_gamma,
)
from specsel.selection.head_bank import HeadBank, same_shape

Reward = Literal["bd", "be", "length", "none"]


class Selector:
    """A learner plus the feedback it needs: counterfactual gammas through the delayed-feedback game (full
    information) or the chosen drafter's reward (bandit). `batched_eval` prefills same-shape heads in one pass."""

    fixed = False  # its feedback reads every cycle's verified rows as a chain's (auto weighs no trees under it)

    def __init__(self, learner, n_drafters: int, k: int, game: GameConfig | None = None, reward: Reward = "bd",
                 batched_eval: bool = True):
        self.learner = learner
        self.full_information = bool(getattr(learner, "full_information", False))
        self.game = DelayedFeedback(learner, n_drafters, k, game) if self.full_information else None
        if reward not in ("bd", "be", "length", "none"):
            raise SpecError(f"unknown bandit reward {reward!r}; choose bd, be, length or none")
        self.reward, self.k, self.n = reward, k, n_drafters
        self.batched_eval = batched_eval
        self.bank: HeadBank | None = None
        self.in_bank: list[int] = []

    @property
    def bandit(self) -> bool:
        """Learns from the chosen drafter's reward on a fixed-k draft (no game, a reward)."""
        return self.game is None and self.reward != "none"

    def bind(self, view: PoolView) -> None:
        if len(view.drafters) != self.n:
            raise SpecError(f"the selector is made for {self.n} drafters, the pool has {len(view.drafters)}")
        if view.k != self.k and view.mode in ("chain", "auto"):
            raise SpecError(f"the selector is made for k={self.k}, the decoder drafts k={view.k}")
        for d in view.drafters:
            d.track = self.full_information
            if d.deterministic:
                d.track_k = self.k  # the chains it keeps are the ones it would draft
        self.drafters, self.mode, self.tree_top_k = view.drafters, view.mode, view.tree.top_k
        heads = [i for i, d in enumerate(view.drafters) if HeadBank.accepts(d)]
        if self.batched_eval and self.full_information and len(heads) > 1 and \
                same_shape([view.drafters[i] for i in heads]):
            self.in_bank = heads
            prev = getattr(view.previous, "bank", None)  # a fresh selector per request keeps the stacked weights
            members = [view.drafters[i] for i in heads]
            self.bank = prev if prev is not None and prev.drafters == members else HeadBank(members)

    def weights_changed(self, changed: list[int]) -> None:
        if self.bank is not None and set(changed) & set(self.in_bank):
            self.bank = HeadBank([self.drafters[i] for i in self.in_bank])

    def select(self) -> int:
        return self.game.select() if self.game is not None else self.learner.select()

    def probabilities(self) -> list[float] | None:
        """Read-only: the learner's current probability of each drafter (Hedge family, EXP3, uniform, fixed); None
        for a learner that picks by index rather than by distribution (UCB, sequential halving). Loss vectors still
        queued in the delayed-feedback game are not in it yet (they reach the learner before its next choice)."""
        probs = getattr(self.learner, "probs", None)
        return None if probs is None else [float(p) for p in probs()]

    def start_request(self, state: DecodeState) -> None:
        self.eval_from, self.pending = len(state.tokens), []  # first unevaluated position; chunks since then
        self.p_rows: dict[int, torch.Tensor] = {}  # position -> target distribution (sampling only)
        self.rounds = 0
        if self.game is not None:
            self.game.reset_request()
        if self.bank is not None:  # every head needs the prompt for the first evaluation: one batched prefill
            self.bank.sync(state)
            for j in self.in_bank:
                state.synced[j] = len(state.tokens)

    def after_cycle(self, state: DecodeState, i: int, n_acc: int, out: TargetPass, params: SamplingParams) -> None:
        if self.game is None:
            if self.reward != "none":
                self.learner.update(i, self._reward(self.drafters[i], out, n_acc, params))
            return
        self.pending.append(n_acc)
        if not params.greedy:
            before = len(state.tokens) - n_acc - 1
            self.p_rows.update((before + j, probs_from_logits(out.logits(j), params)) for j in range(n_acc + 1))
        if self.game.wants_evaluation(self.rounds):
            self._observe(state, params)
        self.rounds += 1

    def finish_request(self, state: DecodeState, params: SamplingParams) -> None:
        if self.game is None:
            return
        if self.pending:  # the chunks not yet evaluated (batched feedback) are fed at the end of the request
            self._observe(state, params)
        self.game.finish_request()

    def _observe(self, state: DecodeState, params: SamplingParams) -> None:
        gammas, betas = self._gammas(state, self.eval_from, params)
        self.game.observe(gammas, self.pending, betas)
        self.eval_from, self.pending = len(state.tokens), []

    @torch.inference_mode()
    def _gammas(self, state: DecodeState, start: int, params: SamplingParams
                ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """-> ([N, end-start] acceptance probability of every drafter at the verified positions start..end-1, and
        under sampling [N, end-start] beta = min(1, q/p) of the committed token, for the unbiased length estimate).
        With a deterministic (model-free) member in the pool both are [N, K, end-start] per-depth rows: its own
        chains' hits (`take_chain_hits`), the other members' depth-0 rows repeated at every depth (the same
        estimate as before for them)."""
        end = len(state.tokens)
        tokens = torch.tensor(state.tokens[start:end])
        p = None if params.greedy else torch.stack([self.p_rows.pop(s) for s in range(start, end)])  # [m, V]
        # prefill the verified chunk(s) into every drafter: its own prediction at every position
        if self.bank is not None:
            self.bank.sync(state)
        gammas, betas = [], []
        # (tree cycles: its chain's hits, a lower bound of what its tree would have accepted)
        per_depth = any(d.deterministic for d in self.drafters)
        for j, d in enumerate(self.drafters):
            if j not in self.in_bank:
                d.sync(state)
            state.synced[j] = end
            if per_depth and d.deterministic:
                # rule: its chain's depth-j acceptance is a hit of the chain itself; the indicator is also the
                # realised-token beta (a one-hot draft), so Theorem 3's product is exact greedy, unbiased sampling
                hits = d.take_chain_hits(start, end, state.tokens)  # [K, m]
                gammas.append(hits)
                betas.extend([] if params.greedy else [hits])
                continue
            logits = d.take_predictions(start, end)  # [m, Vd or V]
            if self.mode == "tree":
                # rule (Theorem 2): greedy tree verification accepts iff the token is among the node's top-L children
                top = d.to_target_ids(logits.topk(self.tree_top_k, dim=-1).indices).cpu()  # [m, L]
                gammas.append(tree_gamma(F.one_hot(tokens, d.vocab_size).float(), top))
            elif params.greedy:
                gammas.append(greedy_gamma(d.to_target_ids(logits.argmax(-1)).cpu(), tokens))
            else:
                q = probs_from_logits(d.full_logits(logits), params).to(p.device)  # [m, V]
                gammas.append(chain_gamma(p, q).cpu())
                betas.append(realised_beta(p, q, tokens.to(p.device)).cpu())
        if per_depth:  # [m] depth-0 rows -> [K, m]
            gammas, betas = ([r.expand(self.k, -1) if r.dim() == 1 else r for r in rows] for rows in (gammas, betas))
        return torch.stack(gammas), (torch.stack(betas) if betas else None)

    def _reward(self, d, out: TargetPass, n_acc: int, params: SamplingParams) -> float:
        if self.reward == "be":
            return block_efficiency_reward(n_acc, self.k)
        if self.reward == "length" or self.mode == "tree":
            return (n_acc + 1) / (self.k + 1)
        # MetaSD BD: the drafter's and the target's distributions at the K drafted positions (temperature 1 when
        # decoding greedily, the decoding transform otherwise)
        dist = params if not params.greedy else SamplingParams(temperature=1.0)
        p = probs_from_logits(out.logits(slice(0, self.k)), dist)  # [K', V]: the drafted positions (+1 if shorter)
        # a model-free chain shorter than k: its no-draft rows (all -inf) are the zero distribution, agreeing nowhere
        q = probs_from_logits(d.full_logits(torch.stack(d.chain_logits)), dist).nan_to_num(0.0).to(p.device)  # [K,V]
        m = min(len(p), len(q))
        return float(block_divergence_reward(p[:m], q[:m]) * m / self.k)  # rule: the mean over all k positions
