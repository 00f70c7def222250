"""Natural rewordings of a prompt: the same question wrapped the way a real user might send it.

The offline-router experiment (HedgeSpec, Sec. 4.5) shows that a classifier trained on clean domain prompts
misroutes natural prompt variations. `perturb` wraps a prompt in one of these variations: a chatty prefix, a suffix,
or both (casual lowercase openers, requests for a tone or a format, a story or homework frame, a colleague or a doctor
friend asking, the paper's own "generate two answers" instruction). Some wrappers mention another topic's vocabulary
where that is natural ("for my biology homework's data part: <sql question>"); `perturbed_prompts` never gives a
prompt a wrapper on its own topic, so every wrapper either is topic-neutral or points away from the true domain.

The original prompt always stays inside verbatim (never lowercased: lowercasing would change code identifiers and
chemical formulas such as CO / Co); the wrapper is chosen by a hash of (seed, prompt), so it is deterministic.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from data_gen.domains import check_domain, domain_prompts

# the HedgeSpec paper's own natural variation (Sec. 4.5), which misrouted 98% of MedQA and 90% of math queries
PAPER_INSTRUCTION = ("Please carefully read the question. After that, please generate two answers to validate it. "
                     "Output the one you think works well.")


@dataclass(frozen=True)
class Template:
    name: str
    prefix: str
    suffix: str = ""
    topic: str | None = None  # the domain whose vocabulary the wrapper borrows (None: topic-neutral)

    def apply(self, prompt: str) -> str:
        return f"{self.prefix}{prompt}{self.suffix}"


TEMPLATES: tuple[Template, ...] = (
    # topic-neutral wrappers
    Template("colleague", "My colleague asked me this and I'm not sure how to reply: "),
    Template("meeting", "Quick one before my meeting — "),
    Template("eli5", "Explain like I'm five: "),
    Template("story", "I'm writing a short story where a character needs to know the following. ",
             " Keep it accurate, the plot depends on it."),
    Template("friendly", "Answer in a friendly tone, please. "),
    Template("two_answers", PAPER_INSTRUCTION + "\n\n"),
    Template("casual_hey", "hey so i was wondering about this, no rush lol\n\n", "\n\nthx!!"),
    Template("casual_ok", "ok random question while im making dinner: ", " (sorry if thats a dumb question)"),
    Template("phone", "Can you help? ", " Please keep it short, I'm reading this on my phone."),
    Template("exam", "I have an exam tomorrow and I'm revising. ", " If you can, add a short tip to remember it."),
    Template("kid", "My kid asked me this at breakfast and I want to get it right: "),
    Template("double_check", "I think I know the answer but I want to double-check. ", " Thanks in advance!"),
    Template("bakery", "I run a small bakery and I'm learning new things in my spare time. "),
    # wrappers that borrow another topic's vocabulary, the way people do give context
    Template("biology_homework", "For the data part of my biology homework: ", topic="biology"),
    Template("doctor_friend", "My doctor friend asked me this over dinner and I couldn't answer: ", topic="medical"),
    Template("nurse_shift", "I'm a nurse on a night shift and this came up during my break. ", topic="medical"),
    Template("chemistry_teacher", "Our chemistry teacher gave us this as a bonus question, no idea why: ",
             topic="chemistry"),
    Template("meeting_notes", "Before I summarize today's meeting notes for the team, I need this sorted out. ",
             " Then give me a one-line summary of your answer.", topic="summarization"),
    Template("python_debugging", "I'm debugging a Python script and got sidetracked by this: ", topic="python"),
    Template("sql_report", "While writing a SQL report for my manager, this question came up: ", topic="sql"),
    Template("math_tutor", "My math tutor says this is easy but I'm stuck. ", " Show your reasoning.",
             topic="math"),
)
TEMPLATE_NAMES = tuple(t.name for t in TEMPLATES)
assert len(set(TEMPLATE_NAMES)) == len(TEMPLATES)


def eligible_templates(avoid_topic: str | None = None) -> tuple[Template, ...]:
    """The templates that do not borrow `avoid_topic`'s vocabulary (all of them for None)."""
    return tuple(t for t in TEMPLATES if avoid_topic is None or t.topic != avoid_topic)


def pick_template(prompt: str, seed: int, avoid_topic: str | None = None) -> Template:
    """The template `perturb` uses for (prompt, seed): a sha256 of both picks it (no process-dependent hashing)."""
    if not isinstance(prompt, str):
        raise TypeError(f"prompt must be a str, got {type(prompt).__name__}")
    choices = eligible_templates(avoid_topic)
    digest = hashlib.sha256(f"{int(seed)}\0{prompt}".encode()).digest()
    return choices[int.from_bytes(digest[:8], "big") % len(choices)]


def perturb(prompt: str, seed: int, avoid_topic: str | None = None) -> str:
    """`prompt` wrapped in a natural instruction variation chosen by (seed, prompt); the prompt stays inside verbatim.

    avoid_topic: a domain whose vocabulary the wrapper must not borrow (the prompt's own domain, so that the wrapper
    is neutral or points elsewhere).
    """
    return pick_template(prompt, seed, avoid_topic).apply(prompt)


def perturbed_prompts(domain: str, split: str = "held_out", seed: int = 0) -> list[dict]:
    """A domain's prompts of `split`, each wrapped by `perturb`: the same ids and sources, plus "perturbed": True,
    "original" (the clean prompt) and "template" (the wrapper's name). A prompt never gets a wrapper on its own
    source's topic."""
    check_domain(domain)
    rows = domain_prompts(domain)
    if split not in rows:
        raise ValueError(f"unknown split {split!r}; splits: {', '.join(rows)}")
    out = []
    for row in rows[split]:
        t = pick_template(row["prompt"], seed, avoid_topic=row["source"])
        out.append({**row, "prompt": t.apply(row["prompt"]), "perturbed": True, "original": row["prompt"],
                    "template": t.name})
    return out
