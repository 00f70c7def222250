"""Math prompt set: word problems, algebra, percentages, fractions, geometry, probability,
sequences, units, calculus, statistics and number theory, with seeded numbers."""

import random
from fractions import Fraction

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


def prompts() -> list[tuple[str, str]]:
    """(group, prompt) pairs: a problem generator's prompts share a group, named after it ("work-rate")."""
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
