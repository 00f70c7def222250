"""OGD, optimistic OGD and the Hedge ensemble on seeded synthetic loss streams."""

import math

import pytest
import torch

from online.updaters.ensemble import HedgeEnsemble, combine, geometric_rates, hedge_weights
from online.updaters.ogd import OGD, clipped_grads
from online.updaters.optimistic import OptimisticOGD, adam_direction, optimistic_update


def quad(c):
    """f(w) = ||w - c||^2 / 2 over a dict {'w': [d]}."""
    return lambda p: 0.5 * ((p["w"] - c) ** 2).sum()


def test_sgd_step_is_the_textbook_update():
    w0 = {"w": torch.tensor([1.0, -2.0])}
    u = OGD(w0, lr=0.1, optimizer="sgd", clip=0)
    c = torch.tensor([0.5, 0.5])
    u.step(quad(c))
    torch.testing.assert_close(u.served()["w"], w0["w"] - 0.1 * (w0["w"] - c))
    assert w0["w"].tolist() == [1.0, -2.0]  # the caller's tensors are not touched


def test_clipping_bounds_the_global_norm():
    p = {"a": torch.ones(3, requires_grad=True), "b": torch.ones(2, requires_grad=True)}
    grads = clipped_grads((p["a"] * 10).sum() + (p["b"] * 10).sum(), p, clip=0.5)
    assert float(torch.sqrt(sum((g ** 2).sum() for g in grads))) == pytest.approx(0.5)


def test_adam_state_persists_across_rounds():
    u = OGD({"w": torch.zeros(4)}, lr=1e-2)
    for t in range(5):
        u.step(quad(torch.ones(4) * t))
    state = u.opt.state_dict()["state"][0]
    assert int(state["step"]) == 5 and float(state["exp_avg"].abs().sum()) > 0  # moments never reset


def test_optimistic_plays_one_hint_ahead_on_a_constant_gradient():
    g = torch.tensor([1.0, 2.0])
    ogd = OGD({"w": torch.zeros(2)}, lr=0.1, optimizer="sgd", clip=0)
    opt = OptimisticOGD({"w": torch.zeros(2)}, lr=0.1, optimizer="sgd", clip=0)
    loss = lambda p: (p["w"] * g).sum()  # noqa: E731  linear: the gradient is g everywhere
    for _ in range(3):
        ogd.step(loss)
        opt.step(loss)
    torch.testing.assert_close(ogd.served()["w"], -0.3 * g)
    torch.testing.assert_close(opt.served()["w"], -0.4 * g)  # w_hat = -0.3 g, played = w_hat - 0.1 g
    w_hat, played = optimistic_update(torch.zeros(2), g, 0.5)
    torch.testing.assert_close(w_hat, -0.5 * g)
    torch.testing.assert_close(played, -1.0 * g)


@pytest.mark.parametrize("lr", [0.05, 0.1, 0.3])
def test_optimistic_collects_less_loss_than_ogd_when_gradients_repeat(lr):
    # a fixed far minimiser: consecutive gradients point the same way, so the hint moves the play ahead
    c = torch.full((2,), 3.0)
    ogd = OGD({"w": torch.zeros(2)}, lr, "sgd", clip=0)
    opt = OptimisticOGD({"w": torch.zeros(2)}, lr, "sgd", clip=0)
    total_ogd = sum(ogd.step(quad(c)) for _ in range(100))
    total_opt = sum(opt.step(quad(c)) for _ in range(100))
    assert total_opt < 0.96 * total_ogd


def test_optimistic_adam_lazy_iterate_is_adam_and_plays_one_direction_ahead():
    # linear losses: the gradient does not depend on where it is taken, so the lazy iterate w_hat must follow
    # torch's Adam exactly, and the played weights are w_hat + (w_hat - previous w_hat)
    gen = torch.Generator().manual_seed(0)
    gs = [torch.randn(5, generator=gen) for _ in range(8)]
    w = torch.zeros(5, requires_grad=True)
    adam = torch.optim.Adam([w], lr=0.01, betas=(0.9, 0.95))
    opt = OptimisticOGD({"w": torch.zeros(5)}, lr=0.01, clip=0)
    prev = torch.zeros(5)
    for g in gs:
        w.grad = g.clone()
        adam.step()
        opt.step(lambda p, g=g: (p["w"] * g).sum())
        torch.testing.assert_close(opt.w_hat["w"], w.detach())
        torch.testing.assert_close(opt.served()["w"], 2 * w.detach() - prev)
        prev = w.detach().clone()


def test_adam_direction_matches_the_reference_formula():
    gen = torch.Generator().manual_seed(1)
    m, v, g = torch.randn(4, generator=gen), torch.rand(4, generator=gen), torch.randn(4, generator=gen)
    m2, v2, d = adam_direction(m, v, g, 3, (0.8, 0.9))
    ref_m, ref_v = 0.8 * m + 0.2 * g, 0.9 * v + 0.1 * g**2
    torch.testing.assert_close(m2, ref_m)
    torch.testing.assert_close(v2, ref_v)
    torch.testing.assert_close(d, (ref_m / (1 - 0.8**3)) / (torch.sqrt(ref_v / (1 - 0.9**3)) + 1e-8))


def test_optimistic_adam_collects_less_loss_than_adam_when_gradients_repeat():
    c = torch.full((2,), 3.0)
    ogd = OGD({"w": torch.zeros(2)}, 0.1, "adam", clip=0)
    opt = OptimisticOGD({"w": torch.zeros(2)}, 0.1, "adam", clip=0)
    total_ogd = sum(ogd.step(quad(c)) for _ in range(100))
    total_opt = sum(opt.step(quad(c)) for _ in range(100))
    assert total_opt < 0.95 * total_ogd  # measured 0.913


@pytest.mark.parametrize("make", [lambda: OGD({"w": torch.zeros(2)}, 0.1, "sgd", clip=0),
                                  lambda: OGD({"w": torch.zeros(2)}, 0.1, clip=0),
                                  lambda: OptimisticOGD({"w": torch.zeros(2)}, 0.1, clip=0)])
def test_epochs_are_repeated_updates_on_one_round_loss(make):
    c = torch.tensor([2.0, -1.0])
    a, b = make(), make()
    first = a.step(quad(c), epochs=3)
    seen = [b.step(quad(c)) for _ in range(3)]
    torch.testing.assert_close(a.served()["w"], b.served()["w"])
    assert first == seen[0] and a.rounds == 1  # f_t at the round's starting weights; one round


def test_ensemble_meta_weights_see_only_the_rounds_first_loss():
    c = torch.full((2,), 2.0)
    ens = HedgeEnsemble({"w": torch.zeros(2)}, rates=[0.01, 0.1], eps=1.0, optimizer="sgd", clip=0)
    ens.step(quad(c), epochs=4)
    assert ens.scale == pytest.approx(quad(c)({"w": torch.zeros(2)}).item())  # both bases started at 0: same f_t,
    assert ens.cum == pytest.approx([1.0, 1.0])  # scaled by the largest loss seen
    assert all(b.rounds == 1 for b in ens.bases)
    ref = OGD({"w": torch.zeros(2)}, 0.1, "sgd", clip=0)
    for _ in range(4):
        ref.step(quad(c))
    torch.testing.assert_close(ens.bases[1].served()["w"], ref.served()["w"])


def test_hedge_weights_and_combination():
    p = hedge_weights([1.0, 1.5, 3.0], eps=2.0)
    ref = torch.tensor([1.0, 1.5, 3.0]).mul(-2.0).softmax(0).tolist()
    assert p == pytest.approx(ref)
    out = combine([{"w": torch.ones(2)}, {"w": torch.zeros(2)}], [0.25, 0.75])
    torch.testing.assert_close(out["w"], torch.full((2,), 0.25))
    assert geometric_rates(1e-4, 3) == pytest.approx([1e-4, 2e-4, 4e-4])


def test_ensemble_updates_every_base_and_follows_the_best_rate():
    # a far, fixed target: the largest rate gets there first and collects the least loss
    ens = HedgeEnsemble({"w": torch.zeros(3)}, rates=[0.001, 0.01, 0.1], eps=1.0, optimizer="sgd", clip=0)
    c = torch.full((3,), 4.0)
    served = [ens.step(quad(c)) for _ in range(60)]
    assert all(b.rounds == 60 for b in ens.bases)
    assert ens.p[2] > 0.99
    assert served[-1] < 0.01 * served[0]


def drifting_stream(rounds: int, seed: int = 0) -> list[torch.Tensor]:
    """Optimum c_t of a random walk (steps 0.3 per coordinate)."""
    g = torch.Generator().manual_seed(seed)
    c, out = torch.zeros(4), []
    for _ in range(rounds):
        c = c + 0.3 * torch.randn(4, generator=g)
        out.append(c.clone())
    return out


def offset_quad(c):
    """f_t(w) = 15 + ||w - c_t||^2 / 2: round losses of ~15 that differ by a little, like EAGLE-3 TTT losses."""
    return lambda p: 15.0 + 0.5 * ((p["w"] - c) ** 2).sum()


def test_ensemble_stays_an_ensemble_and_ends_on_the_best_rate():
    rates, stream = [0.05, 0.1, 0.2, 0.4], drifting_stream(300)
    alone = []  # each rate's own losses (the ensemble's bases follow exactly these): the best rate is known
    for lr in rates:
        b = OGD({"w": torch.zeros(4)}, lr, "sgd", clip=0)
        alone.append([b.step(offset_quad(c)) for c in stream])
    best = min(range(len(rates)), key=lambda i: sum(alone[i]))
    assert best == len(rates) - 1  # on a drifting optimum the largest stable rate tracks it best
    ens = HedgeEnsemble({"w": torch.zeros(4)}, rates=rates, optimizer="sgd", clip=0)
    history = []
    for c in stream:
        ens.step(offset_quad(c))
        history.append(ens.p)
    assert 0.2 < min(history[4]) and max(history[4]) < 0.3  # after 5 rounds every rate still holds real weight
    final = history[-1]
    assert final == sorted(final) and final[best] > 0.5  # weight ordered as the rates' own losses, best on top
    assert ens.meta_rate == pytest.approx(math.sqrt(8 * math.log(4) / 300))
    # the rule this replaces (eps = 10 on the raw cumulative losses) is all on one learner after 5 rounds
    assert max(hedge_weights([sum(x[:5]) for x in alone], 10.0)) > 0.99


def test_state_round_trip_continues_identically():
    cs = [torch.randn(3, generator=torch.Generator().manual_seed(i)) for i in range(10)]
    for make in (lambda: OGD({"w": torch.zeros(3)}, 0.05),
                 lambda: OptimisticOGD({"w": torch.zeros(3)}, 0.05),
                 lambda: OptimisticOGD({"w": torch.zeros(3)}, 0.05, "sgd"),
                 lambda: HedgeEnsemble({"w": torch.zeros(3)}, rates=[0.01, 0.05])):
        a, b = make(), make()
        for c in cs[:5]:
            a.step(quad(c))
        b.load_state(a.state())
        for c in cs[5:]:
            a.step(quad(c))
            b.step(quad(c))
        torch.testing.assert_close(a.served()["w"], b.served()["w"])


def test_bad_rates():
    with pytest.raises(ValueError, match="learning rate"):
        OGD({"w": torch.zeros(1)}, 0.0)
    with pytest.raises(ValueError, match="optimizer"):
        OGD({"w": torch.zeros(1)}, 0.1, optimizer="lion")
    with pytest.raises(ValueError, match=">= 2 rates"):
        HedgeEnsemble({"w": torch.zeros(1)}, rates=[0.1])
    with pytest.raises(ValueError, match="optimizer"):
        OptimisticOGD({"w": torch.zeros(1)}, 0.1, optimizer="lion")
