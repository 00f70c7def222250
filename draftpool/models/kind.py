"""A drafter kind as one object: everything the rest of draftpool asks of a kind of drafter.

Training, evaluation, online updates, selection, the benchmarks and the pool format never test a kind's name; they
call its `DrafterKind` (`draftpool.models.get_kind(name)`): how a drafter folder is read and written, which target
features it reads, its per-step predictions over a whole sequence with their alignment (`Steps`), from which every
loss and every acceptance statistic is computed, and what it can do (`Capabilities`). The parts of a kind that live
in higher layers are named by dotted path and resolved on first use (`draftpool.models.part`): its decode-time
drafter (`decoder`, under specsel.decoding) and its training setup (`trainer`, under training), so that this layer
imports neither.

Alignment, the one rule every consumer uses: row t of draft step j predicts token x_{t+offset+j}; the target's
distribution that chose that token is its row t+offset-1+j (row u-1 of a causal LM predicts token u).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from torch.func import functional_call


def shift_left(x: torch.Tensor, n: int, fill: float | int | bool = 0) -> torch.Tensor:
    """x [B,T,...] -> y with y[:, t] = x[:, t+n] and `fill` past the end (always T wide, also when n > T)."""
    pad = [0, 0] * (x.dim() - 2) + [0, min(n, x.shape[1])]
    return F.pad(x[:, n:], pad, value=fill)


def call(model: torch.nn.Module, params: dict[str, torch.Tensor] | None, *args, **kwargs):
    """model(*args, **kwargs), with `params` (e.g. an online updater's copy of the weights) in place of its own."""
    if params is None:
        return model(*args, **kwargs)
    return functional_call(model, params, args, kwargs, strict=False)


def aux_features(hidden_states, layers: list[int]) -> torch.Tensor:
    """HF `output_hidden_states` (per layer [..., T, H]) -> [..., T, len(layers) * H]: the target features an
    EAGLE-3 head reads, concatenated in its layer order (the only place they are put together)."""
    return torch.cat([hidden_states[i] for i in layers], dim=-1)


@dataclass
class Steps:
    """A drafter's predictions over whole sequences, per draft step.

    logits[f]: [B,T,Vs] rows of forward f (or, made with a loss mask, only the rows whose predicted token is a
    response token, [N_f,Vs] row-major); a deterministic (model-free) drafter gives int64 [B,T] drafted target ids
    instead (-1: no draft), its one-hot distributions. A kind whose drafts at every depth come from one next-token
    forward (`shared`) has one entry: step j's row t is that forward's row t+j (its depth-j draft, teacher-forced, is
    its next-token prediction there). columns [Vs]: the target id of each logit column (None: the target
    vocabulary)."""

    logits: list[torch.Tensor]
    offset: int
    columns: torch.Tensor | None = None
    shared: bool = False

    def predicts(self, j: int) -> int:
        """Row t of step j predicts token x_{t + predicts(j)}."""
        return self.offset + j

    def mask(self, loss_mask: torch.Tensor, j: int) -> torch.Tensor:
        """loss_mask [B,T] (1 on response tokens) -> [B,T] bool: rows of step j whose predicted token counts."""
        return shift_left(loss_mask, self.predicts(j)).bool()

    def teacher(self, target_rows: torch.Tensor, j: int) -> torch.Tensor:
        """target_rows [B,T,...] (row u-1 chose token u) -> [B,T,...] aligned with step j's rows."""
        return shift_left(target_rows, self.predicts(j) - 1)

    def per_step(self, stat, depth: int, fill: float | int | bool = 0) -> list[torch.Tensor]:
        """stat(logits [B,T,Vs], f) -> [B,T,...] computed against `teacher(., f)` -> that statistic for steps
        0..depth-1 (a shared forward's computed once and read j rows later)."""
        if self.shared:
            first = stat(self.logits[0], 0)
            return [shift_left(first, j, fill) for j in range(depth)]
        return [stat(lg, j) for j, lg in enumerate(self.logits[:depth])]

    def target_ids(self, index: torch.Tensor) -> torch.Tensor:
        """Logit columns -> target token ids."""
        return index if self.columns is None else self.columns[index]

    def top_ids(self, pred: torch.Tensor, r: int) -> torch.Tensor:
        """One entry of `logits` -> [B,T,r'] target ids of its r best columns (r' <= r; a deterministic drafter's
        int64 [B,T] drafts: [B,T,1], -1 where it drafts nothing)."""
        if not pred.is_floating_point():
            return pred[..., None]
        return self.target_ids(pred.topk(min(r, pred.shape[-1]), -1).indices)

    def acceptance(self, pred: torch.Tensor, target_logits: torch.Tensor, target_lse: torch.Tensor) -> torch.Tensor:
        """1 - TV(p, q) = sum_v min(p_v, q_v) per row -> [B,T]. pred: an entry of `logits`; target_logits [B,T,V] and
        target_lse [B,T] aligned with it (`teacher`). A deterministic draft's q is one-hot: p(draft), 0 for none."""
        if not pred.is_floating_point():
            p = (target_logits.float().gather(-1, pred.clamp_min(0)[..., None])[..., 0] - target_lse.float()).exp()
            return torch.where(pred >= 0, p, torch.zeros_like(p))
        p_on_cols = (self.on_columns(target_logits).float() - target_lse.float().unsqueeze(-1)).exp()  # [B,T,Vs]
        return torch.minimum(p_on_cols, F.softmax(pred.float(), dim=-1)).sum(-1)

    def on_columns(self, target_rows: torch.Tensor) -> torch.Tensor:
        """[..., V] target logits -> [..., Vs] at this drafter's columns."""
        return target_rows if self.columns is None else target_rows.index_select(-1, self.columns)


@dataclass(frozen=True)
class Capabilities:
    """What a kind of drafter can do: the one place the rest of draftpool asks instead of testing a kind's name."""

    trained: bool  # learns by gradient steps (offline, and online in the trainer process); else it learns by
    # indexing answers, in the serving process (a model-free drafter)
    tree: bool  # drafts EAGLE-2 style trees (mode 'tree', auto's trees); else chains only
    self_limiting: bool  # drafts its own length (<= k) from its confidence: auto gives it the whole k
    step_drafter: bool  # can be lookahead reasoning's step drafter (an independent causal LM over whole steps)
    stackable: bool  # the selection layer's head bank stacks same-shape members into one batched prefill
    vllm: bool  # vLLM serves its folder as a speculator (online/vllm/adapt.py)


class DrafterKind:
    """One kind of drafter, declared in one object. Subclasses set the class attributes and implement every method.

    `decoder` and `trainer` are "module:attribute" paths into the layers above (resolved by
    `draftpool.models.part`): the decode-time drafter class (called with the loaded model) and the training setup
    (a `training.kinds.KindTraining`), or "" for a kind that is not trained offline."""

    name: ClassVar[str]  # the pool manifest's "kind"
    label: ClassVar[str]  # what it is, in words (reports, tables)
    folder: ClassVar[str]  # its pool folders' and recipes' stem: <domain>-<folder>, recipes/<domain>/<folder>.yaml
    architecture: ClassVar[str]  # what its config.json "architectures" names
    offset: ClassVar[int]  # Steps.offset of its predictions
    bound_to_weights: ClassVar[bool]  # reads the target's hidden states: a folder must name the target's weights
    capabilities: ClassVar[Capabilities]
    decoder: ClassVar[str]  # e.g. "specsel.decoding.eagle3:Eagle3Drafter"
    trainer: ClassVar[str] = ""  # e.g. "training.kinds.eagle3:TRAINING"; "" when train_drafter.py cannot make one
    vllm_method: ClassVar[str] = ""  # vLLM's speculative_config "method" for its folder ("" unless capabilities.vllm)

    @property
    def trained(self) -> bool:
        """Learns by gradient steps (`capabilities.trained`)."""
        return self.capabilities.trained

    def load(self, path: str | Path, target, target_model) -> torch.nn.Module:
        """A drafter folder, checked against the target (DrafterLoadError naming what is wrong)."""
        raise NotImplementedError

    def write(self, model: torch.nn.Module, out: Path, target, meta: dict[str, Any], *, source: Path | None = None,
              tokenizer=None, **options: Any) -> None:
        """Write a drafter folder atomically; tokenizer (or `source`, a folder to take it from) where the kind
        ships one. `options`: the kind's own export options, documented by its `write` (a kind refuses any it does
        not take: TypeError)."""
        raise NotImplementedError

    def aux_layers(self, model: torch.nn.Module) -> list[int] | None:
        """The target features it reads (HF hidden_states ids), None for none."""
        return None

    def features(self, model: torch.nn.Module, hidden_states) -> torch.Tensor | None:
        """The target's per-layer hidden states -> what `steps` reads as `feats` (None if it reads none)."""
        layers = self.aux_layers(model)
        return None if layers is None else aux_features(hidden_states, layers)

    def steps(self, model: torch.nn.Module, feats: torch.Tensor | None, input_ids: torch.Tensor,
              attention_mask: torch.Tensor, depth: int, loss_mask: torch.Tensor | None = None,
              params: dict[str, torch.Tensor] | None = None) -> Steps:
        """Teacher-forced predictions of `depth` draft steps over input_ids [B,T] (feats [B,T,F] from `features`);
        with loss_mask [B,T] only the rows that predict response tokens; with `params` under those weights."""
        raise NotImplementedError

    def free_running(self, model: torch.nn.Module, feats: torch.Tensor | None, input_ids: torch.Tensor,
                     depth: int) -> Steps | None:
        """Its greedy chains from every position in one pass (each step reads its own previous draft, as at decode
        time), or None when a chain needs a pass per start (an independent causal LM)."""
        return None

    def vocab_buffers(self, model: torch.nn.Module) -> dict[str, torch.Tensor]:
        """The buffers that hold an adaptable draft vocabulary (versioned with the weights), {} for none."""
        return {}

    def vocab_size(self, model: torch.nn.Module) -> int:
        """The target vocabulary it drafts in."""
        return model.config.vocab_size

    def describe(self, model: torch.nn.Module) -> str:
        """A few words on what this drafter holds, for a log line ('' when nothing beyond its kind is worth it)."""
        return ""
