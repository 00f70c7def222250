"""Verification rules: stub logits for greedy, chi-square for lossless rejection sampling (incl. top-k / top-p)."""

import pytest
import torch

from draftpool.forward.sampling import SamplingParams, probs_from_logits, sample
from specsel.decoding.verify import verify_chain_greedy, verify_chain_sampling, verify_tree_greedy


def lazy(choices: list[int]):
    """choice(i) over a fixed list, recording which rows were asked for."""
    asked: list[int] = []

    def choice(i: int) -> int:
        asked.append(i)
        return choices[i]
    return choice, asked


def test_greedy_chain_never_always_partial():
    draft = [3, 4, 5]
    assert verify_chain_greedy(draft, lazy([3, 4, 5, 6])[0]) == (3, 6)  # all accepted + bonus
    assert verify_chain_greedy(draft, lazy([7, 4, 5, 6])[0]) == (0, 7)  # first rejected
    assert verify_chain_greedy(draft, lazy([3, 4, 9, 6])[0]) == (2, 9)  # partial
    choice, asked = lazy([3, 8, 5, 6])
    assert verify_chain_greedy(draft, choice) == (1, 8)  # a later match does not count
    assert set(asked) == {0, 1}  # rows past the first rejection are never computed


def chi2_pvalue(counts: torch.Tensor, probs: torch.Tensor) -> float:
    """Pearson chi-square goodness of fit over cells with expected count > 0."""
    n = counts.sum()
    expected = probs * n
    cells = expected > 0
    assert counts[~cells].sum() == 0, "a token with zero target probability was emitted"
    stat = ((counts[cells] - expected[cells]) ** 2 / expected[cells]).sum()
    df = int(cells.sum()) - 1
    return float(torch.special.gammaincc(torch.tensor(df / 2.0), stat.double() / 2))


def speculative_stream(p: torch.Tensor, q: torch.Tensor, k: int, gen: torch.Generator, n_tokens: int) -> list[int]:
    """Context-free target p and drafter q [V]: run cycles until n_tokens are emitted."""
    out: list[int] = []
    while len(out) < n_tokens:
        draft = sample(q.expand(k, -1), gen)
        n, nxt = verify_chain_sampling(draft, q.expand(k, -1), p.expand(k + 1, -1), gen)
        out.extend(draft[:n].tolist() + [nxt])
    return out[:n_tokens]


PARAMS = [SamplingParams(1.0), SamplingParams(0.7, top_k=4), SamplingParams(1.2, top_p=0.8),
          SamplingParams(1.0, top_k=5, top_p=0.9)]


@pytest.mark.tier2  # 12,000 trials of a Python-level cycle per setting: seconds each
@pytest.mark.parametrize("params", PARAMS, ids=lambda s: f"t{s.temperature}-k{s.top_k}-p{s.top_p}")
def test_rejection_sampling_emits_the_target_distribution(params):
    emits_the_target_distribution(params, 12000)


def test_rejection_sampling_emits_the_target_distribution_in_fewer_trials():
    """The fast tier's check of the same rule: top-k and top-p together, a quarter of the trials."""
    emits_the_target_distribution(PARAMS[3], 3000)


def emits_the_target_distribution(params: SamplingParams, trials: int) -> None:
    g = torch.Generator().manual_seed(1)
    vocab = 6
    target_logits, draft_logits = torch.randn(vocab, generator=g) * 1.5, torch.randn(vocab, generator=g) * 1.5
    draft_logits[0] = float("-inf")  # a token outside the draft vocabulary: zero draft probability
    p, q = probs_from_logits(target_logits, params), probs_from_logits(draft_logits, params)
    first, pairs = torch.zeros(vocab), torch.zeros(vocab * vocab)
    for _ in range(trials):
        a, b = speculative_stream(p, q, 3, g, 2)
        first[a] += 1
        pairs[a * vocab + b] += 1
    assert chi2_pvalue(first, p) > 1e-3
    assert chi2_pvalue(pairs, torch.outer(p, p).flatten()) > 1e-3


def test_chi_square_has_power():
    """The same check rejects a sampler that keeps every draft (it emits q, not p)."""
    g = torch.Generator().manual_seed(2)
    p = probs_from_logits(torch.randn(6, generator=g) * 1.5, SamplingParams(1.0))
    q = probs_from_logits(torch.randn(6, generator=g) * 1.5, SamplingParams(1.0))
    counts = torch.bincount(sample(q.expand(12000, -1), g), minlength=6).float()
    assert chi2_pvalue(counts, p) < 1e-6


def test_identical_distributions_accept_everything():
    g = torch.Generator().manual_seed(3)
    p = probs_from_logits(torch.randn(20, generator=g), SamplingParams(0.9, top_p=0.9))
    for _ in range(200):
        draft = sample(p.expand(4, -1), g)
        n, _ = verify_chain_sampling(draft, p.expand(4, -1), p.expand(5, -1), g)
        assert n == 4


def test_tree_greedy_longest_path():
    # root -> a(5) -> c(7) -> e(9);  root -> b(6) -> d(8)
    tokens, parents = [5, 6, 7, 8, 9], [-1, -1, 0, 1, 2]
    # target argmax at root, a, b, c, d, e
    assert verify_tree_greedy(tokens, parents, lazy([5, 7, 8, 9, 0, 4])[0]) == ([0, 2, 4], 4)
    choice, asked = lazy([6, 7, 8, 9, 1, 4])
    assert verify_tree_greedy(tokens, parents, choice) == ([1, 3], 1)
    assert asked == [0, 2, 4]  # only the rows on the accepted path
    assert verify_tree_greedy(tokens, parents, lazy([3, 7, 8, 9, 1, 4])[0]) == ([], 3)
    assert verify_tree_greedy(tokens, parents, lazy([5, 1, 8, 9, 1, 4])[0]) == ([0], 1)
