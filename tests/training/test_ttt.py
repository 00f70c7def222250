"""The TTT loss against a plain reference, and the head's masked-logits path against its full-logits path."""

from __future__ import annotations

import math

import torch
from transformers import LlamaConfig

from draftpool.models.eagle3 import Eagle3Head, head_config
from draftpool.models.kind import Steps
from training.ttt import shift_left, ttt_loss


def reference_ttt(step_full_logits, target_logits, loss_mask, draft_ids, w):
    """Plain loops: step j at (b, t) counts iff loss_mask[b, t+2+j]; teacher = softmax of target[b, t+1+j] on Vd."""
    total = 0.0
    B, T, _ = target_logits.shape
    for j, lg in enumerate(step_full_logits):
        terms = []
        for b in range(B):
            for t in range(T - 2 - j):
                if not loss_mask[b, t + 2 + j]:
                    continue
                teach = [target_logits[b, t + 1 + j, int(v)].item() for v in draft_ids]
                zt = math.log(sum(math.exp(x) for x in teach))
                zs = math.log(sum(math.exp(x) for x in lg[b, t].tolist()))
                terms.append(-sum(math.exp(a - zt) * (s - zs) for a, s in zip(teach, lg[b, t].tolist())))
        if terms:
            total += w ** j * sum(terms) / len(terms)
    return total


def test_ttt_loss_matches_reference_and_masked_logits_match_full():
    torch.manual_seed(0)
    tcfg = LlamaConfig(vocab_size=40, hidden_size=16, intermediate_size=32, num_hidden_layers=6,
                       num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)
    head = Eagle3Head(head_config(tcfg, 12, [1, 3, 4])).double()
    head.d2t.copy_(torch.arange(12) * 2)  # draft id i -> target id 3i
    B, T = 2, 9
    ids = torch.randint(0, 40, (B, T))
    attn = torch.ones(B, T, dtype=torch.long)
    loss_mask = torch.zeros(B, T, dtype=torch.long)
    loss_mask[0, 4:] = 1
    loss_mask[1, 6:] = 1
    aux = torch.randn(B, T, 48, dtype=torch.float64)
    target_logits = torch.randn(B, T, 40, dtype=torch.float64)
    _, full = head(aux, ids, attn, 3)
    _, masked = head(aux, ids, attn, 3, loss_mask=loss_mask)
    for j, (f, m) in enumerate(zip(full, masked)):
        sel = torch.nn.functional.pad(loss_mask[:, 2 + j:], (0, 2 + j)).bool()
        assert torch.equal(f[sel], m)
    loss, metrics = ttt_loss(Steps(masked, 2, head.draft_ids), target_logits, loss_mask, 0.8)
    ref = reference_ttt([f.detach() for f in full], target_logits, loss_mask, head.draft_ids, 0.8)
    assert abs(loss.item() - ref) < 1e-5  # the loss computes in float32
    assert metrics["n_0"] == loss_mask[:, 2:].sum().item()
    assert 0.0 <= metrics["accept_2"] <= 1.0


def test_sequences_shorter_than_the_steps():
    # T < 2 + j: shifts stay T wide (all fill), the steps past the end give no logits and the loss is finite
    x = torch.arange(6).view(2, 3)
    assert torch.equal(shift_left(x, 5), torch.zeros_like(x)) and torch.equal(shift_left(x, 1)[:, :2], x[:, 1:])
    torch.manual_seed(0)
    tcfg = LlamaConfig(vocab_size=40, hidden_size=16, intermediate_size=32, num_hidden_layers=6,
                       num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)
    head = Eagle3Head(head_config(tcfg, 12, [1, 3, 4])).double()
    for T in (1, 2, 3):
        ids = torch.randint(0, 40, (1, T))
        loss_mask = torch.ones(1, T, dtype=torch.long)
        _, masked = head(torch.randn(1, T, 48, dtype=torch.float64), ids, torch.ones_like(ids), 4,
                         loss_mask=loss_mask)
        assert [m.shape[0] for m in masked] == [max(T - 2 - j, 0) for j in range(4)]
        loss, _ = ttt_loss(Steps(masked, 2, head.draft_ids), torch.randn(1, T, 40, dtype=torch.float64), loss_mask)
        assert torch.isfinite(loss)


def test_init_head_from_head_copies_layers_and_shared_lm_head_rows():
    from draftpool.models.eagle3 import select_draft_vocab
    from training.kinds.eagle3 import init_head_from_head

    tcfg = LlamaConfig(vocab_size=40, hidden_size=16, intermediate_size=32, num_hidden_layers=6,
                       num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)
    torch.manual_seed(0)
    src, new = Eagle3Head(head_config(tcfg, 12, [1, 3, 4])), Eagle3Head(head_config(tcfg, 10, [1, 3, 4]))
    for h, lo in ((src, 0), (new, 6)):  # source: target ids 0..11; new: 6..15 (6..11 shared)
        counts = torch.zeros(40)
        counts[lo:lo + h.d2t.numel()] = 1
        d2t, t2d = select_draft_vocab(counts, h.d2t.numel())
        h.d2t.copy_(d2t)
        h.t2d.copy_(t2d)
    before = new.lm_head.weight.detach().clone()
    init_head_from_head(new, src)
    for k, v in src.state_dict().items():
        if k.split(".")[0] not in ("lm_head", "d2t", "t2d"):
            assert torch.equal(new.state_dict()[k], v), k
    assert new.draft_ids.tolist() == list(range(6, 16))  # the new head keeps its own vocabulary
    assert torch.equal(new.lm_head.weight[:6], src.lm_head.weight[6:12])  # ids 6..11: the source's rows
    assert torch.equal(new.lm_head.weight[6:], before[6:])  # ids 12..15: not in the source, initialisation kept


def test_later_steps_run_only_at_loss_rows_with_the_full_paths_logits_and_gradients():
    # long prompts, right padding, own-token chains: steps >= 1 run at the rows a later step takes a loss at, and
    # give the full path's logits and weight gradients
    torch.manual_seed(1)
    tcfg = LlamaConfig(vocab_size=40, hidden_size=16, intermediate_size=32, num_hidden_layers=6,
                       num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64)
    head = Eagle3Head(head_config(tcfg, 12, [1, 3, 4])).double()
    head.d2t.copy_(torch.arange(12) * 2)
    B, T = 3, 20
    ids = torch.randint(0, 40, (B, T))
    attn = torch.ones(B, T, dtype=torch.long)
    attn[1, 15:] = 0
    attn[2, 9:] = 0
    loss_mask = torch.zeros(B, T, dtype=torch.long)
    loss_mask[0, 12:] = 1
    loss_mask[1, 10:15] = 1
    loss_mask[2, 8:9] = 1  # one response token: only step 0 counts
    aux = torch.randn(B, T, 48, dtype=torch.float64)
    for own in (False, True):
        head.zero_grad()
        _, full = head(aux, ids, attn, 5, own_tokens=own)
        sels = [torch.nn.functional.pad(loss_mask[:, 2 + j:], (0, 2 + j)).bool() for j in range(5)]
        sum((f[s] ** 2).sum() * (j + 1) for j, (f, s) in enumerate(zip(full, sels))).backward()
        ref = {k: p.grad.clone() for k, p in head.named_parameters() if p.grad is not None}
        head.zero_grad()
        hidden, masked = head(aux, ids, attn, 5, loss_mask=loss_mask, own_tokens=own)
        assert hidden[1].shape[1] == (sels[1] | sels[2] | sels[3] | sels[4]).sum() < B * T / 2
        for f, m, s in zip(full, masked, sels):
            torch.testing.assert_close(f[s], m, rtol=1e-10, atol=1e-10)
        sum((m ** 2).sum() * (j + 1) for j, m in enumerate(masked)).backward()
        for k, p in head.named_parameters():
            if p.grad is not None:
                torch.testing.assert_close(p.grad, ref[k], rtol=1e-9, atol=1e-10)


def test_acceptance_term_adds_minus_log_sum_min_p_q_per_step():
    torch.manual_seed(2)
    B, T, V = 2, 8, 30
    columns = torch.tensor([0, 3, 4, 9, 12, 20])
    loss_mask = torch.zeros(B, T, dtype=torch.long)
    loss_mask[0, 3:] = 1
    loss_mask[1, 4:] = 1
    logits = [torch.randn(int(loss_mask[:, 2 + j:].sum()), len(columns), dtype=torch.float64) for j in range(3)]
    target = torch.randn(B, T, V, dtype=torch.float64)
    steps = Steps(logits, 2, columns)
    base, _ = ttt_loss(steps, target, loss_mask, 0.5)
    with_acc, _ = ttt_loss(steps, target, loss_mask, 0.5, accept_weight=0.3)
    extra = 0.0
    for j, lg in enumerate(logits):
        rows = [(b, t) for b in range(B) for t in range(T - 2 - j) if loss_mask[b, t + 2 + j]]
        p = torch.stack([torch.softmax(target[b, t + 1 + j], -1)[columns] for b, t in rows])  # full-vocab p
        acc = torch.minimum(p, torch.softmax(lg, -1)).sum(-1)
        extra += 0.5 ** j * 0.3 * -acc.log().mean().item()
    assert abs(with_acc.item() - base.item() - extra) < 1e-6 and extra > 0
