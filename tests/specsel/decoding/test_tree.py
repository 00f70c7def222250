import pytest
import torch

from specsel.decoding.tree import TreeSpec, ancestor_mask, reindex, select_nodes


def test_ancestor_mask():
    # nodes: 0,1 children of root; 2 child of 0; 3 child of 2
    mask = ancestor_mask([-1, -1, 0, 2])
    expected = torch.tensor([
        [1, 0, 0, 0, 0],
        [1, 1, 0, 0, 0],
        [1, 0, 1, 0, 0],
        [1, 1, 0, 1, 0],
        [1, 1, 0, 1, 1],
    ], dtype=torch.bool)
    assert torch.equal(mask, expected)


def test_select_nodes_is_closed_under_parents_with_ties():
    # a child with log-prob 0 ties its parent; the parent must come first
    scores = [-0.1, -0.5, -0.1, -0.1, -2.0]
    parents = [-1, -1, 0, 2, 1]
    assert select_nodes(scores, parents, 3) == [0, 2, 3]
    tree = reindex([0, 2, 3], [10, 11, 12, 13, 14], parents, [1, 1, 2, 3, 2])
    assert (tree.tokens, tree.parents, tree.depths) == ([10, 12, 13], [-1, 0, 1], [1, 2, 3])


def test_select_nodes_random_trees_are_trees():
    g = torch.Generator().manual_seed(0)
    for _ in range(50):
        n = 40
        parents, scores = [], []
        for i in range(n):
            par = -1 if i < 3 else int(torch.randint(0, i, (1,), generator=g))
            parents.append(par)
            step = float(torch.rand(1, generator=g)) * (0 if i % 7 == 0 else 1)  # some zero steps (ties)
            scores.append((scores[par] if par >= 0 else 0.0) - step)
        for budget in (1, 5, 17, 40):
            chosen = select_nodes(scores, parents, budget)
            assert len(chosen) == budget and all(parents[i] == -1 or parents[i] in chosen for i in chosen)


@pytest.mark.parametrize("spec,msg", [(TreeSpec(0, 8, 60), ">= 1"), (TreeSpec(7, 0, 60), ">= 1"),
                                      (TreeSpec(2, 3, 13), "does not fit"), (TreeSpec(3, 50, 60), "vocabulary")])
def test_tree_spec_errors(spec, msg):
    with pytest.raises(ValueError, match=msg):
        spec.validate(draft_vocab=32)


def test_tree_spec_max_nodes():
    assert TreeSpec(7, 8, 60).max_nodes() == 8 + 6 * 64
    TreeSpec(2, 3, 12).validate(32)
