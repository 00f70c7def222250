"""Counterfactual estimators against exact enumeration on Markov stubs, and the losses/rewards against plain loops."""

import itertools

import pytest
import torch

from draftpool.forward.sampling import SamplingParams
from specsel.decoding.verify import verify_chain_sampling
from specsel.selection.estimators import (
    accept_length_estimate,
    accept_length_reweighted,
    accept_loss,
    block_divergence_reward,
    block_efficiency_reward,
    chain_gamma,
    greedy_gamma,
    length_loss,
    tree_gamma,
)

V, K = 3, 3


def markov(seed: int, sharp: float = 2.0):
    g = torch.Generator().manual_seed(seed)
    # p[c]: the target's next-token distribution after token c
    p = torch.softmax(torch.randn(V, V, generator=g, dtype=torch.float64) * sharp, -1)
    q = torch.softmax(torch.randn(V, V, generator=g, dtype=torch.float64) * sharp, -1)
    return p, q


def true_expected_length(p, q, c: int) -> float:
    """1 + sum_k P(first k drafts accepted): a chain that accepted its drafts moved through min(p,q)-weighted paths."""
    m = torch.minimum(p, q)
    alpha, total = m[c].clone(), 1 + m[c].sum()
    for _ in range(K - 1):
        alpha = alpha @ m
        total += alpha.sum()
    return float(total)


def estimator_mean(p, q, c: int, reweighted: bool) -> float:
    """Exact mean of the estimator over target rollouts x_1..x_K ~ p (enumerated)."""
    gam_of = torch.minimum(p, q).sum(-1)
    mean = 0.0
    for path in itertools.product(range(V), repeat=K):
        prob, prev, gam, beta = 1.0, c, [], []
        for x in path:
            gam.append(gam_of[prev])
            beta.append(torch.clamp(q[prev, x] / p[prev, x], max=1.0))
            prob *= float(p[prev, x])
            prev = x
        g, b = torch.stack(gam), torch.stack(beta)
        est = accept_length_reweighted(g, b) if reweighted else accept_length_estimate(g)
        mean += prob * float(est)
    return mean


def test_estimator_matches_plain_formula():
    g = torch.tensor([[0.9, 0.5, 0.2], [1.0, 1.0, 1.0], [0.0, 1.0, 1.0]])
    ref = []
    for row in g.tolist():
        gg = row + [0.0]  # g_{K+1} = 0
        s = 0.0
        for k in range(1, K + 2):
            prod = 1.0
            for j in range(k - 1):
                prod *= gg[j]
            s += k * (1 - gg[k - 1]) * prod
        ref.append(s)
    assert torch.allclose(accept_length_estimate(g), torch.tensor(ref))
    assert accept_length_estimate(g)[1] == K + 1 and accept_length_estimate(g)[2] == 1
    assert torch.allclose(length_loss(g, K), 1 - torch.tensor(ref) / (K + 1))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_greedy_estimator_is_exact(seed):
    """Greedy drafting and verification: gammas are 1[draft == target argmax], the estimate the accepted count."""
    p, q = markov(seed)
    for c in range(V):
        x, acc, alive = c, 0, True
        gam = []
        for _ in range(K):
            draft, tgt = q[x].argmax(), p[x].argmax()
            gam.append(greedy_gamma(draft, tgt))
            alive = alive and bool(draft == tgt)
            acc += alive
            x = int(tgt)
        assert float(accept_length_estimate(torch.stack(gam))) == acc + 1


def test_product_estimator_is_exact_when_acceptance_does_not_depend_on_context():
    # p rows are permutations of one vector and q rows the same permutations of another: 1 - TV is the same in
    # every context
    base_p, base_q = torch.tensor([0.6, 0.3, 0.1], dtype=torch.float64), torch.tensor([0.2, 0.5, 0.3],
                                                                                            dtype=torch.float64)
    perm = [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    p = torch.stack([base_p[pm] for pm in perm])
    q = torch.stack([base_q[pm] for pm in perm])
    for c in range(V):
        assert estimator_mean(p, q, c, reweighted=False) == pytest.approx(true_expected_length(p, q, c), abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_reweighted_estimator_is_unbiased_and_product_is_not_in_general(seed):
    p, q = markov(seed)
    gaps = []
    for c in range(V):
        truth = true_expected_length(p, q, c)
        assert estimator_mean(p, q, c, reweighted=True) == pytest.approx(truth, abs=1e-10)
        gaps.append(abs(estimator_mean(p, q, c, reweighted=False) - truth))
    assert max(gaps) > 1e-3  # the product of gammas is biased once acceptance depends on the context


def test_true_length_matches_simulated_speculative_sampling():
    """The enumerated truth is what lossless speculative sampling really accepts (Monte Carlo, 3 sigma)."""
    p, q = markov(0)
    c, n = 1, 6000
    gen = torch.Generator().manual_seed(0)
    lengths = []
    for _ in range(n):
        ctx, draft, qs = c, [], []
        for _ in range(K):
            qs.append(q[ctx].float())
            ctx = int(torch.multinomial(q[ctx], 1, generator=gen))
            draft.append(ctx)
        ps = [p[c].float()] + [p[d].float() for d in draft]
        acc, _ = verify_chain_sampling(torch.tensor(draft), torch.stack(qs), torch.stack(ps), gen)
        lengths.append(acc + 1)
    x = torch.tensor(lengths, dtype=torch.float64)
    assert abs(float(x.mean()) - true_expected_length(p, q, c)) < 3 * float(x.std()) / n ** 0.5


def test_gammas_losses_and_rewards_against_loops():
    g = torch.Generator().manual_seed(0)
    p = torch.softmax(torch.randn(4, 7, generator=g), -1)
    q = torch.softmax(torch.randn(4, 7, generator=g), -1)
    ref = torch.tensor([sum(min(a, b) for a, b in zip(pr.tolist(), qr.tolist())) for pr, qr in zip(p, q)])
    assert torch.allclose(chain_gamma(p, q), ref)
    assert torch.allclose(chain_gamma(p, q), 1 - 0.5 * (p - q).abs().sum(-1))
    children = torch.tensor([[0, 1], [2, 3], [4, 5], [6, 0]])
    ref_tree = torch.tensor([float(p[i, c].sum()) for i, c in enumerate(children)])
    assert torch.allclose(tree_gamma(p, children), ref_tree)
    assert torch.allclose(accept_loss(ref), 1 - ref)
    assert float(block_divergence_reward(p, q)) == pytest.approx(float(ref.mean()))
    assert block_efficiency_reward(3, 4) == 0.75
    assert greedy_gamma(torch.tensor([1, 2]), torch.tensor([1, 3])).tolist() == [1.0, 0.0]
    assert SamplingParams(temperature=1.0).greedy is False
