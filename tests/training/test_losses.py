"""training.losses against plain python references (loops, math.log, math.exp) on small random float64 logits."""

from __future__ import annotations

import math

import pytest
import torch

from training.losses import (
    acceptance_on_draft_vocab,
    forward_kl,
    hard_cross_entropy,
    jsd,
    masked_mean,
    reverse_kl,
    soft_cross_entropy,
    tvd,
)

SHAPE = (2, 3, 7)
TOL = 1e-5


def _logits(seed, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(SHAPE, generator=g, dtype=torch.float64) * scale


def _softmax(row):
    m = max(row)
    e = [math.exp(x - m) for x in row]
    return [x / sum(e) for x in e]


def _kl(p, q):
    return sum(pi * (math.log(pi) - math.log(qi)) for pi, qi in zip(p, q))


def _per_row(fn, a, b):
    """fn(row_a, row_b) at every position of [B,T,V] tensors -> [B,T] tensor."""
    out = torch.zeros(SHAPE[:2], dtype=torch.float64)
    for i in range(SHAPE[0]):
        for t in range(SHAPE[1]):
            out[i, t] = fn(a[i, t].tolist(), b[i, t].tolist())
    return out


def _check(actual, expected):
    assert actual.shape == expected.shape
    assert torch.allclose(actual.double(), expected, atol=TOL, rtol=0), (actual, expected)


@pytest.fixture
def student():
    return _logits(0)


@pytest.fixture
def teacher():
    return _logits(1)


def test_soft_cross_entropy(student, teacher):
    ref = _per_row(lambda s, t: -sum(p * math.log(q) for p, q in zip(_softmax(t), _softmax(s))), student, teacher)
    _check(soft_cross_entropy(student, teacher), ref)


def test_hard_cross_entropy(student):
    labels = torch.tensor([[0, 3, 6], [2, 2, 5]])
    ref = torch.tensor([[-math.log(_softmax(student[i, t].tolist())[labels[i, t]]) for t in range(3)]
                        for i in range(2)], dtype=torch.float64)
    _check(hard_cross_entropy(student, labels), ref)


def test_forward_kl(student, teacher):
    ref = _per_row(lambda s, t: _kl(_softmax(t), _softmax(s)), student, teacher)
    _check(forward_kl(student, teacher), ref)


def test_reverse_kl(student, teacher):
    ref = _per_row(lambda s, t: _kl(_softmax(s), _softmax(t)), student, teacher)
    _check(reverse_kl(student, teacher), ref)


@pytest.mark.parametrize("beta", [0.5, 0.1, 0.9])
def test_jsd(student, teacher, beta):
    def ref_fn(s, t):
        p, q = _softmax(t), _softmax(s)
        m = [beta * pi + (1 - beta) * qi for pi, qi in zip(p, q)]
        return beta * _kl(p, m) + (1 - beta) * _kl(q, m)

    _check(jsd(student, teacher, beta), _per_row(ref_fn, student, teacher))


def test_tvd(student, teacher):
    ref = _per_row(lambda s, t: 0.5 * sum(abs(p - q) for p, q in zip(_softmax(t), _softmax(s))), student, teacher)
    _check(tvd(student, teacher), ref)


def test_masked_mean():
    per_pos = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64)
    mask = torch.tensor([[1, 0, 1], [0, 0, 1]])
    assert masked_mean(per_pos, mask).item() == pytest.approx((1 + 3 + 6) / 3, abs=TOL)
    assert masked_mean(per_pos, torch.zeros_like(mask)).item() == 0.0


def test_acceptance_on_draft_vocab_reference(student, teacher):
    draft_ids = torch.tensor([0, 2, 3, 6])  # 4 of the 7 target tokens
    lse = teacher.logsumexp(-1)

    def ref_fn(d, t):
        p = _softmax(t)  # full target distribution
        q = _softmax([d[i] for i in draft_ids.tolist()])  # draft distribution on the draft vocabulary
        return sum(min(p[v], qv) for v, qv in zip(draft_ids.tolist(), q))

    actual = acceptance_on_draft_vocab(student[..., draft_ids], teacher[..., draft_ids], lse)
    _check(actual, _per_row(ref_fn, student, teacher))


def test_kl_of_identical_is_zero(student):
    for fn in (forward_kl, reverse_kl, jsd, tvd):
        assert fn(student, student.clone()).abs().max().item() < TOL


def test_jsd_symmetric_and_bounded(student, teacher):
    a, b = jsd(student, teacher, 0.5), jsd(teacher, student, 0.5)
    assert torch.allclose(a, b, atol=TOL)
    assert (a >= -TOL).all() and (a <= math.log(2) + TOL).all()
    far = torch.full((1, 7), -1e4, dtype=torch.float64)  # near-disjoint supports -> ln 2
    near_a, near_b = far.clone(), far.clone()
    near_a[0, 0], near_b[0, 1] = 0.0, 0.0
    assert jsd(near_a, near_b).item() == pytest.approx(math.log(2), abs=TOL)


def test_tvd_in_unit_interval(student, teacher):
    tv = tvd(student * 5, teacher * 5)
    assert (tv >= 0).all() and (tv <= 1 + TOL).all() and tv.max() > 0.1


def test_acceptance_full_vocab_is_one_minus_tv(student, teacher):
    full = acceptance_on_draft_vocab(student, teacher, teacher.logsumexp(-1))
    ref = _per_row(lambda s, t: sum(min(p, q) for p, q in zip(_softmax(t), _softmax(s))), student, teacher)
    _check(full, ref)
    _check(full, 1 - tvd(student, teacher).double())


def test_acceptance_smaller_when_tokens_excluded(teacher):
    # a draft equal to the target accepts everything on the full vocabulary; on a reduced draft vocabulary it can
    # accept at most p's mass there (its renormalised q is >= p on the kept tokens, so sum min(p, q) = p(kept))
    lse = teacher.logsumexp(-1)
    full = acceptance_on_draft_vocab(teacher, teacher, lse)
    _check(full, torch.ones(SHAPE[:2], dtype=torch.float64))
    keep = torch.tensor([0, 2, 3, 6])
    part = acceptance_on_draft_vocab(teacher[..., keep], teacher[..., keep], lse)
    p_kept = _per_row(lambda t, _: sum(_softmax(t)[v] for v in keep.tolist()), teacher, teacher)
    _check(part, p_kept)
    assert (part < full - 1e-3).all()


@pytest.mark.parametrize("beta", [0.0, 0.3, 0.5, 1.0])
def test_divergences_equal_trls_generalized_jsd(student, teacher, beta, monkeypatch):
    """TRL's generalized JSD (GKD) per position: beta 0 is forward KL(p||q), beta 1 reverse KL(q||p), in between our
    jsd with the mixture beta p + (1 - beta) q. (TRL keeps it in trl.experimental: draftpool keeps its own.)"""
    monkeypatch.setenv("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl.experimental.gkd.gkd_trainer import GKDTrainer

    trl = GKDTrainer.generalized_jsd_loss(student, teacher, beta=beta, reduction="none").sum(-1)
    ours = forward_kl(student, teacher) if beta == 0 else reverse_kl(student, teacher) if beta == 1 else \
        jsd(student, teacher, beta)
    _check(ours, trl.double())
