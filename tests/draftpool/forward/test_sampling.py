import pytest
import torch

from draftpool.forward.sampling import SamplingParams, filter_logits, probs_from_logits


def reference_filter(logits: list[float], t: float, k: int, p: float) -> list[bool]:
    """Plain-Python kept-token mask: top-k then top-p (smallest prefix reaching p, ties at the k-th kept)."""
    x = [v / t for v in logits]
    keep = [True] * len(x)
    if k:
        kth = sorted(x, reverse=True)[k - 1]
        keep = [v >= kth for v in x]
    if p < 1:
        import math

        kept = [(v, i) for i, v in enumerate(x) if keep[i]]
        z = sum(math.exp(v) for v, _ in kept)
        mass = 0.0
        new = [False] * len(x)
        for v, i in sorted(kept, key=lambda e: -e[0]):
            if mass >= p:
                break
            new[i] = True
            mass += math.exp(v) / z
        keep = new
    return keep


@pytest.mark.parametrize("t,k,p", [(1.0, 0, 1.0), (0.7, 3, 1.0), (1.3, 0, 0.6), (0.9, 5, 0.8), (1.0, 1, 0.5)])
def test_filter_matches_reference(t, k, p):
    g = torch.Generator().manual_seed(0)
    for _ in range(20):
        logits = torch.randn(12, generator=g) * 2
        kept = torch.isfinite(filter_logits(logits, SamplingParams(t, k, p)))
        assert kept.tolist() == reference_filter(logits.tolist(), t, k, p)
        probs = probs_from_logits(logits, SamplingParams(t, k, p))
        assert torch.allclose(probs.sum(), torch.tensor(1.0))
        assert (probs[~kept] == 0).all()


def test_filter_batched_rows_independent():
    logits = torch.randn(4, 7, 30)
    params = SamplingParams(0.8, 10, 0.9)
    batched = filter_logits(logits, params)
    for i in range(4):
        for j in range(7):
            assert torch.equal(batched[i, j], filter_logits(logits[i, j], params))


@pytest.mark.parametrize("kw", [{"temperature": -1}, {"top_k": -2}, {"top_p": 0.0}, {"top_p": 1.5}])
def test_bad_params(kw):
    with pytest.raises(ValueError):
        SamplingParams(**kw)
