"""Sampling keyed by seed and position (draftpool/forward/keyed.py): the same (seed, position) gives the same token,
the keyed sample is an exact sample of p (chi-square over seeds), and a zero-probability token never wins."""

import torch

from draftpool.forward.keyed import KeyedNoise, key
from tests.specsel.decoding.test_verify import chi2_pvalue


def test_same_seed_and_position_same_token_and_noise_differs_by_position():
    p = torch.softmax(torch.randn(50, generator=torch.Generator().manual_seed(0)), -1)
    a, b = KeyedNoise(7), KeyedNoise(7)
    assert [a.choose(p, i) for i in range(20)] == [b.choose(p, i) for i in range(20)]
    assert not torch.equal(a.gumbel(0, 50), a.gumbel(1, 50)) and not torch.equal(a.gumbel(0, 50),
                                                                                 KeyedNoise(8).gumbel(0, 50))
    assert len({key(7, i) for i in range(1000)} | {key(8, i) for i in range(1000)}) == 2000
    b.cursor = 5
    assert [b.draw(p) for _ in range(3)] == [a.choose(p, i) for i in (5, 6, 7)] and b.cursor == 8


def test_the_keyed_sample_is_an_exact_sample_and_never_a_zero_probability_token():
    p = torch.tensor([0.4, 0.25, 0.15, 0.1, 0.07, 0.03, 0.0, 0.0])
    counts = torch.zeros(8)
    for seed in range(4000):  # one position per seed: independent draws
        counts[KeyedNoise(seed).choose(p, 3)] += 1
    assert counts[6:].sum() == 0
    assert chi2_pvalue(counts, p) > 1e-3
    skewed = torch.tensor([0.05, 0.05, 0.15, 0.1, 0.07, 0.58, 0.0, 0.0])  # power: another p is rejected
    assert chi2_pvalue(counts, skewed) < 1e-6
