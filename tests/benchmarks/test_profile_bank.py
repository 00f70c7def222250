"""benchmarks.profile_bank's synthetic specialists: what --synthetic N:R compares is what it says it is."""

import torch

from benchmarks.profile_bank import synthetic
from draftpool.pool import Member
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.selection.head_bank import HeadBank
from tests.stubs import make_head, tiny_target


def test_synthetic_whole_and_low_rank_specialists_of_one_head():
    target = tiny_target()
    base = Member("h", "eagle3", make_head(target, 1))
    sets = synthetic(base, 3, 2)
    whole, low = (HeadBank([Eagle3Drafter(m.module) for m in sets[k]]) for k in ("whole", "low_rank"))
    assert not whole.low_rank and low.low_rank
    w = whole.params["lm_head"]["weight"]  # [3,Vd,h]: three distinct heads stacked whole
    assert w.shape[0] == 3 and not torch.equal(w[0], w[1])
    per_member = sum(a.numel() + b.numel() for a, b in sets["low_rank"][0].module.low_rank.factors.values())
    assert sum(t.numel() for g in low.params.values() for t in g.values()) == 3 * per_member
    assert all(m.module.low_rank.rank == 2 for m in sets["low_rank"])
    own = HeadBank([Eagle3Drafter(m.module) for m in sets["low_rank_own_vocab"]])
    assert own.low_rank and own.params["lm_head"]["weight"].shape[0] == 3  # its own lm_heads stacked whole
