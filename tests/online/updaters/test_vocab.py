"""Online draft-vocabulary adaptation: coverage counting, slot choice, d2t / t2d consistency, lm_head rows and their
optimizer state, the version that carries the vocabulary (board, hot swap, export, reload), and lossless decoding
across a swap."""

import json

import pytest
import torch

from draftpool.pool import Member, load_members
from online.trainer.config import TrainerConfig
from online.trainer.feedback import FeedbackCollector
from online.trainer.hotswap import HotSwap
from online.trainer.token_trainer import OnlineTrainer, versioned
from online.trainer.versions import ExportSpec, export_pool
from online.trainer.weights import WeightBoard
from online.updaters.vocab import VocabCounter, remap_rows, remap_vocab, swap_plan
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.hooks import Hooks
from specsel.decoding.loop import SpecDecoder
from tests.stubs import VOCAB, make_head, tiny_target


def vocab_of(ids, size=12):
    t2d = torch.zeros(size, dtype=torch.bool)
    t2d[ids] = True
    return t2d


def test_counter_coverage_and_swap_plan_choose_frequent_uncovered_for_least_used():
    c = VocabCounter(12)
    c.add(torch.tensor([1, 1, 1, 2, 7, 7, 7, 7, 9, 9, 9, 4, 4, 11]))
    t2d = vocab_of([1, 2, 3, 4])  # holds 1 (x3), 2 (x1), 3 (x0), 4 (x2)
    assert c.coverage(t2d) == pytest.approx(6 / 14)
    drop, add = swap_plan(c.seen, t2d, max_swaps=8)
    # uncovered by count: 7 (4), 9 (3), 11 (1 < min_count 2); least used: 3 (0), 2 (1), 4 (2), 1 (3)
    assert add.tolist() == [7, 9] and drop.tolist() == [3, 2]
    assert swap_plan(c.seen, t2d, max_swaps=1)[1].tolist() == [7]  # the cap
    drop, add = swap_plan(c.seen, t2d, max_swaps=8, min_count=4)
    assert add.tolist() == [7] and drop.tolist() == [3]
    # a newcomer must be seen more often than the token it replaces: uncovered 4 (2), 2 (1), 11 (1) against
    # least used 3 (0), 1 (3), ...: 4 replaces 3, then 2 (1) is not above 1 (3) and the plan ends
    for min_count in (1, 2):
        drop, add = swap_plan(c.seen, vocab_of([1, 3, 7, 9]), max_swaps=8, min_count=min_count)
        assert add.tolist() == [4] and drop.tolist() == [3]


def test_remap_vocab_keeps_order_and_moves_rows_with_their_tokens():
    old_ids = torch.tensor([1, 2, 3, 4])
    d2t, t2d = old_ids - torch.arange(4), vocab_of(old_ids)
    new_d2t, new_t2d, index = remap_vocab(d2t, t2d, drop=torch.tensor([3, 2]), add=torch.tensor([7, 9]))
    new_ids = torch.arange(4) + new_d2t
    assert new_ids.tolist() == [1, 4, 7, 9]  # ascending: d2t stays a valid EAGLE-3 offset table
    assert new_t2d.nonzero()[:, 0].tolist() == new_ids.tolist()  # t2d and d2t describe the same vocabulary
    assert index.tolist() == [0, 3, -1, -1]
    rows = torch.arange(4.0)[:, None].expand(4, 3)  # row i = [i, i, i] in the old slot order
    fill = torch.full((4, 3), -1.0)
    assert remap_rows(rows, index, fill)[:, 0].tolist() == [0.0, 3.0, -1.0, -1.0]
    with pytest.raises(ValueError, match="keep 4 draft tokens"):
        remap_vocab(d2t, t2d, drop=torch.tensor([3]), add=torch.tensor([7, 9]))


@pytest.fixture(scope="module")
def target():
    return tiny_target()


def feedback(target, head, prompts, n=24):
    collector = FeedbackCollector(k=16)
    dec = SpecDecoder(target, Eagle3Drafter(head), mode="chain", k=3, hooks=Hooks(collector=collector))
    out = []
    for i, p in enumerate(prompts):
        collector.start()
        out.append(collector.finish(f"r{i}", dec.decode(p, n).state, drafter=0))
    return out


def test_trainer_swaps_vocabulary_rows_and_moments_consistently(target):
    head = make_head(target, 1)
    out_embed = target.get_output_embeddings().weight.detach()
    cfg = TrainerConfig(updater="ogd", lr=1e-3, holdout_every=0, vocab_every=2, vocab_swaps=4, vocab_min_count=1)
    tr = OnlineTrainer([Member("h", "eagle3", head)], cfg, out_embed=out_embed)
    batch = feedback(target, head, [[5, 17, 33, 2], [9, 9, 40, 41]])
    tr.round(batch)  # round 1: counts only
    assert tr.last_vocab == {} and tr.vocab_swaps["h"] == 0
    seen = torch.zeros(VOCAB, dtype=torch.long)
    for fb in batch:
        seen += torch.bincount(fb.tokens[fb.prompt_len:], minlength=VOCAB)
    assert torch.equal(tr.counters["h"].seen, seen)  # the committed response tokens of every record
    old_t2d = head.t2d.clone()
    expect_drop, expect_add = swap_plan(2 * seen, old_t2d, 4, 1)
    assert expect_add.numel() > 0  # a random head's vocabulary misses some of the target's tokens
    before = tr.updaters["h"].served()["lm_head.weight"].clone()
    old_ids = (torch.arange(head.d2t.numel()) + head.d2t).tolist()
    tr.round(batch)  # round 2: trains, then swaps
    assert tr.last_vocab["h"]["swapped"] == expect_add.numel()
    new_ids = (torch.arange(head.d2t.numel()) + head.d2t).tolist()
    assert set(new_ids) == (set(old_ids) - set(expect_drop.tolist())) | set(expect_add.tolist())
    assert new_ids == sorted(new_ids) and head.t2d.nonzero()[:, 0].tolist() == new_ids
    w = tr.updaters["h"].served()["lm_head.weight"]
    moments = tr.updaters["h"].opt.state[tr.updaters["h"].params["lm_head.weight"]]
    for slot, tid in enumerate(new_ids):
        if tid in expect_add.tolist():  # a new token: the target's output row, fresh moments
            assert torch.equal(w[slot], out_embed[tid]) and not moments["exp_avg"][slot].any()
        else:  # a kept token: its row moved with it (trained once more in round 2, so close to the old row)
            assert torch.allclose(w[slot], before[old_ids.index(tid)], atol=1e-2)
    cand = tr.candidate("h")
    assert torch.equal(cand["d2t"], head.d2t) and torch.equal(cand["t2d"], head.t2d)
    assert set(cand) == set(versioned("eagle3", head, True))
    # the guard measures each version with its own vocabulary; a restart restores vocabulary, counts and rows
    tr.guard("h")
    twin = OnlineTrainer([Member("h", "eagle3", make_head(target, 1))], cfg, out_embed=out_embed)
    twin.load_state(tr.state())
    assert torch.equal(twin.members["h"].module.d2t, head.d2t) and torch.equal(twin.counters["h"].seen, 2 * seen)
    assert torch.equal(twin.candidate("h")["lm_head.weight"], cand["lm_head.weight"])


def test_vocab_adaptation_needs_the_output_embedding(target):
    with pytest.raises(ValueError, match="output embedding"):
        OnlineTrainer([Member("h", "eagle3", make_head(target, 1))], TrainerConfig(vocab_every=1))


def plain(target, prompt, n):
    return SpecDecoder(target, None, mode="plain").generate(prompt, n)[0]


def test_lossless_decoding_across_a_vocabulary_swap_and_export_reloads(target, tmp_path):
    served = make_head(target, 2)
    trainer_head = make_head(target, 2)
    cfg = TrainerConfig(lr=1e-3, holdout_every=0, vocab_every=1, vocab_swaps=16, vocab_min_count=1)
    tr = OnlineTrainer([Member("h", "eagle3", trainer_head)], cfg,
                       out_embed=target.get_output_embeddings().weight.detach())
    tr.round(feedback(target, served, [[5, 17, 33, 2], [3, 8, 60]]))
    assert tr.last_vocab["h"]["swapped"] > 0
    version = tr.candidate("h")
    board = WeightBoard(versioned("eagle3", served, True))
    swap = HotSwap({"h": board}, {"h": served})
    dec = SpecDecoder(target, {"h": Eagle3Drafter(served)}, mode="chain", k=3)
    cycles = []

    def publish_mid_request():
        cycles.append(1)
        if len(cycles) == 3:  # between the third and fourth cycle of the request
            board.publish({k: v.clone() for k, v in version.items()}, 1)
        return swap.poll()

    prompt = [9, 9, 40, 41, 7, 100]
    out, m = dec.generate(prompt, 30, hooks=Hooks(poll=publish_mid_request))
    assert m.weight_swaps == 1 and out == plain(target, prompt, 30)  # exact through the swap
    assert torch.equal(served.d2t, version["d2t"]) and torch.equal(served.t2d, version["t2d"])
    assert torch.equal(dec.drafters[0].draft_ids, torch.arange(served.d2t.numel()) + version["d2t"])
    # the exported version carries its vocabulary and loads back as a pool
    from draftpool.models.eagle3 import write_eagle3
    from draftpool.pool import update_pool_manifest
    from draftpool.target import TargetInfo

    info = TargetInfo("tiny", "tiny", str(tmp_path), "0" * 64, 4, 64, VOCAB, 256)
    src = tmp_path / "src"
    write_eagle3(make_head(target, 2), src / "h", info, {"kind": "eagle3", "target_weights_sha256": "0" * 64})
    update_pool_manifest(src, info, "h", {"path": "h", "kind": "eagle3"})
    path = export_pool(ExportSpec(str(tmp_path / "out"), str(src), info), 1, [Member("h", "eagle3", served)],
                       {"h": version}, tr.state(), {})
    [loaded] = [m.module for m in load_members(path, info, target)]
    assert torch.equal(loaded.d2t, version["d2t"]) and torch.equal(loaded.t2d, version["t2d"])
    assert torch.equal(loaded.lm_head.weight, version["lm_head.weight"])
    assert json.loads((path / "pool.json").read_text())["online"]["version"] == 1
