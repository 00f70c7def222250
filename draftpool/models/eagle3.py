"""The EAGLE-3 draft head: fused target features, one decoder layer on [embedding ; hidden], a reduced vocabulary.

Tensor names follow the flat layout that vLLM and SGLang load (`fc.weight`, `midlayer.*`, `norm.weight`,
`lm_head.weight`, `d2t`, `t2d`). The target's token embedding is copied in and frozen (`embed_tokens`, not exported).

Shapes: B batch, T positions, H target hidden, h head hidden (= H by default), V target vocab, Vd draft vocab.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch import nn
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRMSNorm, LlamaRotaryEmbedding

from draftpool.io import atomic_dir
from draftpool.models import low_rank
from draftpool.models.eagle3_layer import Attend, Eagle3MidLayer, ttt_attend, ttt_rows_attend
from draftpool.models.folder import DrafterLoadError, check_config, is_int, read_json, read_meta
from draftpool.models.kind import Capabilities, DrafterKind, Steps, call, shift_left

if TYPE_CHECKING:
    from draftpool.target import TargetInfo


OFFSET = 2  # row t of TTT step j reads (feature t, token x_{t+1+j}) and predicts x_{t+2+j}


def default_aux_layers(num_layers: int) -> list[int]:
    """HF `output_hidden_states` indices (2, N//2, N-3): the inputs of decoder layers 2, N/2 and N-3."""
    return [2, num_layers // 2, num_layers - 3]


def check_aux_layers(layer_ids: list[int], num_layers: int) -> None:
    # id k = hidden_states[k] = the input of decoder layer k, so k < N (hidden_states[N] is the final-normed output)
    if len(layer_ids) != 3 or any(not 1 <= i < num_layers for i in layer_ids):
        raise ValueError(f"aux layer ids {layer_ids} must be 3 indices in [1, {num_layers - 1}] "
                         f"(HF hidden_states numbering for a {num_layers}-layer target)")


def head_config(target_config, draft_vocab_size: int, aux_layers: list[int]) -> LlamaConfig:
    """A 1-layer Llama config shaped after the target, with the EAGLE-3 extras."""
    t = getattr(target_config, "text_config", target_config)
    cfg = LlamaConfig(
        vocab_size=t.vocab_size, hidden_size=t.hidden_size, intermediate_size=t.intermediate_size,
        num_hidden_layers=1, num_attention_heads=t.num_attention_heads,
        num_key_value_heads=getattr(t, "num_key_value_heads", t.num_attention_heads),
        head_dim=getattr(t, "head_dim", None) or t.hidden_size // t.num_attention_heads,
        max_position_embeddings=t.max_position_embeddings, rms_norm_eps=t.rms_norm_eps,
        rope_parameters=getattr(t, "rope_parameters", None), tie_word_embeddings=False,
        bos_token_id=t.bos_token_id, eos_token_id=t.eos_token_id, pad_token_id=getattr(t, "pad_token_id", None),
    )
    cfg.architectures = ["LlamaForCausalLMEagle3"]
    cfg.draft_vocab_size = draft_vocab_size
    cfg.target_hidden_size = t.hidden_size
    cfg.eagle_aux_hidden_state_layer_ids = list(aux_layers)
    cfg.norm_before_residual = False
    cfg.target_num_hidden_layers = t.num_hidden_layers
    return cfg


def select_draft_vocab(token_counts: torch.Tensor, draft_vocab_size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Most frequent tokens -> (d2t [Vd] int64 offsets, t2d [V] bool); ties broken by token id.

    target_id = draft_id + d2t[draft_id]; draft ids keep the target order, so d2t is non-negative and non-decreasing.
    """
    vocab = token_counts.numel()
    if not 0 < draft_vocab_size <= vocab:
        raise ValueError(f"draft_vocab_size {draft_vocab_size} must be in [1, {vocab}]")
    # a stable descending sort keeps lower ids first among equal counts
    order = torch.sort(token_counts.double(), descending=True, stable=True).indices
    chosen = torch.sort(order[:draft_vocab_size]).values  # [Vd] target ids, ascending
    d2t = chosen - torch.arange(draft_vocab_size)
    t2d = torch.zeros(vocab, dtype=torch.bool)
    t2d[chosen] = True
    return d2t.long(), t2d


class Eagle3Head(nn.Module):
    def __init__(self, cfg: LlamaConfig):
        super().__init__()
        self.config = cfg
        h, vd = cfg.hidden_size, cfg.draft_vocab_size
        self.embed_tokens = nn.Embedding(cfg.vocab_size, h)
        self.embed_tokens.weight.requires_grad_(False)
        self.fc = nn.Linear(3 * cfg.target_hidden_size, h, bias=False)
        self.midlayer = Eagle3MidLayer(cfg)
        self.norm = LlamaRMSNorm(h, eps=cfg.rms_norm_eps)
        self.lm_head = nn.Linear(h, vd, bias=False)
        self.rotary_emb = LlamaRotaryEmbedding(cfg)
        self.register_buffer("d2t", torch.zeros(vd, dtype=torch.long))
        self.register_buffer("t2d", torch.zeros(cfg.vocab_size, dtype=torch.bool))
        self.low_rank: low_rank.LowRank | None = None  # a low-rank specialist's adapters (models/low_rank.py)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        std = self.config.initializer_range
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, std=std)

    @property
    def draft_ids(self) -> torch.Tensor:
        """[Vd] target token id of each draft id."""
        return torch.arange(self.d2t.numel(), device=self.d2t.device) + self.d2t

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """hidden [B,T,h] (pre-norm) -> draft logits [B,T,Vd]."""
        return self.lm_head(self.norm(hidden))

    def step(self, hidden: torch.Tensor, tokens: torch.Tensor, positions: torch.Tensor, attend: Attend
             ) -> torch.Tensor:
        """One pass of the layer: hidden [B,T,h] read at positions [B,T] with next tokens [B,T] -> [B,T,h]."""
        cos, sin = self.rotary_emb(hidden, positions)
        return self.midlayer(hidden, self.embed_tokens(tokens), cos, sin, attend)

    def forward(self, aux: torch.Tensor, input_ids: torch.Tensor, attention_mask: torch.Tensor, steps: int,
                loss_mask: torch.Tensor | None = None, own_tokens: bool = False, all_rows: bool = False
                ) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Training-time test: `steps` unrolled draft steps over a whole sequence at once.

        aux [B,T,3H] target features at positions t; input_ids [B,T] the full sequence; attention_mask [B,T].
        Step j at position t reads token x_{t+1+j} and predicts x_{t+2+j}; its hidden is the previous step's
        pre-norm output. Its query (position t+j) attends to the step-0 keys at positions <= t (causal, non-pad) and to
        the keys of steps 1..j at its own position t (the draft chain).
        Returns per step the pre-norm hidden [B,T,h] and the draft logits [B,T,Vd]; with `loss_mask` [B,T] (1 on
        response tokens) the logits of step j only at the positions whose target x_{t+2+j} is a response token
        ([N_j,Vd], row-major order), which skips the lm_head where no loss is taken.
        With `own_tokens` steps 1.. read the head's own greedy draft of the previous step instead of the true token:
        the chain it would draft at decode time from every position at once (replay of off-path drafts).
        With `loss_mask`, steps 1.. run only at the rows some step >= 1 takes a loss at (a row's later steps read
        only its own earlier steps and step 0's keys), and the hidden states returned for them are those rows'
        [1,N,h]: on prompt-heavy batches that skips most of the layer's work, with the same logits (`all_rows`: every
        row at every step, as before 2026-11-27; kept to measure the difference, benchmarks/train_step.py).
        """
        b, t = input_ids.shape
        hidden = self.fc(aux)  # [B,T,h]
        pos = torch.arange(t, device=input_ids.device).unsqueeze(0).expand(b, t)
        causal = torch.ones(t, t, dtype=torch.bool, device=input_ids.device).tril()
        allowed0 = causal[None, None] & attention_mask.bool()[:, None, None, :]  # [B,1,T,T]
        keys: list[torch.Tensor] = []
        values: list[torch.Tensor] = []
        if loss_mask is not None:
            # rule: shifts stay T wide when T < 2 + j (a short request: those steps give no loss)
            masks = [shift_left(loss_mask, OFFSET + j).bool() for j in range(steps)]  # [B,T] rows of step j's loss
            live = torch.stack(masks[1:]).any(0) if steps > 1 else masks[0] & False  # [B,T]
            rb, rt = live.nonzero(as_tuple=True)  # [N] row-major, so each step's rows keep the full path's order
        rows = None  # from step 1 with a loss mask: (rb, rt)

        def at(x: torch.Tensor) -> torch.Tensor:  # [B,T,...] -> the rows this step runs at
            return x if rows is None else x[rows][None]

        attend = ttt_attend(keys, values, allowed0)
        outs = []
        for j in range(steps):
            if j == 1 and loss_mask is not None and not all_rows:
                hidden, rows = hidden[rb, rt][None], (rb, rt)  # [1,N,h]
                if not len(rb):  # no later step takes a loss (short sequences): empty rows
                    outs += [hidden] * (steps - 1)
                    break
                attend = ttt_rows_attend(keys[0], values[0], allowed0, rb, rt)
            if own_tokens and j > 0:
                tokens = self.draft_ids[self.logits(hidden).argmax(-1)]  # the previous step's greedy draft
            else:
                tokens = at(shift_left(input_ids, OFFSET - 1 + j))  # x_{t+1+j}, 0 past the end
            hidden = self.step(hidden, tokens, at(pos + j), attend)
            outs.append(hidden)
        if loss_mask is None:
            return outs, [self.logits(o) for o in outs]
        # step 0 over [B,T], later steps over their [1,N] rows
        picks = masks if all_rows else [masks[0]] + [m[rb, rt][None] for m in masks[1:]]
        return outs, [self.logits(o[m]) for o, m in zip(outs, picks)]

    def export_state_dict(self) -> dict[str, torch.Tensor]:
        """The flat-layout tensors (no `model.` prefix, no embedding: the target's is shared)."""
        return {k: v.detach().contiguous() for k, v in self.state_dict().items()
                if not k.startswith(("embed_tokens.", "rotary_emb."))}


# --- the drafter folder: the flat layout vLLM and SGLang load, optionally the speculators one ---------------------
EAGLE3_ARCH = "LlamaForCausalLMEagle3"


def eagle3_config_dict(head: Eagle3Head) -> dict[str, Any]:
    cfg = head.config.to_dict()
    cfg["architectures"] = [EAGLE3_ARCH]
    cfg["tie_word_embeddings"] = False
    cfg["num_hidden_layers"] = 1
    for k in ("_name_or_path", "transformers_version", "dtype", "torch_dtype"):
        cfg.pop(k, None)
    cfg["torch_dtype"] = "float32"
    return cfg


def speculators_config_dict(head: Eagle3Head, target: TargetInfo, k: int) -> dict[str, Any]:
    layer = eagle3_config_dict(head)
    for key in ("draft_vocab_size", "target_hidden_size", "eagle_aux_hidden_state_layer_ids",
                "norm_before_residual", "target_num_hidden_layers", "architectures"):
        layer.pop(key, None)
    layer["architectures"] = ["LlamaForCausalLM"]
    return {
        "architectures": ["Eagle3Speculator"], "speculators_model_type": "eagle3",
        "speculators_version": "0.9.0", "transformer_layer_config": layer,
        "draft_vocab_size": head.config.draft_vocab_size, "norm_before_residual": False,
        "norm_before_fc": False, "fc_norm": False, "norm_output": False,
        "target_hidden_size": head.config.target_hidden_size,
        "eagle_aux_hidden_state_layer_ids": list(head.config.eagle_aux_hidden_state_layer_ids),
        "embed_requires_grad": False,
        "speculators_config": {
            "algorithm": "eagle3", "default_proposal_method": "greedy",
            "proposal_methods": [{"proposal_type": "greedy", "speculative_tokens": k}],
            "verifier": {"name_or_path": target.path, "architectures": ["LlamaForCausalLM"]},
        },
    }

def write_eagle3(head: Eagle3Head, out: Path, target: TargetInfo, meta: dict[str, Any],
                 speculators: bool = False, k: int = 5) -> None:
    """Write one head folder atomically (replacing a previous one only once the new one is complete); a low-rank
    specialist's adapters (`head.low_rank`) go beside its merged weights."""
    tensors = {k_: v.float().cpu() for k_, v in head.export_state_dict().items()}
    with atomic_dir(out) as tmp:
        if head.low_rank is not None:
            meta = {**meta, "adapter": low_rank.save(head.low_rank, tmp)}
        (tmp / "config.json").write_text(json.dumps(eagle3_config_dict(head), indent=2) + "\n")
        save_file(tensors, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        if speculators:
            (tmp / "speculators").mkdir()
            spec = {("layers.0." + k_[len("midlayer."):] if k_.startswith("midlayer.") else k_): v
                    for k_, v in tensors.items()}
            (tmp / "speculators" / "config.json").write_text(
                json.dumps(speculators_config_dict(head, target, k), indent=2) + "\n")
            save_file(spec, str(tmp / "speculators" / "model.safetensors"), metadata={"format": "pt"})
        (tmp / "draftpool.json").write_text(json.dumps(meta, indent=2) + "\n")

def load_eagle3(path: str | Path, target: TargetInfo, target_embedding: torch.Tensor) -> Eagle3Head:
    """Load and check an exported head: architecture, sizes against the target, every tensor name and shape."""
    path = Path(path)
    meta = read_meta(path, "eagle3", target, bound_to_weights=True)
    raw = read_json(path / "config.json")
    arch = raw.get("architectures")
    if not isinstance(arch, list) or EAGLE3_ARCH not in arch:
        raise DrafterLoadError(f"{path}: config architectures {arch} are not [{EAGLE3_ARCH!r}]")
    check_config(raw, path, ("hidden_size", "vocab_size", "draft_vocab_size", "intermediate_size",
                             "num_attention_heads"), ("num_key_value_heads", "target_hidden_size",
                                                      "target_num_hidden_layers", "head_dim"))
    layers = raw.get("eagle_aux_hidden_state_layer_ids")
    if layers is not None and (not isinstance(layers, list) or not all(is_int(x) and x >= 0 for x in layers)):
        raise DrafterLoadError(f"{path}/config.json: 'eagle_aux_hidden_state_layer_ids' must be a list of target "
                               f"layer indices (integers >= 0), got {layers!r}")
    t_hidden = raw.get("target_hidden_size", raw["hidden_size"])
    if t_hidden != target.hidden_size or raw["vocab_size"] != target.vocab_size:
        raise DrafterLoadError(
            f"{path}: head made for a target with hidden {t_hidden} and vocab {raw['vocab_size']}, "
            f"but {target.name} has hidden {target.hidden_size} and vocab {target.vocab_size}")
    layers = raw.get("eagle_aux_hidden_state_layer_ids") or default_aux_layers(target.num_layers)
    n_layers = raw.get("target_num_hidden_layers", target.num_layers)
    if max(layers) >= target.num_layers or n_layers != target.num_layers:
        raise DrafterLoadError(f"{path}: aux layers {layers} made for a {n_layers}-layer target, "
                               f"{target.name} has {target.num_layers}")
    try:  # what the checks above do not cover (e.g. heads that do not divide the width) fails here
        cfg = LlamaConfig(**{k: v for k, v in raw.items() if k != "architectures"})
        cfg.eagle_aux_hidden_state_layer_ids = layers
        cfg.target_hidden_size = raw.get("target_hidden_size", raw["hidden_size"])
        head = Eagle3Head(cfg)
    except Exception as e:  # noqa: BLE001 - transformers' config validators raise their own classes
        raise DrafterLoadError(f"{path}/config.json does not describe an EAGLE-3 head: {type(e).__name__}: {e}") \
            from None
    try:
        tensors = load_file(str(path / "model.safetensors"))
    except (SafetensorError, OSError, ValueError) as e:
        raise DrafterLoadError(f"{path}/model.safetensors is missing or corrupt: {e}") from None
    expected = {k: v.shape for k, v in head.export_state_dict().items()}
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected) - {"embed_tokens.weight"})
    wrong = sorted(k for k in expected if k in tensors and tensors[k].shape != expected[k])
    if missing or unexpected or wrong:
        raise DrafterLoadError(f"{path}: tensors do not match an EAGLE-3 head (missing {missing}, unexpected "
                               f"{unexpected}, wrong shape {wrong})")
    tensors.setdefault("embed_tokens.weight", target_embedding.detach().float().cpu())
    head.load_state_dict(tensors, strict=False)
    if "adapter" in meta:
        head.low_rank = low_rank.load(path, meta["adapter"], head)
    return head


class Eagle3Kind(DrafterKind):
    """EAGLE-3 heads: read the target's aux features, draft on a reduced vocabulary (`d2t` / `t2d`, adaptable)."""

    name = "eagle3"
    label = "EAGLE-3 head"
    folder = "eagle3"
    architecture = EAGLE3_ARCH
    offset = OFFSET
    bound_to_weights = True
    capabilities = Capabilities(trained=True, tree=True, self_limiting=False, step_drafter=False, stackable=True,
                                vllm=True)
    decoder = "specsel.decoding.eagle3:Eagle3Drafter"
    trainer = "training.kinds.eagle3:TRAINING"
    vllm_method = "eagle3"  # vLLM's EAGLE-3 proposer reads the flat layout `write` makes

    def load(self, path: str | Path, target: TargetInfo, target_model) -> Eagle3Head:
        return load_eagle3(path, target, target_model.get_input_embeddings().weight).eval()

    def write(self, model: Eagle3Head, out: Path, target: TargetInfo, meta: dict[str, Any], *,
              source: Path | None = None, tokenizer=None, speculators: bool = False,
              speculative_tokens: int = 5) -> None:
        """The flat layout vLLM and SGLang load; options: `speculators` also writes the speculators layout
        (`speculators/` inside the folder), recording `speculative_tokens` as its speculative token count."""
        write_eagle3(model, out, target, meta, speculators, speculative_tokens)

    def aux_layers(self, model: Eagle3Head) -> list[int]:
        return list(model.config.eagle_aux_hidden_state_layer_ids)

    def steps(self, model: Eagle3Head, feats: torch.Tensor, input_ids: torch.Tensor, attention_mask: torch.Tensor,
              depth: int, loss_mask: torch.Tensor | None = None,
              params: dict[str, torch.Tensor] | None = None) -> Steps:
        _, logits = call(model, params, feats, input_ids, attention_mask, depth, loss_mask=loss_mask)
        return Steps(logits, OFFSET, _columns(model, params))

    def free_running(self, model: Eagle3Head, feats: torch.Tensor, input_ids: torch.Tensor, depth: int) -> Steps:
        _, logits = model(feats, input_ids, torch.ones_like(input_ids), depth, own_tokens=True)
        return Steps(logits, OFFSET, model.draft_ids)

    def vocab_buffers(self, model: Eagle3Head) -> dict[str, torch.Tensor]:
        return {"d2t": model.d2t.detach(), "t2d": model.t2d.detach()}


def _columns(model: Eagle3Head, params: dict[str, torch.Tensor] | None) -> torch.Tensor:
    """[Vd] target id of each draft id, under a version's own vocabulary when `params` carry one."""
    d2t = model.d2t if params is None else params.get("d2t", model.d2t)
    return torch.arange(d2t.numel(), device=d2t.device) + d2t


EAGLE3 = Eagle3Kind()
