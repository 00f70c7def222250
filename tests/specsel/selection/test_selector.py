"""Multi-drafter decoding with online selection on fixed-logit stubs: losslessness, counterfactual gammas, caches,
switching, convergence, and the replay tables reproducing the live decoder exactly."""

import pytest
import torch

from benchmarks.replay import Method, ReplayRequest, acceptance_tables, replay
from draftpool.config import ConfigError
from draftpool.forward.sampling import SamplingParams
from draftpool.pool import Member
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder, SpecError
from specsel.selection.delayed_feedback import DelayedFeedback, GameConfig
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector
from tests.stubs import BigramLM, cached_tokens, successor_table

V, K = 16, 4
TARGET_NEXT = lambda t: (t + 1) % V  # noqa: E731
NEXTS = {
    "never": lambda t: (t + 2) % V,
    "always": TARGET_NEXT,
    "even": lambda t: (t + 1) % V if t % 2 == 0 else (t + 3) % V,  # right after even tokens only
}


def target():
    return BigramLM(successor_table(V, TARGET_NEXT))


def pool():
    return {n: LlamaDrafter(BigramLM(successor_table(V, f))) for n, f in NEXTS.items()}


def plain(prompt, n):
    return SpecDecoder(target(), mode="plain").generate(prompt, n)[0]


class Recorder:
    """A full-information learner that plays a fixed schedule and records the loss vectors it is fed."""

    full_information = True

    def __init__(self, schedule):
        self.schedule, self.t, self.seen = schedule, 0, []

    def select(self):
        self.t += 1
        return self.schedule[(self.t - 1) % len(self.schedule)]

    def update(self, losses):
        self.seen.append(losses)


@pytest.mark.parametrize("name", ["normal_hedge", "hedge", "ada_normal_hedge", "ucb", "exp3", "uniform",
                                  "ucb_spec", "exp3_spec", "sh"])
def test_output_is_plain_greedy_whatever_the_selector(name):
    dec = SpecDecoder(target(), pool(), selector=Selector(make_learner(name, 3, seed=1), 3, K), k=K)
    for prompt in ([3], [5, 7, 2]):
        out, m = dec.generate(prompt, 37)
        assert out == plain(prompt, 37)
        assert m.target_forwards == 1 + len(m.accepted) == 1 + len(m.choices)


def test_counterfactual_gammas_and_caches():
    rec = Recorder([0])  # always the 'never' drafter: every cycle commits one token
    sel = Selector(rec, 3, K, GameConfig(level="token", loss="accept"))
    dec = SpecDecoder(target(), pool(), selector=sel, k=K)
    out, m = dec.generate([4], 12)
    assert m.accepted == [0] * 11
    # the acceptance loss of position s for drafter i is 1 - gamma: never -> 1, always -> 0, even -> 0 after even
    # tokens; position s follows token s-1 = prompt + s-th output
    seq = [4] + out
    assert len(rec.seen) == 11 - 1  # the vectors of the last cycle wait in the queue for a next choice
    for j, losses in enumerate(rec.seen):
        prev = seq[j + 1]
        assert losses == [1.0, 0.0, 0.0 if prev % 2 == 0 else 1.0]
    committed = [4] + out
    for d in dec.drafters:  # every drafter was prefilled with exactly the verified tokens
        assert cached_tokens(d.cache) == committed[:len(d.cached)] and len(d.cached) == len(committed)


def test_length_loss_token_game_has_a_delay_of_k_tokens():
    rec = Recorder([1])
    sel = Selector(rec, 3, K, GameConfig())
    out, m = SpecDecoder(target(), pool(), selector=sel, k=K).generate([0], 31)
    assert m.accepted[:-1] == [K] * (len(m.accepted) - 1)
    # every token's loss is known K positions later; the always-right drafter has loss 0 (EAL = K+1)
    assert all(v[1] == 0.0 and v[0] == pytest.approx(1 - 1 / (K + 1)) for v in rec.seen)
    assert sel.game.updates + len(sel.game.queue) == len(rec.seen) + len(sel.game.queue)


def test_full_information_converges_to_the_best_drafter():
    sel = Selector(make_learner("normal_hedge", 3, seed=0), 3, K)
    out, m = SpecDecoder(target(), pool(), selector=sel, k=K).generate([1], 200)
    assert out == plain([1], 200)
    late = m.choices[len(m.choices) // 2:]
    assert late.count(1) / len(late) > 0.9
    assert m.mat > 4.0


def test_bandit_switches_catch_up_and_are_timed():
    class RoundRobin:
        full_information = False

        def __init__(self):
            self.t = 0

        def select(self):
            self.t += 1
            return self.t % 3

    sel = Selector(RoundRobin(), 3, K, reward="none")
    dec = SpecDecoder(target(), pool(), selector=sel, k=K)
    out, m = dec.generate([2], 40)
    assert out == plain([2], 40)
    assert m.switches == len(m.choices) - 1 and m.switch_s > 0
    assert m.catchup_tokens > 0  # a drafter idle for two cycles prefills the two chunks it missed


def test_bd_reward_is_what_the_bandit_sees():
    seen = []

    class Spy:
        full_information = False

        def select(self):
            return 2

        def update(self, arm, reward):
            seen.append((arm, reward))

    SpecDecoder(target(), pool(), selector=Selector(Spy(), 3, K, reward="bd"), k=K).generate([0], 20)
    assert seen and all(a == 2 and 0 <= r <= 1 for a, r in seen)
    # the 'even' drafter agrees with the target after even tokens only: its BD reward is strictly between 0 and 1
    assert 0.05 < sum(r for _, r in seen) / len(seen) < 0.95


def test_sampling_gammas_are_one_minus_tv():
    rec = Recorder([1])
    sel = Selector(rec, 3, K, GameConfig(loss="accept"))
    params = SamplingParams(temperature=1.0)
    SpecDecoder(target(), pool(), selector=sel, k=K).generate([0], 20, params, seed=3)
    # the 'always' drafter has the target's own table: 1 - TV = 1, loss 0; the others lose a share
    assert rec.seen and all(v[1] == pytest.approx(0.0, abs=1e-6) for v in rec.seen)
    assert all(0 < v[0] < 1 for v in rec.seen)


def test_sampling_selection_feeds_the_reweighted_length_estimate(monkeypatch):
    """Under sampling the game gets beta = min(1, q/p) of the committed tokens beside the gammas (the unbiased
    length estimate); under greedy decoding it gets none (there beta == gamma)."""
    calls = []
    real = DelayedFeedback.observe

    def spy(self, gammas, accepted, betas=None):
        calls.append((gammas.clone(), None if betas is None else betas.clone()))
        return real(self, gammas, accepted, betas)

    monkeypatch.setattr(DelayedFeedback, "observe", spy)
    rec = Recorder([1])
    SpecDecoder(target(), pool(), selector=Selector(rec, 3, K), k=K).generate([0], 20, SamplingParams(1.0), seed=3)
    assert calls and all(b is not None and b.shape == g.shape for g, b in calls)
    betas = torch.cat([b for _, b in calls], 1)
    assert torch.allclose(betas[1], torch.ones_like(betas[1]))  # q == p for the drafter with the target's table
    assert (betas[0] < 0.05).all()  # the 'never' drafter puts almost no mass on the tokens the target drew
    assert rec.seen and all(v[1] == pytest.approx(0.0, abs=1e-5) for v in rec.seen)
    calls.clear()
    SpecDecoder(target(), pool(), selector=Selector(Recorder([1]), 3, K), k=K).generate([0], 20)
    assert calls and all(b is None for _, b in calls)


# the selector settings the replay is checked against live: token and chunk games, App. B.5's, two bandits
REPLAY_SETTINGS = [("normal_hedge", GameConfig(), "bd"), ("hedge", GameConfig(level="chunk"), "bd"),
                   ("normal_hedge", GameConfig(hybrid=3, token_stride=2, warmup_rounds=2, feedback_every=3), "bd"),
                   ("normal_hedge", GameConfig(warmup_rounds=1, feedback_every=4, settle=0.6), "bd"),
                   ("ucb", None, "bd"), ("exp3", None, "be")]


@pytest.mark.parametrize("learner,game,reward", REPLAY_SETTINGS)
def test_replay_reproduces_the_live_decoder(learner, game, reward):
    tgt, drafters = target(), pool()
    prompts = [[3], [6, 1], [9]]
    stream = []
    for i, p in enumerate(prompts):
        ans = plain(p, 30)
        members = [Member(n, "llama", d.model) for n, d in drafters.items()]
        acc, gam, bd, length, *_ = acceptance_tables(tgt, members, p, ans, K)
        stream.append(ReplayRequest(str(i), "x", len(p), length, acc, gam, bd))
    method = Method(learner, lambda n, s: make_learner(learner, n, seed=s), game, reward)
    res = replay(stream, method, 3, K)
    for i, p in enumerate(prompts):
        sel = Selector(make_learner(learner, 3, seed=i), 3, K, game, reward)
        out, m = SpecDecoder(tgt, drafters, selector=sel, k=K).generate(p, 30)
        assert m.choices == res.choices[i]
        assert m.target_forwards == res.forwards[i]


class RewardSpy:
    """A bandit that always plays drafter 0 and records the rewards it is fed."""

    full_information = False

    def __init__(self):
        self.seen = []

    def select(self):
        return 0

    def update(self, arm, reward):
        self.seen.append(reward)


def live_and_replayed_bd(kind: str, drafter, prompt: list[int], n: int):
    """Decode with one drafter under a BD-reward spy -> (output, metrics, live rewards, replay tables, starts)."""
    spy = RewardSpy()
    out, m = SpecDecoder(target(), {"d": drafter}, selector=Selector(spy, 1, K, reward="bd"), k=K).generate(prompt, n)
    tables = acceptance_tables(target(), [Member("d", kind, drafter.model)], prompt, out, K)
    starts = [len(prompt) + 1]
    for a in m.accepted[:-1]:
        starts.append(starts[-1] + a + 1)
    return out, m, spy.seen, tables, starts


def test_replayed_bd_reward_equals_the_live_one_off_the_verified_path():
    """MetaSD's BD reward reads the drafter's and the target's distributions along the drafted chain, past the first
    rejection too; the replay recomputes them on the drafted (not the true) tokens, so every reward matches."""
    # wrong after multiples of 3: a rejected chain goes on from a token the true path never reads
    drafter = LlamaDrafter(BigramLM(successor_table(V, lambda t: (t + 1) % V if t % 3 else (t + 5) % V)))
    out, m, seen, t, starts = live_and_replayed_bd("llama", drafter, [1], 30)
    assert [int(t.acc[0, s]) for s in starts[:-1]] == m.accepted[:-1]
    tails = [s for s, a in zip(starts, m.accepted) if a < K - 1]
    assert tails  # the check covers rejected chains
    # the last round drafts past the answer's end, which the replay cannot see
    assert [float(t.bd[0, s]) for s in starts[:-1]] == pytest.approx(seen[:-1], abs=1e-6)


def test_selectors_are_bound_to_a_narrow_view_not_the_decoder():
    """A selector sees a PoolView (names, drafters, k, mode, tree, forward id, the selector it replaces) and per
    request the state: never the decoder. A fresh selector per request is told which one it replaces."""
    from specsel.decoding.view import PoolView
    from specsel.selection.hybrid import HybridSelector

    seen = []

    class Spy(Selector):
        def bind(self, view):
            seen.append(view)
            super().bind(view)

    dec = SpecDecoder(target(), pool(), selector=Spy(make_learner("normal_hedge", 3), 3, K), k=K)
    first = dec.selector
    dec.set_selector(Spy(make_learner("normal_hedge", 3), 3, K))
    assert all(type(v) is PoolView for v in seen) and seen[1].previous is first
    assert seen[0].names == list(NEXTS) and seen[0].k == K and seen[0].mode == "chain"
    assert seen[0].forward_id == dec.target.forward_id and seen[0].drafters == dec.drafters
    assert dec.generate([2], 20)[0] == plain([2], 20)
    with pytest.raises(SpecError, match="does not score proposals"):
        dec.set_selector(HybridSelector(suffix=0, model=1, threshold=K))


def test_bad_pools():
    with pytest.raises(SpecError, match="needs a drafter"):
        SpecDecoder(target(), {}, selector=Selector(make_learner("uniform", 1), 1, K))
    with pytest.raises(SpecError, match="EAGLE-3 head"):
        SpecDecoder(target(), pool(), selector=Selector(make_learner("uniform", 3), 3, K), mode="tree")
    with pytest.raises(SpecError, match="bandit reward"):
        Selector(make_learner("ucb", 3), 3, K, reward="tokens")
    with pytest.raises(SpecError, match="plain.*without drafters"):
        SpecDecoder(target(), pool(), selector=Selector(make_learner("uniform", 3), 3, K), mode="plain")


def mixed_pool():
    """A learned drafter beside a suffix index that knows part of the target's cycle (its chains stop, or go wrong,
    where its seed does) and prompt lookup (exact once the cycle repeats)."""
    from draftpool.models.suffix import NgramModel, build_suffix
    from specsel.decoding.suffix import NgramDrafter, SuffixDrafter

    seed = [[0, 1, 2, 3, 4, 5, 9, 9], [7, 8, 9, 10, 11, 12, 3], [12, 13, 14, 15, 0]]
    return {"even": LlamaDrafter(BigramLM(successor_table(V, NEXTS["even"]))),
            "suffix": SuffixDrafter(build_suffix(seed, V, min_prob=0.0)), "ngram": NgramDrafter(NgramModel(V))}


def mixed_tables(prompts, n):
    kinds = {"even": "llama", "suffix": "suffix", "ngram": "ngram"}
    stream = []
    for i, p in enumerate(prompts):
        members = [Member(name, kinds[name], d.model) for name, d in mixed_pool().items()]
        t = acceptance_tables(target(), members, p, plain(p, n), K)
        stream.append(ReplayRequest(str(i), "x", len(p), t.length, t.acc, t.gamma, t.bd, depth=t.depth, free=t.free))
    return stream


@pytest.mark.parametrize("learner,game,reward", REPLAY_SETTINGS)
def test_replay_reproduces_the_live_decoder_with_model_free_members(learner, game, reward):
    """Model-free chains are replayed from the proposals after each true prefix, their counterfactual gammas as the
    live selector reads them (chain hits per depth), their BD reward over one-hot drafts of chains that may stop
    early: every choice and every forward of the live decoder is reproduced."""
    prompts, n = [[3], [6, 1], [9, 10, 11]], 40
    stream = mixed_tables(prompts, n)
    assert stream[0].free.tolist() == [False, True, True]
    method = Method(learner, lambda n_arms, s: make_learner(learner, n_arms, seed=s), game, reward)
    res = replay(stream, method, 3, K)
    picked = set()
    for i, p in enumerate(prompts):
        sel = Selector(make_learner(learner, 3, seed=i), 3, K, game, reward)
        out, m = SpecDecoder(target(), mixed_pool(), selector=sel, k=K).generate(p, n)
        assert out == plain(p, n)
        assert m.choices == res.choices[i]
        assert m.target_forwards == res.forwards[i]
        picked |= set(m.choices)
    assert {1, 2} & picked  # the model-free members were played, not only the learned drafter


def test_bd_reward_of_a_short_model_free_chain_is_the_replayed_one():
    """A suffix chain that stops before k: its missing drafts agree nowhere (no NaN from an all -inf row), and the
    live reward equals the replay's at every chain start."""
    from draftpool.models.suffix import build_suffix
    from specsel.decoding.suffix import SuffixDrafter

    model = build_suffix([[1, 2, 3, 4], [5, 6, 9], [9, 10, 11, 12, 13, 14, 15, 0, 1, 2]], V, min_prob=0.0)
    out, m, seen, t, starts = live_and_replayed_bd("suffix", SuffixDrafter(model), [1], 30)
    assert out == plain([1], 30)
    assert all(r == r for r in seen) and any(0 < r < 0.9 for r in seen)  # finite; short chains score partly
    assert [float(t.bd[0, s]) for s in starts[:-1]] == pytest.approx(seen[:-1], abs=1e-6)


def test_settle_batches_the_evaluation_only_once_the_weights_settle():
    """GameConfig.settle: every round is evaluated while the learner's largest weight is below `settle`; at or above
    it, every feedback_every rounds; a learner without weights is evaluated every round."""

    class Weights:
        full_information = True

        def __init__(self):
            self.p = [0.5, 0.5]

        def probs(self):
            return self.p

        def select(self):
            return 0

        def update(self, losses):
            pass

    lrn = Weights()
    game = DelayedFeedback(lrn, 2, K, GameConfig(warmup_rounds=2, feedback_every=3, settle=0.9))
    assert [game.wants_evaluation(r) for r in range(8)] == [True] * 8  # unsettled: every round
    lrn.p = [0.95, 0.05]
    assert [game.wants_evaluation(r) for r in range(8)] == [True, True, True, False, False, True, False, False]
    assert game.settled()
    no_weights = DelayedFeedback(type("L", (), {"full_information": True})(), 2, K,
                                 GameConfig(warmup_rounds=0, feedback_every=3, settle=0.9))
    assert all(no_weights.wants_evaluation(r) for r in range(6))
    with pytest.raises(ConfigError, match="settle"):
        GameConfig(settle=1.5).validate()


def test_every_cycle_times_its_selection_and_feedback_apart():
    """RequestMetrics.selection_s / cycle_s: one entry per cycle, the selection + feedback seconds within the cycle's,
    timed with phase timing off too (no device sync)."""
    sel = Selector(make_learner("normal_hedge", 3), 3, K, GameConfig())
    out, m = SpecDecoder(target(), pool(), selector=sel, k=K, timing=False).generate([3], 30)
    assert out == plain([3], 30)
    assert len(m.selection_s) == len(m.cycle_s) == len(m.drafted) > 0
    assert all(0 < s <= c for s, c in zip(m.selection_s, m.cycle_s))
    assert sum(m.cycle_s) <= m.total_s


def test_selectors_answer_what_the_loop_asks_through_their_protocol():
    """The loop asks a selector through its protocol, never its class: auto weighs trees only under a `fixed` one and
    refuses a `bandit` one."""
    from specsel.decoding.view import FixedSelector
    from specsel.selection.hybrid import HybridSelector

    fixed = FixedSelector(1)
    selectors = [fixed, Selector(make_learner("normal_hedge", 3), 3, K), Selector(make_learner("exp3", 3), 3, K),
                 Selector(make_learner("exp3", 3), 3, K, reward="none"), HybridSelector(0, 1, threshold=2)]
    assert [s.fixed for s in selectors] == [True, False, False, False, False]
    assert [s.bandit for s in selectors] == [False, False, True, False, False]
