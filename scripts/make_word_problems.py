"""Write data_gen/problems/math_word_problems.jsonl: checkable math word problems for the lookahead benchmark.

    python scripts/make_word_problems.py [--per-template 9] [--seed 0]

Each template below was written for this project; its numbers are drawn from a seeded generator and its answer is
computed from them, so every problem has one exact numeric answer. Rows: id, question, answer, group (the template),
split ("stream": the online stream, "eval": held out), about a quarter of each template's problems held out.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "data_gen" / "problems" / "math_word_problems.jsonl"


def T(group, text, answer, **ranges):
    return {"group": group, "text": text, "answer": answer, "ranges": ranges}


TEMPLATES = [
    T("eggs", "Each box holds {a} eggs. A farmer fills {b} boxes and has {c} eggs left over. How many eggs did the "
      "farmer have?", lambda a, b, c: a * b + c, a=(6, 24), b=(3, 15), c=(1, 5)),
    T("change", "Maya buys {a} notebooks at ${b} each and pays with a ${c} bill. How much change does she get?",
      lambda a, b, c: c - a * b, a=(2, 6), b=(2, 8), c=(50, 50)),
    T("speed", "A train travels at {a} km per hour for {b} hours, then at {c} km per hour for 2 more hours. How many "
      "kilometres does it travel?", lambda a, b, c: a * b + 2 * c, a=(40, 120), b=(2, 6), c=(30, 90)),
    T("pages", "Leo reads {a} pages every day. His book has {b} pages. After {c} days, how many pages are left?",
      lambda a, b, c: b - a * c, a=(10, 30), b=(400, 600), c=(3, 9)),
    T("rectangle", "A garden is {a} metres long and {b} metres wide. Fencing costs ${c} per metre. How much does it "
      "cost to fence the whole garden?", lambda a, b, c: 2 * (a + b) * c, a=(5, 30), b=(4, 20), c=(2, 9)),
    T("discount", "A jacket costs ${a}0. It is on sale for {b}0% off. What is the sale price in dollars?",
      lambda a, b: a * 10 * (10 - b) / 10, a=(4, 20), b=(1, 5)),
    T("average", "Sam scored {a}, {b} and {c} on three tests. What score does he need on a fourth test to average "
      "exactly {d}?", lambda a, b, c, d: 4 * d - a - b - c, a=(60, 90), b=(60, 90), c=(60, 90), d=(75, 85)),
    T("shares", "{a} friends share {b} stickers equally, and each friend then gives {c} stickers to a sibling. How "
      "many stickers does each friend keep?", lambda a, b, c: b // a - c, a=(3, 8), b=(0, 0), c=(1, 4),
      _b=lambda rng, a: a * rng.randint(8, 20)),
    T("ages", "Ana is {a} years old. Her father is {b} times her age. How old will her father be in {c} years?",
      lambda a, b, c: a * b + c, a=(5, 12), b=(3, 5), c=(2, 10)),
    T("coins", "A jar has {a} quarters and {b} dimes. How many cents are in the jar?",
      lambda a, b: 25 * a + 10 * b, a=(4, 40), b=(5, 50)),
    T("workers", "A factory makes {a} toys per hour on each of {b} machines. How many toys are made in a {c}-hour "
      "shift?", lambda a, b, c: a * b * c, a=(12, 60), b=(2, 9), c=(6, 10)),
    T("minutes", "A movie lasts {a} hours and {b} minutes. How many minutes is that in total?",
      lambda a, b: 60 * a + b, a=(1, 3), b=(5, 55)),
    T("apples", "Tom picks {a} apples. He gives {b} to his sister and then picks twice as many as he has left. How "
      "many apples does he have now?", lambda a, b: 3 * (a - b), a=(20, 60), b=(3, 15)),
    T("savings", "Priya saves ${a} each week. How many weeks does she need to save at least ${b}?",
      lambda a, b: -(-b // a), a=(7, 25), b=(100, 400)),
    T("perimeter", "A square has a perimeter of {a} cm. What is its area in square centimetres?",
      lambda a: (a // 4) ** 2, a=(0, 0), _a=lambda rng: 4 * rng.randint(3, 25)),
    T("tickets", "Adult tickets cost ${a} and child tickets cost ${b}. A family buys {c} adult and {d} child "
      "tickets. What is the total cost?", lambda a, b, c, d: a * c + b * d, a=(9, 20), b=(4, 8), c=(1, 4),
      d=(1, 5)),
    T("recipe", "A recipe needs {a} grams of flour for {b} cookies. How many grams of flour are needed for {c} "
      "cookies?", lambda a, b, c: a * c // b, a=(0, 0), b=(6, 12), c=(0, 0),
      _a=lambda rng, b: b * rng.randint(10, 30), _c=lambda rng, b: b * rng.randint(2, 6)),
    T("buses", "{a} students go on a trip. Each bus holds {b} students. How many buses are needed?",
      lambda a, b: -(-a // b), a=(60, 300), b=(20, 45)),
    T("temperature", "The temperature was {a} degrees at noon. It dropped {b} degrees by evening and rose {c} degrees "
      "by the next noon. What was the temperature then?", lambda a, b, c: a - b + c, a=(5, 30), b=(8, 20),
      c=(2, 15)),
    T("marbles", "A bag has {a} red marbles, {b} blue marbles and twice as many green marbles as red ones. How many "
      "marbles are in the bag?", lambda a, b: a + b + 2 * a, a=(3, 20), b=(2, 15)),
    T("rent", "Three roommates split a monthly rent of ${a}0 equally. How much does each pay over {b} months?",
      lambda a, b: a * 10 // 3 * b, a=(0, 0), b=(2, 12), _a=lambda rng: 3 * rng.randint(20, 60)),
    T("garden_rows", "A gardener plants {a} rows of {b} tulips and {c} rows of {d} roses. How many flowers does she "
      "plant?", lambda a, b, c, d: a * b + c * d, a=(3, 12), b=(5, 15), c=(2, 8), d=(4, 12)),
    T("percent", "Out of {a}0 students, {b}0% walk to school. How many students walk?",
      lambda a, b: a * b, a=(2, 30), b=(1, 9)),
    T("cycling", "Ravi cycles {a} km to school and back every day, {b} days a week. How many km does he cycle in "
      "{c} weeks?", lambda a, b, c: 2 * a * b * c, a=(2, 9), b=(4, 6), c=(2, 8)),
    T("boxes_weight", "A box weighs {a} kg empty. It holds {b} books of {c} kg each. What is the total weight in "
      "kg?", lambda a, b, c: a + b * c, a=(1, 5), b=(5, 30), c=(1, 3)),
]


def _args(f) -> tuple[str, ...]:
    return f.__code__.co_varnames[:f.__code__.co_argcount]


def instance(t: dict, rng: random.Random) -> tuple[str, float]:
    """(question, answer): numbers drawn in their ranges; a "_name" entry derives that number from the others
    (e.g. a total that divides evenly), drawing from the same generator."""
    values = {k: rng.randint(*r) for k, r in t["ranges"].items() if not k.startswith("_")}
    for k, f in t["ranges"].items():
        if k.startswith("_"):
            values[k[1:]] = f(rng, *[values[n] for n in _args(f)[1:]])
    return t["text"].format(**values), t["answer"](*[values[n] for n in _args(t["answer"])])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--per-template", type=int, default=9)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rows = []
    for t in TEMPLATES:
        rng = random.Random(f"{args.seed}-{t['group']}")
        seen = set()
        while len(seen) < args.per_template:
            q, a = instance(t, rng)
            if q in seen:
                continue
            seen.add(q)
            n = len(seen) - 1
            rows.append({"id": "wp-" + hashlib.sha1(q.encode()).hexdigest()[:12], "question": q,
                         "answer": int(a) if float(a).is_integer() else a, "group": f"word/{t['group']}",
                         "split": "eval" if n % 4 == 3 else "stream"})
    OUT.parent.mkdir(parents=True, exist_ok=True)
    tmp = OUT.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    tmp.replace(OUT)
    print(f"wrote {len(rows)} problems ({sum(r['split'] == 'eval' for r in rows)} held out) to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
