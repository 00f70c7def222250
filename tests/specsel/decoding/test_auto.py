"""The `auto` cost model: expected chain lengths, the rate-maximising k on synthetic costs with a known optimum
(including plain when nothing pays), per-depth rates from histograms, the online estimate and the chooser."""

import itertools
import random
import statistics

import pytest

from specsel.decoding.auto import (
    TREE_GRID,
    AcceptanceEstimate,
    AutoChooser,
    AutoSpec,
    Costs,
    acceptance_prior,
    auto_spec,
    chain_expected,
    chain_rate,
    choose,
    rank_prior,
    rates_from_lengths,
    tree_expected,
)


def test_target_time_interpolates_and_extrapolates():
    c = Costs({1: 0.04, 5: 0.05, 9: 0.07}, 0.005)
    assert c.target_time(1) == 0.04 and c.target_time(3) == pytest.approx(0.045)
    assert c.target_time(7) == pytest.approx(0.06) and c.target_time(13) == pytest.approx(0.09)


def test_chain_expected_is_leviathans_formula_for_one_alpha():
    for a, k in itertools.product((0.0, 0.3, 0.8, 1.0), range(6)):
        want = (1 - a ** (k + 1)) / (1 - a) if a < 1 else k + 1
        assert chain_expected([a], k) == pytest.approx(want)
    assert chain_expected([1.0, 0.5, 0.0, 1.0], 4) == pytest.approx(1 + 1 + 0.5 + 0 + 0)


def test_chain_expected_matches_a_simulated_chain():
    rates, k, rng = [0.7, 0.5, 0.4], 3, random.Random(0)
    n = 200_000
    total = 0
    for _ in range(n):
        m = 0
        while m < k and rng.random() < rates[m]:
            m += 1
        total += m + 1
    assert total / n == pytest.approx(chain_expected(rates, k), abs=0.01)


def test_choose_finds_the_known_optimum():
    # flat target cost (memory-bound), cheap drafts, high acceptance: longer chains pay up to where a_j falls off
    costs = Costs({1: 0.05, 8: 0.05}, 0.002)
    rates = [0.9, 0.9, 0.9, 0.05, 0.05, 0.05]
    c = choose(costs, rates, 6)
    brute = max(range(7), key=lambda k: chain_expected(rates, k) / (0.05 + 0.002 * k) if k else 1 / 0.05)
    assert c.k == brute == 3 and c.speedup > 2
    assert c.table[0] == pytest.approx(20.0) and c.rate == pytest.approx(chain_rate(costs, rates, 3))


def test_choose_says_plain_when_nothing_pays():
    # a verify pass of 5 tokens costs 1.3 plain steps and a draft 6%: acceptance 0.1 does not pay
    costs = Costs({1: 0.086, 5: 0.112}, 0.005)
    c = choose(costs, [0.1, 0.08, 0.07, 0.07], 4)
    assert c.k == 0 and c.rate == c.plain_rate and all(r < c.plain_rate for k, r in c.table.items() if k)


def test_margin_keeps_plain_on_a_near_tie():
    costs = Costs({1: 0.1, 2: 0.1}, 0.0)
    rate = 0.015  # k = 1 expects 1.015 tokens per plain-step time: 1.5% faster
    assert choose(costs, [rate], 1, margin=0.0).k == 1
    assert choose(costs, [rate], 1, margin=0.02).k == 0


def test_rates_from_lengths_invert_chain_expected():
    counts = [30, 20, 25, 25]  # accepted 0..3 of 3 drafts
    rates = rates_from_lengths(counts)
    mean = sum(m * c for m, c in enumerate(counts)) / sum(counts)
    assert chain_expected(rates, 3) == pytest.approx(1 + mean)
    with pytest.raises(ValueError):
        rates_from_lengths([0, 0])


def test_estimate_moves_from_the_prior_to_the_observed_rates():
    est = AcceptanceEstimate([0.2, 0.2], prior_weight=10)
    assert est.rates(3) == [0.2, 0.2, 0.2]
    rng = random.Random(1)
    true = [0.8, 0.5, 0.5]
    for _ in range(5000):
        m = 0
        while m < 3 and rng.random() < true[m]:
            m += 1
        est.observe(3, m)
    assert est.rates(3) == pytest.approx(true, abs=0.03)
    with pytest.raises(ValueError):
        est.observe(2, 3)
    with pytest.raises(ValueError):
        AcceptanceEstimate([1.5])


def test_chooser_switches_to_speculation_when_the_drafter_turns_out_good_and_probes_while_plain():
    costs = Costs({1: 0.05, 5: 0.06}, 0.004)
    auto = AutoChooser(costs, prior=[0.1], k_max=4, prior_weight=5, probe_every=4)
    ks = [auto.next_k() for _ in range(8)]
    assert ks == [0, 0, 0, 1, 0, 0, 0, 1]  # plain, with a k = 1 probe every 4th step
    for _ in range(40):  # the drafter is in fact always right
        auto.observe(1, 1)
    assert auto.next_k() == 4
    for _ in range(400):  # ... and then never
        auto.observe(4, 0)
    assert auto.choice().k == 0


def test_bad_costs_refused():
    with pytest.raises(ValueError, match="1 token"):
        Costs({4: 0.1}, 0.01)
    with pytest.raises(ValueError, match="positive"):
        Costs({1: -0.1}, 0.01)
    with pytest.raises(ValueError):
        AutoChooser(Costs({1: 0.1}, 0.01), [0.5], k_max=0)


def test_costs_round_trip_through_json():
    c = Costs({1: 0.04, 5: 0.05}, 0.005, 0.002, 0.001)
    assert Costs.from_json(c.to_json()) == c
    t = Costs({1: 0.04}, 0.005, tree_target={5: 0.06, 9: 0.08}, tree_step={2: 0.003}, tree_overhead=0.001)
    assert Costs.from_json(t.to_json()) == t and t.tree_time((2, 2, 6)) == pytest.approx(2 * 0.003 + 0.07 + 0.001)
    assert c.cycle_time(0) == pytest.approx(0.041) and c.cycle_time(4) == pytest.approx(0.072)


def test_acceptance_prior_from_an_offline_evaluation():
    ev = {"top1_per_step": [0.5, 0.4], "accept_per_step": [0.3, 0.2]}
    assert acceptance_prior(ev) == [0.5, 0.4] and acceptance_prior(ev, sampling=True) == [0.3, 0.2]
    for bad in (None, {}, {"top1_per_step": []}, {"top1_per_step": [1.5]}, {"top1_per_step": ["x"]}):
        assert acceptance_prior(bad) is None


EVAL = {"top1_per_step": [0.5, 0.4], "accept_per_step": [0.3, 0.2], "topk_per_step": [[0.5, 0.7], [0.4, 0.6]]}


def test_auto_spec_priors_from_an_eval_dict():
    a = auto_spec({"a": EVAL, "b": None, "c": {"top1_per_step": [1.5]}}, costs_cache="c.json", margin=0.1)
    assert a.priors == {"a": [0.5, 0.4]} and a.rank_priors == {"a": rank_prior(EVAL)}
    assert (a.costs_cache, a.margin, a.trees, a.costs) == ("c.json", 0.1, TREE_GRID, None)
    assert a.sampled_priors == {"a": [0.3, 0.2]}  # sampled requests: 1 - TV (they never draft trees)
    assert auto_spec({"a": EVAL}, with_trees=False).rank_priors == {}
    assert auto_spec({"a": EVAL}, priors={"b": [0.7]}).priors == {"a": [0.5, 0.4], "b": [0.7]}
    assert auto_spec({}) == AutoSpec()


def test_auto_spec_builds_what_each_caller_built_before():
    evals = {"h1": EVAL, "h2": None, "h3": {"top1_per_step": [0.2]}}
    greedy, sampled = {"h1": [0.5, 0.4], "h3": [0.2]}, {"h1": [0.3, 0.2]}
    # scripts/gpu_check.py and benchmarks/decode.py: acceptance and rank priors where the evaluation has them
    assert auto_spec(evals, costs_cache="c") == AutoSpec(priors=greedy, sampled_priors=sampled,
                                                         rank_priors={"h1": rank_prior(EVAL)}, costs_cache="c")
    # online/adapt.py: greedy and sampled priors (per-request sampling), no rank priors
    assert auto_spec(evals, with_trees=False, costs_cache="c") == AutoSpec(priors=greedy, sampled_priors=sampled,
                                                                           costs_cache="c")
    # benchmarks/select.py: greedy priors only, no costs cache
    assert auto_spec(evals, with_trees=False).priors == {"h1": [0.5, 0.4], "h3": [0.2]}


def test_observed_times_raise_the_overheads_and_flip_the_choice():
    costs = Costs({1: 0.05, 5: 0.06}, 0.002)
    ch = AutoChooser(costs, [0.5], k_max=4, time_weight=0.5)
    assert ch.choice().k == 2  # 1.75 tokens per 0.059 s vs 1 per 0.05 s
    for _ in range(10):
        ch.observe_time(2, 0.2)  # each cycle really takes 0.2 s
    assert ch.costs.overhead == pytest.approx(0.2 - 0.059, rel=1e-2) and ch.choice().k == 0
    ch.observe_time(0, 0.01)  # a plain step faster than modelled: every target pass is rescaled down
    assert ch.costs.target[1] < 0.05 and ch.costs.target[5] < 0.06 and ch.costs.plain_overhead == 0.0
    with pytest.raises(ValueError, match="time_weight"):
        AutoChooser(costs, [0.5], k_max=4, time_weight=2.0)


def test_selection_time_is_a_cost_of_every_cycle_and_favours_longer_chains():
    """observe_selection: the selector's per-cycle seconds are added to plain steps and speculative cycles alike; a
    drafter that just loses to plain steps without that cost wins once every cycle pays it (fewer, longer cycles
    amortise it), and the costs the chooser plans with show it."""
    costs = Costs({1: 0.086, 5: 0.112}, 0.005)
    ch = AutoChooser(costs, [0.1, 0.08, 0.07, 0.07], k_max=4, time_weight=1.0, margin=0.0)
    assert ch.choice().k == 0  # acceptance 0.1 does not pay for a 5-token pass
    ch.observe_selection(0.08)
    assert ch.costs.plain_overhead == pytest.approx(0.08) and ch.costs.overhead == pytest.approx(0.08)
    assert ch.costs.cycle_time(0) == pytest.approx(0.086 + 0.08)
    assert ch.choice().k > 0
    ch.observe_selection(0.0)  # selection became free again: the plain choice comes back
    assert ch.costs.plain_overhead == 0.0 and ch.choice().k == 0


def test_costs_timed_on_a_busier_machine_do_not_keep_a_losing_chain():
    """Costs cached when the target ran slower (plain step 56 ms, 2-token pass 59 ms), now plain steps take 51 ms
    and a k = 1 cycle 58 ms, and the drafter's first draft is accepted 13% of the time: 1.13 tokens per 58 ms loses
    to 1 per 51 ms. Measured plain steps must rescale the target passes so that auto goes plain (the model with the
    plain step's cost fixed at 56 ms kept k = 1: 1.13 / 61 ms > 1.02 / 56 ms)."""
    costs = Costs({1: 0.056, 2: 0.059, 5: 0.069}, 0.0023)
    ch = AutoChooser(costs, [0.13], k_max=4, prior_weight=0.0, time_weight=0.2)
    assert ch.choice().k == 1  # on the cached costs alone, k = 1 looks like a 3% gain
    for _ in range(30):
        ch.observe_time(0, 0.051)
        ch.observe_time(1, 0.058)
    assert ch.scale == pytest.approx(0.051 / 0.056, rel=1e-3)
    assert ch.costs.cycle_time(0) == pytest.approx(0.051, rel=1e-3)
    assert ch.costs.cycle_time(1) == pytest.approx(0.058, rel=1e-3)  # the chain's measured time, overhead included
    assert ch.choice().k == 0
    for _ in range(30):  # chain cycles faster than the rescaled model do not lower it (speculation is not credited)
        ch.observe_time(1, 0.040)
    assert ch.costs.overhead == 0.0 and ch.costs.cycle_time(1) == pytest.approx(0.0023 + 0.059 * ch.scale)


def simulated_speedup(window: float, seed: int, requests: int = 30) -> float:
    """A specialist head on a mixed stream: each request's first-draft acceptance drawn from its domain (0.08 ..
    0.5), deeper drafts a little likelier; the chooser decodes 96 tokens per request on fixed costs -> tokens per
    second over plain decoding's."""
    costs = Costs({1: 0.047, 2: 0.050, 3: 0.052, 5: 0.060}, 0.002, overhead=0.005)
    rng = random.Random(seed)
    ch = AutoChooser(costs, [0.42, 0.35, 0.3, 0.25], 4, window=window, time_weight=0.0)
    seconds = tokens = 0.0
    for _ in range(requests):
        a0 = rng.choice([0.08, 0.12, 0.15, 0.2, 0.45, 0.5])
        rates, made = [a0, a0 * 1.3, a0 * 1.4, a0 * 1.5], 0
        while made < 96:
            k, m = ch.next_k(), 0
            while m < k and rng.random() < rates[m]:
                m += 1
            if k:
                ch.observe(k, m)
            seconds += costs.cycle_time(k)
            made += m + 1
        tokens += made
    return tokens / seconds * costs.cycle_time(0)


def test_a_windowed_estimate_follows_a_mixed_stream():
    """Acceptance moves with each request's domain: an estimate over the last ~64 cycles (the AutoSpec default)
    decodes the mixed stream faster than one that weighs every past cycle alike, and both beat plain."""
    windowed = statistics.mean(simulated_speedup(AutoSpec().window, s) for s in range(16))
    forever = statistics.mean(simulated_speedup(0.0, s) for s in range(16))
    assert AutoSpec().window == 64 and windowed > forever + 0.01 and forever > 1.0
    est = AcceptanceEstimate([0.5], prior_weight=0.0, window=4)
    for m in (1, 1, 1, 1, 0, 0, 0, 0):
        est.observe(1, m)
    assert est.rates(1)[0] == pytest.approx((1 + 0.75 + 0.75**2 + 0.75**3) * 0.75**4 / sum(0.75**i for i in range(8)))
    with pytest.raises(ValueError, match="window"):
        AcceptanceEstimate([0.5], window=0.5)


def test_tree_expected_counts_path_probabilities_of_the_kept_nodes():
    q = [[0.5, 0.3, 0.1]]
    assert tree_expected(q, (1, 2, 2)) == pytest.approx(1 + 0.5 + 0.3)  # two children of the root
    assert tree_expected(q, (1, 3, 2)) == pytest.approx(1 + 0.5 + 0.3)  # budget 2: the third child is dropped
    # depth 2, top_k 2: children of the 2 best depth-1 nodes; the 3 best of {.5, .3, .25, .15, .15, .09}
    assert tree_expected(q, (2, 2, 3)) == pytest.approx(1 + 0.5 + 0.3 + 0.25)
    for d, a in itertools.product(range(1, 6), (0.2, 0.7)):  # top_k 1 is a chain
        assert tree_expected([[a, 0.2]], (d, 1, d)) == pytest.approx(chain_expected([a], d))


def test_tree_expected_matches_a_simulated_tree():
    """Monte Carlo over the rank model: at each depth the target's token is the drafter's rank-r candidate with
    probability q[d][r]; the tree accepts the longest path of its nodes that matches."""
    q, tree = [[0.4, 0.2, 0.1], [0.3, 0.2, 0.1]], (3, 2, 6)
    rng, n, total = random.Random(0), 20000, 0
    # the kept nodes as rank paths (the same greedy construction, by path probability)
    nodes, frontier = [], [((), 1.0)]
    for d in range(3):
        kids = sorted(((path + (r,), p * q[min(d, 1)][r]) for path, p in frontier for r in range(2)),
                      key=lambda x: -x[1])
        nodes += kids
        frontier = kids[:2]
    kept = {path for path, _ in sorted(nodes, key=lambda x: -x[1])[:6]}
    for _ in range(n):
        path = ()
        while True:
            u, r, acc = rng.random(), None, 0.0
            for j, pj in enumerate(q[min(len(path), 1)]):
                acc += pj
                if u < acc:
                    r = j
                    break
            if r is None or path + (r,) not in kept:
                break
            path += (r,)
        total += 1 + len(path)
    assert total / n == pytest.approx(tree_expected(q, tree), rel=0.02)


def test_choose_takes_a_tree_when_its_extra_width_pays_and_a_chain_or_plain_otherwise():
    rates, ranks = [0.4], [[0.4, 0.35, 0.1]]  # top-1 weak, top-2 strong: a wide tree accepts much more
    trees = ((2, 2, 4), (3, 2, 8))
    cheap = Costs({1: 0.05, 5: 0.055}, 0.002, tree_target={5: 0.055, 9: 0.06}, tree_step={2: 0.002})
    c = choose(cheap, rates, 4, rank_rates=ranks, trees=trees)
    assert c.tree in trees and c.k == 0 and c.label.startswith("tree ") and c.rate > max(c.table.values())
    assert c.rate == pytest.approx(tree_expected(ranks, c.tree) / cheap.tree_time(c.tree))
    costly = Costs({1: 0.05, 5: 0.055}, 0.002, tree_target={5: 0.2, 9: 0.3}, tree_step={2: 0.002})  # masked passes
    c = choose(costly, rates, 4, rank_rates=ranks, trees=trees)
    assert c.tree is None and c.k > 0
    assert choose(cheap, rates, 4, rank_rates=ranks, trees=trees, tree_gain=0.0).tree is None  # trees never pay
    slow = Costs({1: 0.05, 5: 0.2}, 0.05, tree_target={5: 0.2, 9: 0.3}, tree_step={2: 0.05})
    assert choose(slow, rates, 4, rank_rates=ranks, trees=trees).label == "plain"
    assert choose(cheap, rates, 4, rank_rates=None, trees=trees).tree is None  # no rank rates: chains only
    assert Costs({1: 0.05}, 0.01).tree_time((2, 2, 4)) == float("inf")  # no tree costs measured


def test_rank_prior_from_top_k_agreement_and_the_chooser_corrects_trees_online():
    ev = {"top1_per_step": [0.4, 0.3], "topk_per_step": [[0.4, 0.7, 0.8], [0.3, 0.5, 0.55]]}
    ranks = rank_prior(ev)
    assert ranks == [pytest.approx([0.4, 0.3, 0.1]), pytest.approx([0.3, 0.2, 0.05])]
    assert rank_prior({"top1_per_step": [0.4]}) is None and rank_prior({"topk_per_step": [[1.5]]}) is None
    cheap = Costs({1: 0.05, 5: 0.055}, 0.002, tree_target={5: 0.055, 9: 0.06}, tree_step={2: 0.002})
    ch = AutoChooser(cheap, [0.4, 0.3], 4, rank_prior=ranks, trees=((3, 2, 8),), time_weight=0.3)
    k, tree = ch.next_plan()
    assert (k, tree) == (0, (3, 2, 8)) and ch.last_plan == "tree 3/2/8" and ch.last_k == -1
    assert ch.plans == ("tree 3/2/8",)  # plans[-1] reads the last cycle's plan; nothing per cycle is kept
    assert ch.next_plan(trees=False)[1] is None  # a sampled request: chains only
    for _ in range(30):  # the trees accept nothing: the gain decays and auto leaves them
        ch.observe_tree((3, 2, 8), 0)
    assert ch.tree_gain < 0.01 and ch.choice().tree is None
    with pytest.raises(ValueError, match="rank rates"):
        AutoChooser(cheap, [0.4], 4, rank_prior=[[]])


def _held(x, seen: set) -> int:
    """Items in the lists, tuples, sets and dicts reachable from x (through objects' attributes), each counted once."""
    if id(x) in seen:
        return 0
    seen.add(id(x))
    if isinstance(x, dict):
        return len(x) + sum(_held(v, seen) for v in x.values())
    if isinstance(x, (list, tuple, set)):
        return len(x) + sum(_held(v, seen) for v in x)
    return _held(vars(x), seen) if hasattr(x, "__dict__") else 0


def test_a_chooser_holds_as_much_after_thousands_of_cycles_as_after_some():
    """A chooser lives as long as its decoder (a server's whole life): what it keeps does not grow per cycle (it
    keeps the last cycle's plan, not a list of them)."""
    ranks = [[0.4, 0.3, 0.1], [0.3, 0.2, 0.05]]
    costs = Costs({1: 0.05, 5: 0.055}, 0.002, tree_target={5: 0.055, 9: 0.06}, tree_step={2: 0.002})
    ch = AutoChooser(costs, [0.4, 0.3], 4, probe_every=2, rank_prior=ranks, trees=((3, 2, 8),), window=64)
    assert not ch.plans
    rng = random.Random(0)

    def cycles(n: int) -> set:
        seen = set()
        for i in range(n):
            k, tree = ch.next_plan(trees=i % 3 == 0)
            seen.add(ch.plans[-1])
            if tree is not None:
                ch.observe_tree(tree, rng.randint(0, 3))
            else:
                ch.observe(k, rng.randint(0, k))
            ch.observe_time(k, rng.uniform(0.03, 0.08), tree)
            if i % 500 == 250:  # phases of a useless drafter: plain steps and k = 1 probes too
                for _ in range(200):
                    ch.observe(4, 0)
        return seen

    plans = cycles(2000)
    held = _held(ch, set())
    plans |= cycles(2000)
    assert len(plans) >= 3  # plain steps, probes, chains and trees were chosen
    assert _held(ch, set()) == held
    assert ch.plans == (ch.last_plan,) and ch.last_k in (-1, 0, 1, 2, 3, 4)
