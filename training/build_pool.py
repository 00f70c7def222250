"""Build a target's default drafter pool, then fill pool.json with the domain x drafter held-out acceptance matrix.

    python build_pool.py [--target ID_OR_PATH] [--profile quick|full] [--drafters eagle3,suffix[,llama]]
                         [--domains sql,python,...] [--specialists whole|low_rank] [key=value ...]

One EAGLE-3 specialist per shipped domain plus the general-mix head, and beside each a suffix index seeded from the
same self-distilled answers (model-free: no gradient step, about a minute; docs/model_free.md), and the independent
Llama drafters with `--drafters eagle3,suffix,llama` (llama68m: its older name), each made by `train_drafter.run`
from its recipe (self-distillation first where the domain's data is missing). Resumable per drafter: a drafter whose
pool entry records the same build signature is skipped, and a killed drafter resumes from its own checkpoints.
Extra `key=value` overrides go to every drafter. `--specialists low_rank` makes each EAGLE-3 specialist LoRA adapters
over the pool's general head (the kind's low-rank overrides: `eagle3.finetune=lora`, its own draft vocabulary, lr
3e-3; draftpool/models/low_rank.py): the exported folder holds the merged head (what vLLM loads) and the adapters,
and a pool of such specialists is evaluated by reading the general head's weights once (head_bank.py).

Profiles (the recipes stay the reference for a single drafter):
- quick: sized for 2 CPU cores and the embedded target: the first 160 train and 32 held-out prompts of each split
  are distilled (2.5x the old 64, at the engine backend's rate); the general head trains first (200 optimizer steps
  of 8 sequences), then every specialist starts from it (`eagle3.init_from`: its layers, and its lm_head rows for the
  tokens the specialist's own draft vocabulary shares) and trains 120 steps on its domain; 3 training-time-test steps
  (the recipes' default: at equal training time they beat 7, docs/benchmarks.md "Learning curves") and 4096-token
  draft vocabularies;
  no per-drafter held-out evaluation: the matrix (32 held-out answers per domain)
  measures the same rows and each drafter's own-domain cell becomes its exported evaluation. Domains whose data
  already exists are trained on it as it is.
- full: the recipes unchanged, every head from its own initialisation; the matrix uses every held-out answer.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from data_gen.domains import ALL_DOMAINS, GENERAL, check_domain
from data_gen.generate import load_distilled
from data_gen.plan import DataGenConfig, data_dir_for
from draftpool.config import ConfigError, build, deep_merge, load_config, read_yaml
from draftpool.io import atomic_write_json
from draftpool.models.folder import DrafterLoadError
from draftpool.pool import load_members, read_manifest
from draftpool.target import DEFAULT_TARGET, load_target, resolve_target
from training.config import TrainConfig
from training.evaluate import EXPORTED, evaluate_many, write_eval
from training.kinds import drafter_names, training_for
from training.loop import NaNLossError
from training.train_drafter import accelerated, run

PROFILES = {
    "quick": {"train": ["data.gen.max_prompts_per_split=160", "data.gen.max_held_out_prompts=32",
                        "eagle3.ttt_steps=3", "eagle3.draft_vocab_size=4096", "eval.skip=true",
                        "train.save_every=20"],
              "general": ["train.max_steps=200"], "specialist": ["train.max_steps=120"], "warm_start": True,
              "matrix_sequences": 32},
    "full": {"train": [], "general": [], "specialist": [], "warm_start": False, "matrix_sequences": 0},
}
MATRIX_KEYS = ("held_out_sequences", "positions", *EXPORTED)


def pool_dir_of(cfg: TrainConfig, slug: str) -> Path:
    return Path(cfg.export.pools_dir) / slug


def data_dir_of(cfg: TrainConfig, slug: str) -> Path:
    """Where train_drafter finds (or writes) this drafter's self-distilled data."""
    recipe = read_yaml(cfg.data.recipe.format(domain=cfg.domain))
    dcfg = build(DataGenConfig, deep_merge(recipe, {**cfg.data.gen, "domain": cfg.domain, "target": cfg.target}))
    return data_dir_for(dcfg.data_dir, slug, cfg.domain)


def load_cfg(target: str, profile: str, drafter: str, domain: str, overrides: list[str],
             init_from: str = "") -> TrainConfig:
    run_dir = f"run_dir=runs/pool/{profile}/{{target_slug}}/{{domain}}-{{drafter}}"  # a run_dir override wins
    extra = [f"domain={domain}", f"drafter={drafter}", f"target={target}"]
    prof = PROFILES[profile]
    steps = prof["general"] if domain == GENERAL else prof["specialist"]
    setup = training_for(drafter)
    start = [f"{setup.warm_start}={init_from}"] if init_from else []
    return load_config(TrainConfig, f"recipes/{domain}/{setup.folder}.yaml",
                       [run_dir] + prof["train"] + steps + start + overrides + extra)


def build_signature(profile: str, overrides: list[str], init_from: str = "") -> dict:
    """What a pool entry was built with: the profile's name and settings (a changed profile rebuilds), the
    overrides and the warm start."""
    return {"profile": profile, "settings": PROFILES[profile], "overrides": list(overrides),
            **({"init_from": init_from} if init_from else {})}


def train_all(target: str, profile: str, drafters: list[str], domains: list[str], overrides: list[str],
              specialists: str = "whole") -> Path:
    """Train every missing (domain, drafter) of the pool, the general head first; returns the pool folder. With a
    warm-start profile an EAGLE-3 specialist starts from the pool's general head when there is one; with
    specialists="low_rank" it is LoRA adapters over that head (which must then exist)."""
    info = resolve_target(target)
    pool_dir = None
    order = sorted(domains, key=lambda d: d != GENERAL)  # general first: the specialists may start from it
    for drafter in drafters:
        for domain in order:
            cfg = load_cfg(target, profile, drafter, domain, overrides)
            pool_dir = pool_dir_of(cfg, info.slug)
            folder, warm_start = training_for(drafter).folder, training_for(drafter).warm_start
            general = pool_dir / f"{GENERAL}-{folder}"
            init_from, name = "", f"{domain}-{folder}"
            low_rank = list(training_for(drafter).low_rank) if specialists == "low_rank" and domain != GENERAL else []
            if low_rank and not general.is_dir():
                raise ConfigError(f"--specialists low_rank: {name} needs the general head "
                                  f"{general} (add general to --domains)")
            if (PROFILES[profile]["warm_start"] or low_rank) and warm_start and domain != GENERAL \
                    and general.is_dir():
                init_from = str(general)
                cfg = load_cfg(target, profile, drafter, domain, overrides + low_rank, init_from)
            sig = build_signature(profile, overrides + low_rank, init_from)
            entry = _manifest(pool_dir).get("drafters", {}).get(name, {})
            if entry.get("build") == sig and (pool_dir / name).is_dir():
                print(f"[build_pool] {name}: already built with this signature, skipped")
                continue
            t0 = time.time()
            start = f", from {init_from}" if init_from else ""
            print(f"[build_pool] {name}: training ({profile} profile{start})", flush=True)
            with accelerated(cfg, "runs/pool") as accelerator:
                run(cfg, accelerator, info)
            manifest = _manifest(pool_dir)
            manifest["drafters"][name].update(build=sig, build_seconds=round(time.time() - t0, 1))
            atomic_write_json(pool_dir / "pool.json", manifest)
    return pool_dir


def fill_matrix(pool_dir: Path, target: str, data_dirs: dict[str, Path], max_sequences: int, depth: int = 7,
                names: list[str] | None = None) -> dict:
    """Evaluate every drafter of the pool on every domain's held-out greedy answers (one target pass per batch, shared
    by all drafters); writes pool.json["matrix"][domain][drafter] = per-step rates and chain lengths."""
    info = resolve_target(target)
    target_model, tok = load_target(info)
    manifest = _manifest(pool_dir)
    members = load_members(pool_dir, info, target_model, at_least=0, names=names)
    matrix = manifest.get("matrix", {})
    for domain, ddir in data_dirs.items():
        rows = [r for r in load_distilled(ddir, "held_out") if r["temperature"] == 0.0]
        rows = rows[:max_sequences] if max_sequences else rows
        res = evaluate_many(members, target_model, rows, depth, 320, tok.pad_token_id, desc=f"matrix {domain}")
        matrix[domain] = {name: {k: r[k] for k in MATRIX_KEYS} for name, r in res.items()}
        manifest = _manifest(pool_dir)
        manifest["matrix"] = matrix
        atomic_write_json(pool_dir / "pool.json", manifest)  # one domain at a time: a kill loses one row
    for name, entry in _manifest(pool_dir)["drafters"].items():  # a drafter exported without its evaluation gets
        own = matrix.get(entry.get("domain"), {}).get(name)  # its own-domain cell (the same held-out rows)
        if own is not None and "eval" not in entry:
            write_eval(pool_dir / entry["path"], own)
    manifest = _manifest(pool_dir)
    manifest["specialisation"] = specialisation(matrix)
    atomic_write_json(pool_dir / "pool.json", manifest)
    print(format_matrix(matrix))
    print(f"specialisation: {manifest['specialisation']}")
    return matrix


def specialisation(matrix: dict, key: str = "empirical_greedy_chain_length") -> dict:
    """Mean in-domain chain of the specialists (domain d's row, drafter d-*) against the general drafter's on the same
    rows, per drafter kind present: {kind: {"specialists", "general", "ratio", "domains"}}."""
    out = {}
    kinds = {name.split("-", 1)[1] for row in matrix.values() for name in row}
    for kind in sorted(kinds):
        gen = f"{GENERAL}-{kind}"
        doms = [d for d, row in matrix.items() if d != GENERAL and f"{d}-{kind}" in row and gen in row]
        if not doms:
            continue
        spec = sum(matrix[d][f"{d}-{kind}"][key] for d in doms) / len(doms)
        base = sum(matrix[d][gen][key] for d in doms) / len(doms)
        out[kind] = {"specialists": round(spec, 4), "general": round(base, 4), "ratio": round(spec / base, 4),
                     "domains": doms}
    return out


def format_matrix(matrix: dict, key: str = "empirical_greedy_chain_length") -> str:
    """Domains down, drafters across; the best drafter of each domain marked with *."""
    drafters = sorted({d for row in matrix.values() for d in row})
    lines = [f"held-out {key} (domain x drafter)", "domain".ljust(14) + "".join(d[:14].rjust(15) for d in drafters)]
    for domain, row in matrix.items():
        best = max(row, key=lambda d: row[d][key])
        cells = [(f"{row[d][key]:.3f}" + ("*" if d == best else " ")).rjust(15) if d in row else " " * 15
                 for d in drafters]
        lines.append(domain.ljust(14) + "".join(cells))
    return "\n".join(lines)


def _manifest(pool_dir: Path | None) -> dict:
    return read_manifest(pool_dir) if pool_dir is not None else {}  # checked: drafter paths stay in the pool


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default=DEFAULT_TARGET)
    ap.add_argument("--profile", default="quick", choices=sorted(PROFILES))
    ap.add_argument("--drafters", default="eagle3,suffix", help=f"comma list of {', '.join(drafter_names())}")
    ap.add_argument("--domains", default=",".join(ALL_DOMAINS), help="comma list (default: all shipped + general)")
    ap.add_argument("--matrix-only", action="store_true", help="skip training, recompute the matrix")
    ap.add_argument("--specialists", default="whole", choices=("whole", "low_rank"),
                    help="EAGLE-3 specialists as whole heads or as LoRA adapters over the general head")
    args, overrides = ap.parse_known_args(argv)
    try:
        drafters = [d for d in args.drafters.split(",") if d]
        domains = [check_domain(d) for d in args.domains.split(",") if d]
        bad = [d for d in drafters if d not in drafter_names()]
        if bad or not drafters or not domains:
            raise ConfigError(f"--drafters must list some of {', '.join(drafter_names())} (got {args.drafters!r}); "
                              f"--domains must not be empty")
        if any(not o.count("=") or o.startswith("-") for o in overrides):
            raise ConfigError(f"unknown arguments {overrides}: extra arguments must be key=value overrides")
        slug = resolve_target(args.target).slug
        cfgs = {d: load_cfg(args.target, args.profile, drafters[0], d, overrides) for d in domains}
        if args.matrix_only:
            pool_dir = pool_dir_of(cfgs[domains[0]], slug)
            if not (pool_dir / "pool.json").is_file():
                raise ConfigError(f"no pool at {pool_dir}: build it first")
        else:
            pool_dir = train_all(args.target, args.profile, drafters, domains, overrides, args.specialists)
        fill_matrix(pool_dir, args.target, {d: data_dir_of(c, slug) for d, c in cfgs.items()},
                    PROFILES[args.profile]["matrix_sequences"],
                    names=[f"{d}-{training_for(k).folder}" for k in drafters for d in domains])
    except (ConfigError, DrafterLoadError, ValueError, NaNLossError, RuntimeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
