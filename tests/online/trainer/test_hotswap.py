"""Hot-swapping drafter weights between decode cycles on a tiny random target: the output stays the target's greedy
output through every swap, swapped drafters recompute their caches with the new weights, the bank restacks."""

import pytest
import torch

from online.trainer.hotswap import HotSwap
from online.trainer.token_trainer import trainable
from online.trainer.weights import WeightBoard
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.hooks import Hooks
from specsel.decoding.loop import SpecDecoder
from specsel.decoding.tree import TreeSpec
from specsel.selection.learners import make_learner
from specsel.selection.selector import Selector
from tests.stubs import make_head, tiny_target

PROMPTS = [[5, 17, 33, 2], [9, 9, 40, 41, 7, 100], [3]]


@pytest.fixture(scope="module")
def target():
    return tiny_target()


def plain(target, prompt, n):
    return SpecDecoder(target, None, mode="plain").generate(prompt, n)[0]


class Publisher:
    """Publishes a new random version of every head, then lets the swap take it: a swap at every cycle boundary.
    After each swap the served modules must hold exactly the tensors just published (a no-op install fails here:
    at temperature 0 the output alone cannot tell which weights drafted)."""

    def __init__(self, heads, boards, swap, seed=0):
        self.heads, self.boards, self.swap = heads, boards, swap
        self.gen = torch.Generator().manual_seed(seed)
        self.version = 0
        self.checked = 0

    def __call__(self):
        self.version += 1
        base = trainable(self.heads[0])  # same-shape heads: one template for every board
        published = {}
        for name, board in self.boards.items():
            published[name] = {k: v + 0.05 * torch.randn(v.shape, generator=self.gen) for k, v in base.items()}
            board.publish(published[name], self.version)
        changed = self.swap.poll()
        assert changed == list(range(len(self.heads)))
        assert self.swap.versions() == {n: self.version for n in self.boards}
        for head, name in zip(self.heads, self.boards):
            served = trainable(head)
            assert all(torch.equal(served[k], published[name][k]) for k in published[name]), name
        self.checked += 1
        return changed


@pytest.mark.parametrize("learner,mode", [("normal_hedge", "chain"), ("fixed", "chain"), ("normal_hedge", "tree")])
def test_output_is_lossless_through_swaps_at_every_cycle(target, learner, mode):
    heads = [make_head(target, s) for s in (1, 2, 3)]
    names = [f"h{i}" for i in range(3)]
    boards = {n: WeightBoard(trainable(h)) for n, h in zip(names, heads)}
    swap = HotSwap(boards, dict(zip(names, heads)))
    dec = SpecDecoder(target, {n: Eagle3Drafter(h) for n, h in zip(names, heads)},
                      selector=Selector(make_learner(learner, 3), 3, 3), mode=mode, k=3, tree=TreeSpec(3, 4, 10))
    pub = Publisher(heads, boards, swap)
    for prompt in PROMPTS:
        res = dec.decode(prompt, 20, hooks=Hooks(poll=pub))
        out, m = res.tokens, res.metrics
        assert out == plain(target, prompt, 20)
        assert m.weight_swaps == 3 * len(m.accepted)  # every head, every cycle
    assert pub.checked == pub.version > 0
    assert all(d.head is h for d, h in zip(dec.drafters, heads))  # the decoder drafts with the swapped modules
    assert swap.versions() == {n: pub.version for n in names}
    last = boards["h0"].read(0)[1]
    assert all(torch.equal(trainable(heads[0])[k], last[k]) for k in last)  # the served module holds the version
    # the drafters' caches were recomputed with the weights they hold now
    state = res.state
    for d in dec.drafters:
        if d.n_real:
            fresh = Eagle3Drafter(d.head)
            fresh.sync(type(state)(tokens=state.tokens, prompt_len=state.prompt_len, feats=state.feats[:d.n_real]))
            torch.testing.assert_close(d.k[:, :, :d.n_real], fresh.k, atol=1e-5, rtol=1e-5)
    bank = dec.selector.bank
    assert (bank is not None) == (learner == "normal_hedge")
    if bank is not None:  # the bank restacked the new weights
        torch.testing.assert_close(bank.params["fc"]["weight"][0], heads[0].fc.weight.detach())


def test_a_torn_slot_is_never_swapped_in(target):
    head = make_head(target, 1)
    board = WeightBoard(trainable(head))
    swap = HotSwap({"h": board}, {"h": head})
    before = {k: v.clone() for k, v in trainable(head).items()}
    board.publish({k: v + 1 for k, v in before.items()}, 1)
    board.header[0] += 1  # the active slot 0 is being rewritten: odd sequence
    assert swap.poll() == [] and all(torch.equal(before[k], trainable(head)[k]) for k in before)
    board.header[0] += 1
    assert swap.poll() == [0] and swap.versions() == {"h": 1}
    assert all(torch.equal(before[k] + 1, trainable(head)[k]) for k in before)
