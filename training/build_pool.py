"""Build a target's default drafter pool, then fill pool.json with the domain x drafter held-out acceptance matrix.

    python build_pool.py [--target ID_OR_PATH] [--profile quick|full] [--drafters eagle3[,llama68m]]
                         [--domains sql,python,...] [key=value ...]

One EAGLE-3 specialist per shipped domain plus the general-mix head (and the independent Llama drafters with
`--drafters eagle3,llama68m`), each trained by `train_drafter.run` from its recipe (self-distillation first where the
domain's data is missing). Resumable per drafter: a drafter whose pool entry records the same build signature is
skipped, and a killed drafter resumes from its own checkpoints. Extra `key=value` overrides go to every drafter.

Profiles (the recipes stay the reference for a single drafter):
- quick: sized for 2 CPU cores and the embedded target (<= 60 min for 8 heads from no data): the first 64 prompts of
  each split are distilled, every head trains 40 optimizer steps (batch 8, 320 sequences), the matrix uses 32
  held-out answers per domain. Domains whose data already exists are trained on it as it is.
- full: the recipes unchanged; the matrix uses every held-out answer.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from data_gen.domains import ALL_DOMAINS, check_domain
from data_gen.generate import DataGenConfig, data_dir_for, load_distilled
from draftpool.config import ConfigError, build, deep_merge, load_config, read_yaml
from draftpool.io import atomic_write_json
from draftpool.pool import DrafterLoadError, load_eagle3, load_llama
from draftpool.target import DEFAULT_TARGET, load_target, resolve_target
from training.evaluate import evaluate_many
from training.train_drafter import KINDS, NaNLossError, TrainConfig, make_accelerator, run

PROFILES = {
    "quick": {"train": ["data.gen.max_prompts_per_split=64", "train.max_steps=40", "train.save_every=10"],
              "matrix_sequences": 32},
    "full": {"train": [], "matrix_sequences": 0},
}


def pool_dir_of(cfg: TrainConfig, slug: str) -> Path:
    return Path(cfg.export.pools_dir) / slug


def data_dir_of(cfg: TrainConfig, slug: str) -> Path:
    """Where train_drafter finds (or writes) this drafter's self-distilled data."""
    recipe = read_yaml(cfg.data.recipe.format(domain=cfg.domain))
    dcfg = build(DataGenConfig, deep_merge(recipe, {**cfg.data.gen, "domain": cfg.domain, "target": cfg.target}))
    return data_dir_for(dcfg.data_dir, slug, cfg.domain)


def load_cfg(target: str, profile: str, drafter: str, domain: str, overrides: list[str]) -> TrainConfig:
    run_dir = f"run_dir=runs/pool/{profile}/{{target_slug}}/{{domain}}-{{drafter}}"  # a run_dir override wins
    extra = [f"domain={domain}", f"drafter={drafter}", f"target={target}"]
    return load_config(TrainConfig, f"recipes/{domain}/{drafter}.yaml",
                       [run_dir] + PROFILES[profile]["train"] + overrides + extra)


def build_signature(profile: str, overrides: list[str]) -> dict:
    return {"profile": profile, "overrides": list(overrides)}


def train_all(target: str, profile: str, drafters: list[str], domains: list[str], overrides: list[str]) -> Path:
    """Train every missing (domain, drafter) of the pool; returns the pool folder."""
    info = resolve_target(target)
    sig = build_signature(profile, overrides)
    pool_dir = None
    for drafter in drafters:
        for domain in domains:
            cfg = load_cfg(target, profile, drafter, domain, overrides)
            pool_dir = pool_dir_of(cfg, info.slug)
            name = f"{domain}-{drafter}"
            entry = _manifest(pool_dir).get("drafters", {}).get(name, {})
            if entry.get("build") == sig and (pool_dir / name).is_dir():
                print(f"[build_pool] {name}: already built with this signature, skipped")
                continue
            t0 = time.time()
            print(f"[build_pool] {name}: training ({profile} profile)")
            run(cfg, make_accelerator(cfg, "runs/pool"), info)
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
    models = {}
    for name, entry in manifest["drafters"].items():
        if names is not None and name not in names:
            continue
        path = pool_dir / entry["path"]
        if entry["kind"] == "eagle3":
            models[name] = ("eagle3", load_eagle3(path, info, target_model.get_input_embeddings().weight))
        else:
            models[name] = ("llama", load_llama(path, info))
    matrix = manifest.get("matrix", {})
    for domain, ddir in data_dirs.items():
        rows = [r for r in load_distilled(ddir, "held_out") if r["temperature"] == 0.0]
        rows = rows[:max_sequences] if max_sequences else rows
        res = evaluate_many(models, target_model, rows, depth, 320, tok.pad_token_id, desc=f"matrix {domain}")
        matrix[domain] = {name: {k: r[k] for k in ("held_out_sequences", "positions", "top1_per_step",
                                                   "accept_per_step", "expected_chain_length_greedy",
                                                   "expected_chain_length_sampling",
                                                   "empirical_greedy_chain_length")}
                          for name, r in res.items()}
        manifest = _manifest(pool_dir)
        manifest["matrix"] = matrix
        atomic_write_json(pool_dir / "pool.json", manifest)  # one domain at a time: a kill loses one row
    print(format_matrix(matrix))
    return matrix


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
    path = pool_dir / "pool.json" if pool_dir is not None else None
    return json.loads(path.read_text()) if path is not None and path.is_file() else {}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default=DEFAULT_TARGET)
    ap.add_argument("--profile", default="quick", choices=sorted(PROFILES))
    ap.add_argument("--drafters", default="eagle3", help=f"comma list of {', '.join(KINDS)}")
    ap.add_argument("--domains", default=",".join(ALL_DOMAINS), help="comma list (default: all shipped + general)")
    ap.add_argument("--matrix-only", action="store_true", help="skip training, recompute the matrix")
    args, overrides = ap.parse_known_args(argv)
    try:
        drafters = [d for d in args.drafters.split(",") if d]
        domains = [check_domain(d) for d in args.domains.split(",") if d]
        bad = [d for d in drafters if d not in KINDS]
        if bad or not drafters or not domains:
            raise ConfigError(f"--drafters must list some of {', '.join(KINDS)} (got {args.drafters!r}); "
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
            pool_dir = train_all(args.target, args.profile, drafters, domains, overrides)
        fill_matrix(pool_dir, args.target, {d: data_dir_of(c, slug) for d, c in cfgs.items()},
                    PROFILES[args.profile]["matrix_sequences"], names=[f"{d}-{k}" for k in drafters for d in domains])
    except (ConfigError, DrafterLoadError, ValueError, NaNLossError, RuntimeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
