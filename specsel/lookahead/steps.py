"""Reasoning steps, the unit lookahead reasoning drafts and judges.

A step is what a model generates up to and including the step delimiter ("\n\n" by default), or up to a cap of
`max_tokens` tokens. The cut is made on token ids: a step ends with the first token whose text completes the
delimiter (that whole token stays in the step), so steps concatenate back to the generated ids exactly and nothing
is re-tokenised across a boundary.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StepSpec:
    delimiter: str = "\n\n"
    max_tokens: int = 100

    def __post_init__(self) -> None:
        if not self.delimiter:
            raise ValueError("the step delimiter must be a non-empty string")
        if self.max_tokens < 1:
            raise ValueError(f"step max_tokens must be >= 1, got {self.max_tokens}")


class StepCutter:
    """Where steps end, for one tokenizer and StepSpec."""

    def __init__(self, tokenizer, spec: StepSpec | None = None):
        self.tok, self.spec = tokenizer, spec or StepSpec()

    def text(self, ids: list[int]) -> str:
        return self.tok.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)

    def delimited(self, step: list[int]) -> bool:
        """Whether the step's text holds the delimiter (a drafted step without it is rejected unjudged)."""
        return self.spec.delimiter in self.text(step)

    def ends(self, step: list[int]) -> bool:
        """Whether a step in progress is complete: its last token completed the delimiter, or it reached the cap."""
        return len(step) >= self.spec.max_tokens or self.delimited(step)

    def split(self, ids: list[int]) -> list[list[int]]:
        """ids -> consecutive steps (the last one possibly unfinished); their concatenation is `ids`."""
        steps, cur = [], []
        for t in ids:
            cur.append(t)
            # rule: one check per appended token, so the cut falls right after the completing token
            if self.ends(cur):
                steps.append(cur)
                cur = []
        return steps + ([cur] if cur else [])
