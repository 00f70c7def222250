"""DPO on step pairs: summed completion log-probs equal an unpadded per-pair computation, and the loss equals a plain
computation of the sigmoid DPO formula; a few AdamW steps on fixed pairs lower it while the reference stays frozen."""

import copy
import math

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from online.lookahead.dpo import DPOUpdater, completion_logps, dpo_loss
from online.lookahead.sft import SFTUpdater
from specsel.lookahead.accept import PreferencePair

CFG = LlamaConfig(vocab_size=40, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, max_position_embeddings=64)
PROMPTS = [[1, 2, 3], [4, 5], [6, 7, 8, 9]]
CHOSEN = [[10, 11, 12], [13], [14, 15]]
REJECTED = [[20, 21], [22, 23, 24], [25]]


def tiny(seed=0):
    torch.manual_seed(seed)
    return LlamaForCausalLM(CFG).eval()


def plain_logp(model, prompt, completion):
    """Sum over completion tokens of log softmax(logits)[token], one unpadded sequence, in Python floats."""
    logits = model(input_ids=torch.tensor([prompt + completion])).logits[0].double()
    total = 0.0
    for j, tok in enumerate(completion):
        row = logits[len(prompt) + j - 1]
        total += float(row[tok]) - math.log(float(row.exp().sum()))
    return total


def test_completion_logps_match_unpadded_sums():
    model = tiny()
    with torch.no_grad():
        got = completion_logps(model, PROMPTS, CHOSEN, pad_id=0)
    want = [plain_logp(model, p, c) for p, c in zip(PROMPTS, CHOSEN)]
    assert got.tolist() == pytest.approx(want, abs=1e-4)


def test_dpo_loss_is_the_sigmoid_formula():
    pc, pr, rc, rr = (torch.tensor(x) for x in ([-3.0, -5.0], [-4.0, -2.0], [-3.5, -4.0], [-3.0, -2.5]))
    want = sum(-math.log(1 / (1 + math.exp(-0.1 * ((a - c) - (b - d))))) for a, b, c, d in
               zip(pc.tolist(), pr.tolist(), rc.tolist(), rr.tolist())) / 2
    assert float(dpo_loss(pc, pr, rc, rr, beta=0.1)) == pytest.approx(want, rel=1e-6)
    assert float(dpo_loss(pc, pr, pc, pr)) == pytest.approx(math.log(2))  # policy == reference: log 2
    with pytest.raises(ValueError, match="beta"):
        dpo_loss(pc, pr, rc, rr, beta=0.0)
    with pytest.raises(ValueError, match="as many prompts"):
        completion_logps(tiny(), PROMPTS, CHOSEN[:2], pad_id=0)


def test_a_few_steps_lower_the_loss_and_leave_the_reference_frozen():
    policy = tiny()
    ref = copy.deepcopy(policy).requires_grad_(False)
    before = {k: v.clone() for k, v in ref.state_dict().items()}
    with torch.no_grad():
        rc, rr = (completion_logps(ref, PROMPTS, c, 0) for c in (CHOSEN, REJECTED))
    opt = torch.optim.AdamW(policy.parameters(), lr=1e-3, betas=(0.9, 0.95))
    losses = []
    for _ in range(5):
        loss = dpo_loss(completion_logps(policy, PROMPTS, CHOSEN, 0), completion_logps(policy, PROMPTS, REJECTED, 0),
                        rc, rr)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        opt.step()
        losses.append(float(loss))
    assert losses[0] == pytest.approx(math.log(2), abs=1e-4) and losses[-1] < losses[0]
    assert all(torch.equal(before[k], v) for k, v in ref.state_dict().items())


def test_a_dpo_round_starts_at_log2_and_lowers_the_loss_with_the_round_start_as_reference():
    model = tiny()
    pairs = [PreferencePair(p, c, r) for p, c, r in zip(PROMPTS, CHOSEN, REJECTED)]
    upd = DPOUpdater(model, pad_id=0, lr=1e-3, epochs=3, batch=2)
    beats = []
    first = upd.round(pairs, on_step=lambda: beats.append(1))
    assert len(beats) == 3 * 2  # the heartbeat after every optimizer step: 3 epochs x 2 mini-batches
    assert len(first) == 3 and first[0] == pytest.approx(math.log(2), abs=0.05) and first[-1] < first[0]
    second = upd.round(pairs)  # a new reference: the drafter after round 1, so the loss starts near log 2 again
    assert second[0] == pytest.approx(math.log(2), abs=0.05) and upd.rounds == 2
    with torch.no_grad():  # the drafter now prefers the chosen steps more than it did before any round
        margin = completion_logps(model, PROMPTS, CHOSEN, 0) - completion_logps(model, PROMPTS, REJECTED, 0)
        start = completion_logps(tiny(), PROMPTS, CHOSEN, 0) - completion_logps(tiny(), PROMPTS, REJECTED, 0)
    assert (margin > start).all()
    assert upd.round([]) == []
    with pytest.raises(ValueError, match="lr must be > 0"):
        DPOUpdater(model, 0, lr=0.0)
    with pytest.raises(ValueError, match="beta"):
        DPOUpdater(model, 0, beta=0.0)


def test_an_sft_round_is_the_mean_token_nll_of_the_chosen_steps_and_lowers_it():
    model = tiny()
    pairs = [PreferencePair(p, c, r) for p, c, r in zip(PROMPTS, CHOSEN, REJECTED)]
    upd = SFTUpdater(model, pad_id=0, lr=1e-2, epochs=4, batch=3)
    with torch.no_grad():
        want = sum(-plain_logp(model, p, c) / len(c) for p, c in zip(PROMPTS, CHOSEN)) / 3
        assert float(upd.loss(pairs, slice(0, 3))) == pytest.approx(want, rel=1e-4)
    losses = upd.round(pairs)
    assert len(losses) == 4 and losses[0] == pytest.approx(want, rel=1e-4) and losses[-1] < losses[0]
    state = upd.state()
    again = SFTUpdater(tiny(), pad_id=0, lr=1e-2)
    again.load_state(state)
    assert again.rounds == 1
