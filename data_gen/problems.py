"""Checkable math word problems (`data_gen/problems/math_word_problems.jsonl`, written by
`scripts/make_word_problems.py`): an online stream and a held-out evaluation split, and the answer check.

An answer is read from the last `\\boxed{...}` of a response (the problem prompt asks for it), else from its last
number; it is correct when it equals the problem's answer within 1e-6 (relative).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

PROBLEMS = Path(__file__).parent / "problems" / "math_word_problems.jsonl"
SPLITS = ("stream", "eval")
_BOXED = re.compile(r"\\boxed\{([^{}]*)\}")
_NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?")


def load_problems(split: str, path: str | Path = PROBLEMS) -> list[dict]:
    """[{"id", "question", "answer", "group", "split"}] of one split, in file order."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}: choose from {', '.join(SPLITS)}")
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return [r for r in rows if r["split"] == split]


def extract_answer(text: str) -> float | None:
    """The number in the last \\boxed{...}, else the last number of the text; None when there is none."""
    boxed = _BOXED.findall(text)
    for source in ([boxed[-1]] if boxed else []) + [text]:
        found = _NUMBER.findall(source)
        if found:
            return float(found[-1].replace(",", ""))
    return None


def is_correct(text: str, answer: float) -> bool:
    got = extract_answer(text)
    return got is not None and abs(got - answer) <= 1e-6 * max(1.0, abs(answer))
