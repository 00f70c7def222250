"""Test models: fixed-logit bigram LMs with a transformers-style interface, oracle drafters that know the greedy
continuation, a tiny random Llama target with seeded random EAGLE-3 heads, a tiny random Llama over the real
vocabulary (plumbing tests with real prompts and tokenizer), and random heads for the real target."""

from __future__ import annotations

from types import SimpleNamespace

import torch
from torch import nn
from transformers import LlamaConfig, LlamaForCausalLM

from draftpool.models.eagle3 import Eagle3Head, default_aux_layers, head_config, select_draft_vocab
from specsel.decoding.eagle3 import Eagle3Drafter
from specsel.decoding.tree import DraftTree


class BigramLM(nn.Module):
    """Next-token logits depend only on the current token: logits = table[token] ([V,V]).

    Each token id is written into the KV cache (1 layer, 1 head, width 1), so a cache holds exactly the tokens it
    has read and rollback can be checked token for token.
    """

    def __init__(self, table: torch.Tensor):
        super().__init__()
        v = table.shape[0]
        self.config = LlamaConfig(vocab_size=v, hidden_size=4, intermediate_size=4, num_hidden_layers=1,
                                  num_attention_heads=1, num_key_value_heads=1, max_position_embeddings=256)
        self.table = nn.Parameter(table.float(), requires_grad=False)

    def forward(self, input_ids, position_ids=None, attention_mask=None, past_key_values=None, use_cache=True,
                output_hidden_states=False, logits_to_keep=0, **_):
        kv = input_ids.float()[:, None, :, None]  # [1,1,T,1]
        if past_key_values is not None:
            past_key_values.update(kv, kv, 0)
        logits = self.table[input_ids]  # [1,T,V]
        if logits_to_keep:
            logits = logits[:, -logits_to_keep:]
        return SimpleNamespace(logits=logits, hidden_states=None)


def successor_table(vocab: int, nxt) -> torch.Tensor:
    """Bigram table whose argmax after token t is nxt(t)."""
    table = torch.zeros(vocab, vocab)
    for t in range(vocab):
        table[t, nxt(t)] = 10.0
    return table


def cached_tokens(cache) -> list[int]:
    return [int(x) for x in cache.layers[0].keys.flatten().tolist()]


class OracleTreeDrafter:
    """Drafts a tree around a known continuation: the true path (up to `correct` tokens, then a wrong token) placed
    behind decoy siblings at every depth, so verification must pick it out of a real tree."""

    kind = "oracle"
    aux_layers = None
    can_tree = True
    self_limiting = False
    module = None
    chain_logits: list[torch.Tensor] = []

    def __init__(self, reference: list[int], vocab_size: int, depth: int, correct: int, decoys: int = 2):
        self.reference, self.vocab_size = reference, vocab_size
        self.depth, self.correct, self.decoys = depth, correct, decoys
        self.draft_vocab_size = vocab_size

    def check_target(self, config) -> None:
        pass

    def reset(self) -> None:
        self.pos = 0

    def sync(self, state) -> None:
        self.state = state

    def draft_tree(self, spec) -> DraftTree:
        done = len(self.state.tokens) - self.state.prompt_len  # committed new tokens
        want = self.reference[done:done + self.depth]
        tokens, parents, depths = [], [], []
        parent = -1
        for d, tok in enumerate(want):
            for j in range(self.decoys):  # wrong siblings first
                tokens.append((tok + 1 + j) % self.vocab_size)
                parents.append(parent)
                depths.append(d + 1)
            tokens.append(tok if d < self.correct else (tok + self.decoys + 1) % self.vocab_size)
            parents.append(parent)
            depths.append(d + 1)
            parent = len(tokens) - 1
        return DraftTree(tokens, parents, depths)


class OracleChainDrafter:
    """Knows the greedy continuation: drafts its next `correct` tokens right, then wrong ones; its predictions at the
    verified positions (what the counterfactual prefill reads) are right, one-hot."""

    kind = "oracle"
    aux_layers = None
    track = False
    deterministic = False
    can_tree = False
    self_limiting = False
    module = None

    def __init__(self, reference: list[int], vocab_size: int, correct: int):
        self.reference, self.vocab_size, self.correct = reference, vocab_size, correct
        self.draft_vocab_size = vocab_size

    def check_target(self, config) -> None:
        pass

    def reset(self) -> None:
        self.seen = 0
        self.chain_logits: list[torch.Tensor] = []

    def _onehot(self, tok: int) -> torch.Tensor:
        row = torch.full((self.vocab_size,), -1e4)
        row[tok] = 0.0
        return row

    def sync(self, state) -> None:
        self.state = state
        self.seen = len(state.tokens)

    def take_predictions(self, start: int, end: int) -> torch.Tensor:
        p = self.state.prompt_len
        return torch.stack([self._onehot(self.reference[s - p] if 0 <= s - p < len(self.reference) else 0)
                            for s in range(start, end)])

    @staticmethod
    def to_target_ids(ids: torch.Tensor) -> torch.Tensor:
        return ids

    @staticmethod
    def full_logits(logits: torch.Tensor) -> torch.Tensor:
        return logits.float()

    def draft_chain(self, k: int, params, generator):
        done = len(self.state.tokens) - self.state.prompt_len
        want = (self.reference[done:done + k] + [0] * k)[:k]
        drafted = [t if i < self.correct else (t + 1) % self.vocab_size for i, t in enumerate(want)]
        self.chain_logits = [self._onehot(t) for t in drafted]
        return torch.tensor(drafted), None


class SteeredHead(Eagle3Drafter):
    """A real EAGLE-3 head (its own syncs over the target's features, its KV cache, its own drafting run every
    cycle) whose proposals are then steered to the known greedy continuation: the next `correct` tokens right, then
    wrong ones. The real target then accepts long chains and tree paths, so the feature and cache bookkeeping
    behind multi-token acceptance is exercised on a real head, which a random head (it accepts nothing) never does."""

    def __init__(self, head, reference: list[int], correct: int):
        super().__init__(head)
        self.reference, self.correct = reference, correct
        self.accepting = 0  # cycles whose drafts were steered (for the tests' own checks)

    def sync(self, state) -> None:
        self.state = state
        super().sync(state)

    def draft_chain(self, k: int, params, generator):
        _, q = super().draft_chain(k, params, generator)  # the head's own chain (keys appended, BD logits kept)
        done = len(self.state.tokens) - self.state.prompt_len
        want = (self.reference[done:done + k] + [0] * k)[:k]
        self.accepting += 1
        return torch.tensor([t if i < self.correct else (t + 1) % self.vocab_size for i, t in enumerate(want)]), q

    def draft_tree(self, spec) -> DraftTree:
        super().draft_tree(spec)  # the head's own tree expansion runs too
        oracle = OracleTreeDrafter(self.reference, self.vocab_size, spec.depth, self.correct)
        oracle.sync(self.state)
        self.accepting += 1
        return oracle.draft_tree(spec)


def fresh_cache_matches(drafter: Eagle3Drafter, state) -> bool:
    """Whether a head's cache, built sync by sync over a request, equals one prefill of the same committed pairs."""
    fresh = Eagle3Drafter(drafter.head)
    fresh.sync(type(state)(tokens=state.tokens, prompt_len=state.prompt_len, feats=state.feats[:drafter.n_real]))
    return drafter.n_real > 0 and torch.allclose(drafter.k[:, :, :drafter.n_real], fresh.k, atol=1e-4, rtol=1e-4)


VOCAB, DRAFT_VOCAB = 128, 48


def make_head(target, seed: int, draft_vocab: int = DRAFT_VOCAB) -> Eagle3Head:
    torch.manual_seed(seed)
    head = Eagle3Head(head_config(target.config, draft_vocab, [1, 2, 3]))
    for p in head.parameters():
        if p.requires_grad:
            torch.nn.init.normal_(p, std=0.3 if p.dim() > 1 else 1.0)
    d2t, t2d = select_draft_vocab(torch.rand(VOCAB), draft_vocab)  # each head its own draft vocabulary
    head.d2t.copy_(d2t)
    head.t2d.copy_(t2d)
    head.embed_tokens.weight.data.copy_(target.get_input_embeddings().weight)
    return head.eval()


def tiny_target() -> LlamaForCausalLM:
    """A 4-layer random Llama over VOCAB tokens (seeded): the target of the head-level tests."""
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
    return LlamaForCausalLM(cfg).eval()


def tiny_real_vocab_target(target_info) -> tuple[LlamaForCausalLM, object]:
    """A 4-layer random Llama (seeded) over the embedded target's vocabulary and special token ids, and its
    TargetInfo (the real tokenizer's folder, the tiny model's shape): the target of plumbing tests that need real
    prompts, the chat template and the stop tokens, not the real target's numerics (seconds instead of minutes)."""
    import dataclasses

    from transformers import AutoConfig

    real = AutoConfig.from_pretrained(target_info.path)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=target_info.vocab_size, hidden_size=64, intermediate_size=128, num_hidden_layers=4,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                      bos_token_id=real.bos_token_id, eos_token_id=real.eos_token_id, pad_token_id=real.pad_token_id)
    info = dataclasses.replace(target_info, name="tiny", slug="tiny", weights_sha256="ab" * 32, num_layers=4,
                               hidden_size=64, max_position_embeddings=512)
    return LlamaForCausalLM(cfg).eval().requires_grad_(False), info


def random_head(model, target_info, seed: int, draft_vocab: int) -> Eagle3Head:
    """A seeded random EAGLE-3 head for the real target (draft vocabulary = the first ids)."""
    torch.manual_seed(seed)
    head = Eagle3Head(head_config(model.config, draft_vocab, default_aux_layers(target_info.num_layers)))
    d2t, t2d = select_draft_vocab(torch.arange(target_info.vocab_size, 0, -1).float(), draft_vocab)
    head.d2t.copy_(d2t)
    head.t2d.copy_(t2d)
    head.embed_tokens.weight.data.copy_(model.get_input_embeddings().weight)
    return head.eval()


def cut_step_pool(root, target, target_info, layers: int = 2):
    """A pool folder holding one Llama step drafter, `math-llama68m`, cut from the real target's first layers
    (untrained: most of its steps get rejected, which is what the lookahead tests need)."""
    from draftpool.models.llama import from_target_layers, write_llama
    from draftpool.pool import update_pool_manifest

    model, tok = target
    meta = {"kind": "llama", "target_weights_sha256": target_info.weights_sha256}
    write_llama(from_target_layers(model, layers), tok, root / "math-llama68m", meta)
    update_pool_manifest(root, target_info, "math-llama68m", {"kind": "llama", "path": "math-llama68m",
                                                               "domain": "math"})
    return root


def head_and_suffix_pool(root, target, target_info, ngram: bool = False):
    """A pool at `root`: a random SQL head (`sql-eagle3`) and a tiny suffix member (`sql-suffix`), plus a
    prompt-lookup member (`any-ngram`) with `ngram`: model-free members beside a head, for serving tests."""
    from draftpool.models.eagle3 import write_eagle3
    from draftpool.models.suffix import NGRAM, SUFFIX, NgramModel, build_suffix
    from draftpool.pool import update_pool_manifest

    model, _ = target
    meta = {"kind": "eagle3", "target_weights_sha256": target_info.weights_sha256}
    write_eagle3(random_head(model, target_info, 0, 1024), root / "sql-eagle3", target_info, meta)
    SUFFIX.write(build_suffix([[1, 2, 3, 4]], target_info.vocab_size), root / "sql-suffix", target_info,
                 {**meta, "kind": "suffix"})
    members = [("sql-eagle3", "eagle3"), ("sql-suffix", "suffix")]
    if ngram:
        NGRAM.write(NgramModel(target_info.vocab_size), root / "any-ngram", target_info, {**meta, "kind": "ngram"})
        members.append(("any-ngram", "ngram"))
    for name, kind in members:
        update_pool_manifest(root, target_info, name, {"kind": kind, "path": name})
    return root
