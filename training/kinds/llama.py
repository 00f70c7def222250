"""The independent Llama kind's training: its options (`llama.*`), the drafter it starts from (scratch, the target's
first layers, a folder, or the pool's general drafter, pretrained first when missing), and its next-token loss.

The kind is `llama`; its recipes and pool folders keep the older stem `llama68m` (`<domain>-llama68m`), which also
holds the 14M `llama-tiny` preset (`llama.preset`)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from data_gen.domains import GENERAL
from draftpool.config import ConfigError, field, load_config
from draftpool.models.llama import LLAMA, build_drafter, from_target_layers, load_llama, pick_preset
from draftpool.target import TargetInfo
from training.data import ResponseDataset
from training.evaluate import target_forward
from training.kinds import KindTraining
from training.losses import drafter_loss

if TYPE_CHECKING:
    from training.config import TrainConfig

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


def setup_llama(cfg: TrainConfig, accelerator, target, info: TargetInfo, train_rows: list[dict],
                dataset: ResponseDataset, run_dir: Path):
    """-> (the independent drafter to train, its next-token loss, what its manifest entry records)."""
    model, preset, init = make_llama(cfg, target, info, accelerator)
    loss_fn = partial(llama_loss, target=target, kind=cfg.llama.loss)
    return model, loss_fn, {"preset": preset, "init": init, "finetune": cfg.llama.finetune, "loss": cfg.llama.loss}


def make_llama(cfg: TrainConfig, target, info: TargetInfo, accelerator):
    """The drafter to train: from scratch, from a folder, or from the pool's general drafter (trained if missing)."""
    preset = pick_preset(cfg.llama.preset, sum(p.numel() for p in target.parameters()))
    init = cfg.llama.init
    if init.startswith("target:"):
        n = init.split(":", 1)[1]
        if not n.isdigit():
            raise ValueError(f"llama.init target:N needs a layer count, got {init!r}")
        return from_target_layers(target, int(n)).float(), init, init
    if init == "pretrained" and cfg.domain != GENERAL:
        init = str(Path(cfg.export.pools_dir) / info.slug / f"{GENERAL}-{FOLDER}")
        if not (Path(init) / "config.json").is_file():
            # the one call back into the orchestration (imported here: train_drafter imports this module)
            from training.train_drafter import TrainConfig, run

            recipe = f"recipes/{GENERAL}/{FOLDER}.yaml"
            accelerator.print(f"no general drafter at {init}: pretraining it first ({recipe})")
            general = load_config(TrainConfig, recipe,
                                  [f"domain={GENERAL}", f"drafter={LLAMA.name}", f"target={cfg.target}",
                                   f"export.pools_dir={cfg.export.pools_dir}", f"llama.preset={preset}"])
            general.data.gen = dict(cfg.data.gen)
            run(general, accelerator, info)
    if init in ("scratch", "pretrained"):
        model = build_drafter(preset, target.config, cfg.train.seed)
    else:
        model = load_llama(init, info)
    if cfg.llama.finetune == "lora":
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(
            r=cfg.llama.lora_r, lora_alpha=cfg.llama.lora_alpha, lora_dropout=0.0,
            target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]))
    return model, preset, init


TRAINING = KindTraining(kind=LLAMA.name, section="llama", options=LlamaOptions, setup=setup_llama,
                        aliases=("llama68m",))
