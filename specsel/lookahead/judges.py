"""Judges of lookahead reasoning: does a drafted step say what the target's own step says?

- `exact`: equal after normalising whitespace and case. Every judge tries it first (no model call).
- `embedding`: cosine similarity of all-MiniLM-L6-v2 sentence embeddings (the router's packaged encoder,
  `specsel.selection.router.embed`) at or above a threshold, to be calibrated on labelled step pairs.
- `llm`: a local causal LM (by default the target itself) asked the alignment question of OnlineSpec's Table 5 in
  its chat template; the answer is read greedily at temperature 0 as one token after the assistant's opening "[":
  the first token of "aligned" against the first token of "unaligned" (the two answers differ there), so the call
  is one forward pass.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Protocol

import torch

JUDGES = ("exact", "embedding", "llm")
PAIRS = Path(__file__).parent / "data" / "judge_pairs.jsonl"  # labelled step pairs (drafted, target, aligned)
# written for this project: paraphrases of one step, and steps that differ in meaning, many only in a number
ALIGN_PROMPT = (
    "Evaluate whether the following two reasoning steps (s1 and s2) convey exactly the same meaning. Focus on "
    "semantic similarity rather than exact wording. Compare the main ideas, key points, overall message, logical "
    "structure, and numerical calculations/results of both reasoning steps. If the reasoning steps convey essentially "
    "the same meaning and generate same calculation results, respond with [aligned]. If the reasoning steps express "
    "different meanings, respond with [unaligned]. If it is too hard to determine, respond with [unaligned] Please "
    "directly provide the final result in [aligned] or [unaligned]. Reasoning step 1 (s1):\n<start_s1>\n{draft}\n"
    "<end_s1>\nReasoning step 2 (s2):\n<start_s2>\n{target}\n<end_s2>"
)  # OnlineSpec (Table 5), the alignment question of its Online-LR experiments


class Judge(Protocol):
    name: str

    def __call__(self, drafted: str, target: str) -> bool: ...


def normalize(text: str) -> str:
    """Whitespace runs -> one space, trimmed, lower case."""
    return " ".join(text.split()).lower()


class ExactJudge:
    name = "exact"

    def __call__(self, drafted: str, target: str) -> bool:
        return normalize(drafted) == normalize(target)


_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)*")


def last_number(text: str) -> str | None:
    """The step's last number (its result, in a calculation step), thousands separators dropped; None if none."""
    found = _NUMBER.findall(text)
    return found[-1].replace(",", "") if found else None


class EmbeddingJudge:
    """Exact match, else cosine(embed(drafted), embed(target)) >= threshold and, with `numbers`, the same last number
    in both steps (sentence embeddings barely see a changed digit: on the shipped pairs, steps that differ only in
    a result score 0.97-0.99)."""

    name = "embedding"

    def __init__(self, threshold: float, numbers: bool = True):
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"embedding judge threshold must be in [0, 1], got {threshold}")
        self.threshold, self.numbers = threshold, numbers

    def similarity(self, drafted: str, target: str) -> float:
        from specsel.selection.router import embed

        a, b = embed([drafted, target])  # unit-norm rows
        return float(a @ b)

    def __call__(self, drafted: str, target: str) -> bool:
        if ExactJudge()(drafted, target):
            return True
        if self.numbers and last_number(drafted) != last_number(target):
            return False  # rule: different results are never the same step
        return self.similarity(drafted, target) >= self.threshold


class LLMJudge:
    """Exact match, else the causal LM's verdict on the Table 5 question (one forward pass, greedy)."""

    name = "llm"

    def __init__(self, model, tokenizer):
        self.model, self.tok = model.eval(), tokenizer
        first = [tokenizer(w, add_special_tokens=False)["input_ids"][0] for w in ("aligned", "unaligned")]
        if first[0] == first[1]:
            raise ValueError("the judge's tokenizer starts 'aligned' and 'unaligned' with the same token")
        self.aligned_id, self.unaligned_id = first

    def prompt_ids(self, drafted: str, target: str) -> list[int]:
        """The chat-templated question followed by the assistant's opening "["."""
        msgs = [{"role": "user", "content": ALIGN_PROMPT.format(draft=drafted, target=target)}]
        text = self.tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True) + "["
        return self.tok(text, add_special_tokens=False)["input_ids"]

    @torch.inference_mode()
    def __call__(self, drafted: str, target: str) -> bool:
        if ExactJudge()(drafted, target):
            return True
        device = next(self.model.parameters()).device
        logits = self.model(input_ids=torch.tensor([self.prompt_ids(drafted, target)], device=device)).logits[0, -1]
        # rule: temperature 0 over the two answers: aligned iff its first token scores above unaligned's
        return bool(logits[self.aligned_id] > logits[self.unaligned_id])


def make_judge(name: str, threshold: float = 0.9, model_path: str | None = None, target=None) -> Judge:
    """A judge by name: exact, embedding (threshold in [0, 1]), llm (a causal LM folder at `model_path`, or the
    given target (model, tokenizer) when no path is given)."""
    if name not in JUDGES:
        raise ValueError(f"unknown judge {name!r}: choose from {', '.join(JUDGES)}")
    if name == "exact":
        return ExactJudge()
    if name == "embedding":
        return EmbeddingJudge(threshold)
    if model_path:
        from pathlib import Path

        from transformers import AutoModelForCausalLM, AutoTokenizer

        if not Path(model_path).is_dir():
            raise ValueError(f"judge model path {model_path} is not a folder")
        return LLMJudge(AutoModelForCausalLM.from_pretrained(model_path), AutoTokenizer.from_pretrained(model_path))
    if target is None:
        raise ValueError("the llm judge needs a model path or the target (model, tokenizer)")
    return LLMJudge(*target)


def load_pairs(path: str | Path = PAIRS) -> list[dict]:
    """Labelled step pairs, one JSON object per line: {"drafted": str, "target": str, "aligned": bool}."""
    pairs = []
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not (isinstance(row.get("drafted"), str) and isinstance(row.get("target"), str)
                and isinstance(row.get("aligned"), bool)):
            raise ValueError(f"{path}:{n}: a pair needs str drafted, str target and bool aligned")
        pairs.append(row)
    return pairs


def precision_recall(verdicts: list[bool], labels: list[bool]) -> tuple[float, float]:
    """(precision, recall) of `aligned` verdicts against the labels (precision 1.0 when nothing is called aligned)."""
    tp = sum(v and y for v, y in zip(verdicts, labels))
    called, positive = sum(verdicts), sum(labels)
    return (tp / called if called else 1.0), (tp / positive if positive else 1.0)


def calibrate(scores: list[float], labels: list[bool], min_precision: float = 0.9) -> dict:
    """The lowest threshold on `scores` (the embedding judge's similarities) whose precision is >= min_precision,
    i.e. the most recall at that precision; with its precision and recall, and the whole curve."""
    if not 0.0 <= min_precision <= 1.0:
        raise ValueError(f"min_precision must be in [0, 1], got {min_precision}")
    curve = []
    for t in sorted(set(scores)):
        p, r = precision_recall([s >= t for s in scores], labels)
        curve.append({"threshold": t, "precision": p, "recall": r})
    ok = [c for c in curve if c["precision"] >= min_precision]
    best = ok[0] if ok else {"threshold": 1.0, **dict(zip(("precision", "recall"),
                                                           precision_recall([s >= 1.0 for s in scores], labels)))}
    return {**best, "min_precision": min_precision, "pairs": len(labels), "curve": curve}
