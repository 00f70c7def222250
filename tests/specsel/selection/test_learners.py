"""specsel.selection.learners on seeded synthetic streams: regret bounds, concentration, drift, validation.
Pure Python, fast.

The environment's random.Random always gets a seed different from the learner's: with equal seeds the learner's
sampling draw and the reward draw would be the same number and rewards would correlate with the choice.
"""

from __future__ import annotations

import math
import random

import pytest

from specsel.selection.learners import (
    EXP3,
    LEARNERS,
    PETC,
    UCB,
    AdaNormalHedge,
    DiscountedUCB,
    EXP3Spec,
    Fixed,
    Hedge,
    NormalHedge,
    SequentialHalving,
    SlidingWindowUCB,
    UCBSpec,
    Uniform,
    make_learner,
)
from specsel.selection.learners.normal_hedge import solve_c

T_FULL, N_FULL, BEST_FULL = 2000, 8, 3


def stochastic_losses(seed: int) -> list[list[float]]:
    """N=8 Bernoulli loss streams, means spread over [0.3, 0.7], arm 3 at 0.2."""
    rng = random.Random(seed)
    means = [0.3 + 0.4 * i / 6 for i in range(7)]
    means.insert(BEST_FULL, 0.2)
    return [[1.0 if rng.random() < m else 0.0 for m in means] for _ in range(T_FULL)]


def switching_losses(seed: int) -> list[list[float]]:
    """Arms 0 and 1 swap being good every 250 rounds (0.2 vs 0.6 / 0.6 vs 0.25); the rest sit at 0.5."""
    rng = random.Random(seed)
    out = []
    for t in range(T_FULL):
        means = [0.5] * N_FULL
        means[0], means[1] = (0.2, 0.6) if (t // 250) % 2 == 0 else (0.6, 0.25)
        out.append([1.0 if rng.random() < m else 0.0 for m in means])
    return out


def play_full(learner, losses: list[list[float]]) -> float:
    """Expected regret sum_t p_t.l_t - min_i sum_t l_ti."""
    mixed = 0.0
    cum = [0.0] * len(losses[0])
    for loss in losses:
        p = learner.probs()
        assert all(x >= 0 for x in p) and abs(sum(p) - 1) < 1e-9
        mixed += sum(a * b for a, b in zip(p, loss))
        learner.update(loss)
        cum = [c + x for c, x in zip(cum, loss)]
    return mixed - min(cum)


LN_N = math.log(N_FULL)
FULL_CASES = {
    # Cesa-Bianchi & Lugosi 2006, Thm 2.2: fixed eta = sqrt(8 ln N / T) -> regret <= sqrt(T ln N / 2)
    "hedge_horizon": (lambda: Hedge(N_FULL, horizon=T_FULL), math.sqrt(T_FULL * LN_N / 2)),
    # Thm 2.3: eta_t = sqrt(8 ln N / t) -> regret <= 2 sqrt(T ln N / 2) + sqrt(ln N / 8)
    "hedge_anytime": (lambda: Hedge(N_FULL), 2 * math.sqrt(T_FULL * LN_N / 2) + math.sqrt(LN_N / 8)),
    # a generous O(sqrt(T ln N)) envelope, our constant (NormalHedge's Thm 1 at eps = 1/N, delta = 1/2 gives ~700)
    "normal_hedge": (lambda: NormalHedge(N_FULL), 2 * math.sqrt(T_FULL * (1 + LN_N))),
    "ada_normal_hedge": (lambda: AdaNormalHedge(N_FULL), 2 * math.sqrt(T_FULL * (1 + LN_N))),
}


@pytest.mark.parametrize("name", list(FULL_CASES))
def test_full_information_regret_bound_and_concentration(name):
    make, bound = FULL_CASES[name]
    learner = make()
    regret = play_full(learner, stochastic_losses(0))
    assert regret <= bound, (name, regret, bound)
    assert learner.probs()[BEST_FULL] > 0.9
    regret = play_full(make(), switching_losses(1))
    assert regret <= bound, (name, regret, bound)


def test_hedge_rates():
    h = Hedge(4)
    assert h.current_eta() == pytest.approx(math.sqrt(8 * math.log(4) / 1))
    h.update([0.0, 1.0, 1.0, 1.0])
    assert h.current_eta() == pytest.approx(math.sqrt(8 * math.log(4) / 2))
    # p ∝ exp(-eta L) with the rate of the next round
    eta = h.current_eta()
    w = [1.0, math.exp(-eta), math.exp(-eta), math.exp(-eta)]
    assert h.probs() == pytest.approx([x / sum(w) for x in w])
    assert Hedge(4, eta=0.5).current_eta() == 0.5
    assert Hedge(4, horizon=100).current_eta() == pytest.approx(math.sqrt(8 * math.log(4) / 100))
    # huge cumulative losses stay finite (shifted by the min)
    h = Hedge(3, eta=10.0)
    for _ in range(1000):
        h.update([1.0, 0.0, 1.0])
    assert h.probs() == [0.0, 1.0, 0.0]


def _mean_exp(regrets: list[float], c: float) -> float:
    return sum(math.exp(max(0.0, r) ** 2 / (2 * c)) for r in regrets) / len(regrets)


def test_normal_hedge_uniform_when_no_positive_regret():
    nh = NormalHedge(5)
    assert nh.probs() == [0.2] * 5 and nh.c is None  # round 1
    for loss in (0.3, 1.0, 0.0, 0.7):
        nh.update([loss] * 5)  # equal losses: every regret stays 0
        p = nh.probs()
        assert all(math.isfinite(x) and x >= 0 for x in p) and sum(p) == pytest.approx(1.0)
        assert p == pytest.approx([0.2] * 5)


def test_normal_hedge_c_solves_its_equation():
    nh = NormalHedge(N_FULL)
    for t, loss in enumerate(stochastic_losses(2)[:300]):
        nh.update(loss)
        if t % 50 == 49:
            assert nh.c is not None and nh.c > 0
            assert _mean_exp(nh.regrets, nh.c) == pytest.approx(math.e, rel=1e-6)
    # huge regrets (bisection path, several positive) and the single-positive closed form
    for regrets in ([1e6, 3e5, -1e6, 0.0], [1e6, 1e6 - 1, 1e6 - 2, 0.0], [2.5, -1.0, -3.0, 0.0], [1e-3, 2e-3, 0, 0]):
        c = solve_c([0.5 * max(0.0, r) ** 2 for r in regrets])
        assert _mean_exp(regrets, c) == pytest.approx(math.e, rel=1e-6)
        nh = NormalHedge(4)
        nh.regrets = list(regrets)
        nh.update([0.5] * 4)  # equal losses keep the regrets
        p = nh.probs()
        assert all(math.isfinite(x) for x in p) and sum(p) == pytest.approx(1.0)
        # p_i ∝ ([R_i]_+ / c) exp([R_i]_+^2 / 2c), written relative to the largest regret
        top = max(regrets)
        w = [max(0.0, r) / top * math.exp((max(0.0, r) ** 2 - top**2) / (2 * nh.c)) for r in regrets]
        assert p == pytest.approx([x / sum(w) for x in w], rel=1e-9, abs=1e-300)


def test_normal_hedge_no_nan_on_a_long_dominated_run():
    nh = NormalHedge(2)
    for _ in range(100_000):
        nh.update([0.0, 1.0])
    p = nh.probs()
    assert p == [1.0, 0.0]
    assert all(math.isfinite(r) for r in nh.regrets) and math.isfinite(nh.c)
    assert _mean_exp(nh.regrets, nh.c) == pytest.approx(math.e, rel=1e-6)


def test_ada_normal_hedge_round_one_and_large_counts():
    a = AdaNormalHedge(4)
    assert a.probs() == [0.25] * 4
    a.update([0.5] * 4)
    assert a.probs() == pytest.approx([0.25] * 4)
    # Phi(R, C) = exp(R^2 / 3C) would overflow a float here; the log-space weights must not
    a.regrets = [5e4, 4.9e4, -10.0, -5e4]
    a.abs_regrets = [6e4, 6e4, 6e4, 6e4]
    a.update([0.0, 0.0, 1.0, 1.0])
    p = a.probs()
    assert all(math.isfinite(x) for x in p) and sum(p) == pytest.approx(1.0)
    assert p[0] > p[1] > 0 and p[2] == 0.0 and p[3] == 0.0


def play_bandit(learner, means_at, rounds: int, seed: int) -> tuple[list[int], list[float]]:
    rng = random.Random(10_000 + seed)
    arms, rewards = [], []
    for t in range(rounds):
        arm = learner.select()
        reward = 1.0 if rng.random() < means_at(t)[arm] else 0.0
        learner.update(arm, reward)
        arms.append(arm)
        rewards.append(reward)
    return arms, rewards


STATIONARY = [0.3, 0.5, 0.8, 0.4]  # best arm 2


def test_ucb_concentrates():
    arms, _ = play_bandit(UCB(4, beta=1.0), lambda t: STATIONARY, 3000, 0)
    assert arms[1500:].count(2) > 0.8 * 1500


def test_ucb_metasd_default_is_greedy():
    rewards = [0.3, 0.5, 0.45, 0.2]  # deterministic; gap 0.05 > the beta=0.01 bonus
    greedy = UCB(4)
    assert greedy.beta == 0.01
    arms = []
    for _ in range(3000):
        arm = greedy.select()
        greedy.update(arm, rewards[arm])
        arms.append(arm)
    assert arms[:4] == [0, 1, 2, 3]  # round robin first
    assert set(arms[4:]) == {1}  # then always the empirical best
    ucb1 = UCB(4, beta=1.0)  # a real bonus re-tries the runner-up
    for _ in range(3000):
        arm = ucb1.select()
        ucb1.update(arm, rewards[arm])
    assert ucb1.counts[2] > 10


def test_exp3_floor_and_beats_uniform():
    learner = EXP3(4, seed=3)
    rng = random.Random(7)
    rewards = []
    for _ in range(3000):
        assert min(learner.probs()) >= 0.4 / 4 - 1e-12
        arm = learner.select()
        reward = 1.0 if rng.random() < STATIONARY[arm] else 0.0
        learner.update(arm, reward)
        rewards.append(reward)
    uniform = sum(STATIONARY) / 4  # 0.5
    assert sum(rewards[-1000:]) / 1000 > uniform + 0.1


def test_sequential_halving_finds_the_best_arm():
    means = [0.4, 0.3, 0.4, 0.2, 0.9, 0.4, 0.3, 0.4]  # best arm 4
    found = 0
    for seed in range(10):
        sh = SequentialHalving(8, seed=seed, budget=200)
        arms, _ = play_bandit(sh, lambda t: means, 300, seed)
        assert sh.best is not None and sh.pulls <= 200
        assert set(arms[sh.pulls :]) == {sh.best}
        found += sh.best == 4
    assert found >= 9


def test_sequential_halving_schedule():
    sh = SequentialHalving(4, budget=32)  # 2 phases: 4 pulls each of 4 arms, then 8 pulls each of the best 2
    arms, _ = play_bandit(sh, lambda t: [0.1, 0.9, 0.2, 0.8], 40, 0)
    assert arms[:16] == [0, 1, 2, 3] * 4
    assert sorted(set(arms[16:32])) == [1, 3]
    with pytest.raises(ValueError, match="scheduled"):
        SequentialHalving(4).update(3, 1.0)  # arm 0 is due first
    assert SequentialHalving(1).select() == 0


def test_petc_commits_after_exploration():
    petc = PETC(4, seed=1, explore_rounds=32)
    assert not petc.committed
    arms, _ = play_bandit(petc, lambda t: [0.2, 0.9, 0.4, 0.5], 200, 1)
    assert petc.committed and petc.pulls == 32
    assert len(set(arms[:32])) == 4  # explored every arm
    assert set(arms[32:]) == {petc.best} == {1}
    # a budget smaller than one pass still commits once it is spent
    small = PETC(8, explore_rounds=3)
    arms, _ = play_bandit(small, lambda t: [0.5] * 8, 20, 2)
    assert small.committed and arms[:3] == [0, 1, 2] and set(arms[3:]) == {small.best}


def switch_means(t: int) -> list[float]:
    return [0.9, 0.1, 0.3, 0.3] if t < 2000 else [0.1, 0.9, 0.3, 0.3]  # best arm 0 -> 1 at T/2


def test_drift_learners_follow_a_switch():
    def last_quarter_share(make) -> float:
        shares = []
        for seed in range(3):
            arms, _ = play_bandit(make(), switch_means, 4000, seed)
            shares.append(arms[3000:].count(1) / 1000)
        return sum(shares) / len(shares)

    d_ucb = last_quarter_share(lambda: DiscountedUCB(4))
    sw_ucb = last_quarter_share(lambda: SlidingWindowUCB(4))
    plain = last_quarter_share(lambda: UCB(4))
    assert d_ucb > 0.5 and sw_ucb > 0.5
    assert plain < min(d_ucb, sw_ucb) - 0.3


def test_discounted_ucb_discounts_sums_and_counts():
    d = DiscountedUCB(2, beta=0.0, discount=0.5)
    for arm, reward in [(0, 1.0), (1, 0.0), (0, 1.0)]:
        d.update(arm, reward)
    assert d.sums == pytest.approx([1.25, 0.0]) and d.counts == pytest.approx([1.25, 0.5])
    assert d.select() == 0
    d = DiscountedUCB(2, beta=0.1, discount=0.5)
    d.update(0, 1.0)
    d.update(1, 0.9)
    for _ in range(20):
        d.update(1, 0.9)  # arm 0's count halves each round, so its bonus eventually wins
    n0 = d.counts[0]
    assert n0 == pytest.approx(0.5**21)
    assert d.select() == 0


def test_sliding_window_forgets():
    sw = SlidingWindowUCB(3, window=5)
    for arm, reward in [(0, 1.0), (1, 0.0), (2, 0.5), (0, 1.0), (0, 1.0), (1, 1.0), (2, 0.0)]:
        sw.update(arm, reward)
    assert len(sw.history) == 5 and sw.counts == [2, 1, 2] and sw.sums == pytest.approx([2.0, 1.0, 0.5])


@pytest.mark.parametrize("make", [lambda: UCBSpec(4), lambda: EXP3Spec(4, seed=5)], ids=["ucb_spec", "exp3_spec"])
def test_banditspec_learners_concentrate(make):
    arms, _ = play_bandit(make(), lambda t: STATIONARY, 3000, 4)
    assert arms[1500:].count(2) > 0.8 * 1500


def test_ucb_spec_radius_and_exp3_spec_rate():
    u = UCBSpec(4)
    for arm, reward in [(0, 1.0), (1, 0.0), (2, 0.5), (3, 0.5)]:
        assert u.select() == arm
        u.update(arm, reward)
    # eq. (6) with L -> max_reward = 1, delta = 1/2, t = 4, n = 1
    expected = 0.5 * math.sqrt(2.0 * (1 + 2 * math.log(4 * 16 * math.sqrt(2.0) / 0.5)))
    assert u.radius(1) == pytest.approx(expected)
    e = EXP3Spec(3, seed=0)
    assert e.probs() == pytest.approx([1 / 3] * 3)
    arm = e.select()
    e.update(arm, 0.25)
    assert e.loss_sums[arm] == pytest.approx(0.75 * 3)  # (1 - r) / p
    eta = math.sqrt(math.log(3) / (2 * 3))
    w = [math.exp(-eta * z) for z in e.loss_sums]
    assert e.probs() == pytest.approx([x / sum(w) for x in w])


def test_uniform_and_fixed():
    u = Uniform(4, seed=11)
    counts = [0] * 4
    for _ in range(20_000):
        counts[u.select()] += 1
    assert all(abs(c / 20_000 - 0.25) < 0.05 * 0.25 for c in counts)
    f = Fixed(5, arm=3)
    for _ in range(50):
        assert f.select() == 3
        f.update(3, 0.5)


@pytest.mark.parametrize("name", ["hedge", "normal_hedge", "ada_normal_hedge", "exp3", "exp3_spec", "uniform"])
def test_seeded_learners_are_reproducible(name):
    def trace(seed: int) -> list[int]:
        learner = make_learner(name, 4, seed=seed)
        out = []
        for t in range(200):
            arm = learner.select()
            if learner.full_information:
                learner.update([(t * (i + 1) % 7) / 7 for i in range(4)])
            else:
                learner.update(arm, (t * (arm + 1) % 7) / 7)
            out.append(arm)
        return out

    assert trace(1) == trace(1)
    assert trace(1) != trace(2)


def test_make_learner_builds_every_entry():
    assert set(LEARNERS) == {
        "hedge", "normal_hedge", "ada_normal_hedge", "ucb", "exp3", "sh", "petc",
        "d_ucb", "sw_ucb", "ucb_spec", "exp3_spec", "uniform", "fixed",
    }  # fmt: skip
    for name, cls in LEARNERS.items():
        learner = make_learner(name, 3, seed=1)
        assert isinstance(learner, cls)
        for _ in range(10):
            arm = learner.select()
            assert 0 <= arm < 3
            if learner.full_information:
                assert len(learner.probs()) == 3
                learner.update([0.1, 0.5, 0.9])
            else:
                learner.update(arm, 1.0 + 5e-10)  # within the 1e-9 tolerance
    assert make_learner("fixed", 4, arm=2).select() == 2
    assert make_learner("exp3", 4, gamma=0.1).gamma == 0.1


BAD = [
    lambda: Hedge(0),
    lambda: Hedge(2.5),
    lambda: Hedge(3, eta=0.0),
    lambda: Hedge(3, eta=float("nan")),
    lambda: Hedge(3, horizon=0),
    lambda: Hedge(3).update([0.1, 0.2]),
    lambda: Hedge(3).update([0.1, 0.2, 1.1]),
    lambda: NormalHedge(2).update([-0.01, 0.5]),
    lambda: NormalHedge(2).update([float("nan"), 0.5]),
    lambda: AdaNormalHedge(0),
    lambda: AdaNormalHedge(2).update([0.5, 0.5, 0.5]),
    lambda: UCB(3, beta=-1.0),
    lambda: UCB(3).update(3, 0.5),
    lambda: UCB(3).update(-1, 0.5),
    lambda: UCB(3).update(1.0, 0.5),
    lambda: UCB(3).update(0, 1.5),
    lambda: EXP3(3, gamma=0.0),
    lambda: EXP3(3, gamma=1.5),
    lambda: EXP3(3).update(0, -0.2),
    lambda: SequentialHalving(3, budget=0),
    lambda: PETC(3, explore_rounds=0),
    lambda: DiscountedUCB(3, discount=0.0),
    lambda: DiscountedUCB(3, discount=1.5),
    lambda: SlidingWindowUCB(3, window=0),
    lambda: SlidingWindowUCB(3).update(5, 0.5),
    lambda: UCBSpec(3, delta=1.0),
    lambda: UCBSpec(3, max_reward=0.0),
    lambda: UCBSpec(3, alpha=-1.0),
    lambda: EXP3Spec(3).update(0, 2.0),
    lambda: Uniform(0),
    lambda: Uniform(3).update(3, 0.5),
    lambda: Fixed(3, arm=3),
    lambda: Fixed(3).update(0, float("nan")),
]


def test_bad_inputs_raise_value_error():
    for i, case in enumerate(BAD):
        with pytest.raises(ValueError):
            case()
            pytest.fail(f"BAD[{i}] raised nothing")


def test_make_learner_unknown_name():
    with pytest.raises(ValueError, match="known: .*normal_hedge"):
        make_learner("thompson", 3)
