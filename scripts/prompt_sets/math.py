"""Math prompt set: word problems, algebra, percentages, fractions, geometry, probability,
sequences, units, calculus, statistics and number theory, with seeded numbers."""

import random
from fractions import Fraction

from data_gen.domains import NEAR_DUPLICATE_JACCARD, prompt_tokens, token_jaccard

_PEOPLE = [
    ("Maya", "she", "her"), ("Liam", "he", "his"), ("Priya", "she", "her"),
    ("Diego", "he", "his"), ("Hana", "she", "her"), ("Tom", "he", "his"),
    ("Amara", "she", "her"), ("Jonas", "he", "his"), ("Sofia", "she", "her"),
    ("Kenji", "he", "his"), ("Leila", "she", "her"), ("Marcus", "he", "his"),
    ("Ingrid", "she", "her"), ("Omar", "he", "his"), ("Chloe", "she", "her"),
    ("Ravi", "he", "his"),
]

_SUFFIXES = [
    "", "", "", " Show your work.", " Explain step by step.", " Explain your reasoning briefly.",
    " Give the final answer on its own line.",
]


def _money(cents: int) -> str:
    if cents % 100 == 0:
        return f"${cents // 100}"
    return f"${cents // 100}.{cents % 100:02d}"


def _num(x: float) -> str:
    """Format a number without a trailing .0."""
    if float(x).is_integer():
        return str(int(x))
    return f"{x:g}"


def _poly(terms: list[tuple[int, int]]) -> str:
    """Format [(coef, power), ...] as a polynomial in x, e.g. 3x^2 - x + 4."""
    parts = []
    for coef, power in terms:
        if coef == 0:
            continue
        size = abs(coef)
        if power == 0:
            body = str(size)
        else:
            body = ("" if size == 1 else str(size)) + ("x" if power == 1 else f"x^{power}")
        parts.append(("-" if coef < 0 else "+", body))
    text = ("-" if parts[0][0] == "-" else "") + parts[0][1]
    for sign, body in parts[1:]:
        text += f" {sign} {body}"
    return text


def _frac(f: Fraction) -> str:
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def _cap(text: str) -> str:
    return text[0].upper() + text[1:]


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _article(n: int) -> str:
    """Indefinite article for a number read aloud: 'an 18', 'an 8', 'a 15'."""
    text = str(n)
    return "an" if text.startswith("8") or text in ("11", "18") else "a"


# ---------------------------------------------------------------- arithmetic word problems

def _change(r: random.Random) -> str:
    who, subj, _ = r.choice(_PEOPLE)
    item, items, lo, hi = r.choice([
        ("notebook", "notebooks", 150, 450), ("sandwich", "sandwiches", 375, 899),
        ("bus ticket", "bus tickets", 125, 300), ("pack of stickers", "packs of stickers", 99, 250),
        ("coffee", "coffees", 250, 525), ("pencil", "pencils", 35, 95),
        ("bag of apples", "bags of apples", 199, 449), ("movie ticket", "movie tickets", 850, 1400),
    ])
    count = r.randint(2, 6)
    price = r.randrange(lo, hi, 5)
    total = price * count
    bill = next(b for b in (500, 1000, 2000, 5000, 10000) if b > total)
    return (f"{who} buys {count} {items} at {_money(price)} each and pays with a {_money(bill)} "
            f"bill. How much change does {subj} get back?")


def _speed(r: random.Random) -> str:
    vehicle = r.choice(["train", "cyclist", "delivery van", "ferry", "coach bus", "runner", "drone"])
    speed = {"cyclist": r.randint(12, 28), "runner": r.randint(8, 14),
             "drone": r.randint(30, 60)}.get(vehicle, r.randint(40, 120))
    hours = r.choice([1.5, 2, 2.5, 3, 4, 0.75])
    dist = speed * hours
    style = r.randint(0, 2)
    if style == 0:
        return (f"A {vehicle} travels at {speed} km/h for {_num(hours)} hours. How far does the "
                f"{vehicle} go?")
    if style == 1:
        return (f"How long does it take a {vehicle} moving at a steady {speed} km/h to cover "
                f"{_num(dist)} km? Give the answer in hours and minutes.")
    return (f"A {vehicle} covers {_num(dist)} km in {_num(hours)} hours. What is the {vehicle}'s "
            f"average speed in km/h?")


def _avg_speed(r: random.Random) -> str:
    v1, v2 = r.choice([(60, 40), (30, 60), (90, 60), (20, 30), (50, 75), (40, 120)])
    d = r.choice([60, 120, 180, 240])
    who, subj, _ = r.choice(_PEOPLE)
    return (f"{who} drives {d} km to a town at {v1} km/h and returns the same way at {v2} km/h. "
            f"What is {who}'s average speed for the whole round trip? Explain why it is not "
            f"simply {_num((v1 + v2) / 2)} km/h.")


def _split_bill(r: random.Random) -> str:
    n = r.randint(3, 8)
    tip = r.choice([10, 15, 18, 20])
    per = r.randrange(1500, 4500, 50)
    bill = per * n
    place = r.choice(["a pizza dinner", "a sushi lunch", "a birthday meal", "a team dinner",
                      "brunch"])
    return (f"{n} friends share the bill for {place}, which comes to {_money(bill)} before the "
            f"tip. They add {_article(tip)} {tip}% tip and split everything equally. How much does each "
            f"person pay?")


def _work_rate(r: random.Random) -> str:
    a, b = r.choice([(3, 6), (4, 12), (10, 15), (2, 3), (5, 20), (6, 12), (20, 30), (12, 24)])
    who1, _, _ = r.choice(_PEOPLE)
    who2 = r.choice([p for p in _PEOPLE if p[0] != who1])[0]
    style = r.randint(0, 2)
    if style == 0:
        return (f"{who1} can paint a fence in {a} hours, and {who2} can paint the same fence in "
                f"{b} hours. How long does it take them working together?")
    if style == 1:
        return (f"One pipe fills a tank in {a} hours and a second pipe fills it in {b} hours. "
                f"If both pipes are opened at once, how long does it take to fill the tank?")
    return (f"Printer A finishes a print job in {a} minutes and printer B in {b} minutes. "
            f"If the job is split so both work at the same time until it is done, how many "
            f"minutes does it take?")


def _bakery(r: random.Random) -> str:
    trays, per_tray = r.randint(4, 12), r.choice([6, 8, 12, 16, 24])
    made = trays * per_tray
    sold = r.randint(made // 2, made - 5)
    days = r.choice([5, 6, 7])
    good = r.choice(["muffins", "bagels", "croissants", "cookies", "rolls"])
    return (f"A bakery bakes {trays} trays of {per_tray} {good} every morning. On average it "
            f"sells {sold} {good} a day and donates the rest. How many {good} does it donate "
            f"over {days} days?")


def _ages(r: random.Random) -> str:
    who, _, poss = r.choice(_PEOPLE)
    rel = r.choice(["daughter", "son", "niece", "nephew"])
    while True:
        child = r.randint(3, 16)
        k = r.choice([2, 3, 4, 5, 6, 7, 8])
        if 22 <= k * child <= 60 and (k - 1) * child >= 20:
            break
    years = r.randint(2, 10)
    total = (k + 1) * child + 2 * years
    return (f"{who} is {k} times as old as {poss} {rel}. In {years} years, the sum of their ages "
            f"will be {total}. How old is each of them now?")


def _savings(r: random.Random) -> str:
    who, subj, _ = r.choice(_PEOPLE)
    thing = r.choice(["bicycle", "game console", "guitar", "pair of skis", "tablet", "telescope"])
    cost = r.randrange(180, 900, 10)
    have = r.randrange(20, cost // 2, 5)
    weekly = r.choice([15, 20, 25, 30, 35, 40])
    return (f"{who} wants a {thing} that costs ${cost}. {_cap(subj)} already has ${have} and "
            f"saves ${weekly} every week. After how many weeks can {subj} afford it?")


def _better_deal(r: random.Random) -> str:
    product, unit = r.choice([("rice", "kg"), ("olive oil", "liter"), ("coffee beans", "kg"),
                              ("laundry detergent", "liter"), ("dog food", "kg")])
    n1, n2 = r.choice([(1, 3), (2, 5), (0.5, 2), (1.5, 4), (1, 2.5)])
    p1 = r.randrange(300, 900, 5)
    p2 = int(p1 * n2 / n1 * r.choice([0.85, 0.9, 0.95, 1.05])) // 5 * 5
    return (f"A {_num(n1)} {unit} pack of {product} costs {_money(p1)}, and a {_num(n2)} {unit} "
            f"pack costs {_money(p2)}. Which is the better deal per {unit}, and by how much?")


def _clock(r: random.Random) -> str:
    h, m = r.randint(8, 19), r.choice([5, 10, 15, 20, 25, 35, 40, 45, 50, 55])
    dh, dm = r.randint(1, 5), r.choice([15, 25, 30, 40, 45, 50, 55])
    event = r.choice(["A train journey", "A concert", "A flight", "An exam", "A hike",
                      "A board game marathon"])
    if r.random() < 0.5:
        return (f"{event} starts at {h:02d}:{m:02d} and lasts {_plural(dh, 'hour')} and {dm} minutes. "
                f"At what time does it end?")
    end = (h * 60 + m + dh * 60 + dm) % (24 * 60)
    return (f"{event} starts at {h:02d}:{m:02d} and ends at {end // 60:02d}:{end % 60:02d} the "
            f"same day. How long does it last?")


def _overtime(r: random.Random) -> str:
    who, subj, _ = r.choice(_PEOPLE)
    rate = r.choice([14, 16, 18, 20, 22, 24, 26, 30])
    hours = r.randint(42, 55)
    return (f"{who} earns ${rate} an hour and is paid time-and-a-half for every hour over 40 in "
            f"a week. How much does {subj} earn in a week with {hours} hours of work?")


def _ratio(r: random.Random) -> str:
    a, b = r.choice([(2, 3), (3, 4), (3, 5), (4, 7), (5, 3), (1, 4)])
    k = r.randint(3, 9)
    total = (a + b) * k
    style = r.randint(0, 2)
    if style == 0:
        return (f"The ratio of cats to dogs at a shelter is {a}:{b}, and there are {total} "
                f"animals in all. How many cats and how many dogs are there?")
    if style == 1:
        return (f"A paint mix uses blue and white paint in the ratio {a}:{b}. How many liters of "
                f"white paint go with {a * k} liters of blue?")
    return (f"Two partners split a profit of ${total * 100} in the ratio {a}:{b}. How much does "
            f"each partner receive?")


# ---------------------------------------------------------------- algebra

def _linear(r: random.Random) -> str:
    x = r.randint(-9, 12)
    a = r.choice([2, 3, 4, 5, 6, 7, 8])
    b = r.randint(-15, 20)
    style = r.randint(0, 3)
    if style == 0:
        return f"Solve for x: {_poly([(a, 1), (b, 0)])} = {a * x + b}."
    if style == 1:
        return f"Solve {a}({_poly([(1, 1), (-b, 0)])}) = {a * (x - b)} for x."
    if style == 2:
        c = r.randint(1, a - 1) if a > 1 else 1
        d = (a - c) * x + b
        return (f"Find x if {_poly([(a, 1), (b, 0)])} = {_poly([(c, 1), (d, 0)])}. Check your "
                f"answer by substituting it back.")
    x = a * r.randint(-4, 6)
    lhs = f"x/{a} + {b}" if b >= 0 else f"x/{a} - {-b}"
    return f"What value of x makes {lhs} = {x // a + b} true?"


def _system(r: random.Random) -> str:
    while True:
        x, y = r.randint(-5, 8), r.randint(-5, 8)
        a, b, d, e = (r.randint(1, 6) for _ in range(4))
        if a * (-e) - b * d != 0:
            break
    eq1 = f"{_poly([(a, 1)])} + {_poly([(b, 1)]).replace('x', 'y')} = {a * x + b * y}"
    eq2 = f"{_poly([(d, 1)])} - {_poly([(e, 1)]).replace('x', 'y')} = {d * x - e * y}"
    verb = r.choice(["Solve the system", "Solve by elimination", "Use substitution to solve"])
    return f"{verb}: {eq1} and {eq2}."


def _quadratic(r: random.Random) -> str:
    r1, r2 = r.randint(-9, 9), r.randint(-9, 9)
    expr = _poly([(1, 2), (-(r1 + r2), 1), (r1 * r2, 0)])
    style = r.randint(0, 2)
    if style == 0:
        return f"Solve {expr} = 0 by factoring."
    if style == 1:
        return f"Use the quadratic formula to find the roots of {expr} = 0."
    return f"For which values of x is {expr} equal to zero? Explain how you found them."


def _expand(r: random.Random) -> str:
    a, b, c = r.randint(1, 9), r.randint(1, 9), r.randint(2, 5)
    style = r.randint(0, 3)
    if style == 0:
        return f"Expand and simplify (x + {a})(x - {b})."
    if style == 1:
        return f"Expand ({c}x + {a})^2 and explain where the middle term comes from."
    if style == 2:
        return f"Simplify {c}(2x + {a}) - {b}(x - {a})."
    return f"Factor completely: {_poly([(c, 2), (c * (a + b), 1), (c * a * b, 0)])}."


def _inequality(r: random.Random) -> str:
    x = r.randint(-6, 9)
    a = r.randint(2, 7)
    b = r.randint(1, 12)
    if r.random() < 0.5:
        sym = r.choice([">", "<", ">="])
        return (f"Solve the inequality {_poly([(a, 1), (-b, 0)])} {sym} {a * x - b} and "
                f"describe the solution set.")
    return (f"Solve {_poly([(-a, 1), (b, 0)])} <= {-a * x + b}. Why does the inequality sign "
            f"flip at one step?")


def _consecutive(r: random.Random) -> str:
    n = r.randint(5, 60)
    style = r.randint(0, 3)
    if style == 0:
        return f"The sum of three consecutive integers is {3 * n + 3}. What are the integers?"
    if style == 1:
        m = 2 * n
        return f"Find three consecutive even numbers whose sum is {3 * m + 6}."
    if style == 2:
        m = 2 * n + 1
        return f"Two consecutive odd numbers add up to {2 * m + 2}. What are they?"
    return f"The sum of four consecutive integers is {4 * n + 6}. Find the largest of them."


def _line(r: random.Random) -> str:
    x1, y1 = r.randint(-5, 5), r.randint(-6, 6)
    slope = r.choice([-3, -2, -1, 1, 2, 3, 4, Fraction(1, 2), Fraction(-1, 2)])
    dx = r.choice([2, 4, 6])
    x2, y2 = x1 + dx, int(y1 + slope * dx)
    if r.random() < 0.5:
        return (f"Find the slope of the line through ({x1}, {y1}) and ({x2}, {y2}), and write "
                f"its equation in slope-intercept form.")
    return (f"Does the point ({x2 + dx}, {int(y2 + slope * dx) + r.choice([0, 1])}) lie on the "
            f"line through ({x1}, {y1}) and ({x2}, {y2})? Explain.")


def _exponents(r: random.Random) -> str:
    b = r.choice([2, 3, 5, 10])
    m, n, k = r.randint(2, 7), r.randint(2, 6), r.randint(1, 5)
    style = r.randint(0, 2)
    if style == 0:
        return f"Simplify ({b}^{m} * {b}^{n}) / {b}^{k} and write the result as a power of {b}."
    if style == 1:
        return f"Evaluate {b}^-{r.randint(1, 3)} and ({b}^{r.randint(2, 3)})^0, and explain each rule used."
    return f"Simplify (x^{m} * x^{n})^{r.randint(2, 3)} / x^{k}."


def _order_ops(r: random.Random) -> str:
    a, b, c, d, e = (r.randint(2, 9) for _ in range(5))
    if c == d:
        c += 1
    forms = [
        f"{a} + {b} * ({c} - {d})^2",
        f"({a} + {b}) * {c} - {d * e} / {e}",
        f"{a * b} / {b} + {c} * {d} - {e}",
        f"{a}^2 - {b} * {c} + ({d} + {e})",
    ]
    return f"Evaluate {r.choice(forms)} using the order of operations, step by step."


# ---------------------------------------------------------------- percentages and fractions

def _percent_of(r: random.Random) -> str:
    p = r.choice([5, 10, 12, 15, 20, 25, 30, 35, 40, 45, 60, 75, 80])
    n = r.choice([20, 40, 60, 80, 120, 200, 240, 360, 400, 480, 500, 640, 800, 1200])
    style = r.randint(0, 2)
    if style == 0:
        return f"What is {p}% of {n}?"
    if style == 1:
        return (f"In a school of {n} students, {p}% walk to school. How many students walk, and "
                f"how many do not?")
    return f"{n * p // 100} is {p}% of what number?"


def _discount_tax(r: random.Random) -> str:
    item = r.choice(["jacket", "pair of boots", "lamp", "backpack", "blender", "desk chair"])
    price = r.randrange(40, 300, 5)
    disc = r.choice([10, 15, 20, 25, 30, 40])
    tax = r.choice([5, 6, 8, 10])
    if r.random() < 0.5:
        return (f"A {item} costs ${price}. It is on sale for {disc}% off, and then {tax}% sales "
                f"tax is added. What is the final price?")
    return (f"A store offers {disc}% off a {item} priced at ${price}, and a coupon takes another "
            f"10% off the sale price. Is that the same as {disc + 10}% off? Show the numbers.")


def _percent_change(r: random.Random) -> str:
    thing, unit, olds = r.choice([
        ("The price of a concert ticket", "$", [40, 60, 80, 120, 160]),
        ("A town's population", "", [2400, 8000, 12500, 36000, 52000]),
        ("Monthly rent for an apartment", "$", [900, 1200, 1500, 2000, 2400]),
        ("The number of daily website visitors", "", [1200, 4000, 6400, 9000]),
        ("The price of a liter of milk", "$", [1, 2]),
    ])
    old = r.choice(olds)
    pct = r.choice([-40, -25, -20, -10, -5, 5, 10, 15, 20, 25, 30, 50])
    if unit:
        a, b = _money(old * 100), _money(old * (100 + pct))
    else:
        a, b = str(old), str(old * (100 + pct) // 100)
    return (f"{thing} went from {a} to {b}. What is the percentage change, and is it an "
            f"increase or a decrease?")


def _reverse_percent(r: random.Random) -> str:
    p = r.choice([10, 20, 25, 40, 50])
    orig = r.randrange(20, 400, 20)
    item = r.choice(["a video game", "a winter coat", "a coffee maker", "a pair of headphones"])
    if r.random() < 0.5:
        return (f"After a {p}% discount, {item} costs ${orig * (100 - p) // 100}. What was the "
                f"original price?")
    return (f"A price rose by {p}% to ${orig * (100 + p) // 100}. What was the price before the "
            f"increase?")


def _interest(r: random.Random) -> str:
    principal = r.choice([500, 1000, 1500, 2000, 2500, 5000, 10000])
    rate = r.choice([2, 3, 4, 5, 6, 8])
    years = r.randint(2, 6)
    if r.random() < 0.5:
        return (f"${principal} is invested at {rate}% annual interest, compounded yearly. How "
                f"much is it worth after {years} years? Round to the nearest cent.")
    return (f"How much simple interest does a loan of ${principal} earn at {rate}% per year over "
            f"{years} years, and what is the total amount owed?")


def _fraction_ops(r: random.Random) -> str:
    def proper() -> Fraction:
        while True:
            den = r.randint(2, 12)
            num = r.randint(1, den - 1)
            if Fraction(num, den).denominator == den:
                return Fraction(num, den)

    a, c = proper(), proper()
    op = r.choice(["+", "-", "*", "/"])
    word = {"+": "plus", "-": "minus", "*": "times", "/": "divided by"}[op]
    if r.random() < 0.5:
        return f"Compute ({_frac(a)}) {op} ({_frac(c)}) and write the answer in lowest terms."
    return f"What is {_frac(a)} {word} {_frac(c)}? Simplify the result."


def _recipe(r: random.Random) -> str:
    qty = r.choice([Fraction(3, 4), Fraction(2, 3), Fraction(3, 2), Fraction(1, 2), Fraction(5, 4)])
    ingredient = r.choice(["flour", "sugar", "milk", "oats", "rice"])
    n = r.choice([4, 6, 8, 12])
    m = n * r.choice([Fraction(3, 2), Fraction(5, 2), Fraction(1, 2), 2, 3])
    food = r.choice(["pancakes", "muffins", "servings", "cookies"])
    return (f"A recipe uses {_frac(qty)} cup of {ingredient} for {n} {food}. How many cups of "
            f"{ingredient} are needed for {_frac(Fraction(m))} {food}?")


def _frac_convert(r: random.Random) -> str:
    style = r.randint(0, 2)
    if style == 0:
        a, b = r.choice([(3, 8), (5, 16), (7, 20), (2, 5), (9, 25), (1, 3), (5, 6), (11, 40)])
        return f"Convert {a}/{b} to a decimal and to a percentage."
    if style == 1:
        dec = r.choice(["0.375", "0.45", "0.125", "0.6", "0.875", "1.25", "0.04", "2.75"])
        return f"Write {dec} as a fraction in lowest terms."
    a, b, c, d = r.choice([(5, 8, 3, 5), (7, 9, 4, 5), (2, 3, 5, 7), (11, 12, 7, 8), (3, 7, 4, 9)])
    return f"Which is larger, {a}/{b} or {c}/{d}? Explain how you compared them."


# ---------------------------------------------------------------- geometry

def _rectangle(r: random.Random) -> str:
    length, width = r.randint(4, 30), r.randint(3, 20)
    style = r.randint(0, 2)
    if style == 0:
        return (f"A rectangular garden is {length} m long and {width} m wide. How much fencing "
                f"goes around it, and what is its area?")
    if style == 1:
        return (f"A rectangle has an area of {length * width} square cm and a length of {length} "
                f"cm. What are its width and perimeter?")
    tile = r.choice([Fraction(1, 2), Fraction(1, 4)])
    return (f"A floor measures {length} m by {width} m. How many square tiles with sides of "
            f"{_frac(tile)} m are needed to cover it?")


def _circle(r: random.Random) -> str:
    thing, unit, lo, hi = r.choice([
        ("circular pond", "m", 2, 12), ("round table", "cm", 40, 70), ("pizza", "cm", 12, 20),
        ("circular running track", "m", 30, 60), ("round flower bed", "m", 1, 5),
    ])
    rad = r.randint(lo, hi)
    style = r.randint(0, 2)
    if style == 0:
        return (f"A {thing} has a radius of {rad} {unit}. Find its area and circumference, "
                f"leaving the answers in terms of pi.")
    if style == 1:
        return (f"A {thing} has a diameter of {2 * rad} {unit}. Using pi = 3.14, what are its "
                f"area and circumference?")
    rad = r.randint(2, 15)
    return f"A circle has a circumference of {2 * rad} pi cm. What is its area?"


def _triangle_angles(r: random.Random) -> str:
    a = r.randint(25, 85)
    b = r.randint(20, 150 - a)
    style = r.randint(0, 2)
    if style == 0:
        return f"Two angles of a triangle measure {a} and {b} degrees. What is the third angle?"
    if style == 1:
        apex = r.choice([20, 36, 40, 50, 70, 80, 100, 110])
        return (f"An isosceles triangle has an apex angle of {apex} degrees. What are the two "
                f"base angles?")
    return (f"An exterior angle of a triangle measures {a + b} degrees, and one of the two "
            f"opposite interior angles is {a} degrees. Find the other interior angles.")


def _pythagoras(r: random.Random) -> str:
    a, b, c = r.choice([(3, 4, 5), (5, 12, 13), (8, 15, 17), (7, 24, 25), (6, 8, 10),
                        (9, 12, 15), (20, 21, 29), (12, 16, 20)])
    style = r.randint(0, 2)
    if style == 0:
        return (f"A {c} m ladder leans against a wall with its foot {a} m from the wall. How high "
                f"up the wall does it reach?")
    if style == 1:
        return (f"A rectangular screen is {b * 10} cm wide and {a * 10} cm tall. How long is its "
                f"diagonal?")
    x, y = r.randint(-4, 4), r.randint(-4, 4)
    return f"What is the distance between the points ({x}, {y}) and ({x + a}, {y + b})?"


def _volume(r: random.Random) -> str:
    style = r.randint(0, 3)
    if style == 0:
        l, w, h = r.randint(50, 120), r.randint(25, 45), r.randint(25, 50)
        return (f"A fish tank is {l} cm long, {w} cm wide, and {h} cm tall. How many liters of "
                f"water does it hold when full?")
    if style == 1:
        rad, h = r.randint(2, 9), r.randint(5, 20)
        return (f"Find the volume of a cylinder with radius {rad} cm and height {h} cm, in terms "
                f"of pi.")
    if style == 2:
        s = r.randint(2, 12)
        return f"A cube has edges of {s} cm. What are its volume and total surface area?"
    rad = r.randint(2, 9)
    return f"What is the volume of a sphere with radius {rad} m? Leave the answer in terms of pi."


def _polygon(r: random.Random) -> str:
    style = r.randint(0, 2)
    if style == 0:
        n = r.randint(5, 12)
        return (f"What is the sum of the interior angles of a polygon with {n} sides, and how big "
                f"is each angle if the polygon is regular?")
    if style == 1:
        ext = r.choice([18, 20, 24, 30, 36, 40, 45, 60, 72])
        return (f"Each exterior angle of a regular polygon is {ext} degrees. How many sides does "
                f"it have?")
    n = r.randint(5, 12)
    return f"How many diagonals does a polygon with {n} sides have? Explain the formula."


def _area_shapes(r: random.Random) -> str:
    style = r.randint(0, 2)
    if style == 0:
        b, h = r.randint(4, 20), r.randint(3, 15)
        return f"Find the area of a triangle with a base of {b} cm and a height of {h} cm."
    if style == 1:
        a, b, h = r.randint(4, 12), r.randint(13, 22), r.randint(3, 10)
        return (f"A trapezoid has parallel sides of {a} m and {b} m and a height of {h} m. "
                f"What is its area?")
    b, h = r.randint(5, 18), r.randint(3, 12)
    return (f"A parallelogram has a base of {b} inches and a height of {h} inches. What is its "
            f"area, and why is it the same as a rectangle's?")


# ---------------------------------------------------------------- probability

def _dice(r: random.Random) -> str:
    style = r.randint(0, 2)
    if style == 0:
        s = r.randint(3, 11)
        return f"Two fair six-sided dice are rolled. What is the probability that the sum is {s}?"
    if style == 1:
        n = r.randint(2, 4)
        return (f"If you roll a fair die {n} times, what is the probability of getting at least "
                f"one six?")
    sides = r.choice([8, 10, 12, 20])
    k = r.randint(2, sides - 2)
    return (f"A fair {sides}-sided die is rolled once. What is the probability of rolling a "
            f"number greater than {k}?")


def _marbles(r: random.Random) -> str:
    red, blue, green = r.randint(2, 8), r.randint(2, 8), r.randint(2, 6)
    container = r.choice(["bag", "jar", "box"])
    if r.random() < 0.5:
        return (f"A {container} holds {red} red, {blue} blue, and {green} green marbles. Two "
                f"marbles are drawn without replacement. What is the probability that both are "
                f"red?")
    return (f"A {container} holds {red} red, {blue} blue, and {green} green marbles. One marble is "
            f"drawn, put back, and then a second is drawn. What is the probability that neither "
            f"is blue?")


def _coins(r: random.Random) -> str:
    n = r.randint(3, 6)
    k = r.randint(1, n - 1)
    if r.random() < 0.5:
        return (f"A fair coin is flipped {n} times. What is the probability of getting exactly "
                f"{_plural(k, 'head')}?")
    return (f"What is the probability of getting at least one tail in {n} flips of a fair coin? "
            f"Use the complement.")


def _cards(r: random.Random) -> str:
    return r.choice([
        "One card is drawn from a standard 52-card deck. What is the probability it is a heart or a king?",
        "Two cards are drawn from a standard deck without replacement. What is the probability that both are aces?",
        "What is the probability of drawing a face card (jack, queen, or king) from a standard deck?",
        "A card is drawn from a standard deck. What is the probability that it is red and higher than 8?",
        "Three cards are dealt from a shuffled deck. What is the probability that all three are spades?",
        "What is the probability that a card drawn from a standard deck is not a club?",
        "If you draw two cards with replacement, what is the probability that the first is a queen and the second is a heart?",
    ])


# ---------------------------------------------------------------- sequences

def _arith_seq(r: random.Random) -> str:
    a, d = r.randint(-10, 20), r.choice([-4, -3, 2, 3, 4, 5, 6, 7, 9, 11])
    n = r.randint(10, 40)
    terms = ", ".join(str(a + i * d) for i in range(4))
    if r.random() < 0.5:
        return (f"For the sequence {terms}, ..., find the {_ordinal(n)} term and the sum of the "
                f"first {n} terms.")
    return (f"An arithmetic sequence starts {terms}, ... Write a formula for the nth term and "
            f"use it to find term number {n}.")


def _geom_seq(r: random.Random) -> str:
    a, q = r.randint(1, 6), r.choice([2, 3, -2, 5])
    terms = ", ".join(str(a * q ** i) for i in range(4))
    n = r.randint(6, 10)
    if r.random() < 0.5:
        return (f"The sequence {terms}, ... is geometric. What is the common ratio, and what is "
                f"the {_ordinal(n)} term?")
    return f"Find the sum of the first {n} terms of the geometric sequence {terms}, ..."


def _pattern(r: random.Random) -> str:
    rules = [
        lambda k: k * k, lambda k: k * (k + 1), lambda k: k * (k + 1) // 2,
        lambda k: 2 ** k - 1, lambda k: k ** 3, lambda k: 3 * k * k - 1,
        lambda k: 2 ** k + k,
    ]
    rule = r.choice(rules)
    start = r.randint(1, 4)
    seq = ", ".join(str(rule(k)) for k in range(start, start + 5))
    return r.choice([
        f"What is the next number in the pattern {seq}, ...? Describe the rule.",
        f"Find the rule behind {seq}, ... and give the next two terms.",
    ])


# ---------------------------------------------------------------- unit conversions

def _units(r: random.Random) -> str:
    style = r.randint(0, 6)
    if style == 0:
        km = r.choice([5, 10, 21.1, 42.2, 15, 100])
        return f"Convert {_num(km)} km to miles, using 1 mile = 1.609 km."
    if style == 1:
        c = r.choice([-10, 0, 15, 20, 25, 30, 37, 100])
        return f"What is {c * 9 // 5 + 32} degrees Fahrenheit in Celsius? Show the formula."
    if style == 2:
        v = r.choice([36, 54, 72, 90, 108, 120])
        return f"A car is moving at {v} km/h. What is that speed in meters per second?"
    if style == 3:
        h, m = r.randint(1, 5), r.randint(5, 55)
        return f"How many seconds are there in {_plural(h, 'hour')} and {m} minutes?"
    if style == 4:
        g = r.choice([113, 227, 340, 450, 500])
        return f"A recipe needs {g} grams of butter. About how many ounces is that if 1 ounce is 28.35 grams?"
    if style == 5:
        m2 = r.randint(2, 9)
        return (f"How many square centimeters are in {m2} square meters? Explain why it is not "
                f"{m2 * 100}.")
    liters = r.choice([2, 5, 12, 20, 60])
    return f"A tank holds {liters} liters. How many milliliters and how many cubic centimeters is that?"


# ---------------------------------------------------------------- calculus

def _deriv_poly(r: random.Random) -> str:
    deg = r.randint(2, 5)
    terms = [(r.randint(1, 9) * r.choice([1, -1]) if p == deg else r.randint(-9, 9), p)
             for p in range(deg, -1, -1)]
    f = _poly(terms)
    style = r.randint(0, 2)
    if style == 0:
        return f"Find the derivative of f(x) = {f}."
    if style == 1:
        x0 = r.randint(-2, 3)
        return f"What is the slope of the tangent line to y = {f} at x = {x0}?"
    return f"Find f'(x) and f''(x) for f(x) = {f}."


def _deriv_rules(r: random.Random) -> str:
    func, rule = r.choice([
        ("x^2 sin(x)", "product rule"), ("e^(3x)", "chain rule"), ("ln(x^2 + 1)", "chain rule"),
        ("(2x + 1)^5", "chain rule"), ("x / (x + 1)", "quotient rule"),
        ("sqrt(4x + 1)", "chain rule"), ("x e^x", "product rule"), ("cos(5x)", "chain rule"),
        ("sin(x) cos(x)", "product rule"), ("ln(x) / x", "quotient rule"),
        ("(x^2 - 3)^4", "chain rule"), ("x^3 ln(x)", "product rule"),
    ])
    if r.random() < 0.5:
        return f"Differentiate f(x) = {func} using the {rule}."
    return f"What is the derivative of {func}? Name the rule you use."


def _integral(r: random.Random) -> str:
    a, c = r.randint(1, 6), r.randint(-5, 8)
    lo, hi = r.choice([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (-1, 1), (2, 4)])
    style = r.randint(0, 2)
    if style == 0:
        f = _poly([(3 * a, 2), (c, 0)])
        return f"Evaluate the definite integral of {f} from x = {lo} to x = {hi}."
    if style == 1:
        f = _poly([(a, 3), (-2 * a, 1), (c, 0)])
        return f"Find the indefinite integral of {f} with respect to x."
    return (f"Find the area under the curve y = x^2 between x = {lo} and x = {hi} using an "
            f"integral.")


def _critical(r: random.Random) -> str:
    a = r.randint(1, 5)
    c = r.randint(-10, 10)
    if r.random() < 0.5:
        f = _poly([(1, 3), (-3 * a * a, 1), (c, 0)])
        return (f"Find the critical points of f(x) = {f} and say which is a local maximum and "
                f"which is a local minimum.")
    h = r.randint(-6, 6)
    f = _poly([(1, 2), (-2 * h, 1), (h * h + c, 0)])
    return f"Find the vertex of the parabola y = {f}. Is it a minimum or a maximum?"


# ---------------------------------------------------------------- statistics

def _mean_median(r: random.Random) -> str:
    context, lo, hi, n = r.choice([
        ("test scores", 55, 100, 7), ("daily high temperatures in Celsius", 12, 31, 7),
        ("goals scored per match", 0, 5, 9), ("minutes spent commuting", 15, 70, 6),
        ("books read per month", 0, 8, 8), ("heights of seedlings in cm", 3, 19, 6),
    ])
    data = [r.randint(lo, hi) for _ in range(n)]
    if r.random() < 0.5:
        data.append(r.choice(data))  # make a mode likely
    return f"Here are some {context}: {', '.join(map(str, data))}. Find the mean, median, and mode."


def _missing_score(r: random.Random) -> str:
    who, subj, _ = r.choice(_PEOPLE)
    n = r.randint(4, 6)
    known = [r.randint(65, 98) for _ in range(n - 1)]
    last = r.randint(60, 100)
    total = sum(known) + last
    while total % n:
        last -= 1
        total -= 1
    return (f"{who}'s average over {n} quizzes is {total // n}. The first {n - 1} scores were "
            f"{', '.join(map(str, known))}. What did {subj} score on the last quiz?")


def _spread(r: random.Random) -> str:
    data = sorted(r.randint(1, 20) for _ in range(r.randint(5, 7)))
    shown = data[:]
    r.shuffle(shown)
    if r.random() < 0.5:
        return (f"Find the range and the population standard deviation of "
                f"{', '.join(map(str, shown))}. Round to two decimal places.")
    return (f"For the data {', '.join(map(str, shown))}, find the first quartile, the third "
            f"quartile, and the interquartile range.")


def _weighted_avg(r: random.Random) -> str:
    w = r.choice([(20, 30, 50), (25, 25, 50), (10, 40, 50), (30, 30, 40)])
    s = [r.randint(60, 98) for _ in range(3)]
    return (f"A course grade is {w[0]}% homework, {w[1]}% midterm, and {w[2]}% final exam. A "
            f"student scores {s[0]} on homework, {s[1]} on the midterm, and {s[2]} on the final. "
            f"What is the course grade?")


# ---------------------------------------------------------------- number theory

def _gcd_lcm(r: random.Random) -> str:
    g = r.choice([2, 3, 4, 5, 6, 8, 12])
    a, b = g * r.randint(2, 9), g * r.randint(2, 9)
    if a == b:
        b += g
    style = r.randint(0, 2)
    if style == 0:
        return f"Find the greatest common divisor and the least common multiple of {a} and {b}."
    if style == 1:
        a, b = r.choice([(12, 18), (15, 20), (10, 25), (20, 30), (24, 36), (14, 21), (16, 40),
                         (9, 15), (18, 45)])
        return (f"One bus leaves the station every {a} minutes and another every {b} minutes. "
                f"Both leave at 8:00. When do they next leave together?")
    return (f"Two ribbons are {a} cm and {b} cm long. They must be cut into pieces that are all "
            f"the same length, with nothing left over. What is the longest possible piece?")


def _prime_factor(r: random.Random) -> str:
    n = 1
    for _ in range(r.randint(3, 5)):
        n *= r.choice([2, 2, 3, 3, 5, 7, 11])
    if r.random() < 0.5:
        return f"Write {n} as a product of prime factors."
    return f"How many positive divisors does {n} have? Use its prime factorization."


def _is_prime(r: random.Random) -> str:
    n = r.choice([91, 97, 119, 127, 143, 149, 187, 199, 209, 211, 221, 223, 247, 251, 289, 307])
    return r.choice([
        f"Is {n} a prime number? Explain how you checked.",
        f"Decide whether {n} is prime. Which divisors do you need to test, and why can you stop "
        f"at the square root?",
    ])


def _modular(r: random.Random) -> str:
    style = r.randint(0, 2)
    if style == 0:
        a, b = r.randint(1000, 99999), r.choice([7, 9, 11, 12, 13])
        return f"What is the remainder when {a} is divided by {b}?"
    if style == 1:
        base, k = r.choice([2, 3, 7, 9, 13]), r.randint(20, 100)
        return f"What is the last digit of {base}^{k}? Look for a repeating pattern."
    k, m = r.randint(10, 60), r.choice([5, 7, 9])
    return f"Find the remainder when 2^{k} is divided by {m}."


_GENERATORS = [
    _change, _speed, _avg_speed, _split_bill, _work_rate, _bakery, _ages, _savings,
    _better_deal, _clock, _overtime, _ratio,
    _linear, _system, _quadratic, _expand, _inequality, _consecutive, _line, _exponents,
    _order_ops,
    _percent_of, _discount_tax, _percent_change, _reverse_percent, _interest,
    _fraction_ops, _recipe, _frac_convert,
    _rectangle, _circle, _triangle_angles, _pythagoras, _volume, _polygon, _area_shapes,
    _dice, _marbles, _coins, _cards,
    _arith_seq, _geom_seq, _pattern,
    _units,
    _deriv_poly, _deriv_rules, _integral, _critical,
    _mean_median, _missing_score, _spread, _weighted_avg,
    _gcd_lcm, _prime_factor, _is_prime, _modular,
]

# Problems whose answer needs no extra instruction to be complete.
_NO_SUFFIX = {_cards, _is_prime}


def _core(text: str) -> str:
    """A problem without its closing instruction (`_SUFFIXES`), to spot the same problem twice."""
    for suffix in _SUFFIXES:
        if suffix and text.endswith(suffix):
            return text[: -len(suffix)]
    return text


def _original() -> list[tuple[str, str]]:
    """The first 392 prompts, unchanged: 7 problems from each original generator."""
    rng = random.Random(31415)
    result: list[tuple[str, str]] = []
    seen: set[str] = set()
    per_generator = 7
    for gen in _GENERATORS:
        group = gen.__name__.strip("_").replace("_", "-")
        made = 0
        for _ in range(60):
            if made == per_generator:
                break
            text = gen(rng)
            suffix = rng.choice(_SUFFIXES)
            if gen not in _NO_SUFFIX and not any(
                    w in text for w in ("Explain", "explain", "Show", "step by step")):
                text += suffix
            text = text.strip()
            core = text
            for suffix in _SUFFIXES:
                if suffix and core.endswith(suffix):
                    core = core[: -len(suffix)]
            if core in seen:
                continue
            seen.add(core)
            result.append((group, text))
            made += 1
    rng.shuffle(result)
    assert len(result) == len({text for _, text in result}) >= 340, len(result)
    return result


# ---------------------------------------------------------------------------------------------------------------
# Extension: more problem families, each with several contexts and phrasings, appended after the original prompts.
# ---------------------------------------------------------------------------------------------------------------

def _pick_two(r: random.Random) -> tuple[str, str]:
    a, b = r.sample(_PEOPLE, 2)
    return a[0], b[0]


# ---------------------------------------------------------------- everyday arithmetic

def _unit_price(r: random.Random) -> str:
    item, unit, sizes = r.choice([
        ("cereal", "g", (375, 500, 750)), ("orange juice", "ml", (1000, 1500, 2000)),
        ("dishwasher tablets", "tablets", (30, 45, 80)), ("basmati rice", "g", (500, 1000, 2000)),
        ("shampoo", "ml", (250, 400, 750)), ("printer paper", "sheets", (500, 1500, 2500)),
        ("cat litter", "kg", (5, 10, 15)), ("sparkling water", "cans", (6, 12, 24)),
    ])
    a, b = r.sample(sizes, 2)
    pa = r.randrange(150, 900, 5)
    pb = int(pa * b / a * r.choice([0.8, 0.88, 0.93, 1.04, 1.1])) // 5 * 5
    shop = r.choice(["At the supermarket", "Online", "At a discount store", "At the corner shop"])
    if r.random() < 0.5:
        return (f"{shop}, {item} comes in {a} {unit} for {_money(pa)} or {b} {unit} for {_money(pb)}. "
                f"Which size is cheaper per {unit}, and what is the saving per 100 {unit}?")
    return (f"{shop}, a pack of {item} with {a} {unit} costs {_money(pa)}. A bigger pack with {b} {unit} "
            f"costs {_money(pb)}. How much would the bigger pack cost if it had the same unit price as the "
            f"smaller one, and is it a real bargain?")


def _cover_area(r: random.Random) -> str:
    what = r.randint(0, 3)
    w, l = r.randint(3, 9), r.randint(4, 12)
    if what == 0:
        tile = r.choice([20, 25, 30, 40, 50])
        per_box = r.choice([8, 10, 12])
        return (f"A kitchen floor measures {w} m by {l} m. Square tiles are {tile} cm on each side and sold "
                f"in boxes of {per_box}. How many boxes are needed if 10% extra is bought for cuts?")
    if what == 1:
        h = r.choice([2.4, 2.5, 2.7, 3])
        cover = r.choice([10, 12, 14])
        return (f"A room is {w} m wide and {l} m long with walls {_num(h)} m high. One liter of paint covers "
                f"{cover} square meters, and the walls need two coats. Ignoring the door and window, how many "
                f"liters of paint are needed?")
    if what == 2:
        roll = r.choice([1, 1.5, 2])
        price = r.choice([6, 8, 9, 12])
        return (f"A lawn is {w} m by {l} m. Turf comes in rolls that cover {_num(roll)} square meters each and "
                f"cost ${price} per roll. What does it cost to turf the whole lawn?")
    depth = r.choice([5, 8, 10])
    bag = r.choice([40, 50, 60])
    return (f"A raised garden bed is {w} m long, {_num(l / 10)} m wide and needs soil {depth} cm deep. Soil "
            f"is sold in {bag}-liter bags. How many bags are needed?")


def _mixture(r: random.Random) -> str:
    lo, hi = r.choice([(10, 40), (20, 50), (5, 25), (15, 60), (30, 80)])
    target = r.randrange(lo + 5, hi - 4, 5)
    total = r.choice([10, 12, 20, 30, 40, 50])
    thing, unit = r.choice([("a salt solution", "liters"), ("an antifreeze mix", "liters"),
                            ("fruit juice drink", "liters"), ("a fertilizer solution", "liters"),
                            ("an alloy", "kg"), ("a nut mix", "kg")])
    if r.random() < 0.5:
        return (f"How many {unit} of a {lo}% mix and of a {hi}% mix must be combined to make {total} {unit} "
                f"of {thing} that is {target}%?")
    have = r.choice([4, 5, 6, 8, 10])
    return (f"A worker has {have} {unit} of {thing} at {lo}%. How many {unit} of a {hi}% mix must be added "
            f"to raise it to {target}%?")


def _markup(r: random.Random) -> str:
    shop, item = r.choice([("A bike shop", "helmet"), ("A bookstore", "hardback"), ("A florist", "bouquet"),
                           ("An electronics store", "pair of headphones"), ("A bakery", "wedding cake"),
                           ("A furniture store", "armchair"), ("A garden center", "lemon tree")])
    cost = r.randrange(20, 400, 5)
    style = r.randint(0, 2)
    if style == 0:
        m = r.choice([20, 25, 40, 50, 60, 80])
        return (f"{shop} buys a {item} for ${cost} and marks it up by {m}%. What is the selling price, and "
                f"what is the profit margin as a percentage of the selling price?")
    if style == 1:
        sell = int(cost * r.choice([1.2, 1.25, 1.5, 1.6, 2])) + r.choice([0, 5])
        return (f"{shop} sells a {item} for ${sell} that cost ${cost}. What is the markup as a percentage "
                f"of cost, and why is it different from the margin?")
    d = r.choice([10, 15, 20, 30])
    m = r.choice([40, 50, 60])
    return (f"{shop} marks a {item} up {m}% on its cost of ${cost}, then runs a {d}% off sale. Does it "
            f"still make a profit on each one sold, and how much?")


def _exchange(r: random.Random) -> str:
    pair = r.choice([("US dollars", "euros", 0.92), ("euros", "Japanese yen", 162),
                     ("British pounds", "US dollars", 1.27), ("Canadian dollars", "Mexican pesos", 12.6),
                     ("Australian dollars", "New Zealand dollars", 1.09), ("Swiss francs", "euros", 1.04)])
    home, away, rate = pair
    amount = r.choice([150, 250, 400, 600, 800, 1200])
    fee = r.choice([1, 1.5, 2, 2.5, 3])
    who, subj, _ = r.choice(_PEOPLE)
    if r.random() < 0.5:
        return (f"{who} changes {amount} {home} into {away} at a rate of 1 to {_num(rate)}, and the exchange "
                f"office keeps a {_num(fee)}% fee. How many {away} does {subj} receive?")
    return (f"A jacket costs {_num(round(amount * rate))} {away}. With 1 {home[:-1] if home.endswith('s') else home} "
            f"worth {_num(rate)} {away}, and a card fee of {_num(fee)}%, how much does it cost in {home}?")


def _fuel(r: random.Random) -> str:
    who, subj, poss = r.choice(_PEOPLE)
    use = r.choice([5.5, 6, 6.5, 7.2, 8, 9.5])
    dist = r.choice([180, 240, 320, 450, 560, 720])
    price = r.choice([1.55, 1.72, 1.89, 1.94, 2.05])
    style = r.randint(0, 2)
    if style == 0:
        return (f"{who}'s car uses {_num(use)} liters of fuel per 100 km. Fuel costs ${_num(price)} per liter. "
                f"What does a {dist} km trip cost in fuel?")
    if style == 1:
        tank = r.choice([40, 45, 50, 55, 60])
        return (f"A car with a {tank}-liter tank uses {_num(use)} L/100 km. How far can it go on a full tank, "
                f"and how many stops would a {dist * 3} km road trip need if the tank starts full?")
    mpg = r.choice([25, 30, 35, 42])
    return (f"{who} reads that {poss} new car does {mpg} miles per US gallon. Convert that to liters per "
            f"100 km (1 mile = 1.609 km, 1 gallon = 3.785 L).")


def _time_zones(r: random.Random) -> str:
    a, b, diff = r.choice([("London", "New York", -5), ("Paris", "Tokyo", 8), ("Sydney", "Singapore", -3),
                           ("Los Angeles", "Chicago", 2), ("Dubai", "Berlin", -3), ("Toronto", "Vancouver", -3),
                           ("Mumbai", "London", -5.5), ("Auckland", "Los Angeles", -21)])
    h, m = r.randint(6, 22), r.choice([0, 10, 15, 30, 45, 50])
    fh, fm = r.randint(1, 14), r.choice([0, 15, 20, 35, 40, 55])
    if r.random() < 0.6:
        return (f"A flight leaves {a} at {h:02d}:{m:02d} local time and the flight lasts {fh} h {fm} min. "
                f"{b} is {abs(diff)} hours {'behind' if diff < 0 else 'ahead of'} {a}. What is the local time "
                f"in {b} when it lands?")
    return (f"A video call is set for {h:02d}:{m:02d} in {a}. {b} is {abs(diff)} hours "
            f"{'behind' if diff < 0 else 'ahead of'} {a}. What time is the call for the colleague in {b}, "
            f"and is it still the same day there?")


def _map_scale(r: random.Random) -> str:
    scale = r.choice([10000, 25000, 50000, 100000, 250000])
    cm = r.choice([2.5, 3, 4.2, 6, 7.5, 12])
    style = r.randint(0, 2)
    if style == 0:
        return (f"On a hiking map with a scale of 1:{scale:,}, two huts are {_num(cm)} cm apart. How far "
                f"apart are they in real life, in kilometers?")
    if style == 1:
        km = r.choice([3, 5, 8, 12, 20])
        return (f"A trail is {km} km long. How long would it be on a map with a scale of 1:{scale:,}?")
    w, l = r.choice([(4, 6), (3, 8), (5, 5), (2, 9)])
    return (f"A field appears as a {w} cm by {l} cm rectangle on a 1:{scale:,} map. What is its real area "
            f"in hectares? Explain why the area scale is the square of the length scale.")


def _decay(r: random.Random) -> str:
    style = r.randint(0, 3)
    if style == 0:
        thing, half = r.choice([("A medicine", "6 hours"), ("Caffeine in the body", "5 hours"),
                                ("A radioactive tracer", "8 days"), ("Carbon-14", "5,730 years")])
        start = r.choice([80, 100, 200, 400, 640])
        k = r.randint(2, 5)
        return (f"{thing} has a half-life of {half}. Starting from {start} units, how much is left after "
                f"{k} half-lives, and after how many half-lives does it first drop below 5 units?")
    if style == 1:
        price = r.randrange(12000, 45000, 500)
        rate = r.choice([12, 15, 18, 20])
        years = r.randint(3, 7)
        return (f"A car bought for ${price:,} loses {rate}% of its value every year. What is it worth after "
                f"{years} years?")
    if style == 2:
        start = r.choice([50, 100, 300, 500])
        hours = r.choice([20, 30, 45])
        total = r.choice([3, 4, 6, 8])
        return (f"A bacteria culture starts with {start} cells and doubles every {hours} minutes. How many "
                f"cells are there after {total} hours?")
    pop = r.randrange(20000, 90000, 1000)
    g = r.choice([1.5, 2, 2.5, 3])
    return (f"A town of {pop:,} people grows by {_num(g)}% a year. About how many years does it take to "
            f"reach {pop * 3 // 2:,}? Use logarithms or trial and error.")


def _savings_goal(r: random.Random) -> str:
    who, subj, poss = r.choice(_PEOPLE)
    goal, what = r.choice([(3000, "a used car"), (1800, "a trip to Japan"), (6000, "a house deposit fund"),
                           (900, "a new laptop"), (2400, "a wedding gift fund"), (1500, "a sailing course")])
    monthly = r.choice([75, 100, 120, 150, 200, 250])
    have = r.choice([0, 100, 250, 400])
    if r.random() < 0.5:
        return (f"{who} is saving for {what} that costs ${goal}. {_cap(subj)} has ${have} now and puts away "
                f"${monthly} each month. How many months until {subj} reaches the goal?")
    rise = r.choice([10, 20, 25])
    return (f"{who} saves ${monthly} in the first month and increases the amount by ${rise} every month after "
            f"that. How many months does it take to save ${goal} for {what}?")


def _tax_brackets(r: random.Random) -> str:
    b1 = r.choice([10000, 12000, 15000])
    b2 = r.choice([40000, 45000, 50000])
    r1, r2, r3 = r.choice([(0, 20, 40), (10, 22, 35), (0, 15, 30), (5, 25, 45)])
    income = r.randrange(b2 + 5000, b2 + 60000, 1000)
    country = r.choice(["In a small country", "In a made-up tax system", "In a textbook example"])
    return (f"{country}, income up to ${b1:,} is taxed at {r1}%, income from ${b1:,} to ${b2:,} at {r2}%, and "
            f"income above ${b2:,} at {r3}%. How much tax is due on ${income:,}, and what is the effective "
            f"tax rate?")


def _meeting_point(r: random.Random) -> str:
    a, b = _pick_two(r)
    v1, v2 = r.choice([(4, 6), (60, 80), (12, 18), (45, 75), (5, 7), (90, 110)])
    unit = "km/h"
    dist = (v1 + v2) * r.choice([1, 1.5, 2, 2.5, 3])
    style = r.randint(0, 2)
    if style == 0:
        return (f"{a} and {b} start {_num(dist)} km apart and travel toward each other at {v1} {unit} and "
                f"{v2} {unit}. When and where do they meet?")
    if style == 1:
        head = r.choice([0.5, 1, 2])
        return (f"A truck leaves a depot at {v1} {unit}. {_num(head)} hours later a car follows on the same "
                f"road at {v2} {unit}. How long after the car starts does it catch up with the truck?")
    return (f"A boat travels {_num(dist)} km downstream in {_num(dist / (v2 + 3))} hours and needs longer for "
            f"the way back against a current of 3 km/h. What is the boat's speed in still water, and how long "
            f"is the return trip?")


def _wages(r: random.Random) -> str:
    who, subj, poss = r.choice(_PEOPLE)
    job = r.choice(["a barista", "a lifeguard", "a delivery rider", "a tutor", "a cinema usher", "a dog walker"])
    rate = r.choice([12.5, 14, 15.75, 17, 18.5, 21])
    shifts = r.randint(3, 6)
    hours = r.choice([4, 5, 6, 7.5, 8])
    style = r.randint(0, 2)
    if style == 0:
        tips = r.randrange(20, 120, 5)
        return (f"{who} works as {job} for ${_num(rate)} an hour, {shifts} shifts of {_num(hours)} hours a "
                f"week, and gets about ${tips} in tips per week. What are {poss} weekly earnings?")
    if style == 1:
        tax = r.choice([12, 15, 18, 20])
        return (f"{who} earns ${_num(rate)} an hour as {job}. If {tax}% is withheld for taxes, how many hours "
                f"must {subj} work to take home $500?")
    raise_pct = r.choice([3, 4, 5, 8])
    return (f"{who}, {job}, gets a {raise_pct}% raise from ${_num(rate)} an hour. How much more does {subj} "
            f"earn in a year of {shifts} shifts of {_num(hours)} hours a week for 48 weeks?")


def _win_rate(r: random.Random) -> str:
    team = r.choice(["A basketball team", "A chess club player", "A football team", "A tennis player",
                     "A debate team", "An esports team"])
    played = r.randint(12, 40)
    won = r.randint(played // 4, played * 2 // 3)
    target = r.choice([60, 65, 70, 75])
    left = r.randint(8, 25)
    if r.random() < 0.5:
        return (f"{team} has won {won} of {played} games so far. With {left} games left, how many of them "
                f"must be won to finish the season with at least a {target}% win rate?")
    return (f"{team} has won {won} of {played} games. How many games in a row would it need to win to "
            f"raise its win rate to {target}%?")


# ---------------------------------------------------------------- algebra in context and beyond linear

def _projectile(r: random.Random) -> str:
    v = r.choice([10, 15, 20, 25, 30])
    h0 = r.choice([0, 1, 2, 5, 10, 20])
    obj = r.choice(["A ball is thrown upward", "A model rocket is launched", "A stone is tossed up",
                    "A water balloon is launched", "A volleyball is hit straight up"])
    where = f" from a height of {h0} m" if h0 else " from the ground"
    style = r.randint(0, 2)
    if style == 0:
        return (f"{obj}{where} at {v} m/s. Its height is h(t) = -5t^2 + {v}t + {h0} meters. When does it "
                f"reach its highest point, and how high is that?")
    if style == 1:
        return (f"{obj}{where}, and its height in meters after t seconds is h(t) = -5t^2 + {v}t + {h0}. "
                f"When does it hit the ground?")
    k = r.choice([5, 10])
    return (f"The height of an object is h(t) = -5t^2 + {v}t + {h0}. During which time interval is it more "
            f"than {h0 + k} m above the ground?")


def _two_item_system(r: random.Random) -> str:
    ctx = r.choice([
        ("adult", "child", "tickets to a school play", 12, 7),
        ("large", "small", "coffees at a cafe stall", 5, 3),
        ("hardcover", "paperback", "books at a charity sale", 8, 3),
        ("premium", "standard", "seats for a concert", 45, 25),
        ("daily", "weekly", "passes at a swimming pool", 6, 20),
        ("quarter", "dime", "coins in a jar", 25, 10),
    ])
    big, small, what, pb, ps = ctx
    nb, ns = r.randint(10, 90), r.randint(10, 120)
    unit = "cents" if what.startswith("coins") else "dollars"
    price_b = f"{pb} cents" if unit == "cents" else f"${pb}"
    price_s = f"{ps} cents" if unit == "cents" else f"${ps}"
    total = nb * pb + ns * ps
    total_text = f"{total} cents" if unit == "cents" else f"${total}"
    return (f"There are {nb + ns} {what}, some {big} at {price_b} and the rest {small} at {price_s}. "
            f"Together they are worth {total_text}. How many of each are there? Set up and solve a system "
            f"of equations.")


def _exp_equation(r: random.Random) -> str:
    b = r.choice([2, 3, 5])
    x = r.randint(2, 6)
    k = r.randint(1, 3)
    style = r.randint(0, 3)
    if style == 0:
        return f"Solve for x: {b}^(x + {k}) = {b ** (x + k)}."
    if style == 1:
        return f"Solve {b}^(2x) = {b ** (2 * x)} and check your answer."
    if style == 2:
        c = r.choice([7, 10, 12, 20])
        return f"Solve {b}^x = {c}, giving x to three decimal places using logarithms."
    return f"Solve for x: {b ** 2}^x = {b}^({x + k}). Rewrite both sides with the same base first."


def _logs(r: random.Random) -> str:
    style = r.randint(0, 3)
    if style == 0:
        b, n = r.choice([(2, 32), (3, 81), (5, 125), (10, 1000), (4, 64), (2, 1 / 8)])
        return f"Evaluate log base {b} of {_num(n) if n >= 1 else '1/8'} without a calculator and explain."
    if style == 1:
        a, c = r.choice([(2, 3), (5, 4), (3, 7), (6, 2)])
        return f"Write log({a}x^{c}) - log(x) as a single simplified logarithm, stating each law you use."
    if style == 2:
        b = r.choice([2, 3, 7])
        n = r.choice([50, 100, 200, 500])
        return f"Use the change-of-base formula to estimate log base {b} of {n} to two decimal places."
    a = r.randint(2, 9)
    return f"Solve log(x) + log(x - {a}) = log({a + 1}) for x, and reject any value that is not allowed."


def _composition(r: random.Random) -> str:
    a, b = r.randint(2, 6), r.randint(-5, 7)
    c, d = r.randint(1, 4), r.randint(-4, 6)
    x = r.randint(-3, 4)
    f = _poly([(a, 1), (b, 0)])
    g = _poly([(c, 2), (d, 0)])
    style = r.randint(0, 2)
    if style == 0:
        return f"Let f(x) = {f} and g(x) = {g}. Find f(g({x})) and g(f({x}))."
    if style == 1:
        return f"Let f(x) = {f}. Find the inverse function f^-1(x) and check that f(f^-1(x)) = x."
    return f"Given f(x) = {f} and g(x) = {g}, write f(g(x)) as a simplified polynomial. Is f(g(x)) equal to g(f(x))?"


def _absolute(r: random.Random) -> str:
    a = r.randint(1, 5)
    b = r.randint(-9, 9)
    c = r.randint(2, 15)
    inner = _poly([(a, 1), (b, 0)])
    style = r.randint(0, 2)
    if style == 0:
        return f"Solve |{inner}| = {c}."
    if style == 1:
        return f"Solve |{inner}| < {c} and write the solution as an interval."
    return f"Solve |{inner}| >= {c} and show the solution on a number line."


def _factorise(r: random.Random) -> str:
    style = r.randint(0, 3)
    if style == 0:
        a = r.randint(2, 12)
        return f"Factor x^2 - {a * a} and explain which identity you used."
    if style == 1:
        p, q = r.randint(1, 6), r.randint(1, 6)
        a = r.choice([2, 3])
        return f"Factor {_poly([(a, 2), (a * q + p, 1), (p * q, 0)])} completely."
    if style == 2:
        k = r.randint(2, 5)
        r1, r2 = r.randint(-6, 6), r.randint(-6, 6)
        return f"Factor {_poly([(k, 3), (-k * (r1 + r2), 2), (k * r1 * r2, 1)])} completely."
    a = r.randint(1, 4)
    return f"Factor x^3 - {a ** 3} using the difference of cubes."


def _rational_expr(r: random.Random) -> str:
    a = r.randint(1, 9)
    b = r.randint(1, 9)
    style = r.randint(0, 2)
    if style == 0:
        return f"Simplify (x^2 - {a * a}) / (x + {a}) and state the value of x that must be excluded."
    if style == 1:
        return f"Simplify (x^2 + {a + b}x + {a * b}) / (x^2 - {b * b}). For which x is it undefined?"
    return f"Add and simplify: 1/(x + {a}) + 1/(x - {b})."


def _plan_compare(r: random.Random) -> str:
    kind, u = r.choice([("phone plan", "GB of data"), ("taxi company", "km"), ("gym", "visit"),
                        ("car rental", "km"), ("electricity tariff", "kWh"), ("print shop", "page")])
    f1, f2 = r.sample([0, 5, 10, 15, 20, 25, 30, 40], 2)
    p1, p2 = sorted(r.sample([0.1, 0.15, 0.2, 0.25, 0.5, 1, 1.5, 2, 3], 2))
    if f1 < f2:
        f1, f2 = f2, f1
    return (f"One {kind} charges ${f1} plus ${_num(p1)} per {u}; another charges ${f2} plus ${_num(p2)} per "
            f"{u}. Write a cost equation for each, and find the usage at which they cost the same. Which is "
            f"cheaper for heavy use?")


def _matrix2(r: random.Random) -> str:
    a, b, c, d = (r.randint(-5, 9) for _ in range(4))
    if a * d - b * c == 0:
        d += 1
    m = f"[[{a}, {b}], [{c}, {d}]]"
    style = r.randint(0, 2)
    if style == 0:
        return f"Find the determinant and the inverse of the matrix {m}."
    if style == 1:
        e, f = r.randint(-9, 9), r.randint(-9, 9)
        return f"Use the inverse of {m} to solve {a}x + {b}y = {e}, {c}x + {d}y = {f}."
    p, q, s, t = (r.randint(-3, 4) for _ in range(4))
    return f"Multiply the matrices {m} and [[{p}, {q}], [{s}, {t}]], in that order. Does the order matter?"


def _complex_numbers(r: random.Random) -> str:
    a, b, c, d = r.randint(-6, 7), r.randint(1, 8), r.randint(-5, 6), r.randint(1, 7)
    z, w = f"{a} + {b}i", f"{c} - {d}i"
    style = r.randint(0, 3)
    if style == 0:
        return f"Compute ({z})({w}) and write the result in the form a + bi."
    if style == 1:
        return f"Divide ({z}) by ({w}) by multiplying by the conjugate."
    if style == 2:
        return f"Find the modulus and the argument (in degrees) of {z}."
    return f"Solve x^2 + {2 * abs(a) or 2}x + {a * a + b * b} = 0 over the complex numbers."


def _vectors(r: random.Random) -> str:
    u = (r.randint(-5, 6), r.randint(-5, 6))
    v = (r.randint(-5, 6), r.randint(-5, 6))
    style = r.randint(0, 2)
    if style == 0:
        return f"For u = {u} and v = {v}, find u + v, 3u - 2v, and the length of u."
    if style == 1:
        return f"Find the angle between the vectors {u} and {v} using the dot product."
    w = (r.randint(-4, 4), r.randint(-4, 4), r.randint(-4, 4))
    z = (r.randint(-4, 4), r.randint(-4, 4), r.randint(-4, 4))
    return f"Compute the cross product of {w} and {z}, and check that it is perpendicular to both."


# ---------------------------------------------------------------- geometry and trigonometry

def _shadows(r: random.Random) -> str:
    thing = r.choice(["a flagpole", "a tree", "a lamppost", "a church tower", "a wind turbine", "an office block"])
    who, _, poss = r.choice(_PEOPLE)
    h = r.choice([1.5, 1.6, 1.7, 1.8])
    s = r.choice([1.2, 2, 2.4, 3, 0.9])
    big = r.choice([6, 9, 12, 15, 18, 24])
    if r.random() < 0.5:
        return (f"{who}, who is {_num(h)} m tall, casts a shadow {_num(s)} m long. At the same moment {thing} "
                f"casts a shadow {big} m long. How tall is the {thing.split(' ', 1)[1]}? Explain why the triangles "
                f"are similar.")
    return (f"A {_num(h)} m stick casts a {_num(s)} m shadow while {thing} casts a {big} m shadow. Find the "
            f"height of the {thing.split(' ', 1)[1]} and the angle of elevation of the sun.")


def _right_trig(r: random.Random) -> str:
    style = r.randint(0, 3)
    if style == 0:
        L = r.choice([4, 5, 6, 8, 10])
        ang = r.choice([60, 65, 70, 75])
        return (f"A {L} m ladder leans against a wall at {ang} degrees to the ground. How high up the wall does "
                f"it reach, and how far is its foot from the wall?")
    if style == 1:
        rise = r.choice([0.5, 0.6, 0.75, 1.2])
        run = r.choice([6, 8, 10, 12])
        return (f"A wheelchair ramp rises {_num(rise)} m over a horizontal distance of {run} m. What angle does "
                f"it make with the ground, and does it meet a rule of at most 1:12 slope?")
    if style == 2:
        d = r.choice([30, 50, 80, 120])
        ang = r.choice([25, 32, 40, 48, 55])
        return (f"From a point {d} m from the base of a building, the angle of elevation to the top is {ang} "
                f"degrees. How tall is the building?")
    h = r.choice([40, 60, 90, 150])
    ang = r.choice([8, 12, 15, 20])
    return (f"A lighthouse keeper {h} m above sea level sees a boat at an angle of depression of {ang} degrees. "
            f"How far is the boat from the foot of the lighthouse?")


def _coordinates(r: random.Random) -> str:
    pts = [(r.randint(-6, 8), r.randint(-6, 8)) for _ in range(3)]
    style = r.randint(0, 3)
    if style == 0:
        return f"Find the distance between {pts[0]} and {pts[1]} and the midpoint of the segment joining them."
    if style == 1:
        return f"Find the area of the triangle with vertices {pts[0]}, {pts[1]} and {pts[2]}."
    if style == 2:
        return (f"Find the equation of the perpendicular bisector of the segment from {pts[0]} to {pts[1]}.")
    return (f"Is the triangle with vertices {pts[0]}, {pts[1]} and {pts[2]} a right triangle? Use slopes or "
            f"side lengths to decide.")


def _surface_area(r: random.Random) -> str:
    style = r.randint(0, 3)
    if style == 0:
        a, b, c = r.randint(10, 40), r.randint(10, 30), r.randint(5, 25)
        return (f"How much wrapping paper covers a gift box that is {a} cm by {b} cm by {c} cm, with 10% extra "
                f"for overlaps?")
    if style == 1:
        d, h = r.choice([(7, 11), (8, 12), (6, 10), (10, 15)])
        return (f"A soup can is {d} cm across and {h} cm tall. What is the area of its paper label, and of the "
                f"metal needed for the whole can?")
    if style == 2:
        rad = r.choice([3, 5, 10, 11, 12])
        return f"A ball has a radius of {rad} cm. Find its surface area and its volume."
    s, h = r.choice([(6, 4), (10, 12), (230, 146), (8, 3)])
    return (f"A square pyramid has a base side of {s} m and a height of {h} m. Find its slant height and its "
            f"total surface area.")


def _sectors(r: random.Random) -> str:
    rad = r.choice([10, 12, 15, 18, 20, 30])
    ang = r.choice([30, 45, 60, 72, 90, 120, 135])
    thing = r.choice(["A pizza slice", "A garden bed shaped like a fan", "A pie-chart wedge", "A sprinkler's "
                      "watering zone", "A hand fan", "A slice of a round cake"])
    if r.random() < 0.5:
        return (f"{thing} is a sector with radius {rad} cm and a central angle of {ang} degrees. Find the arc "
                f"length and the area of the sector.")
    return (f"{thing} has a radius of {rad} cm and an arc length of {round(3.14159 * rad * ang / 180, 1)} cm. "
            f"What is its central angle in degrees and in radians?")


def _cosine_rule(r: random.Random) -> str:
    a, b = r.randint(5, 20), r.randint(5, 20)
    ang = r.choice([40, 50, 60, 75, 100, 120])
    style = r.randint(0, 2)
    if style == 0:
        return (f"Two sides of a triangle are {a} cm and {b} cm with an angle of {ang} degrees between them. "
                f"Find the third side and the area.")
    if style == 1:
        return (f"Two hikers leave a camp on paths {ang} degrees apart. One walks {a} km and the other {b} km. "
                f"How far apart are they then?")
    c = r.randint(abs(a - b) + 2, a + b - 2)
    return f"A triangle has sides {a}, {b} and {c}. Find its largest angle."


def _circle_equation(r: random.Random) -> str:
    h, k = r.randint(-6, 6), r.randint(-6, 6)
    rad = r.randint(2, 9)
    style = r.randint(0, 2)
    if style == 0:
        c = h * h + k * k - rad * rad
        return (f"Find the center and radius of the circle x^2 + y^2 {'-' if h > 0 else '+'} {abs(2 * h)}x "
                f"{'-' if k > 0 else '+'} {abs(2 * k)}y {'+' if c >= 0 else '-'} {abs(c)} = 0 by completing the "
                f"square.")
    if style == 1:
        return (f"Write the equation of the circle with center ({h}, {k}) and radius {rad}, and say whether "
                f"the point ({h + rad - 1}, {k + 1}) lies inside it.")
    return (f"Find the equation of the tangent to the circle with center ({h}, {k}) at the point "
            f"({h + rad}, {k}).")


# ---------------------------------------------------------------- counting and probability

def _arrangements(r: random.Random) -> str:
    style = r.randint(0, 3)
    if style == 0:
        word = r.choice(["BANANA", "LETTER", "STATISTICS", "PEPPER", "BOOKKEEPER", "MISSISSIPPI", "COFFEE"])
        return f"How many different arrangements of the letters in {word} are there?"
    if style == 1:
        n, k = r.choice([(8, 3), (10, 3), (12, 3), (20, 2), (6, 4)])
        race = r.choice(["runners in a final", "horses in a race", "bakers in a competition",
                         "swimmers in a heat", "robots in a contest"])
        return f"There are {n} {race}. In how many ways can the first {k} places be filled?"
    if style == 2:
        n = r.randint(5, 8)
        return (f"{n} friends sit around a round table. How many seating orders are there if two of them insist "
                f"on sitting next to each other?")
    n = r.randint(4, 7)
    return (f"How many {n}-digit numbers can be made from the digits 1 to 9 without repeating a digit, and how "
            f"many of them are even?")


def _choose(r: random.Random) -> str:
    style = r.randint(0, 3)
    if style == 0:
        n, k = r.choice([(10, 3), (12, 4), (15, 5), (8, 2), (20, 3)])
        group = r.choice(["club members", "volunteers", "employees", "students", "parents"])
        return f"In how many ways can a committee of {k} be chosen from {n} {group}?"
    if style == 1:
        n, k = r.choice([(8, 3), (10, 2), (12, 3), (9, 4)])
        return (f"A pizzeria offers {n} toppings. How many different pizzas with exactly {k} toppings are "
                f"possible, and how many with at most {k}?")
    if style == 2:
        m, w, k = r.randint(5, 9), r.randint(4, 8), r.choice([3, 4, 5])
        return (f"A team of {k} is chosen from {m} men and {w} women. How many teams include at least one "
                f"woman?")
    n, k = r.choice([(49, 6), (45, 5), (35, 5), (40, 4)])
    return (f"A lottery draws {k} numbers from 1 to {n}. What is the probability of matching all {k} with a "
            f"single ticket?")


def _bayes(r: random.Random) -> str:
    ctx = r.randint(0, 2)
    prev = r.choice([0.5, 1, 2, 5])
    sens = r.choice([90, 95, 98, 99])
    fp = r.choice([2, 3, 5, 8, 10])
    if ctx == 0:
        return (f"A disease affects {_num(prev)}% of people. A test detects it {sens}% of the time and gives a "
                f"false positive {fp}% of the time. If someone tests positive, what is the probability they "
                f"have the disease?")
    if ctx == 1:
        spam = r.choice([20, 30, 40, 50])
        return (f"{spam}% of emails are spam. A filter flags {sens}% of spam and {fp}% of genuine emails. "
                f"What fraction of flagged emails are really spam?")
    a_share = r.choice([40, 60, 70])
    da, db = r.choice([(2, 5), (1, 4), (3, 6)])
    return (f"Machine A makes {a_share}% of a factory's parts and machine B the rest. {da}% of A's parts and "
            f"{db}% of B's parts are defective. A part is found to be defective. What is the probability it "
            f"came from machine B?")


def _expected_value(r: random.Random) -> str:
    style = r.randint(0, 2)
    if style == 0:
        cost = r.choice([1, 2, 5])
        prizes = r.choice([(100, 1000), (50, 500), (200, 2000)])
        return (f"A raffle sells {prizes[1]} tickets at ${cost} each, with one prize of ${prizes[0] * 5} and "
                f"five prizes of ${prizes[0] // 5 if prizes[0] >= 100 else 10}. What is the expected value of "
                f"one ticket?")
    if style == 1:
        win = r.choice([3, 4, 5, 6])
        return (f"In a game you roll a die: a six wins ${win * 2}, a five wins ${win}, anything else loses $2. "
                f"What is the expected winning per game, and is the game fair?")
    p = r.choice([0.02, 0.05, 0.1])
    prem = r.choice([120, 200, 350])
    payout = r.choice([1500, 2500, 4000])
    return (f"An insurer sells a policy for ${prem} a year. The chance of a claim is {_num(p * 100)}% and a "
            f"claim pays ${payout}. What is the insurer's expected profit per policy?")


def _binomial(r: random.Random) -> str:
    n = r.randint(5, 12)
    k = r.randint(1, n - 1)
    ctx = r.choice([("a basketball player makes", "free throws", 0.7), ("a seed germinates", "seeds", 0.8),
                    ("a light bulb is faulty", "bulbs", 0.05), ("a customer buys dessert", "customers", 0.3),
                    ("a penalty kick is saved", "penalties", 0.25)])
    what, plural, p = ctx
    if r.random() < 0.5:
        return (f"The probability that {what} is {_num(p)}. Out of {n} {plural}, what is the probability of "
                f"exactly {k}?")
    return (f"The probability that {what} is {_num(p)}. Out of {n} {plural}, what is the probability of at "
            f"least {k}? State the distribution you use.")


def _independent_events(r: random.Random) -> str:
    p1, p2 = r.choice([(0.3, 0.2), (0.4, 0.25), (0.6, 0.1), (0.15, 0.5), (0.7, 0.35)])
    e1, e2 = r.choice([("it rains", "the bus is late"), ("an alarm fails", "a backup alarm fails"),
                       ("the first server is down", "the second server is down"),
                       ("a flight is delayed", "the connecting flight is delayed"),
                       ("the printer jams", "the copier jams")])
    style = r.randint(0, 2)
    if style == 0:
        return (f"The probability that {e1} is {_num(p1)} and that {e2} is {_num(p2)}, independently. What is "
                f"the probability that both happen, and that at least one happens?")
    if style == 1:
        return (f"If P({e1}) = {_num(p1)} and P({e2}) = {_num(p2)} and the events are independent, what is the "
                f"probability that exactly one of them happens?")
    return (f"Suppose {e1} with probability {_num(p1)}. Over 5 independent days, what is the probability that "
            f"it happens on at least one day?")


# ---------------------------------------------------------------- statistics

def _z_scores(r: random.Random) -> str:
    a, b = _pick_two(r)
    m1, s1 = r.choice([(70, 8), (65, 10), (72, 6), (500, 100)])
    m2, s2 = r.choice([(60, 12), (80, 5), (55, 9), (20, 4)])
    x1 = m1 + r.choice([-1, 1, 1.5, 2]) * s1
    x2 = m2 + r.choice([0.5, 1, 1.5, 2]) * s2
    if r.random() < 0.5:
        return (f"{a} scored {_num(x1)} on a test with mean {m1} and standard deviation {s1}. {b} scored "
                f"{_num(x2)} on another test with mean {m2} and standard deviation {s2}. Who did better "
                f"relative to their group? Use z-scores.")
    return (f"Exam scores have mean {m1} and standard deviation {s1}. What score corresponds to a z-score of "
            f"{r.choice([-1.5, -0.5, 1.2, 2])}, and what does a score of {_num(x1)} mean in z terms?")


def _normal_rule(r: random.Random) -> str:
    thing, m, s, unit = r.choice([("adult heights", 170, 8, "cm"), ("battery lives", 500, 40, "hours"),
                                  ("cereal box weights", 750, 10, "g"), ("commute times", 35, 6, "minutes"),
                                  ("newborn weights", 3.4, 0.5, "kg"), ("exam scores", 68, 9, "points")])
    k = r.choice([1, 2, 3])
    if r.random() < 0.5:
        return (f"Suppose {thing} are normally distributed with mean {_num(m)} {unit} and standard deviation "
                f"{_num(s)} {unit}. Use the 68-95-99.7 rule to estimate the share within {k} standard "
                f"deviation{'s' if k > 1 else ''} of the mean, and the range that covers.")
    return (f"{_cap(thing)} follow a normal distribution with mean {_num(m)} {unit} and standard deviation "
            f"{_num(s)} {unit}. Roughly what percentage are above {_num(round(m + k * s, 1))} {unit}?")


def _regression_small(r: random.Random) -> str:
    xs = sorted(r.sample(range(1, 11), 5))
    a, b = r.choice([2, 3, 5]), r.randint(1, 10)
    ys = [a * x + b + r.randint(-2, 2) for x in xs]
    ctx = r.choice([("hours studied", "test score"), ("temperature", "ice creams sold"),
                    ("ads shown", "sign-ups"), ("weeks of training", "push-ups"), ("rainfall", "crop yield")])
    pts = ", ".join(f"({x}, {y})" for x, y in zip(xs, ys))
    return (f"Data on {ctx[0]} (x) and {ctx[1]} (y): {pts}. Find the least-squares line and use it to predict "
            f"y when x = {xs[-1] + 2}. Is that prediction an extrapolation?")


def _percentage_points(r: random.Random) -> str:
    a = r.choice([4, 5, 8, 12, 20, 35])
    b = a + r.choice([1, 2, 3, 5])
    what = r.choice(["unemployment", "a mortgage interest rate", "voter support for a party",
                     "the share of students who cycle to school", "a savings account rate"])
    return (f"{_cap(what)} rose from {a}% to {b}%. What is the change in percentage points and in percent? "
            f"Which figure would a headline most likely use, and why can it mislead?")


# ---------------------------------------------------------------- numbers

def _divisibility(r: random.Random) -> str:
    style = r.randint(0, 2)
    if style == 0:
        digits = [r.randint(1, 9) for _ in range(4)]
        pos = r.randint(1, 3)
        shown = "".join("_" if i == pos else str(d) for i, d in enumerate(digits))
        k = r.choice([3, 9])
        return f"Which digits can fill the blank in {shown} to make the number divisible by {k}?"
    if style == 1:
        n = r.randint(10000, 99999)
        return f"Use the divisibility rule for 11 to decide whether {n} is divisible by 11."
    n = r.randint(100, 999)
    return (f"Explain why a number is divisible by 3 exactly when the sum of its digits is, and check it on "
            f"{n}.")


def _bases(r: random.Random) -> str:
    n = r.randint(20, 255)
    style = r.randint(0, 3)
    if style == 0:
        return f"Convert {n} to binary and to hexadecimal."
    if style == 1:
        return f"Convert the binary number {bin(n)[2:]} to decimal, showing the place values."
    if style == 2:
        return f"Add the binary numbers {bin(n)[2:]} and {bin(r.randint(5, 60))[2:]} and check in decimal."
    return f"Convert {oct(n)[2:]} from base 8 to base 10 and then to base 5."


def _sci_notation(r: random.Random) -> str:
    ctx = r.choice([
        ("Light travels about 3 x 10^8 m/s", "how long does light take to cross 1.5 x 10^11 m"),
        ("A red blood cell is about 8 x 10^-6 m wide", "how many would fit side by side across 1 cm"),
        ("Earth's population is about 8 x 10^9", "how many people is that per square km of land (1.5 x 10^8 km^2)"),
        ("A bacterium weighs about 1 x 10^-12 g", "how many bacteria weigh 1 kg"),
        ("The Sun is about 1.5 x 10^8 km away", "how many hours would a plane at 900 km/h take to get there"),
        ("A grain of sand is about 6 x 10^-2 g", "how many grains are in a 25 kg bag"),
    ])
    return f"{ctx[0]}. Using scientific notation, {ctx[1]}?"


def _repeating(r: random.Random) -> str:
    style = r.randint(0, 2)
    if style == 0:
        d = r.choice(["0.272727...", "0.454545...", "0.181818...", "0.636363...", "0.090909..."])
        return f"Write {d} as a fraction in lowest terms, showing the algebra."
    if style == 1:
        d = r.choice(["0.1666...", "0.8333...", "0.41666...", "0.58333...", "1.2333..."])
        return f"Convert the repeating decimal {d} into a fraction."
    n, m = r.choice([(1, 7), (2, 11), (5, 13), (3, 14), (1, 12)])
    return f"Without a calculator, find the decimal expansion of {n}/{m}. How long is the repeating block?"


def _series(r: random.Random) -> str:
    style = r.randint(0, 3)
    if style == 0:
        first, step, rows = r.randint(12, 30), r.choice([2, 3, 4]), r.randint(15, 30)
        return (f"A theater has {rows} rows. The first row has {first} seats and each row has {step} more than "
                f"the row in front. How many seats are there in total?")
    if style == 1:
        n = r.choice([50, 100, 200, 1000])
        return f"Find the sum of all multiples of 3 or 5 below {n}."
    if style == 2:
        a, q, n = r.choice([(2, 3, 8), (5, 2, 10), (1, 4, 6), (3, 2, 12)])
        return f"Find the sum of the first {n} terms of the geometric series {a} + {a * q} + {a * q * q} + ..."
    a, q = r.choice([(8, "1/2"), (9, "1/3"), (10, "2/5"), (1, "3/4")])
    return f"Find the sum of the infinite geometric series with first term {a} and ratio {q}, and explain why it converges."


_PROOFS = [
    "the sum of the first n odd numbers is n^2",
    "the sum 1 + 2 + ... + n equals n(n + 1)/2",
    "the square root of 2 is irrational",
    "there are infinitely many prime numbers",
    "the product of two odd numbers is odd",
    "n^3 - n is divisible by 6 for every integer n",
    "the sum of the angles in a triangle is 180 degrees",
    "every integer greater than 1 has a prime factor",
    "2^n > n for every positive integer n",
    "the sum of two rational numbers is rational",
    "a number is divisible by 9 when its digit sum is",
    "the square of an even number is divisible by 4",
    "between any two real numbers there is a rational number",
    "1 + 2 + 4 + ... + 2^n = 2^(n + 1) - 1",
    "there is no largest even number",
    "the diagonals of a parallelogram bisect each other",
    "the angle in a semicircle is a right angle",
    "if n^2 is even then n is even",
]


def _proof(r: random.Random) -> str:
    claim = r.choice(_PROOFS)
    form = r.choice([
        "Prove that {c}.",
        "Write a clear proof that {c}, and name the proof technique you use.",
        "Explain, as you would to a first-year student, why {c}. Give a rigorous proof.",
        "Prove that {c}, then point out the key step where the hypothesis is used.",
    ])
    return form.format(c=claim)


# ---------------------------------------------------------------- calculus

def _limits(r: random.Random) -> str:
    a = r.randint(1, 6)
    b = r.randint(1, 5)
    style = r.randint(0, 3)
    if style == 0:
        return f"Evaluate the limit of (x^2 - {a * a}) / (x - {a}) as x approaches {a}."
    if style == 1:
        return f"Find the limit of ({a}x^2 + {b}x) / ({b}x^2 - {a}) as x goes to infinity."
    if style == 2:
        return f"Evaluate the limit of sin({a}x) / x as x approaches 0, and explain the standard limit used."
    return f"Does the limit of |x - {a}| / (x - {a}) as x approaches {a} exist? Look at both one-sided limits."


def _chain_rule(r: random.Random) -> str:
    a, b, n = r.randint(2, 6), r.randint(1, 9), r.randint(2, 6)
    forms = [f"({a}x^2 + {b})^{n}", f"sin({a}x^2)", f"e^({a}x + {b})", f"ln({a}x^2 + {b})", f"sqrt({a}x + {b})",
             f"cos^2({a}x)", f"x^{n} * e^(-{a}x)", f"(x + {b}) / ({a}x - 1)"]
    f = r.choice(forms)
    return r.choice([f"Differentiate f(x) = {f}.", f"Find dy/dx for y = {f}, naming each rule you use.",
                     f"What is the derivative of {f}? Simplify your answer."])


def _related_rates(r: random.Random) -> str:
    style = r.randint(0, 3)
    if style == 0:
        rate, rad = r.choice([5, 10, 20]), r.choice([5, 10, 15])
        return (f"Air is pumped into a spherical balloon at {rate} cubic centimeters per second. How fast is the "
                f"radius growing when the radius is {rad} cm?")
    if style == 1:
        L, v, d = r.choice([(5, 0.5, 3), (10, 1, 6), (13, 2, 5)])
        return (f"A {L} m ladder slides down a wall. Its foot moves away from the wall at {_num(v)} m/s. How fast "
                f"is the top sliding down when the foot is {d} m from the wall?")
    if style == 2:
        rad, h, q, depth = r.choice([(3, 6, 2, 4), (2, 8, 1, 5), (4, 10, 3, 6)])
        return (f"Water pours into an upside-down cone of radius {rad} m and height {h} m at {q} cubic meters "
                f"per minute. How fast is the water level rising when it is {depth} m deep?")
    v, h = r.choice([(1.2, 5), (1.5, 6), (2, 4)])
    return (f"A person {_num(1.8)} m tall walks away from a {h} m street lamp at {_num(v)} m/s. How fast is the "
            f"tip of their shadow moving?")


def _optimize(r: random.Random) -> str:
    style = r.randint(0, 3)
    if style == 0:
        f = r.choice([120, 200, 240, 400])
        return (f"A farmer has {f} m of fencing to enclose a rectangular field along a straight river, with no "
                f"fence needed on the river side. What dimensions give the largest area?")
    if style == 1:
        a, b = r.choice([(20, 20), (30, 20), (24, 15), (40, 25)])
        return (f"An open box is made from a {a} cm by {b} cm sheet by cutting equal squares from the corners and "
                f"folding up the sides. What size of square gives the largest volume?")
    if style == 2:
        v = r.choice([330, 500, 1000])
        return (f"A cylindrical can must hold {v} cubic centimeters. What radius and height use the least metal?")
    p = r.choice([20, 30, 40])
    return (f"A shop sells {p * 10} mugs a month at ${p}. Each $1 price rise loses 10 sales. What price "
            f"maximizes revenue?")


def _area_under(r: random.Random) -> str:
    a, b = sorted(r.sample(range(0, 6), 2))
    c, d = r.randint(1, 4), r.randint(0, 6)
    style = r.randint(0, 2)
    if style == 0:
        return f"Find the area under y = {_poly([(c, 2), (d, 0)]) if d else _poly([(c, 2)])} from x = {a} to x = {b}."
    if style == 1:
        k = r.randint(2, 6)
        return f"Find the area enclosed between y = x^2 and y = {k}x."
    return f"Evaluate the integral of {c}e^x + {d or 1}/x from x = 1 to x = {b + 2}."


def _tangent(r: random.Random) -> str:
    a, b, c = r.randint(1, 4), r.randint(-5, 5), r.randint(-6, 6)
    x0 = r.randint(-2, 3)
    f = _poly([(a, 2), (b, 1), (c, 0)])
    if r.random() < 0.5:
        return f"Find the equation of the tangent line to y = {f} at x = {x0}."
    return f"Find the equation of the normal line to the curve y = {f} at the point where x = {x0}."



# ---------------------------------------------------------------- short exercises (the numbers are the problem)

def _radicals(r: random.Random) -> str:
    a, b = r.choice([2, 3, 5, 6, 7]), r.choice([4, 9, 16, 25, 36, 49])
    style = r.randint(0, 3)
    if style == 0:
        return f"Simplify sqrt({a * b})."
    if style == 1:
        c = r.randint(2, 6)
        return f"Simplify {c}sqrt({a * 4}) + sqrt({a * 9}) - sqrt({a * b})."
    if style == 2:
        return f"Rationalize the denominator of {r.randint(1, 9)} / sqrt({a})."
    return f"Rationalize and simplify {r.randint(1, 6)} / ({r.randint(2, 5)} + sqrt({a}))."


def _trig_equation(r: random.Random) -> str:
    f, v = r.choice([("sin x", "1/2"), ("cos x", "-1/2"), ("tan x", "1"), ("sin x", "-sqrt(3)/2"),
                     ("cos x", "sqrt(2)/2"), ("tan x", "-sqrt(3)"), ("2sin x + 1", "0"), ("2cos^2 x - 1", "0"),
                     ("sin 2x", "sqrt(3)/2"), ("cos 2x", "1/2"), ("3tan x", "sqrt(3)")])
    rng_text = r.choice(["0 <= x < 360 degrees", "0 <= x < 2pi", "-180 <= x <= 180 degrees"])
    return f"Solve {f} = {v} for {rng_text}."


def _exact_trig(r: random.Random) -> str:
    ang = r.sample([30, 45, 60, 120, 135, 150, 210, 225, 240, 300, 315, 330], 2)
    fn = r.sample(["sin", "cos", "tan"], 2)
    return (f"Without a calculator, find the exact values of {fn[0]} {ang[0]} degrees and {fn[1]} {ang[1]} "
            f"degrees, using the unit circle.")


def _radians(r: random.Random) -> str:
    d = r.choice([15, 36, 40, 72, 105, 150, 210, 270, 330, 540])
    num, den = r.choice([(2, 3), (5, 6), (7, 4), (3, 5), (11, 12), (4, 9), (5, 3)])
    if r.random() < 0.5:
        return f"Convert {d} degrees to radians in terms of pi, and {num}pi/{den} radians to degrees."
    return f"An angle of {num}pi/{den} radians: which quadrant is its terminal side in, and what is its reference angle?"


def _antiderivative(r: random.Random) -> str:
    a, b, c = r.randint(1, 9), r.randint(-6, 6), r.randint(-9, 9)
    n = r.randint(2, 5)
    forms = [f"{_poly([(a, n), (b, 1), (c, 0)])}", f"{a}/x^{n}", f"{a}sqrt(x) + {abs(b) + 1}x",
             f"{a}cos({abs(b) + 1}x)", f"{a}e^({abs(b) + 1}x)", f"({a}x + {abs(c) + 1})^{n}",
             f"x * e^({a}x)", f"{a}x / (x^2 + {abs(c) + 1})"]
    return f"Find the indefinite integral of {r.choice(forms)} with respect to x."


def _derivative_at(r: random.Random) -> str:
    a, b, c = r.randint(1, 6), r.randint(-8, 8), r.randint(-9, 9)
    x0 = r.randint(-3, 4)
    f = _poly([(a, 3), (b, 1), (c, 0)]) if r.random() < 0.5 else _poly([(a, 2), (b, 1), (c, 0)])
    if r.random() < 0.5:
        return f"For f(x) = {f}, find f'({x0}) and say whether f is increasing or decreasing there."
    return f"Find the instantaneous rate of change of f(x) = {f} at x = {x0} using the limit definition."


def _proportion(r: random.Random) -> str:
    a, b, c = r.randint(2, 15), r.randint(3, 20), r.randint(4, 30)
    style = r.randint(0, 2)
    if style == 0:
        return f"Solve the proportion {a}/{b} = x/{c}."
    if style == 1:
        return f"Solve (x + {a}) / {b} = (x - {a}) / {c}."
    return f"If y varies inversely with x and y = {a} when x = {b}, find y when x = {c}."


def _quadratic_ineq(r: random.Random) -> str:
    r1, r2 = sorted(r.sample(range(-7, 8), 2))
    expr = _poly([(1, 2), (-(r1 + r2), 1), (r1 * r2, 0)])
    sym = r.choice(["< 0", "> 0", "<= 0", ">= 0"])
    return f"Solve the inequality {expr} {sym} and give the answer in interval notation."


def _vertex_form(r: random.Random) -> str:
    a = r.choice([1, 2, -1, 3, -2])
    h, k = r.randint(-5, 5), r.randint(-9, 9)
    b, c = -2 * a * h, a * h * h + k
    expr = _poly([(a, 2), (b, 1), (c, 0)])
    if r.random() < 0.5:
        return f"Write y = {expr} in vertex form by completing the square, and give the vertex and the axis of symmetry."
    return f"Find the vertex, the y-intercept and the x-intercepts (if any) of y = {expr}, and sketch the parabola."


def _det3(r: random.Random) -> str:
    m = [[r.randint(-3, 5) for _ in range(3)] for _ in range(3)]
    rows = ", ".join(str(row) for row in m)
    if r.random() < 0.5:
        return f"Compute the determinant of the 3x3 matrix [{rows}]."
    return f"Is the matrix [{rows}] invertible? Justify with its determinant."


def _sum_notation(r: random.Random) -> str:
    n = r.randint(5, 30)
    a, b = r.randint(1, 6), r.randint(-5, 9)
    forms = [f"({a}k + {b})" if b >= 0 else f"({a}k - {-b})", "k^2", f"{a} * 2^k", "1/(k(k + 1))", "(-1)^k * k"]
    return f"Evaluate the sum of {r.choice(forms)} for k = 1 to {n}."


def _dice_sums(r: random.Random) -> str:
    n = r.choice([2, 3])
    t = r.randint(n + 1, 6 * n - 1)
    style = r.randint(0, 2)
    if style == 0:
        return f"When {n} fair dice are rolled, what is the probability that the total is {t}?"
    if style == 1:
        return f"When {n} fair dice are rolled, what is the probability that the total is at least {t}?"
    return f"Roll {n} fair dice. What is the probability that all of them show different numbers and the total is below {t}?"


def _percent_chain(r: random.Random) -> str:
    p1, p2 = r.sample([5, 10, 15, 20, 25, 30, 40, 50], 2)
    up = r.choice(["increased", "raised", "marked up"])
    down = r.choice(["decreased", "cut", "reduced"])
    start = r.choice([80, 120, 250, 400, 1000])
    if r.random() < 0.5:
        return f"A value of {start} is {up} by {p1}% and then {down} by {p2}%. What is the final value and the overall percentage change?"
    return f"After a {p1}% rise, by what percentage must a value fall to get back to where it started?"


def _gcd_three(r: random.Random) -> str:
    g = r.choice([2, 3, 4, 6, 7, 9, 12])
    nums = sorted({g * r.randint(2, 15) for _ in range(3)})
    if len(nums) < 3:
        nums.append(nums[-1] + g)
    return (f"What is the highest common factor of {', '.join(map(str, nums[:-1]))} and {nums[-1]}, and what is the "
            f"smallest number that all three divide?")


def _ncr_values(r: random.Random) -> str:
    n, k = r.randint(6, 20), r.randint(2, 5)
    if r.random() < 0.5:
        return f"Compute C({n}, {k}) and P({n}, {k}), and explain why they differ by a factor of {k}!."
    return f"Find the coefficient of x^{k} in the expansion of (1 + {r.randint(2, 4)}x)^{n}."


def _linear_from_data(r: random.Random) -> str:
    ctx = r.choice([
        ("A plumber charges ${a} for a visit plus ${b} per hour", "a {h}-hour job", "hours"),
        ("A candle is {a} cm tall and burns {b} cm per hour", "after {h} hours", "hours"),
        ("A tank holds {a} liters and drains at {b} liters per minute", "after {h} minutes", "minutes"),
        ("A phone starts at {a}% battery and loses {b}% per hour of video", "after {h} hours", "hours"),
        ("A gym charges a ${a} joining fee and ${b} per month", "for {h} months", "months"),
        ("A plant is {a} cm tall and grows {b} cm per week", "after {h} weeks", "weeks"),
        ("A taxi charges ${a} to start and ${b} per km", "for a {h} km ride", "km"),
        ("A savings jar has ${a} and gets ${b} every day", "after {h} days", "days"),
    ])
    a, b, h = r.choice([20, 35, 50, 60, 80, 90]), r.choice([2, 3, 4, 5, 6, 8]), r.randint(2, 9)
    setup, when, unit = ctx
    return (f"{setup.format(a=a, b=b)}. Write a linear function for this situation, evaluate it "
            f"{when.format(h=h)}, and explain what the slope and intercept mean.")


_CONCEPTS = [
    "Why is dividing by zero undefined, rather than equal to infinity?",
    "Why is a negative number times a negative number positive? Give an intuitive explanation.",
    "What is the difference between a permutation and a combination? Give an everyday example of each.",
    "Why does 0.999... equal 1? Give two different arguments.",
    "What does a derivative measure, in plain words, and how is it related to the slope of a tangent?",
    "What is the difference between correlation and causation? Give an example where they are confused.",
    "Why is any number to the power of zero equal to 1?",
    "What is a prime number, and why is 1 not considered prime?",
    "What is the difference between the mean and the median, and when is the median the better summary?",
    "Explain what a logarithm is to someone who knows exponents but has never seen logs.",
    "What does it mean for a function to be continuous? Give an example of a function that is not.",
    "Why does the area of a circle involve pi squared radius rather than pi times the diameter?",
    "What is the fundamental theorem of calculus saying, in simple terms?",
    "What is a proof by contradiction? Explain with a simple example.",
    "Why can't you add fractions by adding the numerators and the denominators?",
    "What is the difference between an equation and an identity?",
    "What is a standard deviation, and what does a large one tell you about data?",
    "Why do we rationalize denominators, and is it ever really necessary?",
    "What is the difference between discrete and continuous probability distributions?",
    "What does 'statistically significant' mean, and what does it not mean?",
    "Explain what an irrational number is and give three examples.",
    "Why does the Pythagorean theorem only work for right triangles?",
    "What is the difference between speed and velocity, mathematically?",
    "Why does multiplying two numbers between 0 and 1 give a smaller number?",
    "What is the gambler's fallacy? Explain with coin flips.",
    "What is compound interest, and why does it grow faster than simple interest over time?",
    "Why is the sum of the exterior angles of any convex polygon 360 degrees?",
    "What does it mean for two events to be independent, and how is that different from mutually exclusive?",
    "What is a vector, and how is it different from a scalar?",
    "Explain what an asymptote is with an example of a horizontal and a vertical one.",
    "Why do we need complex numbers? Give the historical motivation briefly.",
    "What is the difference between a sequence and a series?",
    "What does e represent, and why does it show up in growth problems?",
    "What is modular arithmetic, and where is it used in everyday life?",
    "What is a function's domain and range? Give an example with a restricted domain.",
    "Why does a quadratic have at most two real roots?",
    "What is the law of large numbers, and what does it not promise?",
    "Why is the set of real numbers 'bigger' than the set of integers, even though both are infinite?",
    "How are radians defined, and why do mathematicians prefer them to degrees?",
    "What is Simpson's paradox? Describe a simple example.",
]

# New problem families; each gets `_MORE_PER_GENERATOR` problems.
_MORE_GENERATORS = [
    _unit_price, _cover_area, _mixture, _markup, _exchange, _fuel, _time_zones, _map_scale, _decay,
    _savings_goal, _tax_brackets, _meeting_point, _wages, _win_rate,
    _projectile, _two_item_system, _exp_equation, _logs, _composition, _absolute, _factorise, _rational_expr,
    _plan_compare, _matrix2, _complex_numbers, _vectors,
    _shadows, _right_trig, _coordinates, _surface_area, _sectors, _cosine_rule, _circle_equation,
    _arrangements, _choose, _bayes, _expected_value, _binomial, _independent_events,
    _z_scores, _normal_rule, _regression_small, _percentage_points,
    _divisibility, _bases, _sci_notation, _repeating, _series, _proof,
    _limits, _chain_rule, _related_rates, _optimize, _area_under, _tangent,
    _radicals, _trig_equation, _exact_trig, _radians, _antiderivative, _derivative_at, _proportion,
    _quadratic_ineq, _vertex_form, _det3, _sum_notation, _dice_sums, _percent_chain, _gcd_three, _ncr_values,
    _linear_from_data,
]
_MORE_PER_GENERATOR = 40
_MORE_PER_OLD_GENERATOR = 25  # at most this many more problems from each original generator, after its first 7
_DRAWS = 600  # draws per generator
_MORE_NO_SUFFIX = {_proof, _percentage_points}


def _extended(original: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The appended prompts: more problems of the original generators (same groups), problems of each new
    generator (a group each, named after it), and the concept questions (a group each). A drawn problem is kept
    only if it is no near-duplicate (token Jaccard >= NEAR_DUPLICATE_JACCARD, with or without its closing
    instruction) of a problem already in its group, so that a generator gives as many problems as its contexts and phrasings
    really differ, up to its cap, and not the same problem with other numbers."""
    rng = random.Random(20251204)
    kept: dict[str, list[frozenset[str]]] = {}  # the token sets of a group's problems, with and without suffix
    for group, text in original:
        kept.setdefault(group, []).extend({prompt_tokens(_core(text)), prompt_tokens(text)})
    result: list[tuple[str, str]] = []
    for gens, cap in ((_GENERATORS, _MORE_PER_OLD_GENERATOR), (_MORE_GENERATORS, _MORE_PER_GENERATOR)):
        for gen in gens:
            group = gen.__name__.strip("_").replace("_", "-")
            tokens = kept.setdefault(group, [])
            made = 0
            for _ in range(_DRAWS):
                if made == cap:
                    break
                text = gen(rng).strip()
                suffix = rng.choice(_SUFFIXES)
                if gen not in _NO_SUFFIX and gen not in _MORE_NO_SUFFIX and not any(
                        w in text for w in ("Explain", "explain", "Show", "step by step")):
                    text += suffix
                new = {prompt_tokens(_core(text)), prompt_tokens(text)}
                if any(token_jaccard(t, u) >= NEAR_DUPLICATE_JACCARD for t in new for u in tokens):
                    continue
                tokens.extend(new)
                result.append((group, text))
                made += 1
    result += [(f"concept-{i}", text) for i, text in enumerate(_CONCEPTS, start=1)]
    rng.shuffle(result)
    return result


def prompts() -> list[tuple[str, str]]:
    """(group, prompt) pairs: the original prompts first, unchanged, then the extension (see `_extended`); a
    problem generator's prompts share a group, named after it ("work-rate")."""
    result = _original()
    result += _extended(result)
    assert len(result) == len({text for _, text in result}) >= 1850, len(result)
    return result
