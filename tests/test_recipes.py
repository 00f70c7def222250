"""Every shipped recipe parses and builds the config its command reads, and names that command on its first line."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from data_gen.domains import ALL_DOMAINS
from data_gen.plan import DataGenConfig
from draftpool.config import load_config
from training.config import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "recipes"
ALL_YAML = sorted(RECIPES.glob("**/*.yaml"))
DOMAIN_DIRS = sorted(p for p in RECIPES.iterdir() if p.is_dir() and p.name not in ("accelerate_configs", "online"))
COMMANDS = ("data_gen.generate", "train_drafter.py", "accelerate launch", "online_adapt.py")


def _ids(paths):
    return [str(p.relative_to(RECIPES)) for p in paths]


def test_recipes_found():
    assert len(ALL_YAML) >= 3 * len(ALL_DOMAINS) + 3


@pytest.mark.parametrize("path", ALL_YAML, ids=_ids(ALL_YAML))
def test_recipe_parses_to_mapping(path):
    assert isinstance(yaml.safe_load(path.read_text()), dict)


@pytest.mark.parametrize("path", ALL_YAML, ids=_ids(ALL_YAML))
def test_first_line_is_the_command(path):
    first = path.read_text().splitlines()[0]
    assert first.startswith("#"), f"{path}: first line {first!r} is not a comment"
    assert any(c in first for c in COMMANDS), f"{path}: first line {first!r} names no command"
    if path.parent.name == "accelerate_configs":
        assert f"--config_file recipes/accelerate_configs/{path.name}" in first
    elif path.parent.name == "online":
        assert f"online_adapt.py --config recipes/online/{path.name}" in first
    else:
        assert f"--domain {path.parent.name}" in first
        if path.stem != "data_gen":
            drafter, _, profile = path.stem.partition("-")  # eagle3-full.yaml: the eagle3 recipe's full profile
            assert f"--drafter {drafter}" in first
            if profile:
                assert f"--recipe recipes/{path.parent.name}/{path.name}" in first


@pytest.mark.parametrize("domain_dir", DOMAIN_DIRS, ids=[p.name for p in DOMAIN_DIRS])
def test_data_gen_recipe_builds(domain_dir):
    cfg = load_config(DataGenConfig, domain_dir / "data_gen.yaml", [f"domain={domain_dir.name}"])
    assert cfg.domain == domain_dir.name
    assert cfg.train_temperatures and all(t >= 0 for t in cfg.train_temperatures)


@pytest.mark.parametrize("drafter", ["eagle3", "llama68m"])
@pytest.mark.parametrize("domain_dir", DOMAIN_DIRS, ids=[p.name for p in DOMAIN_DIRS])
def test_train_recipe_builds(domain_dir, drafter):
    # as train_drafter.main does: recipe + overrides + domain/drafter from the command line
    cfg = load_config(TrainConfig, domain_dir / f"{drafter}.yaml", [f"domain={domain_dir.name}", f"drafter={drafter}"])
    assert (cfg.domain, cfg.drafter) == (domain_dir.name, drafter)
    assert Path(cfg.data.recipe.format(domain=cfg.domain)) == Path("recipes") / domain_dir.name / "data_gen.yaml"


@pytest.mark.parametrize("name", ["ddp", "zero2", "zero3"])
def test_accelerate_configs(name):
    path = RECIPES / "accelerate_configs" / f"{name}.yaml"
    assert path.is_file()
    data = yaml.safe_load(path.read_text())
    assert data["distributed_type"] == ("MULTI_GPU" if name == "ddp" else "DEEPSPEED")
    if name != "ddp":
        assert data["deepspeed_config"]["zero_stage"] == int(name[-1])


@pytest.mark.parametrize("domain", ALL_DOMAINS)
def test_every_domain_has_three_recipes(domain):
    for recipe in ("data_gen", "eagle3", "llama68m"):
        assert (RECIPES / domain / f"{recipe}.yaml").is_file(), f"recipes/{domain}/{recipe}.yaml is missing"


def test_no_recipe_folder_for_unknown_domain():
    assert {p.name for p in DOMAIN_DIRS} == set(ALL_DOMAINS)


def test_online_recipe_builds():
    from online.config import AdaptConfig

    cfg = load_config(AdaptConfig, RECIPES / "online" / "adapt.yaml", ["serve.requests=x.jsonl"])
    assert cfg.serve.requests == "x.jsonl" and cfg.trainer.updater in ("ogd", "optimistic", "ensemble")


def test_lookahead_recipe_builds_with_onlinespec_dpo_settings():
    from online.config import AdaptConfig

    cfg = load_config(AdaptConfig, RECIPES / "online" / "lookahead.yaml", ["trainer.round_every=5"])
    assert cfg.serve.mode == "lookahead" and cfg.trainer.updater == "dpo" and cfg.trainer.round_every == 5
    t = cfg.trainer
    assert (t.lr, t.beta, t.epochs, t.clip) == (5e-7, 0.1, 3, 1.0)
    assert cfg.lookahead.judge == "embedding" and 0 < cfg.lookahead.threshold < 1 and cfg.lookahead.gamma >= 1
    osd = load_config(AdaptConfig, RECIPES / "online" / "lookahead.yaml", ["trainer.updater=sft"])
    assert osd.trainer.updater == "sft"
    with pytest.raises(ValueError, match="needs trainer.updater"):
        load_config(AdaptConfig, RECIPES / "online" / "lookahead.yaml", ["trainer.updater=ogd"])


def test_step_drafter_recipe_cuts_the_target():
    cfg = load_config(TrainConfig, RECIPES / "math" / "llama68m-step.yaml", ["domain=math", "drafter=llama68m"])
    assert cfg.llama.init.startswith("target:") and cfg.llama.loss == "fkl"


def test_full_sql_profile_builds_with_its_own_data_and_run_folders():
    """The `full` profile: every prompt of the set (the quick one caps them), longer answers, its own folders (the
    quick data and run are never mixed into it), the same pool entry."""
    quick = load_config(TrainConfig, RECIPES / "sql" / "eagle3.yaml", ["domain=sql", "drafter=eagle3"])
    full = load_config(TrainConfig, RECIPES / "sql" / "eagle3-full.yaml", ["domain=sql", "drafter=eagle3"])
    gen = load_config(DataGenConfig, RECIPES / "sql" / "data_gen.yaml",
                      ["domain=sql"] + [f"{k}={v}" for k, v in full.data.gen.items()])
    quick_gen = load_config(DataGenConfig, RECIPES / "sql" / "data_gen.yaml", ["domain=sql"])
    assert quick_gen.max_prompts_per_split > 0 and quick_gen.max_held_out_prompts > 0
    assert gen.max_prompts_per_split == 0 and gen.max_held_out_prompts == 0 and gen.max_new_tokens > 96
    assert gen.data_dir != load_config(DataGenConfig, RECIPES / "sql" / "data_gen.yaml", ["domain=sql"]).data_dir
    assert full.run_dir != quick.run_dir and full.export.pools_dir == quick.export.pools_dir
    assert full.eagle3 == quick.eagle3
