"""The selection benchmark's replay, tables and plots on synthetic acceptance tables (no model needed)."""

import random

import pytest
import torch

from benchmarks import select as select_bench
from benchmarks.replay import Method, ReplayRequest, cumulative_regret, replay, token_losses
from draftpool.config import ConfigError
from draftpool.pool import Member

K = 4


def synthetic_stream(n_req=12, length=60, seed=0):
    """3 drafters; requests of domain d favour drafter d (accepts ~3 of 4) and the rest accept ~0-1."""
    rng = random.Random(seed)
    stream = []
    for r in range(n_req):
        d = r % 3
        acc = torch.zeros(3, length, dtype=torch.long)
        for i in range(3):
            for s in range(length):
                acc[i, s] = min(rng.choice([3, 4, 2]) if i == d else rng.choice([0, 0, 1]), length - 1 - s)
        gamma = (acc > 0).float()
        bd = acc.float() / K
        depth = gamma[:, None].expand(3, K, length).clone()  # acceptance as at depth 0, at every depth
        stream.append(ReplayRequest(f"r{r}", f"dom{d}", 10, length, acc, gamma, bd, prompt=f"p{r}", depth=depth))
    return stream


def test_methods_oracle_and_hedgespec_on_a_mixed_stream():
    stream = synthetic_stream()
    res = select_bench.run_methods(stream, ["a", "b", "c"], K, False, {r.id: 0 for r in stream})
    singles = [res[f"single:{n}"].mat for n in "abc"]
    assert res["oracle"].mat >= max(singles)
    assert res["best-single"].mat == max(singles)
    # per-request switching: the full-information learner gets close to the oracle, far above any single drafter
    assert res["hedgespec-nh"].mat > 0.8 * res["oracle"].mat > max(singles)
    assert res["hedgespec-nh"].mat > res["uniform"].mat
    for r in res.values():
        assert sum(r.tokens) == sum(q.new_tokens for q in stream)
        assert all(f >= 1 for f in r.forwards)


def fixed_arm_mat(stream: list[ReplayRequest], arm: dict[str, int]) -> float:
    """MAT of serving each request with one drafter, straight from the tables: a chunk from position s commits
    acc[arm, s] + 1 tokens per target forward, after the prefill's one."""
    tokens = forwards = 0
    for q in stream:
        s, fwd = q.prompt_len + 1, 1
        while s < q.length:
            s += int(q.acc[arm[q.id], s]) + 1
            fwd += 1
        tokens, forwards = tokens + q.new_tokens, forwards + fwd
    return tokens / forwards


def test_router_method_serves_each_request_with_its_routed_drafter():
    stream = synthetic_stream()
    for shift in (0, 1):  # the right drafter for every request, then a wrong one
        arms = {q.id: (int(q.domain[3:]) + shift) % 3 for q in stream}
        res = select_bench.run_methods(stream, ["a", "b", "c"], K, False, arms)
        assert res["router"].mat == pytest.approx(fixed_arm_mat(stream, arms))
        assert [set(c) for c in res["router"].choices] == [{arms[q.id]} for q in stream]
    assert res["router"].mat < max(res[f"single:{n}"].mat for n in "abc") < res["oracle"].mat


def test_router_arms_map_predicted_domains_to_the_pool_s_heads():
    from specsel.selection.router import PromptRouter

    prompts = ["Write a SQL query joining orders and customers.", "SELECT the top 5 rows by total in SQL.",
               "Solve 3x + 5 = 20 for x.", "What is the derivative of x^2 + 3x?"]
    router = PromptRouter().fit(prompts, ["sql", "sql", "math", "math"], epochs=100)
    stream = [ReplayRequest(f"q{i}", "?", 1, 2, *(torch.zeros(1, 2),) * 3, prompt=p)
              for i, p in enumerate(["Count the rows of table t in SQL.", "Solve 2x = 10 for x.",
                                     "SELECT name FROM users WHERE age > 30"])]
    names = ["general-eagle3", "math-eagle3", "sql-eagle3"]
    assert select_bench.router_arms(router, stream, names) == {"q0": 2, "q1": 1, "q2": 2}
    assert select_bench.router_arms(router, stream, ["general-eagle3", "python-eagle3"]) == {"q0": 0, "q1": 0,
                                                                                            "q2": 0}


def test_regret_of_the_best_single_drafter_ends_at_zero():
    stream = synthetic_stream(n_req=3)
    stream = [ReplayRequest(q.id, q.domain, q.prompt_len, q.length, q.acc[[0, 1]], q.gamma[[0, 1]], q.bd[[0, 1]])
              for q in stream]
    losses = token_losses(stream, K)
    assert losses.shape == (2, sum(q.new_tokens for q in stream))
    totals = losses.sum(1)
    best = int(totals.argmin())
    fixed = replay(stream, Method("f", arm_of=lambda r: best), 2, K)
    assert len(fixed.token_arm) == losses.shape[1]
    assert abs(float(cumulative_regret(fixed, losses)[-1])) < 1e-5
    worst = replay(stream, Method("w", arm_of=lambda r: 1 - best), 2, K)
    assert float(cumulative_regret(worst, losses)[-1]) > 0


def test_report_table_and_plots(tmp_path):
    stream = synthetic_stream(n_req=6)
    res = select_bench.run_methods(stream, ["a", "b", "c"], K, False, None)
    ratio = select_bench.best_arm_ratio(res["hedgespec-nh"], stream, res["oracle"])
    assert all(0 <= x <= 1 for x in ratio)
    report = {"domains": ["dom0"], "config": {"k": K},
              "table": {"hedgespec-nh": {"per_domain": {"dom0": 2.0}, "mixed": 2.0, "perturbed": 1.5}},
              "heatmap": {"domains": ["dom0", "dom1"], "drafters": ["a", "b"], "mat": [[2.0, 1.0], [1.1, 2.2]]},
              "regret": {"hedgespec-nh": {"tokens": [0, 1, 2], "regret": [0.0, 0.5, 0.6]}},
              "best_arm_ratio": {"hedgespec-nh": ratio},
              "pool_size": {"sizes": [2, 3], "methods": ["x"], "mat": {"2": {"x": 1.5}, "3": {"x": 1.7}}}}
    assert "| hedgespec-nh | 2.00 | 2.00 | 1.50 |" in select_bench.format_table(report)
    paths = select_bench.plots(report, tmp_path)
    assert all(p.stat().st_size > 1000 for p in paths) and len(paths) == 4


def test_bad_arguments(capsys):
    assert select_bench.main(["--per-domain", "0"]) == 2
    assert select_bench.main(["--pool", "/nonexistent-pool", "--live", "0"]) == 2
    assert "no pool" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["chain", "auto"])
def test_live_runs_are_exact_and_check_the_replay_only_for_fixed_chains(mode):
    from tests.stubs import make_head, tiny_target

    target = tiny_target()
    members = [Member("a", "eagle3", make_head(target, 1)), Member("b", "eagle3", make_head(target, 2))]
    prompts = [[5, 17, 33, 2], [9, 9, 40, 41]]
    reqs = [select_bench.Request(f"r{i}", "x", "p", p, [0] * 12) for i, p in enumerate(prompts)]
    stream = [ReplayRequest(f"r{i}", "x", len(p), len(p) + 12, torch.zeros(2, len(p) + 12, dtype=torch.long),
                            torch.zeros(2, len(p) + 12), torch.zeros(2, len(p) + 12)) for i, p in enumerate(prompts)]
    fixed = Method("fixed-a", arm_of=lambda r: 0)
    rep = replay(stream, fixed, 2, K)
    live = select_bench.live_runs(target, members, reqs, [fixed], "a", K, [], {"stream": stream,
                                  "results": {"fixed-a": rep}}, mode, {"a": [0.5] * 4, "b": [0.5] * 4})
    row = live["runs"]["fixed-a"]
    assert live["mode"] == mode and row["exact"] == 2 and row["tokens"] == 24
    assert ("same_as_replay" in row) == (mode == "chain")  # auto's k varies: no replay check


def test_tables_are_cached_per_drafter_and_reused_when_members_are_added(tmp_path, monkeypatch):
    """Adding a model-free member to a pool computes its tables only; the heads' cached rows are read back."""
    from draftpool.models.suffix import build_suffix
    from tests.stubs import make_head, tiny_target

    target = tiny_target()
    with torch.no_grad():
        ans = target.generate(torch.tensor([[5, 17, 33, 2]]), max_new_tokens=10, do_sample=False)[0, 4:].tolist()
    reqs = [select_bench.Request("r0", "x", "p", [5, 17, 33, 2], ans)]
    members = [Member("a", "eagle3", make_head(target, 1)), Member("b", "eagle3", make_head(target, 2)),
               Member("s", "suffix", build_suffix([[5, 17, 33, 2] + ans[:6]], target.config.vocab_size,
                                                  min_prob=0.0))]
    entries = {m.name: {"kind": m.kind, "path": m.name} for m in members}
    names = [m.name for m in members]
    calls = []
    real = select_bench.acceptance_tables
    monkeypatch.setattr(select_bench, "acceptance_tables",
                        lambda tgt, ds, *a: calls.append(len(ds)) or real(tgt, ds, *a))
    heads = members[:2]
    first = select_bench.build_tables(target, heads, select_bench.table_keys(entries, names[:2], K), reqs, K,
                                      tmp_path, "t")
    both = select_bench.build_tables(target, members, select_bench.table_keys(entries, names, K), reqs, K,
                                     tmp_path, "t")
    assert calls == [2, 1]  # the second call computed the suffix member's tables only
    assert torch.equal(both[0].acc[:2], first[0].acc) and both[0].free.tolist() == [False, False, True]
    assert int(both[0].acc[2, 5]) >= 1  # the seeded suffix chain follows the answer it was seeded with
    assert select_bench.pick_drafters(names, "a,s*") == ["a", "s"]
    with pytest.raises(ConfigError, match="needs >= 2"):
        select_bench.pick_drafters(names, "s")


def test_hybrid_pairs_take_the_routed_head_and_its_domain_s_suffix_member():
    names = ["general-eagle3", "general-suffix", "sql-eagle3", "sql-suffix", "math-eagle3"]
    entries = {n: {"domain": n.split("-")[0], "kind": n.split("-")[1]} for n in names}
    pairs = select_bench.hybrid_pairs({"q0": 2, "q1": 4, "q2": 0}, names, entries)
    assert pairs == {"q0": (3, 2), "q1": (1, 4), "q2": (1, 0)}  # math has no suffix member: the general one
    with pytest.raises(ConfigError, match="hybrid needs"):
        select_bench.hybrid_pairs({"q0": 1}, names, entries)


def test_live_hybrid_and_model_free_members_are_exact():
    from draftpool.models.suffix import build_suffix
    from tests.stubs import make_head, tiny_target

    target = tiny_target()
    prompts = [[5, 17, 33, 2], [9, 9, 40, 41]]
    with torch.no_grad():
        answers = [target.generate(torch.tensor([p]), max_new_tokens=12, do_sample=False)[0, 4:].tolist()
                   for p in prompts]
    members = [Member("a", "eagle3", make_head(target, 1)),
               Member("s", "suffix", build_suffix([p + a for p, a in zip(prompts, answers)],
                                                  target.config.vocab_size))]
    reqs = [select_bench.Request(f"r{i}", "x", "p", p, a) for i, (p, a) in enumerate(zip(prompts, answers))]
    stream = [ReplayRequest(q.id, "x", 4, 16, torch.zeros(2, 16, dtype=torch.long), torch.zeros(2, 16),
                            torch.zeros(2, 16)) for q in reqs]
    nh = Method("hedgespec-nh", lambda n, s: select_bench.make_learner("normal_hedge", n, seed=s),
                select_bench.GameConfig())
    live = select_bench.live_runs(target, members, reqs, [Method("hybrid"), nh], "a", K, [],
                                  {"stream": stream, "results": {}}, "auto", {"a": [0.5] * 4},
                                  {q.id: (1, 0) for q in reqs}, live_k=8)
    for name in ("hybrid", "hedgespec-nh"):
        row = live["runs"][name]
        assert row["exact"] == 2 and row["tokens"] == 24 and row["mode"] == "auto"
    # the suffix index holds these very answers: its long chains cut the target forwards well below plain's
    assert live["runs"]["hybrid"]["forwards"] < live["runs"]["plain"]["forwards"]


def test_oracle_gap_groups_and_the_chunk_oracle():
    """Groups are formed by member class (a group is skipped when the pool lacks one of its classes); the per-chunk
    oracle takes the longest acceptance at every cycle, so it is >= the per-request oracle >= the best single, and
    each domain's requests are won by the member that favours that domain."""
    stream = synthetic_stream()
    kinds = {"a": "eagle3", "b": "suffix", "c": "suffix"}
    gap = select_bench.oracle_gap(stream, ["a", "b", "c"], kinds, K, False)
    assert list(gap) == ["suffix", "heads+suffix"]  # one head only: no heads group; no ngram member
    both = gap["heads+suffix"]
    assert both["members"] == 3 and both["oracle_chunk_mat"] >= both["oracle_request_mat"] >= both["best_single_mat"]
    assert both["gap_request"] == pytest.approx(both["oracle_request_mat"] / both["best_single_mat"])
    assert both["wins"] == {"dom0": {"a": 4}, "dom1": {"b": 4}, "dom2": {"c": 4}}
    # the chunk oracle by hand on one request: the longest acceptance at every cycle
    req = stream[0]
    s, f = req.prompt_len + 1, 1
    while s < req.length:
        s, f = s + int(max(req.acc[i, s] for i in range(3))) + 1, f + 1
    assert select_bench.chunk_oracle([req]) == pytest.approx(req.new_tokens / f)
    assert "| heads+suffix | 3 |" in select_bench.format_table(
        {"domains": [], "table": {}, "oracle_gap": gap})
