"""An EAGLE-3 head at decode time: its own KV cache over (target feature, next token) pairs, chain or tree drafts.

Cache layout: the first `n_real` positions hold step-0 pairs (fc(feature at t), token t+1) for committed positions;
drafting appends draft keys after them and the next `sync` drops them. A draft at depth d sits at position
(last real position) + d and attends to every real key plus its own ancestors, the rule the head was trained with.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from draftpool.forward.packed import packed_view
from draftpool.forward.sampling import SamplingParams, probs_from_logits, sample
from draftpool.models.eagle3 import EAGLE3, OFFSET
from specsel.decoding.rows import take_rows, top1_probability
from specsel.decoding.tree import DraftTree, TreeSpec, reindex, select_nodes


class Eagle3Drafter:
    kind = EAGLE3.name
    can_tree = EAGLE3.capabilities.tree
    self_limiting = EAGLE3.capabilities.self_limiting

    def __init__(self, head):
        self.head = head.eval()
        self.net = packed_view(self.head)  # what drafting runs: the same weights, linears prepacked on CPU
        self.aux_layers = list(head.config.eagle_aux_hidden_state_layer_ids)
        self.vocab_size = head.config.vocab_size
        self.draft_vocab_size = head.config.draft_vocab_size
        self.reset()

    track = False  # keep the logits it predicts for every committed position (counterfactual evaluation)
    deterministic = False  # selectors score its next-token predictions (a chain would need its forward passes)

    def reset(self) -> None:
        """Forget the cache; re-read the draft vocabulary (an online version may have swapped it with the weights)."""
        self.draft_ids = self.head.draft_ids  # [Vd] target id of each draft id
        self.k = self.v = None  # [1,nh,L,d]
        self.n_real = 0
        self.pred_rows: dict[int, torch.Tensor] = {}  # position -> [Vd] logits predicting that token (when tracking)
        self.last_hidden: torch.Tensor | None = None  # [1,1,h] pre-norm output at the last real pair
        self.last_logits: torch.Tensor | None = None  # [Vd]
        self.chain_logits: list[torch.Tensor] = []  # [Vd] per step of the last chain

    @property
    def module(self) -> torch.nn.Module:
        return self.head

    def check_target(self, config) -> None:
        """ValueError unless the head was made for a target of this hidden size and depth and its aux layers exist."""
        cfg = self.head.config
        hidden = getattr(cfg, "target_hidden_size", cfg.hidden_size)
        layers = getattr(cfg, "target_num_hidden_layers", config.num_hidden_layers)
        if hidden != config.hidden_size or layers != config.num_hidden_layers or \
                max(self.aux_layers) >= config.num_hidden_layers:
            raise ValueError(f"EAGLE-3 head made for a target with hidden {hidden}, {layers} layers, aux layers "
                             f"{self.aux_layers}; this target has hidden {config.hidden_size} and "
                             f"{config.num_hidden_layers} layers")

    def __len__(self) -> int:
        return 0 if self.k is None else self.k.shape[2]

    def _truncate(self, length: int) -> None:
        if self.k is not None:
            self.k, self.v = self.k[:, :, :length], self.v[:, :, :length]

    def rewind(self, n_real: int) -> None:
        """Forget the pairs from `n_real` on (and any draft keys); the next sync prefills them again."""
        if n_real < self.n_real:
            self.n_real = n_real
        self._truncate(self.n_real)

    def _step(self, hidden: torch.Tensor, tokens: torch.Tensor, positions: torch.Tensor,
              allowed: torch.Tensor | None) -> torch.Tensor:
        """hidden [1,T,h], tokens [1,T], positions [1,T], allowed [T,L+T] bool or None (= all) -> out [1,T,h].

        Appends the T new keys/values to the cache.
        """
        def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            self.k = k if self.k is None else torch.cat([self.k, k], dim=2)
            self.v = v if self.v is None else torch.cat([self.v, v], dim=2)
            return F.scaled_dot_product_attention(q, self.k, self.v, attn_mask=allowed)  # [1,nh,T,d]

        return self.net.step(hidden, tokens, positions, attend)

    @torch.inference_mode()
    def sync(self, state) -> None:
        """Drop draft keys, then add the pairs of every position the target has verified since the last sync."""
        self._truncate(self.n_real)
        start, end = self.n_real, state.feats.shape[0]  # feats [n_feat,3H] for positions 0..n_feat-1
        if end < start:
            raise RuntimeError(f"EAGLE-3 head holds {start} pairs but the state has features for only {end}")
        if end == start:
            return  # nothing new: the drafts are dropped, the last real output stands
        n = end - start
        hidden = self.net.fc(state.feats[start:end].to(self.head.fc.weight.dtype))[None]  # [1,n,h]
        tokens = torch.tensor([state.tokens[start + 1:end + 1]], device=hidden.device)
        positions = torch.arange(start, end, device=hidden.device)[None]
        # rule: new pairs see every earlier real pair and are causal among themselves
        allowed = torch.ones(n, end, dtype=torch.bool, device=hidden.device)
        allowed[:, start:] = torch.ones(n, n, dtype=torch.bool, device=hidden.device).tril()
        out = self._step(hidden, tokens, positions, allowed)
        self.commit(start, end, out, self.net.logits(out if self.track else out[:, -1:])[0].float())

    def commit(self, start: int, end: int, out: torch.Tensor, logits: torch.Tensor) -> None:
        """Record a prefill of pairs start..end-1 (keys already cached): out [1,n,h] pre-norm outputs, logits [n,Vd]
        (all rows when tracking, else the last row only)."""
        self.n_real = end
        self.last_hidden = out[:, -1:]
        self.last_logits = logits[-1]
        if self.track:  # the pair at entry j predicts token j + OFFSET (the kind's alignment)
            self.pred_rows.update(zip(range(start + OFFSET, end + OFFSET), logits))

    def confidence(self) -> float | None:
        """After a sync: its probability of the token it would draft first."""
        return top1_probability(self.last_logits)

    def take_predictions(self, start: int, end: int) -> torch.Tensor:
        """[end-start, Vd] logits this head gave (prefilled with the verified prefix) for positions start..end-1;
        forgets them and everything before."""
        rows, self.pred_rows = take_rows(self.pred_rows, start, end)
        return rows

    def to_target_ids(self, draft_ids: torch.Tensor) -> torch.Tensor:
        return self.draft_ids[draft_ids]

    def full_logits(self, draft_logits: torch.Tensor) -> torch.Tensor:
        """[..., Vd] -> [..., V] with tokens outside the draft vocabulary at -inf (zero draft probability)."""
        full = torch.full((*draft_logits.shape[:-1], self.vocab_size), float("-inf"), device=draft_logits.device)
        full[..., self.draft_ids] = draft_logits.float()
        return full

    @torch.inference_mode()
    def draft_chain(self, k: int, params: SamplingParams, generator: torch.Generator | None
                    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """-> draft [K] target ids and, when sampling, q [K,V] over the target vocabulary."""
        hidden, logits = self.last_hidden, self.last_logits
        drafted, qs = [], []
        self.chain_logits = []  # [Vd] per step: the distributions behind the drafts (MetaSD's BD reward reads them)
        for i in range(k):
            self.chain_logits.append(logits)
            if params.greedy:
                tok = int(self.draft_ids[logits.argmax()])
            else:
                q = probs_from_logits(self.full_logits(logits), params)
                qs.append(q)
                tok = int(sample(q, generator))
            drafted.append(tok)
            if i < k - 1:
                pos = torch.tensor([[self.n_real + i]], device=hidden.device)
                hidden = self._step(hidden, torch.tensor([[tok]], device=hidden.device), pos, None)
                logits = self.net.logits(hidden)[0, 0].float()
        return torch.tensor(drafted), (torch.stack(qs) if qs else None)

    @torch.inference_mode()
    def draft_tree(self, spec: TreeSpec) -> DraftTree:
        """EAGLE-2 dynamic tree: expand the top_k best frontier nodes per depth, keep the `tokens` best overall."""
        dev = self.last_hidden.device
        logp = self.last_logits.log_softmax(-1)
        top = logp.topk(spec.top_k)
        # candidate lists, parents first; scores are cumulative log-probabilities
        tokens = top.indices.tolist()  # draft ids for now
        scores = top.values.tolist()
        parents = [-1] * spec.top_k
        depths = [1] * spec.top_k
        frontier = list(range(spec.top_k))
        front_hidden = self.last_hidden.expand(1, spec.top_k, -1)  # [1,k,h] the hidden each frontier node reads
        cols: dict[int, list[int]] = {-1: []}  # processed candidate -> cache columns of itself and its ancestors
        for d in range(1, spec.depth):
            base = len(self)
            rows: list[int] = []
            seen: list[int] = []
            for r, node in enumerate(frontier):
                # rule: a draft node attends to the real pairs, its processed ancestors and itself
                cols[node] = cols[parents[node]] + [base + r]
                rows += [r] * len(cols[node])
                seen += cols[node]
            allowed = torch.zeros(len(frontier), base + len(frontier), dtype=torch.bool, device=dev)
            allowed[:, :self.n_real] = True
            allowed[torch.tensor(rows, device=dev), torch.tensor(seen, device=dev)] = True
            toks = self.draft_ids[torch.tensor([tokens[n] for n in frontier], device=dev)][None]
            pos = torch.full((1, len(frontier)), self.n_real - 1 + d, device=dev)
            out = self._step(front_hidden, toks, pos, allowed)  # [1,k,h]
            child = self.net.logits(out)[0].float().log_softmax(-1).topk(spec.top_k)  # [k,k]
            cand_scores = torch.tensor([scores[n] for n in frontier], device=dev)[:, None] + child.values  # [k,k]
            first = len(tokens)
            tokens += [t for row in child.indices.tolist() for t in row]
            scores += [x for row in cand_scores.tolist() for x in row]
            parents += [node for node in frontier for _ in range(spec.top_k)]
            depths += [d + 1] * (len(frontier) * spec.top_k)
            # rule: the next frontier is the top_k children by cumulative score
            best = cand_scores.flatten().topk(spec.top_k).indices
            frontier = [first + int(i) for i in best]
            front_hidden = out[:, best // spec.top_k]
        chosen = select_nodes(scores, parents, spec.tokens)
        tree = reindex(chosen, tokens, parents, depths)
        tree.tokens = self.draft_ids[torch.tensor(tree.tokens)].tolist()  # draft ids -> target ids
        return tree

    def learn(self, tokens: list[int]) -> bool:
        return False  # its weights learn in the trainer process (online/trainer/token_trainer.py)
