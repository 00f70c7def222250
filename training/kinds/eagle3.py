"""The EAGLE-3 kind's training: its options (`eagle3.*`), the head it starts from, its training-time-test loss, and
its export options (the speculators layout)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

import torch

from draftpool.config import ConfigError, field
from draftpool.models import low_rank
from draftpool.models.eagle3 import (
    EAGLE3,
    Eagle3Head,
    check_aux_layers,
    default_aux_layers,
    head_config,
    load_eagle3,
    select_draft_vocab,
)
from draftpool.models.kind import Steps
from draftpool.target import TargetInfo, dtype_name
from training.data import response_token_counts
from training.evaluate import param_dtype, target_forward
from training.kinds import KindTraining, SetupContext
from training.sections import ExportConfig
from training.target_cache import build_cache, cached_features
from training.target_cache import cache_dir as target_cache_dir
from training.ttt import ttt_loss


@dataclass
class Eagle3Options:
    aux_layers: list[int] = field(default_factory=list, help="HF hidden_states indices ([] = 2, N//2, N-3)")
    draft_vocab_size: int = field(0, help="reduced draft vocabulary (0 = min(32000, target vocab // 4))")
    ttt_steps: int = field(7, help="unrolled training-time-test steps")
    step_weight: float = field(0.8, help="loss weight of TTT step j is step_weight**j")
    accept_weight: float = field(0.0, help="add this weight times -log(1 - TV(target, head)) to each TTT step's "
                                           "cross-entropy: a loss on the acceptance probability itself (0 = off)")
    target_cache: bool = field(False, help="compute the target's features once into run_dir/target_cache instead "
                                           "of a target forward per batch (final hidden state -> lm_head)")
    init_from_target: bool = field(False, help="start the head's lm_head from the target's output-embedding rows of "
                                               "the draft vocabulary and its final norm from the target's")
    freeze_lm_head: bool = field(False, help="keep the lm_head fixed (with init_from_target: the target's rows)")
    init_from: str = field("", help="an exported EAGLE-3 head of the same target to start from (e.g. the pool's "
                                    "general head): its layers and norms, and its lm_head rows for the tokens both "
                                    "draft vocabularies hold; the draft vocabulary is still chosen from this data")
    finetune: Literal["full", "lora"] = field("full", help="train every weight, or LoRA adapters over the "
                                                          "eagle3.init_from head (its weights kept: a low-rank "
                                                          "specialist, draftpool/models/low_rank.py)")
    lora_vocab: Literal["own", "base"] = field("own", help="finetune lora: a draft vocabulary chosen from this data "
                                                           "with its own lm_head, trained whole (own), or the base's "
                                                           "vocabulary and lm_head, adapted (base)")
    lora_r: int = field(16, help="LoRA rank (finetune lora)")
    lora_alpha: int = field(32, help="LoRA alpha (finetune lora): the adapters' scale is alpha / r")

    def validate(self) -> None:
        for key, value, low in (("eagle3.ttt_steps", self.ttt_steps, 1),
                                ("eagle3.draft_vocab_size", self.draft_vocab_size, 0)):
            if value < low:
                raise ConfigError(f"{key} must be >= {low}, got {value}")
        if self.finetune == "lora" and not self.init_from:
            raise ConfigError("eagle3.finetune=lora trains adapters over a head: set eagle3.init_from to it")
        if self.lora_r < 1 or self.lora_alpha < 1:
            raise ConfigError(f"eagle3.lora_r and eagle3.lora_alpha must be >= 1, got {self.lora_r}, "
                              f"{self.lora_alpha}")
        if not self.step_weight > 0 or self.accept_weight < 0:
            raise ConfigError(f"eagle3.step_weight must be > 0 and eagle3.accept_weight >= 0, got "
                              f"{self.step_weight}, {self.accept_weight}")


def make_eagle3(options: Eagle3Options, target, info: TargetInfo, train_rows: list[dict], seed: int) -> Eagle3Head:
    """The head to train: its draft vocabulary from the training answers, the target's embedding, and its weights
    from `seed`, the target (init_from_target) or another head (init_from)."""
    layers = options.aux_layers or default_aux_layers(info.num_layers)
    check_aux_layers(layers, info.num_layers)
    if options.finetune == "lora" and options.lora_vocab == "base":  # the base head itself, vocabulary included
        source = load_eagle3(options.init_from, info, target.get_input_embeddings().weight)
        if source.config.eagle_aux_hidden_state_layer_ids != layers:
            raise ConfigError(f"eagle3.init_from {options.init_from} reads target layers "
                              f"{source.config.eagle_aux_hidden_state_layer_ids}, this head {layers}")
        return source.float()
    vd = options.draft_vocab_size or min(32000, info.vocab_size // 4)
    d2t, t2d = select_draft_vocab(response_token_counts(train_rows, info.vocab_size), vd)
    torch.manual_seed(seed)
    head = Eagle3Head(head_config(target.config, vd, layers))
    head.embed_tokens.weight.data.copy_(target.get_input_embeddings().weight.data.float())
    head.d2t.copy_(d2t)
    head.t2d.copy_(t2d)
    if options.init_from_target:
        init_head_from_target(head, target)
    if options.init_from:
        source = load_eagle3(options.init_from, info, target.get_input_embeddings().weight)
        if source.config.eagle_aux_hidden_state_layer_ids != layers:
            raise ConfigError(f"eagle3.init_from {options.init_from} reads target layers "
                              f"{source.config.eagle_aux_hidden_state_layer_ids}, this head {layers}")
        init_head_from_head(head, source)
    head.lm_head.weight.requires_grad_(not options.freeze_lm_head)
    return head


def init_head_from_target(head: Eagle3Head, target) -> None:
    """lm_head row d = the target's output-embedding row of target id d + d2t[d]; the final norm's weight = the
    target's final norm (the head's hidden size is the target's). A target without a final RMSNorm of that size
    keeps the head's own norm."""
    out = target.get_output_embeddings().weight.data  # [V,H]
    ids = torch.arange(head.d2t.numel()) + head.d2t.cpu()  # [Vd] target ids of the draft vocabulary
    head.lm_head.weight.data.copy_(out[ids.to(out.device)].float())
    norm = getattr(target.get_decoder(), "norm", None)
    if norm is not None and getattr(norm, "weight", None) is not None and norm.weight.shape == head.norm.weight.shape:
        head.norm.weight.data.copy_(norm.weight.data.float())


@torch.no_grad()
def init_head_from_head(head: Eagle3Head, source: Eagle3Head) -> None:
    """Copy a trained head into a new one: every weight but the draft vocabulary's; lm_head rows of the tokens both
    draft vocabularies hold come from the source, the others keep their initialisation."""
    state = {k: v for k, v in source.state_dict().items() if k.split(".")[0] not in ("lm_head", "d2t", "t2d")}
    head.load_state_dict(state, strict=False)
    src_ids = source.draft_ids.cpu()  # [Vs] target ids, ascending
    ids = head.draft_ids.cpu()  # [Vd]
    pos = torch.searchsorted(src_ids, ids).clamp(max=src_ids.numel() - 1)  # [Vd] candidate source slot
    shared = src_ids[pos] == ids  # [Vd] the token is in both vocabularies
    head.lm_head.weight.data[shared] = source.lm_head.weight.data[pos[shared]].to(head.lm_head.weight.dtype)


def lora_head(head: Eagle3Head, options: Eagle3Options, base: str):
    """The head with LoRA adapters (peft) on every linear layer but, with its own vocabulary, the lm_head, which then
    trains whole (peft's modules_to_save); the rest frozen. `base`: the fingerprint of the eagle3.init_from head the
    adapted layers start from, kept for the export (`keep_adapters`)."""
    from peft import LoraConfig, get_peft_model

    own = options.lora_vocab == "own"
    head.requires_grad_(False)
    model = get_peft_model(head, LoraConfig(r=options.lora_r, lora_alpha=options.lora_alpha, lora_dropout=0.0,
                                            target_modules=[m for m in low_rank.linear_layers(head)
                                                            if not (own and m == "lm_head")],
                                            modules_to_save=["lm_head"] if own else None))
    model.low_rank_base = base
    return model


def keep_adapters(model) -> None:
    """Before the adapters are merged for the export: the head keeps them (`Eagle3Head.low_rank`, written beside the
    merged weights)."""
    if hasattr(model, "low_rank_base"):
        model.get_base_model().low_rank = low_rank.from_peft(model, model.low_rank_base)


def eagle3_loss(model, batch, target, layers, steps, weight, draft_ids, cache_dir=None, accept_weight=0.0):
    if cache_dir is not None:  # the compact teacher: draft-vocabulary rows only (training/target_cache.py)
        aux, teacher = cached_features(target, cache_dir, batch["index"], batch["input_ids"].shape[1], draft_ids)
    else:
        aux, teacher = target_forward(target, batch["input_ids"], batch["attention_mask"], layers)
    aux = aux.to(param_dtype(model, aux.dtype))  # rule: the target's features enter in the head's precision (a bf16
    # target's into an fp32 head; autocast, where on, casts again for its matmuls)
    _, step_logits = model(aux, batch["input_ids"], batch["attention_mask"], steps, loss_mask=batch["loss_mask"])
    return ttt_loss(Steps(step_logits, EAGLE3.offset, draft_ids), teacher, batch["loss_mask"], weight,
                    accept_weight=accept_weight)


def setup_eagle3(options: Eagle3Options, ctx: SetupContext):
    """-> (the head to train, its TTT loss, what its manifest entry records)."""
    head = make_eagle3(options, ctx.target, ctx.info, ctx.train_rows, ctx.seed)
    layers = EAGLE3.aux_layers(head)
    model = head
    if options.finetune == "lora":
        base = head if options.lora_vocab == "base" else load_eagle3(options.init_from, ctx.info,
                                                                    ctx.target.get_input_embeddings().weight).float()
        model = lora_head(head, options, low_rank.fingerprint(base))
    cache_dir = None
    if options.target_cache:
        dtype = dtype_name(next(ctx.target.parameters()).dtype)
        cache_dir = target_cache_dir(ctx.run_dir, dtype)
        if ctx.accelerator.is_main_process:
            data_hash = hashlib.sha256(b"".join(it[0].numpy().tobytes() for it in ctx.dataset.items)).hexdigest()
            build_cache(ctx.target, ctx.dataset, layers, cache_dir,
                        f"{ctx.info.weights_sha256} {layers} {data_hash} {dtype}")
        ctx.accelerator.wait_for_everyone()
    loss_fn = partial(eagle3_loss, target=ctx.target, layers=layers, steps=options.ttt_steps,
                      weight=options.step_weight, draft_ids=head.draft_ids.to(ctx.accelerator.device),
                      cache_dir=cache_dir, accept_weight=options.accept_weight)
    return model, loss_fn, {"aux_layers": layers, "draft_vocab_size": head.config.draft_vocab_size,
                            **({"finetune": "lora", "lora_r": options.lora_r, "lora_vocab": options.lora_vocab}
                               if options.finetune == "lora" else {})}


def write_options(options: Eagle3Options, export: ExportConfig) -> dict[str, Any]:
    """The EAGLE-3 kind's `write` options from the export section (the speculators layout)."""
    return {"speculators": export.speculators, "speculative_tokens": export.speculative_tokens}


TRAINING = KindTraining(kind=EAGLE3.name, section="eagle3", options=Eagle3Options, help="EAGLE-3 head options",
                        setup=setup_eagle3, warm_start="eagle3.init_from", write_options=write_options,
                        keep_adapters=keep_adapters,
                        # LoRA at the whole fine-tune's 1e-3 reached 0.79x its in-domain chain, 3e-3 with its own
                        # vocabulary 0.93x (docs/results/2026-11-29-low-rank-specialists.md)
                        low_rank=("eagle3.finetune=lora", "eagle3.lora_vocab=own", "train.lr=0.003"))
