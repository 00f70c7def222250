"""The target side of speculative decoding: one KV cache, one forward per verification, aux features captured.

The body runs once over all verified positions; the vocabulary projection is applied only to the rows a rule asks
for (greedy verification walks the accepted path), which on a CPU saves most of the lm_head work of a large tree.
That lazy projection is used only when it gives the model's own logits: checked once per model on a short probe
(any post-processing after the lm_head, such as soft-capping or Granite's `logits_scaling`, sends the model down the
full-forward path).

Rollback goes through the transformers Cache API (`Cache.crop` with past recording on, so sliding-window layers keep
their own length counters right). A tree's accepted path is packed with an index select on the keys, which only
plain full-attention layers (`DynamicLayer`) allow; other layer types are refused for tree verification.
"""

from __future__ import annotations

import weakref

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

from draftpool.forward import lean as lean_forward
from draftpool.forward import lean_probe
from draftpool.models.kind import aux_features
from draftpool.target import cache_kw

BACKENDS = ("auto", "lean", "hf")





class CacheError(ValueError):
    """A target whose KV cache cannot be rolled back as speculative decoding needs."""


class TargetPass:
    """The result of one target forward: logits per row on demand, the target's argmax per row memoized."""

    def __init__(self, runner: TargetRunner, hidden: torch.Tensor | None, logits: torch.Tensor | None,
                 feats: torch.Tensor | None):
        self.runner, self.hidden, self.full, self.feats = runner, hidden, logits, feats  # hidden [T,H] final-normed
        self._choice: dict[int, int] = {}
        self._rows: dict[int, torch.Tensor] = {}  # single rows already projected (verification walks them)

    @torch.inference_mode()
    def logits(self, rows) -> torch.Tensor:
        """rows: an int, slice or list of row indices -> [V] or [n,V] float logits."""
        if self.full is not None:
            return self.full[rows].float()
        if isinstance(rows, int):
            rows %= self.hidden.shape[0]
            if rows not in self._rows:
                self.project([rows])
            return self._rows[rows]
        return self._project(self.hidden[rows])

    def _project(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden [n,H] -> [n,V] float; one row is projected as two identical rows (same kernel as a batch)."""
        if hidden.shape[0] == 1 and self.runner.lean is not None and self.runner.lean.pad_single:
            return self.runner.lm_head(hidden.expand(2, -1))[:1].float()
        return self.runner.lm_head(hidden).float()

    @torch.inference_mode()
    def project(self, rows: list[int]) -> None:
        """Project the given rows in one matmul (one read of the lm_head weights instead of one per row) and keep
        them for `logits` / `choice`."""
        rows = [r % self.hidden.shape[0] for r in rows if r % self.hidden.shape[0] not in self._rows] \
            if self.full is None else []
        if rows:
            for r, row in zip(rows, self._project(self.hidden[rows])):
                self._rows[r] = row

    def logits_of(self, rows: list[int]) -> torch.Tensor:
        """[n,V] logits of the given rows, projecting only those not already projected."""
        return torch.stack([self.logits(r) for r in rows])

    def choice(self, row: int) -> int:
        if row not in self._choice:
            self._choice[row] = int(self.logits(row).argmax())
        return self._choice[row]


@torch.inference_mode()
def lazy_head_matches(model) -> bool:
    """Whether decoder body + output embedding reproduce the model's logits (no post-processing after the lm_head),
    tested on a 4-token probe."""
    if not (hasattr(model, "get_decoder") and hasattr(model, "get_output_embeddings")):
        return False
    head = model.get_output_embeddings()
    if head is None:
        return False
    device = next(model.parameters()).device
    ids = torch.arange(4, device=device)[None] % model.config.get_text_config().vocab_size
    full = model(input_ids=ids).logits.float()
    lazy = head(model.get_decoder()(input_ids=ids).last_hidden_state).float()
    return full.shape == lazy.shape and torch.allclose(full, lazy, rtol=1e-3, atol=1e-3)


class TargetRunner:
    """Wraps a transformers causal LM. `aux_layers` (HF hidden_states ids) selects the EAGLE-3 features to return.

    backend: "lean" runs `draftpool.forward.lean` (Llama-family targets it reproduces, an error otherwise), "hf" the
    transformers forward with its Cache API, "auto" the lean forward where it applies, else transformers.
    compile: torch.compile the forward (the lean forward's per-layer blocks, or the whole transformers forward).
    """

    _lazy_ok: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> lazy_head_matches, probed once
    _lean_ok: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # model -> {compile: (why lean declined,
    # invariant, pad rows)}, probed once

    def __init__(self, model, aux_layers: list[int] | None = None, backend: str = "auto", compile: bool = False):
        if backend not in BACKENDS:
            raise CacheError(f"target backend {backend!r}: choose from {', '.join(BACKENDS)}")
        self.model = model.eval()
        self.config = model.config.get_text_config()
        self.aux_layers = list(aux_layers) if aux_layers else None
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        self.cache = None
        self.rollback = True  # keep what a rollback needs after the prefill (off for plain decoding)
        self.lean, self.lean_declined = None, None
        self.compiled = compile
        if backend != "hf":
            probed = self._lean_ok.setdefault(model, {})
            if compile not in probed:
                probed[compile] = lean_probe.probe(model, compile=compile)  # memoised by the model's fingerprint
            self.lean_declined, invariant, pad_rows = probed[compile]
            if self.lean_declined is None:
                self.lean = lean_forward.LeanForward(model, compile=compile)
                self.lean.batch_invariant, self.lean.pad_rows = invariant, pad_rows
            if self.lean is None and backend == "lean":
                raise CacheError(f"the lean forward cannot run this target: {self.lean_declined}")
        self.backend = "lean" if self.lean is not None else "hf"
        if self.lean is not None:
            self.body, self.lm_head = None, self.lean.lm_head
            return
        if model not in self._lazy_ok:
            self._lazy_ok[model] = lazy_head_matches(model)
        lazy = self._lazy_ok[model]
        self.body = model.get_decoder() if lazy else None
        self.lm_head = model.get_output_embeddings() if lazy else None
        # compile: the transformers forward through torch.compile (dynamic token count; the first pass of each
        # shape class compiles, minutes for a large model on a small CPU)
        self._forward = torch.compile(self.body or model, dynamic=True) if compile else (self.body or model)
        self.check_cache()

    @property
    def forward_id(self) -> str:
        """What the target forward's speed depends on: backend, compiled or not, the lean forward's pad rows."""
        lean = f"/pad{self.lean.pad_rows}" if self.lean is not None and self.lean.pad_single else ""
        return f"{self.backend}{'+compile' if self.compiled else ''}{lean}"

    def check_cache(self, tree: bool = False) -> None:
        """Refuse a target whose cache layers cannot be rolled back (or, for tree verification, packed); the lean
        forward's own cache does both."""
        if self.lean is not None:
            return
        layers = DynamicCache(config=self.model.config).layers
        bad = sorted({type(x).__name__ for x in layers if not getattr(x, "is_croppable", False)})
        if bad:
            raise CacheError(f"the target's KV cache layers ({', '.join(bad)}) cannot be rolled back: speculative "
                             f"decoding needs croppable cache layers")
        if tree:
            bad = sorted({type(x).__name__ for x in layers if type(x) is not DynamicLayer})
            if bad:
                raise CacheError(f"tree verification packs the accepted path inside the KV cache, which the target's "
                                 f"cache layers ({', '.join(bad)}) do not allow: use mode chain")

    @property
    def token_exact(self) -> bool:
        """Whether a verification pass (chain or tree) computes every row as a one-token step does: fp32 / fp64
        (to the last bits), or the lean forward on kernels measured row-invariant (bit for bit, any dtype)."""
        invariant = self.lean is not None and self.lean.batch_invariant
        return invariant or self.dtype in (torch.float32, torch.float64)

    @property
    def vocab_size(self) -> int:
        return self.config.vocab_size

    @property
    def max_positions(self) -> int:
        return self.config.max_position_embeddings

    def reset(self) -> None:
        if self.lean is not None:
            self.lean.reset()
        else:
            self.cache = DynamicCache(config=self.model.config)

    def __len__(self) -> int:
        if self.lean is not None:
            return self.lean.n
        return self.cache.get_seq_length() if self.cache is not None else 0

    def kv(self, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Cached keys and values of one layer, [1, kv_heads, len, head_dim] each."""
        if self.lean is not None:
            return self.lean.kv(layer)
        return self.cache.layers[layer].keys, self.cache.layers[layer].values

    @torch.inference_mode()
    def forward(self, tokens: list[int], positions: list[int] | None = None,
                allowed: torch.Tensor | None = None) -> TargetPass:
        """Append `tokens` to the cache and run them.

        positions default to consecutive after the cache; allowed [T, L+T] bool (True = may attend), default causal.
        """
        if self.lean is not None:
            hidden, feats = self.lean.forward(tokens, positions, allowed, self.aux_layers)
            return TargetPass(self, hidden, None, aux_features(feats, self.aux_layers) if feats else None)  # [T,3H]
        past = len(self)
        ids = torch.tensor([tokens], device=self.device)
        pos = torch.tensor([positions if positions is not None else range(past, past + len(tokens))],
                           device=self.device)
        mask = None
        if allowed is not None:
            # a custom 4D additive mask [1,1,T,L+T]: 0 where allowed, the dtype's minimum elsewhere
            mask = torch.zeros(allowed.shape, dtype=self.dtype, device=self.device)
            mask = mask.masked_fill(~allowed.to(self.device), torch.finfo(self.dtype).min)[None, None]
        kw = dict(input_ids=ids, position_ids=pos, attention_mask=mask, use_cache=True,
                  output_hidden_states=self.aux_layers is not None, **cache_kw(self.body or self.model, self.cache))
        out = self._forward(**kw)
        if self.body is not None:
            hidden, logits = out.last_hidden_state[0], None
        else:
            hidden, logits = None, out.logits[0]
        if past == 0 and self.rollback:
            # rule: from the prefill on, keep what a rollback needs (sliding-window layers would drop it)
            self.cache.activate_past_recording()
        feats = None
        if self.aux_layers is not None:
            feats = aux_features(out.hidden_states, self.aux_layers)[0]  # [T,3H]
        return TargetPass(self, hidden, logits, feats)

    def truncate(self, length: int) -> None:
        """Roll the cache back to its first `length` positions (Cache API; sliding-window layers trim themselves)."""
        if self.lean is not None:
            return self.lean.truncate(length)
        self.cache.crop(length - len(self))

    def keep(self, start: int, keep: list[int]) -> None:
        """Keep positions [0, start) plus `start + keep` (ascending) packed right after them (the accepted tree path).
        Index surgery on the keys: the Cache API has no such operation; `check_cache(tree=True)` admits only plain
        full-attention layers."""
        if self.lean is not None:
            return self.lean.keep(start, keep)
        idx = torch.tensor(keep, dtype=torch.long, device=self.device) + start
        for layer in self.cache.layers:
            if layer.keys is not None and layer.keys.numel():
                layer.keys = torch.cat([layer.keys[..., :start, :], layer.keys.index_select(-2, idx)], dim=-2)
                layer.values = torch.cat([layer.values[..., :start, :], layer.values.index_select(-2, idx)], dim=-2)
