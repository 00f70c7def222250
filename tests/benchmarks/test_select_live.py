"""benchmarks.select_live: streams of each shape, every method exact against plain on a stub target, the best single
member in hindsight, and one clear error for bad arguments."""

import pytest

from benchmarks import select_live
from draftpool.config import ConfigError
from draftpool.pool import Member


def test_streams_of_each_shape():
    sql = select_live.make_stream("sql", ["sql"], 4, 20, 0)
    assert [r["domain"] for r in sql] == ["sql"] * 4 and sql[0]["id"] == "library-00"  # the written-apart file
    mixed = select_live.make_stream("mixed", ["sql", "general"], 3, 20, 0)
    assert sorted(r["domain"] for r in mixed) == ["general"] * 3 + ["sql"] * 3
    assert [r["domain"] for r in mixed] != sorted(r["domain"] for r in mixed)  # shuffled
    shift = select_live.make_stream("shift", ["sql", "python"], 1, 5, 0)
    assert [r["domain"] for r in shift] == ["sql"] * 5 + ["python"] * 5  # the domain changes every block
    with pytest.raises(ConfigError):
        select_live.make_stream("sql", ["sql"], 10_000, 20, 0)


def test_every_method_is_exact_and_the_best_single_is_chosen_in_hindsight():
    import torch

    from draftpool.models.suffix import build_suffix
    from tests.stubs import make_head, tiny_target

    target = tiny_target()
    prompts = [[5, 17, 33, 2], [9, 9, 40, 41]]
    with torch.no_grad():
        answers = [target.generate(torch.tensor([p]), max_new_tokens=12, do_sample=False)[0, 4:].tolist()
                   for p in prompts]
    members = [Member("x-eagle3", "eagle3", make_head(target, 1)),
               Member("x-suffix", "suffix", build_suffix([p + a for p, a in zip(prompts, answers)],
                                                         target.config.vocab_size))]
    stream = [{"id": f"r{i}", "domain": "x", "prompt": "p"} for i in range(2)]
    methods = select_live.methods_of(["singles", "hedgespec-nh", "hybrid", "per-cycle"], [m.name for m in members])
    res = select_live.live(target, members, stream, prompts, methods, 8, 12, [])
    runs = res["runs"]
    assert set(runs) == {"plain", "single:x-eagle3", "single:x-suffix", "hedgespec-nh", "hybrid", "per-cycle"}
    for m, r in runs.items():
        assert r["exact"] == 2 and r["tokens"] == 24, m
    assert res["best_single"] == max(["single:x-eagle3", "single:x-suffix"], key=lambda m: runs[m]["tok_s"])
    # the suffix index holds these answers: per-cycle selection drafts with it and needs fewer target forwards
    assert runs["per-cycle"]["forwards"] < runs["plain"]["forwards"]
    assert runs["per-cycle"]["pick_share"].get("x-suffix", 0) > 0.5
    assert "per-cycle" in select_live.format_table({**res, "stream": "mixed", "domains": ["x"],
                                                    "requests": ["r0", "r1"]})


def test_bad_arguments(capsys):
    assert select_live.main(["--per-domain", "0"]) == 2
    assert select_live.main(["--methods", "nope", "--pool", "/nonexistent"]) == 2
    with pytest.raises(ConfigError):
        select_live.methods_of(["single:nobody"], ["a"])
