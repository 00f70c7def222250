"""vLLM's spec-decode counts of a request (`spec_counts`) and the per-cycle draft lengths they read (`draft_len`,
aligned with `accepted` / `choices`, unlike `drafted`, which also has auto's plain steps): exact counts on hand-made
metrics, and on real decodes (auto with plain steps, model-free drafters with empty drafts, trees) against the
figures counted here from the cycles themselves."""

import pytest

from draftpool.models.suffix import NgramModel
from specsel.decoding.auto import AutoSpec, Costs
from specsel.decoding.llama import LlamaDrafter
from specsel.decoding.loop import SpecDecoder
from specsel.decoding.request import DrafterCounts, RequestMetrics, spec_counts
from specsel.decoding.suffix import NgramDrafter
from specsel.decoding.tree import TreeSpec
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector
from tests.stubs import BigramLM, OracleTreeDrafter, successor_table

V = 16
NEXT = lambda t: (t + 1) % V  # noqa: E731


def target():
    return BigramLM(successor_table(V, NEXT))


def by_hand(m: RequestMetrics, names: list[str]) -> dict[str, DrafterCounts]:
    """The counts straight from the cycles, the obvious way (a draft: a cycle with at least one drafted token)."""
    out = {n: DrafterCounts() for n in names}
    for n_acc, i, n_draft in zip(m.accepted, m.choices, m.draft_len, strict=True):
        if n_draft == 0:
            continue
        c = out[names[i]]
        c.num_drafts += 1
        c.num_draft_tokens += n_draft
        c.num_accepted_tokens += n_acc
    for name, c in out.items():
        deepest = max([a for a, i, d in zip(m.accepted, m.choices, m.draft_len) if names[i] == name and d], default=0)
        c.accepted_per_pos = [sum(1 for a, i, d in zip(m.accepted, m.choices, m.draft_len)
                                  if names[i] == name and d and a > j) for j in range(deepest)]
    return out


def test_hand_made_metrics_with_a_plain_step_and_an_empty_draft():
    # cycles: a drafts 4 accepts 2 | b drafts 3 accepts 3 | b drafts nothing | a drafts 4 accepts 0 | a drafts 1
    # accepts 1; auto's plain steps (drafted 0, no cycle) come first and after the fourth cycle
    m = RequestMetrics(accepted=[2, 3, 0, 0, 1], choices=[0, 1, 1, 0, 0], drafted=[0, 4, 3, 0, 4, 0, 1],
                       draft_len=[4, 3, 0, 4, 1])
    got = spec_counts(m.to_dict(), ["a", "b"])
    assert got == {"a": DrafterCounts(num_drafts=3, num_draft_tokens=9, num_accepted_tokens=3,
                                      accepted_per_pos=[2, 1]),
                   "b": DrafterCounts(num_drafts=1, num_draft_tokens=3, num_accepted_tokens=3,
                                      accepted_per_pos=[1, 1, 1])}
    assert got["a"].add(got["b"]) == DrafterCounts(4, 12, 6, [3, 2, 1])
    assert m.to_dict()["draft_len"] == [4, 3, 0, 4, 1] and m.to_dict()["cycles"] == 5


def test_metrics_without_draft_len():
    """Older metrics (no draft_len) are read from drafted while it has no plain step; with plain steps the draft
    lengths cannot be told, and a mismatch is refused, not miscounted."""
    old = {"accepted": [1, 0], "choices": [0, 0], "drafted": [3, 3]}
    assert spec_counts(old, ["a"]) == {"a": DrafterCounts(2, 6, 1, [1])}
    with pytest.raises(ValueError, match="plain steps"):
        spec_counts({"accepted": [1], "choices": [0], "drafted": [0, 3]}, ["a"])
    with pytest.raises(ValueError, match="one entry per verification cycle"):
        spec_counts({"accepted": [1], "choices": [0, 0], "draft_len": [3]}, ["a"])
    with pytest.raises(ValueError, match="accepted 4 of 3"):
        spec_counts({"accepted": [4], "choices": [0], "draft_len": [3]}, ["a"])
    # plain decoding, lookahead: no verification cycle, nothing counted
    assert spec_counts({"accepted": [], "choices": [], "drafted": []}, ["a"]) == {"a": DrafterCounts()}
    assert spec_counts({"lookahead": {"rounds": 3}}, []) == {}


def test_auto_plain_steps_are_not_cycles():
    """A drafter that does not pay: auto decodes plainly with k = 1 probes; drafted has the plain steps' zeros,
    draft_len only the probes."""
    dec = SpecDecoder(target(), {"d": LlamaDrafter(BigramLM(successor_table(V, lambda t: (t + 2) % V)))},
                      mode="auto", k=4, auto=AutoSpec(time_weight=0.0, priors={"d": [0.1]}, probe_every=5,
                                                      costs=Costs({1: 0.05, 2: 0.08, 5: 0.12, 10: 0.2}, 0.01)))
    _, m = dec.generate([3], 30)
    assert len(m.drafted) > len(m.accepted) > 0  # plain steps and probes
    assert len(m.draft_len) == len(m.accepted) == len(m.choices) and m.draft_len == [d for d in m.drafted if d]
    got = spec_counts(m.to_dict(), ["d"])
    assert got == by_hand(m, ["d"])
    assert got["d"].num_drafts == len(m.accepted) and got["d"].num_draft_tokens == len(m.accepted)  # k = 1 probes


def test_a_pool_with_empty_drafts_and_partial_acceptance():
    """An n-gram drafter (nothing to draft until the 16-cycle repeats) and a drafter right two times in three, under
    Hedge: empty drafts are no drafts, accepted lengths vary, each drafter is counted apart."""
    pool = {"ngram": NgramDrafter(NgramModel(V)),
            "half": LlamaDrafter(BigramLM(successor_table(V, lambda t: (t + 1) % V if t % 3 else 0)))}
    dec = SpecDecoder(target(), pool, selector=Selector(make_learner("hedge", 2), 2, 4), mode="chain", k=4)
    totals = {n: DrafterCounts() for n in pool}
    empty = 0
    for prompt in ([3], [5, 6, 7], list(range(V)) + [0, 1], [9]):
        _, m = dec.generate(prompt, 40)
        assert m.draft_len == m.drafted  # chain mode: no plain step
        got = spec_counts(m.to_dict(), list(pool))
        assert got == by_hand(m, list(pool))
        assert sum(c.num_accepted_tokens for c in got.values()) == sum(m.accepted)
        empty += m.draft_len.count(0)
        totals = {n: totals[n].add(got[n]) for n in pool}
    assert empty > 0 and all(c.num_drafts > 0 for c in totals.values())  # both drafted; some cycles drafted nothing
    assert len(totals["half"].accepted_per_pos) >= 2  # accepted lengths vary


def test_tree_cycles_count_their_nodes_and_their_accepted_path():
    ref = SpecDecoder(target(), mode="plain").generate([4], 20)[0]
    dec = SpecDecoder(target(), OracleTreeDrafter(ref, V, depth=5, correct=2), mode="tree", tree=TreeSpec(5, 3, 15))
    _, m = dec.generate([4], 20)
    assert m.draft_len[0] == 15 and m.accepted[0] == 2  # 5 depths x (2 decoys + 1): the path's first 2 are right
    got = spec_counts(m.to_dict(), ["oracle"])["oracle"]
    assert got == by_hand(m, ["oracle"])["oracle"]
    assert m.accepted == [2] * 6 + [1]  # the last cycle: one token left to the 20
    assert got == DrafterCounts(num_drafts=7, num_draft_tokens=sum(m.draft_len), num_accepted_tokens=13,
                                accepted_per_pos=[7, 6])
