"""Model-free drafter kinds: `ngram` (prompt lookup) and `suffix` (a suffix index seeded from self-distilled answers
plus prompt lookup). Their "model" is a small config object (and the index); their folder:

    config.json      {"architectures": ["DraftpoolSuffixIndex" | "DraftpoolNgram"], "vocab_size", "tokenizer_sha256",
                      n-gram sizes, the index's settings}
    index.npz        (suffix) one int64 array per segment: its sequences, SEP-separated (no pickles; the sorted
                     suffix arrays are rebuilt on load, so nothing in the file is trusted as sorted)
    draftpool.json   kind, domain, target, provenance, eval

Both depend on the target's tokenizer only (token ids), which load checks by its vocabulary's hash.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import torch

from draftpool.io import atomic_dir
from draftpool.models.folder import DrafterLoadError, check_config, read_json, read_meta
from draftpool.models.kind import Capabilities, DrafterKind, Steps
from draftpool.models.proposal import choose
from draftpool.models.request_index import RequestIndex
from draftpool.models.suffix_array import SEP, Segment
from draftpool.models.suffix_index import SuffixIndex

if TYPE_CHECKING:
    from draftpool.target import TargetInfo

INDEX_SETTINGS = ("depth", "max_tokens", "segment_tokens", "min_prob", "max_spec_factor")


def tokenizer_sha256(path: str | Path) -> str:
    """Hash of a tokenizer's vocabulary (token -> id): what a model-free drafter's ids mean."""
    files = sorted(Path(path).glob("*token*"))  # rule: recomputed when a tokenizer file of the folder changes
    return _tokenizer_sha256(str(path), tuple((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in files))


@functools.lru_cache(maxsize=8)
def _tokenizer_sha256(path: str, stamp: tuple) -> str:
    from transformers import AutoTokenizer

    vocab = sorted(AutoTokenizer.from_pretrained(path).get_vocab().items())
    return hashlib.sha256(json.dumps(vocab).encode()).hexdigest()


@dataclass
class NgramModel:
    vocab_size: int
    n_min: int = 2
    n_max: int = 8
    # a suffix index over answers beside prompt lookup: the two proposals compete (SuffixDecoding's rule)
    corpus: ClassVar[bool] = False

    def eval(self) -> NgramModel:  # what loaders call on every pool member
        return self

    def to(self, device) -> NgramModel:  # nothing on a device: token indexes live in host memory
        return self

    def config(self) -> dict[str, Any]:
        return {"architectures": ["DraftpoolNgram"], "vocab_size": self.vocab_size, "n_min": self.n_min,
                "n_max": self.n_max}


@dataclass
class SuffixModel(NgramModel):
    index: SuffixIndex = field(default_factory=SuffixIndex)
    corpus: ClassVar[bool] = True

    def config(self) -> dict[str, Any]:
        return {**super().config(), "architectures": ["DraftpoolSuffixIndex"],
                **{k: getattr(self.index, k) for k in INDEX_SETTINGS}}


def build_suffix(seqs: list[list[int]], vocab_size: int, **settings) -> SuffixModel:
    """A suffix drafter seeded with token sequences (e.g. self-distilled prompts + answers)."""
    index_kw = {k: v for k, v in settings.items() if k in INDEX_SETTINGS}
    model = SuffixModel(vocab_size, settings.get("n_min", 2), settings.get("n_max", 8), SuffixIndex(**index_kw))
    model.index.add(seqs)
    return model


def chain_drafts(propose, ids: torch.Tensor, attention_mask: torch.Tensor, depth: int) -> list[torch.Tensor]:
    """propose(request: RequestIndex, k) -> Proposal, at every row of ids [B,T] -> per step j [B,T] int64: the j-th
    draft of the chain proposed after tokens 0..t (-1 where the chain is shorter or the row is padding)."""
    b, t_len = ids.shape
    out = torch.full((depth, b, t_len), -1, dtype=torch.long)
    for r in range(b):
        req = RequestIndex(propose.n_min, propose.n_max)
        for t in range(int(attention_mask[r].sum())):
            req.extend([int(ids[r, t])])
            prop = propose(req, depth)
            out[:len(prop.tokens), r, t] = torch.tensor(prop.tokens, dtype=torch.long)
    return list(out.to(ids.device))


class _Proposer:
    def __init__(self, model: NgramModel):
        self.model, self.n_min, self.n_max = model, model.n_min, model.n_max
        self._req: RequestIndex | None = None
        self._matcher = None

    def __call__(self, req: RequestIndex, k: int):
        mine = req.propose(k, most_frequent=self.model.corpus)
        if not self.model.corpus:
            return mine
        # rule: one matcher per request followed token by token (SuffixIndex.matcher: the same proposals as
        # index.propose(req.tokens, k), without a search per position)
        if self._req is not req:
            self._req, self._matcher = req, self.model.index.matcher()
        self._matcher.follow(req.tokens)
        return choose(self._matcher.propose(k), mine)


class NgramKind(DrafterKind):
    """Prompt lookup: the request's own earlier n-grams; nothing to train, a folder with its settings."""

    name = "ngram"
    label = "prompt lookup"
    folder = "ngram"
    architecture = "DraftpoolNgram"
    offset = 1
    bound_to_weights = False
    # vllm: vLLM serves only the nearest equivalent of this member (its `vllm` method says what is lost there)
    capabilities = Capabilities(trained=False, tree=True, self_limiting=True, step_drafter=False, stackable=False,
                                vllm=False)
    decoder = "specsel.decoding.suffix:NgramDrafter"
    model_class = NgramModel

    def load(self, path: str | Path, target: TargetInfo, target_model) -> NgramModel:
        path = Path(path)
        raw = self._config(path, target)
        return NgramModel(raw["vocab_size"], raw["n_min"], raw["n_max"])

    def _config(self, path: Path, target: TargetInfo) -> dict[str, Any]:
        read_meta(path, self.name, target, bound_to_weights=False)
        raw = read_json(path / "config.json")
        arch = raw.get("architectures")
        if not isinstance(arch, list) or self.architecture not in arch:
            raise DrafterLoadError(f"{path}: config architectures {arch} are not [{self.architecture!r}]")
        check_config(raw, path, ("vocab_size", "n_min", "n_max"))
        if raw["n_min"] > raw["n_max"]:
            raise DrafterLoadError(f"{path}/config.json: n_min {raw['n_min']} > n_max {raw['n_max']}")
        if raw["vocab_size"] != target.vocab_size:
            raise DrafterLoadError(f"{path}: made for a vocabulary of {raw['vocab_size']} tokens, {target.name} has "
                                   f"{target.vocab_size}")
        mine = tokenizer_sha256(target.path)
        if raw.get("tokenizer_sha256") != mine:
            raise DrafterLoadError(f"{path}: made for another tokenizer (vocabulary hash "
                                   f"{str(raw.get('tokenizer_sha256'))[:12]}, {target.name}'s is {mine[:12]})")
        return raw

    def write(self, model: NgramModel, out: Path, target: TargetInfo, meta: dict[str, Any], *,
              source: Path | None = None, tokenizer=None) -> None:
        """config.json with its settings (and, for a suffix index, index.npz); no export options."""
        with atomic_dir(out) as tmp:
            self._write_files(model, tmp, target)
            (tmp / "draftpool.json").write_text(json.dumps(meta, indent=2) + "\n")

    def _write_files(self, model: NgramModel, tmp: Path, target: TargetInfo) -> None:
        cfg = {**model.config(), "tokenizer_sha256": tokenizer_sha256(target.path), "vllm": self.vllm(model)}
        (tmp / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")

    def vllm(self, model: NgramModel, k: int = 8) -> dict[str, Any]:
        """How vLLM serves the nearest equivalent of this member (vLLM 0.32 keys), and what is lost there."""
        return {"speculative_config": {"method": "ngram", "prompt_lookup_min": model.n_min,
                                       "prompt_lookup_max": model.n_max, "num_speculative_tokens": k},
                "lost": "nothing learned is lost (prompt lookup keeps nothing across requests); vLLM drafts a fixed "
                        "k wherever an n-gram matches, draftpool drafts up to k"}

    def steps(self, model: NgramModel, feats: torch.Tensor | None, input_ids: torch.Tensor,
              attention_mask: torch.Tensor, depth: int, loss_mask: torch.Tensor | None = None,
              params: dict[str, torch.Tensor] | None = None) -> Steps:
        """Its chain after every prefix: step j's row t is the j-th draft proposed after tokens 0..t."""
        return Steps(chain_drafts(_Proposer(model), input_ids, attention_mask, depth), self.offset)

    def vocab_size(self, model: NgramModel) -> int:
        return model.vocab_size


class SuffixKind(NgramKind):
    """A suffix index over self-distilled (and then served) answers, plus prompt lookup."""

    name = "suffix"
    label = "suffix index"
    folder = "suffix"
    architecture = "DraftpoolSuffixIndex"
    decoder = "specsel.decoding.suffix:SuffixDrafter"
    trainer = "training.kinds.suffix:TRAINING"

    def load(self, path: str | Path, target: TargetInfo, target_model) -> SuffixModel:
        path = Path(path)
        raw = self._config(path, target)
        settings = {k: raw[k] for k in INDEX_SETTINGS if k in raw}
        try:
            index = SuffixIndex(**settings)
        except (TypeError, ValueError) as e:
            raise DrafterLoadError(f"{path}/config.json: bad index settings {settings}: {e}") from None
        index.segments, index.recent = read_segments(path / "index.npz", raw["vocab_size"], index.depth)
        index.recent_segment = Segment(index.recent, index.depth) if index.recent else None
        return SuffixModel(raw["vocab_size"], raw["n_min"], raw["n_max"], index)

    def describe(self, model: SuffixModel) -> str:
        ix = model.index
        return f"{sum(seg.n_seqs for seg in ix.segments) + len(ix.recent)} sequences, {ix.n_tokens} tokens indexed"

    def vllm(self, model: SuffixModel, k: int = 8) -> dict[str, Any]:
        ix = model.index
        return {"speculative_config": {"method": "suffix", "num_speculative_tokens": k,
                                       "suffix_decoding_max_tree_depth": ix.depth,
                                       "suffix_decoding_max_spec_factor": ix.max_spec_factor,
                                       "suffix_decoding_min_token_prob": ix.min_prob},
                "needs": "arctic-inference in vLLM's environment",
                "lost": "the offline seed (index.npz) and every answer indexed before: vLLM's suffix method builds "
                        "its tree only from the requests it serves"}

    def _write_files(self, model: SuffixModel, tmp: Path, target: TargetInfo) -> None:
        super()._write_files(model, tmp, target)
        arrays = {f"segment_{i:05d}": s.tokens for i, s in enumerate(model.index.segments)}
        arrays["recent"] = flatten(model.index.recent)
        np.savez(tmp / "index.npz", **arrays)


def flatten(seqs: list[list[int]]) -> np.ndarray:
    flat: list[int] = []
    for s in seqs:
        flat.extend(s)
        flat.append(SEP)
    return np.asarray(flat, dtype=np.int64)


def split(flat: np.ndarray) -> list[list[int]]:
    """SEP-separated tokens -> sequences."""
    ends = np.flatnonzero(flat == SEP)
    starts = np.concatenate([[0], ends[:-1] + 1]) if len(ends) else np.zeros(0, dtype=np.int64)
    return [flat[a:b].tolist() for a, b in zip(starts, ends)]


def read_segments(path: Path, vocab: int, depth: int) -> tuple[list[Segment], list[list[int]]]:
    """index.npz -> (frozen segments, the recent sequences); DrafterLoadError for anything but int arrays of token
    ids and SEPs ending in a SEP."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError) as e:
        raise DrafterLoadError(f"{path} is missing or corrupt: {e}") from None
    for k, a in arrays.items():
        if a.ndim != 1 or a.dtype.kind not in "iu" or (len(a) and (a.min() < SEP or a.max() >= vocab or a[-1] != SEP)):
            raise DrafterLoadError(f"{path}: array {k!r} is not SEP-separated token ids below {vocab}")
    names = sorted(k for k in arrays if k.startswith("segment_"))
    if set(arrays) - set(names) != {"recent"}:
        raise DrafterLoadError(f"{path}: expected segment_* arrays and 'recent', got {sorted(arrays)}")
    return [Segment.from_flat(arrays[k].astype(np.int64), depth) for k in names], split(arrays["recent"])


NGRAM, SUFFIX = NgramKind(), SuffixKind()
