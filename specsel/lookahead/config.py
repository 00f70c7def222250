"""The lookahead-reasoning settings (serving recipe section `lookahead:` and the benchmark), checked up front, and
the reasoner they build. Problem prompt of OnlineSpec Table 6 for math requests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from draftpool.config import field
from specsel.lookahead.generate import StepLM
from specsel.lookahead.judges import JUDGES, make_judge
from specsel.lookahead.lookahead import TRANSITION, Budget, LookaheadReasoner
from specsel.lookahead.steps import StepCutter, StepSpec

MATH_PROMPT = ("{question}\nPlease reason step by step, and put your final answer within \\boxed{{}}. Once a full "
               "round of reasoning is completed, do not check again, immediately cease reasoning, and output the "
               "answer.")


def problem_prompt(question: str) -> str:
    """OnlineSpec Table 6: the problem-solving prompt for math reasoning."""
    return MATH_PROMPT.format(question=question)


@dataclass
class LookaheadConfig:
    drafter: str = field("", help="the pool's Llama step drafter to serve ('' = its only Llama drafter)")
    judge: str = field("embedding", help="exact | embedding | llm")
    threshold: float = field(0.697, help="embedding judge: cosine threshold in [0, 1] (calibrated: python -m "
                                         "benchmarks.judge_calibration)")
    judge_model: str = field("", help="llm judge: a causal LM folder ('' = the target itself)")
    gamma: int = field(4, help="steps drafted per round")
    delimiter: str = field("\n\n", help="step delimiter (kept in the step)")
    max_step_tokens: int = field(100, help="step cap in tokens")
    thinking_budget: int = field(0, help="new tokens before the transition instruction is injected (0: off)")
    problem_prompt: bool = field(False, help="wrap each request in the math problem-solving prompt (Table 6)")

    def validate(self) -> None:
        if self.judge not in JUDGES:
            raise ValueError(f"unknown judge {self.judge!r}: choose from {', '.join(JUDGES)}")
        if not 0.0 <= self.threshold <= 1.0:
            raise ValueError(f"lookahead.threshold must be in [0, 1], got {self.threshold}")
        if self.judge_model and not (Path(self.judge_model) / "config.json").is_file():
            raise ValueError(f"lookahead.judge_model {self.judge_model}: no model there (config.json missing)")
        if self.gamma < 1 or self.thinking_budget < 0:
            raise ValueError("lookahead.gamma must be >= 1 and thinking_budget >= 0")
        StepSpec(self.delimiter, self.max_step_tokens)  # refuses an empty delimiter or a cap < 1

    def spec(self) -> StepSpec:
        return StepSpec(self.delimiter, self.max_step_tokens)

    def build(self, target, tok, drafter, eos_ids: set[int]) -> LookaheadReasoner:
        """The reasoner over the target and the step drafter (modules on one tokenizer)."""
        self.validate()
        cutter = StepCutter(tok, self.spec())
        judge = make_judge(self.judge, self.threshold, self.judge_model or None, target=(target, tok))
        transition = tok(TRANSITION, add_special_tokens=False)["input_ids"]
        return LookaheadReasoner(StepLM(target, eos_ids, cutter), StepLM(drafter, eos_ids, cutter), judge, cutter,
                                 self.gamma, Budget(self.thinking_budget, transition))
