"""Counterfactual acceptance feedback: per-position acceptance probabilities, the acceptance-length estimator, losses
and MetaSD's bandit rewards. Pure functions over tensors.

gamma[t] = P_i[x_t accepted | x_<t]: the chance drafter i's draft at position t would be accepted, computed from the
drafter's distribution after the verified prefix (prefill) and the target's distribution from the verification pass.
"""

from __future__ import annotations

import torch


def chain_gamma(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """p, q [..., V] target / draft distributions -> [...] 1 - TV(p, q) = sum_x min(p, q) (Theorem 1: one draft)."""
    return torch.minimum(p, q).sum(-1)


def greedy_gamma(draft_ids: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """Temperature 0: the draft (drafter argmax) [...] is accepted iff it is the target's argmax, the committed token
    [...] -> [...] 1.0 / 0.0 (chain_gamma of the two one-hot distributions)."""
    return (draft_ids == tokens).float()


def tree_gamma(p: torch.Tensor, children: torch.Tensor) -> torch.Tensor:
    """p [..., V] target distribution, children [..., L] the drafter's top-L candidate ids at that node -> [...] the
    target mass of those children (Theorem 2: EAGLE tree drafting accepts some child with this probability)."""
    return p.gather(-1, children).sum(-1)


def accept_length_estimate(gammas: torch.Tensor) -> torch.Tensor:
    """gammas [..., K] along one realised trajectory -> [...] the one-step counterfactual estimate (Theorem 3) of the
    number of tokens a depth-K chain accepts, bonus included: sum_{k=1}^{K+1} k (1 - g_k) prod_{j<k} g_j, g_{K+1} = 0.
    Equals 1 + sum_{k=1}^{K} prod_{j<=k} g_j; in [1, K+1].

    g_k must be the acceptance of the draft the chain would make at depth k. Counterfactual evaluation reads each
    drafter's prediction after the verified prefix (a depth-0 draft at every position): that is the chain's own
    depth-k draft for an independent drafter, whose draft depends only on the tokens before it, so under greedy
    decoding the estimate is then exact. An EAGLE-3 head drafts depth k > 0 from its own hidden state, not the
    target's features, and is less accurate there: its depth-0 gammas overstate its chains (the bias is measured by
    benchmarks/select.py). Pass [..., K] per-depth gammas (`DelayedFeedback` takes them) to remove it."""
    return 1 + torch.cumprod(gammas, dim=-1).sum(-1)


def length_loss(gammas: torch.Tensor, k: int, betas: torch.Tensor | None = None) -> torch.Tensor:
    """gammas [..., k] -> [...] 1 - EAL / (k + 1), in [0, k/(k+1)] (HedgeSpec Sec. 3.3); with betas [..., k] the
    reweighted (unbiased under sampling) estimate `accept_length_reweighted` instead of Theorem 3's product."""
    eal = accept_length_estimate(gammas) if betas is None else accept_length_reweighted(gammas, betas)
    return 1 - eal / (k + 1)


def accept_loss(gammas: torch.Tensor) -> torch.Tensor:
    """gammas [...] -> [...] 1 - gamma (the acceptance-probability loss)."""
    return 1 - gammas


def block_divergence_reward(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """p, q [..., K, V] target / draft distributions over the K drafted positions -> [...] MetaSD's BD reward
    (1/K) sum_j (1 - TV(p_j, q_j)) (Definition 2)."""
    return chain_gamma(p, q).mean(-1)


def block_efficiency_reward(accepted: int, k: int) -> float:
    """MetaSD's BE reward: accepted draft tokens / K."""
    return accepted / k


def realised_beta(p: torch.Tensor, q: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """p, q [..., V] target / draft distributions, tokens [...] the committed tokens -> [...] beta = min(1, q(x)/p(x)):
    the chance the realised token would have been accepted had the drafter drafted it."""
    px = p.gather(-1, tokens[..., None])[..., 0]
    qx = q.gather(-1, tokens[..., None])[..., 0]
    return torch.where(px > 0, (qx / px.clamp_min(1e-30)).clamp(max=1.0), torch.ones_like(px))


def accept_length_reweighted(gammas: torch.Tensor, betas: torch.Tensor) -> torch.Tensor:
    """gammas [..., K] as above, betas [..., K] = min(1, q(x_k)/p(x_k)): the chance the *realised* token at step k
    would have been accepted -> [...] 1 + sum_k gamma_k prod_{j<k} beta_j.

    The realised trajectory is drawn from p, but a chain that accepted its first k-1 drafts passed through tokens
    drawn from min(p, q)/gamma; reweighting each earlier step by min(p, q)/p = beta makes the estimate unbiased
    whenever g_k is the acceptance of the chain's own depth-k draft (see `accept_length_estimate` for EAGLE-3 heads).
    Theorem 3's product of gammas is unbiased when acceptance is deterministic (greedy decoding: beta = gamma =
    1[match]) or does not depend on the context; with sampling and context-dependent acceptance it is not
    (tests/specsel/selection/test_estimators.py enumerates a counterexample). The selector uses this estimate when
    sampling."""
    before = torch.cumprod(torch.cat([torch.ones_like(betas[..., :1]), betas[..., :-1]], dim=-1), dim=-1)
    return 1 + (gammas * before).sum(-1)
