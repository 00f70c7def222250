"""The independent Llama kind's training: its options (`llama.*`), the drafter it starts from (scratch, the target's
first layers, a folder, or the pool's general drafter, pretrained first when missing), and its next-token loss.

The kind is `llama`; its recipes and pool folders keep the older stem `llama68m` (`<domain>-llama68m`), which also
holds the 14M `llama-tiny` preset (`llama.preset`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

from data_gen.domains import GENERAL
from draftpool.config import ConfigError, field
from draftpool.models.llama import LLAMA, build_drafter, from_target_layers, load_llama, pick_preset
from training.evaluate import target_forward
from training.kinds import KindTraining, Prerequisite, SetupContext
from training.losses import drafter_loss

FOLDER = LLAMA.folder  # recipes/<domain>/llama68m.yaml, pools/<slug>/<domain>-llama68m (older than the kind's name)


@dataclass
class LlamaOptions:
    preset: str = field("auto", help="auto, llama-68m or llama-tiny (auto: llama-tiny for targets < 1B params)")
    loss: Literal["ce", "fkl", "rkl", "jsd", "tvd"] = field("fkl", help="hard CE on the data or a distillation loss")
    init: str = field("pretrained", help="scratch | pretrained (the pool's general drafter, trained first if "
                                         "missing) | target:N (the target's first N layers, embeddings, norm and "
                                         "head; Llama targets) | a drafter folder")
    finetune: Literal["full", "lora"] = field("full", help="domain fine-tune of all weights or LoRA adapters")
    lora_r: int = field(16, help="LoRA rank")
    lora_alpha: int = field(32, help="LoRA alpha")

    def validate(self) -> None:
        for key, value in (("llama.lora_r", self.lora_r), ("llama.lora_alpha", self.lora_alpha)):
            if value < 1:
                raise ConfigError(f"{key} must be >= 1, got {value}")


def llama_loss(model, batch, target, kind):
    # hard CE needs no target pass (its training metrics are then skipped; the held-out eval has them all)
    tlogits = None if kind == "ce" else target_forward(target, batch["input_ids"], batch["attention_mask"], None)[1]
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    return drafter_loss(logits, tlogits, batch["input_ids"], batch["loss_mask"], kind)


def general_folder(options: LlamaOptions, ctx: SetupContext) -> Path | None:
    """The pool's general drafter this run starts from (init=pretrained, a domain other than general), else None."""
    if options.init != "pretrained" or ctx.domain == GENERAL:
        return None
    return ctx.pool_dir / f"{GENERAL}-{FOLDER}"


def preset_for(options: LlamaOptions, target) -> str:
    """The preset llama.preset names for this target (auto: by the target's size)."""
    return pick_preset(options.preset, sum(p.numel() for p in target.parameters()))


def needs_general(options: LlamaOptions, ctx: SetupContext) -> Prerequisite | None:
    """The general drafter to pretrain first (recipes/general/llama68m.yaml, the same preset) when this run starts
    from it and the pool has none yet."""
    folder = general_folder(options, ctx)
    if folder is None or (folder / "config.json").is_file():
        return None
    return Prerequisite(GENERAL, folder, (f"llama.preset={preset_for(options, ctx.target)}",))


def setup_llama(options: LlamaOptions, ctx: SetupContext):
    """-> (the independent drafter to train, its next-token loss, what its manifest entry records)."""
    model, preset, init = make_llama(options, ctx)
    loss_fn = partial(llama_loss, target=ctx.target, kind=options.loss)
    return model, loss_fn, {"preset": preset, "init": init, "finetune": options.finetune, "loss": options.loss}


def make_llama(options: LlamaOptions, ctx: SetupContext):
    """The drafter to train: from scratch, from the target's first layers, from a folder, or from the pool's general
    drafter (which the orchestrator trained first where it was missing: `needs_general`)."""
    preset = preset_for(options, ctx.target)
    init = options.init
    if init.startswith("target:"):
        n = init.split(":", 1)[1]
        if not n.isdigit():
            raise ValueError(f"llama.init target:N needs a layer count, got {init!r}")
        return from_target_layers(ctx.target, int(n)).float(), init, init
    general = general_folder(options, ctx)
    if general is not None:
        init = str(general)
    if init in ("scratch", "pretrained"):
        model = build_drafter(preset, ctx.target.config, ctx.seed)
    else:
        model = load_llama(init, ctx.info)
    if options.finetune == "lora":
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(
            r=options.lora_r, lora_alpha=options.lora_alpha, lora_dropout=0.0,
            target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]))
    return model, preset, init


TRAINING = KindTraining(kind=LLAMA.name, section="llama", options=LlamaOptions, help="independent drafter options",
                        setup=setup_llama, prerequisite=needs_general, aliases=("llama68m",))
