"""Acceptance tables: per-depth gammas reproduce the true accepted length of every greedy chain exactly; depth-0
gammas (what live counterfactual evaluation sees) do too for an independent drafter, but not for an EAGLE-3 head,
whose deeper drafts come from its own hidden state (the bias on a real pool: benchmarks/select.py)."""

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from benchmarks.replay import ReplayRequest, acceptance_tables, chain_estimates
from draftpool.models.eagle3 import EAGLE3
from draftpool.models.llama import build_drafter
from draftpool.pool import Member
from specsel.selection.delayed_feedback import DelayedFeedback
from specsel.selection.estimators import length_loss
from tests.stubs import make_head
from training.ttt import ttt_loss

K = 4


def greedy_sequences(target, n: int = 12) -> torch.Tensor:
    """[n, 28] random 4-token prompts and the target's 24-token greedy continuations."""
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        return target.generate(torch.randint(0, 128, (n, 4), generator=g), max_new_tokens=24, min_new_tokens=24,
                               do_sample=False)


def tables_for(target, drafters, seq: torch.Tensor) -> ReplayRequest:
    t = acceptance_tables(target, drafters, seq[:4].tolist(), seq[4:].tolist(), K)
    return ReplayRequest("r", "x", 4, t.length, t.acc, t.gamma, t.bd, depth=t.depth)


def trained_head(target, ids: torch.Tensor, seed: int, steps: int = 100):
    """A head trained for a few TTT steps on these greedy sequences (its acceptance there differs by depth)."""
    with torch.no_grad():
        out = target(ids, output_hidden_states=True)
    aux = torch.cat([out.hidden_states[i] for i in (1, 2, 3)], -1)
    head = make_head(target, seed, draft_vocab=128).train()
    opt = torch.optim.Adam([p for p in head.parameters() if p.requires_grad], lr=3e-3)
    mask = torch.ones_like(ids)
    for _ in range(steps):
        loss, _ = ttt_loss(EAGLE3.steps(head, aux, ids, mask, K, loss_mask=mask), out.logits, mask, with_metrics=False)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return head.eval()


def patterned_target():
    """A tiny random Llama whose greedy output has learnable, changing patterns (larger init than tiny_target's)."""
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, initializer_range=0.1)
    return LlamaForCausalLM(cfg).eval()


@pytest.mark.tier2
def test_per_depth_gammas_give_the_true_chain_length_depth0_ones_not_for_heads():
    target = patterned_target()
    torch.manual_seed(0)
    llama = build_drafter("llama-tiny", target.config).eval()
    seqs = greedy_sequences(target)
    drafters = [Member("head", "eagle3", trained_head(target, seqs, 1)), Member("llama", "llama", llama)]
    reqs = [tables_for(target, drafters, seq) for seq in seqs[:4]]
    step0, depth, truth = (torch.cat([chain_estimates(q, K)[i] for q in reqs], 1) for i in range(3))
    assert torch.equal(depth, truth)  # exact for every drafter and every start (greedy)
    assert torch.equal(step0[1], truth[1])  # an independent drafter drafts depth j as it predicts position s+j
    accepted = torch.cat([q.acc[:1, q.prompt_len + 1:] for q in reqs], 1)
    assert (accepted > 1).any()  # chains past depth 1 occur, where the head's own hidden state is fed back
    assert not torch.allclose(step0[0], truth[0])  # depth-0 gammas misjudge the heads' chains


def test_game_reads_per_depth_gammas_along_the_chain():
    """A [N, K, m] table: the length loss of the token at position s reads depth j at position s + j."""
    gammas = torch.zeros(1, K, 6)
    gammas[0, 0, 0] = gammas[0, 1, 1] = 1.0  # a chain from 0 accepts 2 drafts, then misses
    gammas[0, 0, 1:] = 1.0  # depth-0 acceptance everywhere else: a depth-0 reading would see 4
    game = DelayedFeedback(type("L", (), {"update": lambda self, x: None, "select": lambda self: 0})(), 1, K)
    game.observe(gammas, [5])
    first = game.queue[0][0]
    assert abs(first - float(length_loss(torch.tensor([1.0, 1.0, 0.0, 0.0]), K))) < 1e-6
