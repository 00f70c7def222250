"""Summarization prompts: an instruction plus a passage of about 30 to 150 words composed from hand-written
building blocks (fictional news, notes, reviews, emails, stories, job ads, interviews, forum posts ...)."""

import random
import re

# ---------------------------------------------------------------------------
# Shared building blocks
# ---------------------------------------------------------------------------

_PEOPLE = [
    ("Maria", "she"), ("Daniel", "he"), ("Priya", "she"), ("Tom", "he"),
    ("Elena", "she"), ("Marcus", "he"), ("Aisha", "she"), ("Ben", "he"),
    ("Sofia", "she"), ("Kenji", "he"), ("Grace", "she"), ("Omar", "he"),
    ("Hannah", "she"), ("Luis", "he"), ("Nadia", "she"), ("Peter", "he"),
    ("Chloe", "she"), ("Samuel", "he"), ("Ingrid", "she"), ("Rafael", "he"),
    ("Leah", "she"), ("Jonah", "he"), ("Mei", "she"), ("Victor", "he"),
    ("Rosa", "she"), ("Arjun", "he"), ("Claire", "she"), ("Felix", "he"),
]

_SURNAMES = [
    "Alvarez", "Brennan", "Chowdhury", "Duarte", "Eriksen", "Fairbanks",
    "Gallagher", "Hoffman", "Ishikawa", "Jansen", "Kowalski", "Lindqvist",
    "Mbeki", "Novak", "Okafor", "Petrov", "Quinlan", "Ramirez", "Sato",
    "Thornton", "Underwood", "Varga", "Whitfield", "Yilmaz", "Zimmer",
]

_TOWNS = [
    "Millbrook", "Harrow Falls", "Eastfield", "Cedar Point", "Wrenford",
    "Lakemont", "Ashby", "Port Calder", "Greystone", "Oakridge", "Bramley",
    "Kestrel Bay", "Northgate", "Willow Creek", "Fernhill", "Stonebridge",
]

_COUNTIES = ["Marlow", "Hadley", "Brookfield", "Carver", "Dunmore", "Ellison"]

_STREETS = [
    "Mill Street", "Station Road", "Elm Avenue", "Harbor Drive", "Maple Lane",
    "Church Street", "Bridge Road", "Canal Street",
]

_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]

_MONTHS = [
    "January", "February", "March", "April", "May", "June", "July",
    "August", "September", "October", "November", "December",
]


def _a(word: str) -> str:
    """Return 'a word' or 'an word'."""
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        suffix = "th"
    else:
        suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _person(rng: random.Random):
    first, pron = rng.choice(_PEOPLE)
    return first, f"{first} {rng.choice(_SURNAMES)}", pron


def _people(rng: random.Random, k: int):
    """k distinct (first, full, pronoun) tuples."""
    picks = rng.sample(_PEOPLE, k)
    surnames = rng.sample(_SURNAMES, k)
    return [(f, f"{f} {s}", p) for (f, p), s in zip(picks, surnames)]


def _date(rng: random.Random) -> str:
    return f"{rng.choice(_MONTHS)} {rng.randint(2, 27)}"


def _poss(pron: str) -> str:
    return "her" if pron == "she" else "his"


def _obj(pron: str) -> str:
    return "her" if pron == "she" else "him"


# ---------------------------------------------------------------------------
# Genre 1: town council decisions (fictional local news)
# ---------------------------------------------------------------------------

_COUNCIL_ITEMS = [
    dict(
        proposal="a plan to turn the empty rail depot on {street} into a covered farmers' market",
        benefit="the market would bring weekend shoppers back to the town centre",
        concern="Several residents worried about where visitors would park on market days",
        dissent="the roads around the depot need repairs before anything else",
        timeline="Renovation of the depot is expected to start next spring.",
        cost=(400, 900, "thousand"),
    ),
    dict(
        proposal="a protected bike lane along {street}",
        benefit="it would make the route to two elementary schools much safer",
        concern="Shop owners said losing about 40 parking spaces could hurt their business",
        dissent="the lane was being rushed through without a proper traffic study",
        timeline="Crews plan to finish the lane before the new school year.",
        cost=(150, 350, "thousand"),
    ),
    dict(
        proposal="a {pct} percent increase in residential water rates",
        benefit="the money is needed to replace pipes that are more than 80 years old",
        concern="Older residents on fixed incomes said the increase would be hard to absorb",
        dissent="the utility should look for savings before asking households to pay more",
        timeline="The new rates will appear on bills from the start of next quarter.",
        cost=None,
    ),
    dict(
        proposal="a ban on gas-powered leaf blowers within town limits",
        benefit="the rule would cut noise and fumes on residential streets",
        concern="Local landscaping firms said switching to electric equipment would be expensive",
        dissent="small businesses needed more time to adapt",
        timeline="The ban will be phased in over two years, with rebates for companies that switch early.",
        cost=None,
    ),
    dict(
        proposal="buying the vacant lot on {street} to create a small public park",
        benefit="the east side of town has no green space within walking distance",
        concern="A few residents questioned whether the town could afford years of maintenance",
        dissent="the asking price was well above the lot's assessed value",
        timeline="A public design workshop for the park will be held this autumn.",
        cost=(600, 1200, "thousand"),
    ),
    dict(
        proposal="keeping the public library open until 9 p.m. on weeknights",
        benefit="students and working parents need a quiet place to study in the evenings",
        concern="Library staff asked whether enough part-time workers could be hired",
        dissent="the longer hours should have been tested for six months first",
        timeline="The extended hours will begin once four new staff members are hired.",
        cost=(90, 180, "thousand"),
    ),
    dict(
        proposal="a year-long pilot of curbside food-waste collection",
        benefit="composting could cut the trash sent to the county landfill by about a fifth",
        concern="Some residents worried that the green bins would attract raccoons",
        dissent="the cost per household was too high for a trial",
        timeline="About 1,200 households will receive bins when the trial begins in the fall.",
        cost=(200, 450, "thousand"),
    ),
    dict(
        proposal="lowering the speed limit on residential streets to 20 miles per hour",
        benefit="slower traffic would reduce serious injuries to pedestrians",
        concern="Commuters said the change would add time to already slow trips",
        dissent="new signs alone would do little without more enforcement",
        timeline="New signs will go up over the next three months.",
        cost=(40, 120, "thousand"),
    ),
    dict(
        proposal="building a skate park next to the community pool",
        benefit="teenagers currently have nowhere in town to skate safely",
        concern="Neighbours of the pool raised concerns about noise late in the evening",
        dissent="the money would be better spent fixing the pool's heating system",
        timeline="Construction is planned for the summer, with the park opening in the autumn.",
        cost=(250, 500, "thousand"),
    ),
    dict(
        proposal="new limits on short-term holiday rentals in the historic district",
        benefit="too many homes had been turned into rentals, pushing up prices for local families",
        concern="Owners of rental properties said the rules would cost them a major source of income",
        dissent="the limits would hurt tourism-dependent shops downtown",
        timeline="Existing rental permits will remain valid until they expire next year.",
        cost=None,
    ),
    dict(
        proposal="replacing all of the town's streetlights with LED fixtures",
        benefit="the new lights would cut the street-lighting electricity bill roughly in half",
        concern="Some residents asked that the new lights be shielded to keep the night sky dark",
        dissent="the contract had been awarded without enough competing bids",
        timeline="The work will be done neighbourhood by neighbourhood over eighteen months.",
        cost=(700, 1500, "thousand"),
    ),
    dict(
        proposal="a program paying local artists to paint murals on blank walls downtown",
        benefit="the murals would make the main shopping streets more inviting",
        concern="Business owners asked for a say in which designs appear on their buildings",
        dissent="public art is not a priority while the town budget is tight",
        timeline="The first three murals are expected to be finished by the end of the summer.",
        cost=(50, 90, "thousand"),
    ),
]


def _money(rng, spec):
    lo, hi, unit = spec
    if unit == "thousand":
        value = rng.randint(lo // 10, hi // 10) * 10
        if value >= 1000:
            return f"${value / 1000:.1f} million"
        return f"${value},000"
    return f"${rng.randint(lo, hi)}"


def _gen_council(rng: random.Random, item: dict) -> str:
    town = rng.choice(_TOWNS)
    fill = dict(street=rng.choice(_STREETS), pct=rng.randint(4, 9))
    proposal = item["proposal"].format(**fill)
    (_, mayor, _), (_, member, mpron) = _people(rng, 2)
    day = rng.choice(_WEEKDAYS)
    cost = _money(rng, item["cost"]) if item["cost"] else None
    form = rng.randrange(3)
    if form == 0:
        no = rng.choice([0, 1, 2, 3])
        yes = 7 - no
        vote = "voted unanimously" if no == 0 else f"voted {yes}-{no}"
        parts = [f"The {town} Town Council {vote} on {day} night to approve {proposal}."]
        if cost:
            parts.append(f"The project is expected to cost about {cost}, paid for from the town's capital reserve.")
        parts.append(f"Supporters said {item['benefit']}.")
        parts.append(f"{item['concern']}.")
        if no:
            parts.append(f"Councillor {member} voted against the measure, saying {item['dissent']}.")
        else:
            parts.append(f"Mayor {mayor} called the decision \"a long time coming.\"")
        parts.append(item["timeline"])
    elif form == 1:
        yes = rng.choice([2, 3])
        no = 7 - yes
        hours = rng.choice(["two", "three", "nearly four"])
        parts = [
            f"After {hours} hours of public comment on {day}, the {town} Town Council rejected "
            f"{proposal} by a vote of {no}-{yes}.",
            f"Supporters had argued that {item['benefit']}, but most council members sided with critics.",
            f"{item['concern']}.",
        ]
        if cost:
            parts.append(f"The plan would have cost roughly {cost}.")
        parts.append(
            f"Councillor {member}, who backed the idea, said {mpron} would bring a revised version "
            f"back to the council {rng.choice(['next year', 'within six months', 'after the budget review'])}."
        )
    else:
        no = rng.choice([1, 2])
        yes = 7 - no
        parts = [
            f"{town} will go ahead with {proposal} after a {yes}-{no} council vote this week.",
            f"Mayor {mayor} said {item['benefit']}, and that residents had asked for the change for years.",
            f"Not everyone is convinced. {item['concern']}.",
        ]
        if cost:
            parts.append(f"The estimated cost is {cost}.")
        parts.append(f"Councillor {member} opposed the plan, arguing that {item['dissent']}.")
        parts.append(item["timeline"])
        parts.append(f"Residents can view the full plans at {rng.choice(['town hall', 'the public library', 'the town website'])}.")
    return " ".join(parts)


# ---------------------------------------------------------------------------
# Genre 2: product launches (fictional companies)
# ---------------------------------------------------------------------------

_LAUNCH_ITEMS = [
    dict(maker="maker of home appliances", brands=["Brightloom", "Tidewell"], name="Breeze",
         category="quiet countertop air purifier", short="purifier",
         f1="can clear smoke and pollen from a medium-sized room in about 20 minutes",
         f2="adjusts its fan speed automatically based on air quality",
         f3="each filter should last about a year",
         price=(149, 229, "priced at ${p}"), audience="apartment dwellers and allergy sufferers"),
    dict(maker="maker of electric bicycles", brands=["Nortova", "Velocita"], name="Fold",
         category="folding electric bike", short="bike",
         f1="weighs 17 kilograms and folds in under ten seconds",
         f2="can travel up to 60 kilometres on a single charge",
         f3="the battery can be removed and charged at a desk",
         price=(1299, 1899, "priced at ${p}"), audience="city commuters who combine cycling with trains or buses"),
    dict(maker="children's electronics company", brands=["Kidwise", "Pebble & Co."], name="Buddy",
         category="GPS watch for children", short="watch",
         f1="lets parents see their child's location without giving the child a smartphone",
         f2="can call up to five contacts approved by a parent",
         f3="the battery lasts three days between charges",
         price=(99, 149, "priced at ${p}"), audience="families with children aged six to twelve"),
    dict(maker="personal finance start-up", brands=["Coinpath", "Ledgerly"], name="Plan",
         category="budgeting app", short="app",
         f1="sorts spending into categories automatically",
         f2="sends a gentle warning when a category is close to its monthly limit",
         f3="all data is stored encrypted on the user's phone",
         price=(3, 6, "free to download, with a premium tier at ${p} a month"), audience="young adults managing money on their own for the first time"),
    dict(maker="maker of cleaning robots", brands=["Halcyon Home", "Sweeply"], name="Glide",
         category="robot vacuum", short="vacuum",
         f1="maps each room and avoids cables and pet bowls",
         f2="empties its own dustbin into a sealed base station",
         f3="it is quiet enough to run during a phone call",
         price=(399, 599, "priced at ${p}"), audience="pet owners and busy households"),
    dict(maker="audio company", brands=["Quillstone Audio", "Resonant"], name="Hush",
         category="pair of noise-cancelling earbuds", short="earbuds",
         f1="block out most low-frequency noise such as engines and air conditioners",
         f2="last eight hours on a single charge",
         f3="the case adds another three full charges",
         price=(129, 199, "priced at ${p}"), audience="frequent travellers and open-office workers"),
    dict(maker="outdoor equipment maker", brands=["Ridgeline", "Pinecrest Gear"], name="Sunpack",
         category="solar-powered battery pack", short="battery pack",
         f1="can charge a phone four times from a full battery",
         f2="folds out into three solar panels for recharging in daylight",
         f3="it survived drop tests from two metres",
         price=(79, 119, "priced at ${p}"), audience="campers, hikers and festival-goers"),
    dict(maker="maker of garden gadgets", brands=["Featherly", "Greenmoss"], name="Perch",
         category="bird feeder with a built-in camera", short="feeder",
         f1="photographs each visiting bird and identifies the species",
         f2="sends the pictures to the owner's phone",
         f3="its camera works in rain and freezing temperatures",
         price=(169, 249, "priced at ${p}"), audience="amateur birdwatchers and families"),
    dict(maker="stationery company", brands=["Inkwell Labs", "Margin"], name="Loop",
         category="reusable smart notebook", short="notebook",
         f1="lets users scan handwritten pages into the cloud with a phone",
         f2="can be wiped clean with a damp cloth and used again",
         f3="each notebook should last for years of daily use",
         price=(29, 45, "priced at ${p}"), audience="students and people who take notes in meetings"),
    dict(maker="kitchenware brand", brands=["Copperfield", "Kettleworks"], name="Steep",
         category="electric kettle with precise temperature control", short="kettle",
         f1="heats water to any temperature between 40 and 100 degrees Celsius",
         f2="keeps water warm for up to an hour",
         f3="it boils a full litre in under four minutes",
         price=(69, 99, "priced at ${p}"), audience="tea and coffee enthusiasts"),
    dict(maker="education technology company", brands=["Lingotree", "Parla"], name="Daily",
         category="language-learning app", short="app",
         f1="builds five-minute lessons around everyday conversations",
         f2="uses speech recognition to correct pronunciation",
         f3="lessons can be downloaded for offline use",
         price=(7, 12, "free for basic lessons and ${p} a month for the full course"), audience="adults who want to learn a language in short daily sessions"),
    dict(maker="maker of fitness equipment", brands=["Strideworks", "Corefit"], name="Flex",
         category="adjustable dumbbell set", short="set",
         f1="changes weight from 2 to 24 kilograms with the turn of a dial",
         f2="replaces fifteen pairs of ordinary dumbbells",
         f3="it fits under a bed when not in use",
         price=(249, 349, "priced at ${p}"), audience="people who exercise at home with little space"),
]

_LAUNCH_CLOSERS = [
    "Industry analysts said the {short} enters a crowded market but could stand out on price.",
    "Early reviewers praised the design, though some said the price is higher than similar products.",
    "The company hopes to reach {units},000 customers in the first year.",
    "Pre-orders opened on the company website on the same day.",
    "The company said a version for international markets will follow later in the year.",
]


def _gen_launch(rng: random.Random, item: dict) -> str:
    brand = rng.choice(item["brands"])
    town = rng.choice(_TOWNS)
    _, ceo, _ = _person(rng)
    lo, hi, fmt = item["price"]
    price = fmt.format(p=rng.randint(lo, hi))
    product = f"{brand} {item['name']}"
    sale = rng.choice([f"on {_date(rng)}", "next month", "in time for the holidays", "in early spring"])
    closer = rng.choice(_LAUNCH_CLOSERS).format(short=item["short"], units=rng.randint(20, 90))
    years = rng.choice(["two", "three", "nearly four"])
    if rng.random() < 0.5:
        parts = [
            f"{brand}, {_a(town)}-based {item['maker']}, on {rng.choice(_WEEKDAYS)} unveiled the {product}, "
            f"{_a(item['category'])} that {item['f1']}.",
            f"The {item['short']} also {item['f2']}, and the company says {item['f3']}.",
            f"It will be available {sale}, {price}, and is aimed mainly at {item['audience']}.",
            f"Chief executive {ceo} said the team spent {years} years on the design.",
            closer,
        ]
    else:
        parts = [
            f"Shoppers will soon be able to buy the {product}, the newest product from {brand}, {_a(item['maker'])}.",
            f"The company describes it as {_a(item['category'])} that {item['f1']}.",
            f"According to {brand}, the {item['short']} {item['f2']}, and {item['f3']}.",
            f"\"We built this for {item['audience']},\" said {ceo}, the company's founder.",
            f"The {product} will be available {sale}, {price}.",
            closer,
        ]
    return " ".join(parts)


# ---------------------------------------------------------------------------
# Genre 3: weather events
# ---------------------------------------------------------------------------


def _w_thunder(rng, region, town, day, who):
    return [
        f"Severe thunderstorms swept across {region} on {day} afternoon, bringing hail and wind gusts of up to {rng.randint(55, 75)} miles per hour.",
        f"About {rng.randint(8, 40)},000 homes and businesses lost power at the height of the storm, and fallen trees blocked several roads.",
        f"{town} recorded {rng.randint(2, 4)}.{rng.randint(1, 9)} inches of rain in less than two hours, flooding underpasses near the river.",
        "No serious injuries were reported.",
        f"Utility crews said most customers should have electricity back by {rng.choice(['Saturday evening', 'the end of the weekend', 'Thursday night'])}.",
        "Forecasters expect cooler, drier weather for the rest of the week.",
    ]


def _w_snow(rng, region, town, day, who):
    inches = rng.randint(12, 26)
    return [
        f"A winter storm dropped up to {inches} inches of snow on {region} between {day} night and the following afternoon.",
        f"Schools in {town} and neighbouring districts closed for the day, and the regional airport cancelled {rng.randint(40, 120)} flights.",
        "Road crews worked through the night, but officials urged drivers to stay home while ploughs cleared side streets.",
        f"\"This is the heaviest snowfall we have seen in {rng.choice(['five', 'eight', 'ten'])} years,\" said {who}, the county's emergency manager.",
        "Temperatures are expected to stay below freezing for several days, so residents were asked to check on elderly neighbours.",
    ]


def _w_heat(rng, region, town, day, who):
    temp = rng.randint(100, 108)
    return [
        f"A heat wave pushed temperatures in {region} above 100 degrees Fahrenheit for a {rng.choice(['third', 'fourth', 'fifth'])} straight day on {day}.",
        f"{town} reached {temp} degrees, breaking a record set in {rng.randint(1936, 1998)}.",
        f"The county opened {rng.randint(6, 15)} cooling centres in libraries and community halls, and several outdoor events were postponed.",
        "Health officials reported a rise in heat-related emergency calls, mostly among older adults and outdoor workers.",
        "Relief is expected early next week, when a cold front should bring temperatures back into the 80s.",
    ]


def _w_flood(rng, region, town, day, who):
    return [
        f"The {rng.choice(['Alder', 'Sable', 'Wick', 'Tarrow'])} River overflowed its banks near {town} on {day} after three days of steady rain across {region}.",
        f"About {rng.randint(60, 300)} residents in low-lying streets were evacuated, and a temporary shelter opened at the high school.",
        f"Water reached the ground floors of several shops on {rng.choice(_STREETS)}, and two bridges were closed as a precaution.",
        f"{who}, who coordinates the town's emergency response, said the river was expected to peak overnight before slowly falling.",
        "Officials warned people not to drive through flooded roads, even when the water looks shallow.",
    ]


def _w_wind(rng, region, town, day, who):
    return [
        f"Strong winds battered the coast of {region} on {day}, with gusts reaching {rng.randint(60, 85)} miles per hour at the harbour in {town}.",
        "Ferry services were suspended for the day, and a section of the seafront promenade was closed after waves threw rocks onto the path.",
        f"Roughly {rng.randint(3, 15)},000 customers lost power, mainly in rural areas.",
        "A lorry overturned on the coastal highway, but the driver escaped with minor injuries.",
        "Forecasters said the wind would ease by the following morning, although rough seas could continue into the weekend.",
    ]


def _w_ice(rng, region, town, day, who):
    return [
        f"Freezing rain coated {region} in a layer of ice up to {rng.choice(['half an inch', 'three-quarters of an inch', 'an inch'])} thick on {day}.",
        f"Branches weighed down by ice snapped across {town}, bringing down power lines and leaving about {rng.randint(10, 45)},000 homes without heat.",
        "Hospitals treated dozens of people for falls on icy pavements.",
        f"The town opened a warming centre at the community hall, and {who}, the mayor, asked residents to avoid all non-essential travel.",
        "Crews from neighbouring states arrived to help restore power, which could take several days in some areas.",
    ]


def _w_smoke(rng, region, town, day, who):
    return [
        f"Smoke from distant wildfires drifted over {region} on {day}, turning the sky orange and pushing the air quality index above {rng.randint(180, 260)}.",
        f"Officials in {town} cancelled outdoor sports practices and advised people with asthma or heart conditions to stay indoors.",
        "Several schools kept pupils inside during breaks, and the public library handed out free face masks.",
        f"{who}, a local air-quality scientist, said conditions should improve once the wind changes direction, probably within {rng.choice(['two', 'three'])} days.",
        "Residents were told to keep windows closed and run air purifiers if they have them.",
    ]


def _w_frost(rng, region, town, day, who):
    return [
        f"An unusually late frost hit {region} overnight on {day}, with temperatures falling to {rng.randint(24, 29)} degrees Fahrenheit.",
        f"Fruit growers around {town} spent the night running wind machines and sprinklers to protect apple and cherry blossoms.",
        f"Early estimates suggest that up to {rng.randint(15, 40)} percent of this year's cherry crop may have been damaged.",
        f"\"We did everything we could, but some orchards were simply too exposed,\" said {who}, who chairs the local growers' association.",
        "Agricultural officials will visit farms next week to assess losses and explain available support.",
    ]


_WEATHER_KINDS = [_w_thunder, _w_snow, _w_heat, _w_flood, _w_wind, _w_ice, _w_smoke, _w_frost]


def _gen_weather(rng: random.Random, kind) -> str:
    region = f"{rng.choice(_COUNTIES)} County"
    town = rng.choice(_TOWNS)
    _, who, _ = _person(rng)
    sentences = kind(rng, region, town, rng.choice(_WEEKDAYS), who)
    # vary structure: sometimes drop a middle sentence, add a closer or a dateline
    if rng.random() < 0.5:
        del sentences[rng.randrange(1, len(sentences) - 1)]
    if rng.random() < 0.5:
        sentences.append(rng.choice(_WEATHER_CLOSERS))
    text = " ".join(sentences)
    if rng.random() < 0.3:
        text = f"{town.upper()} - {text}"
    return text


_WEATHER_CLOSERS = [
    "Updates will be posted on the county website and its social media pages.",
    "Residents can sign up for emergency text alerts through the county website.",
    "Officials thanked residents for following safety advice.",
    "This report will be updated as more information becomes available.",
]


# ---------------------------------------------------------------------------
# Genre 4: sports results
# ---------------------------------------------------------------------------

_MASCOTS = ["Falcons", "Otters", "Miners", "Comets", "Foxes", "Pioneers", "Herons",
            "Rangers", "Badgers", "Mariners", "Wolves", "Hornets"]


def _teams(rng):
    t1, t2 = rng.sample(_TOWNS, 2)
    m1, m2 = rng.sample(_MASCOTS, 2)
    return f"{t1} {m1}", f"{t2} {m2}", t1


def _gen_sports(rng: random.Random, sport: str) -> str:
    text = _sports_text(rng, sport)
    head, _, rest = text.partition(". ")
    # after the first sentence, refer to teams by nickname only
    for full in re.findall(r"(?:" + "|".join(_TOWNS) + r") (?:" + "|".join(_MASCOTS) + r")", rest):
        rest = rest.replace(full, full.split()[-1])
    return f"{head}. {rest}"


def _sports_text(rng: random.Random, sport: str) -> str:
    home, away, home_town = _teams(rng)
    (pf, pfull, ppron), (cf, cfull, _), (of, ofull, opron) = _people(rng, 3)
    day = rng.choice(["Friday night", "Saturday afternoon", "Sunday", "Wednesday night"])
    wins, losses = rng.randint(5, 12), rng.randint(2, 7)
    next_opp = rng.choice(_MASCOTS)
    if sport == "soccer":
        w = rng.randint(2, 4)
        l = rng.randint(0, w - 1)
        minute = rng.randint(70, 89)
        return " ".join([
            f"The {home} came from behind to beat the {away} {w}-{l} on {day}.",
            f"The visitors led at half-time after a header from {ofull}, but the {home} pushed forward after the break.",
            f"{pfull} equalised with a low shot from the edge of the area and then scored again in the {_ordinal(minute)} minute.",
            f"\"We showed a lot of character today,\" said coach {cfull}.",
            f"The result lifts the {home} to {wins} wins and {losses} losses this season.",
            f"They travel to face the {next_opp} next weekend.",
        ])
    if sport == "basketball":
        w = rng.randint(78, 104)
        l = w - rng.randint(2, 15)
        pts = rng.randint(24, 38)
        return " ".join([
            f"{pfull} scored {pts} points to lead the {home} past the {away}, {w}-{l}, on {day}.",
            f"The game was tied at the end of the third quarter before the {home} opened the fourth with a 12-2 run.",
            f"{ofull} kept the {away} close with {rng.randint(16, 26)} points, but {opron} fouled out with three minutes left.",
            f"\"{pf} wanted the ball in the big moments, and {ppron} delivered,\" coach {cfull} said.",
            f"The win improves the {home} to {wins}-{losses}, good for second place in the league.",
        ])
    if sport == "baseball":
        w = rng.randint(4, 9)
        l = rng.randint(1, w - 1)
        inning = rng.choice([6, 7, 8])
        return " ".join([
            f"{pfull} hit a two-run home run in the {_ordinal(inning)} inning as the {home} beat the {away} {w}-{l} on {day}.",
            f"Starting pitcher {ofull} allowed just {rng.randint(3, 6)} hits over six innings and struck out {rng.randint(5, 10)}.",
            f"The {away} threatened in the ninth with two runners on base, but a diving catch in centre field ended the game.",
            f"Coach {cfull} praised the defence, saying the team had worked on fielding all week.",
            f"The {home} have now won {rng.randint(3, 6)} games in a row and host the {next_opp} on Tuesday.",
        ])
    if sport == "hockey":
        w = rng.randint(3, 5)
        l = w - 1
        return " ".join([
            f"{pfull} scored {rng.randint(2, 4)} minutes into overtime to give the {home} a {w}-{l} win over the {away} on {day}.",
            f"The {away} had tied the game with just {rng.randint(20, 55)} seconds left in regulation after pulling their goalie.",
            f"Goaltender {ofull} made {rng.randint(28, 41)} saves for the {home}, including a penalty shot in the second period.",
            f"\"It was a long night, but the team never gave up,\" said coach {cfull}.",
            f"The {home} are now {wins}-{losses} and sit two points out of first place.",
        ])
    # volleyball
    lost_sets = rng.choice([0, 1, 2])
    kills = rng.randint(14, 24)
    return " ".join([
        f"The {home} swept aside the {away} in the regional volleyball final on {day}, winning three sets to {('none', 'one', 'two')[lost_sets]}.",
        f"Outside hitter {pfull} led the team with {kills} kills, while setter {ofull} directed the offence with {rng.randint(30, 45)} assists.",
        "The deciding set was close until the final few points, when two straight blocks gave the home side control." if lost_sets == 2
        else "The home side controlled most of the match with strong serving and few unforced errors.",
        f"The title is {home_town}'s first in {rng.randint(6, 15)} years.",
        f"Coach {cfull} said the team will now prepare for the state tournament, which begins in two weeks.",
    ])


_SPORTS = ["soccer", "basketball", "baseball", "hockey", "volleyball"]


# ---------------------------------------------------------------------------
# Genre 5: school events
# ---------------------------------------------------------------------------


def _school(rng):
    return rng.choice([
        f"{rng.choice(_TOWNS)} Middle School", f"{rng.choice(_SURNAMES)} Elementary School",
        f"{rng.choice(_TOWNS)} High School", f"{rng.choice(_SURNAMES)} Academy",
    ])


def _s_science_fair(rng, school, a, b, c):
    n = rng.randint(40, 90)
    return [
        f"More than {n} students showed projects at the {school} science fair on {rng.choice(_WEEKDAYS)}.",
        f"First prize went to {a[1]}, whose experiment tested which household materials best keep ice from melting.",
        f"{b[1]} took second place with a model showing how rain gardens reduce flooding, and {c[1]} won the judges' special award for a homemade seismometer.",
        "The judges, three engineers and a local doctor, said the quality of the work had risen sharply from last year.",
        "The top three projects will go on to the county competition next month.",
    ]


def _s_concert(rng, school, a, b, c):
    return [
        f"The {school} spring concert filled the gymnasium on {rng.choice(_WEEKDAYS)} evening, with about {rng.randint(300, 600)} parents and friends attending.",
        "The programme featured the school choir, the jazz band and, for the first time, a string quartet formed by four students.",
        f"{a[1]} performed a solo on the trumpet that earned a standing ovation.",
        f"Music teacher {b[1]} thanked volunteers who built the stage and sewed costumes.",
        f"Donations collected at the door, about ${rng.randint(12, 30) * 100:,}, will go toward repairing the school's old piano.",
    ]


def _s_robotics(rng, school, a, b, c):
    place = rng.choice(["first", "second", "third"])
    return [
        f"A team of {rng.randint(5, 9)} students from {school} finished {place} out of {rng.randint(18, 35)} teams at the regional robotics competition on Saturday.",
        f"Their robot, which the students nicknamed \"{rng.choice(['Sparky', 'Clank', 'Bolt', 'Widget'])}\", had to sort coloured blocks and climb a ramp within two minutes.",
        f"Team captain {a[1]} said the hardest part was rebuilding the gripper after it broke during the morning rounds.",
        f"The team is coached by physics teacher {b[1]} and meets three afternoons a week.",
        f"The {place}-place finish {'qualifies the team for the national event in the spring' if place == 'first' else 'is the best result in the club history'}.",
    ]


def _s_book_drive(rng, school, a, b, c):
    books = rng.randint(12, 30) * 100
    return [
        f"Students at {school} collected {books:,} books during a month-long book drive that ended on {rng.choice(_WEEKDAYS)}.",
        "The books will be shared between the children's ward of the local hospital and two rural libraries.",
        f"The idea came from {a[1]}, a student who volunteers at the hospital on weekends.",
        f"Each class competed to bring in the most books, and the winning class, led by teacher {b[1]}, earned a pizza party.",
        "Organisers said they plan to make the drive an annual event.",
    ]


def _s_fun_run(rng, school, a, b, c):
    amount = rng.randint(8, 25) * 1000
    return [
        f"Nearly {rng.randint(250, 500)} runners, including students, parents and teachers, took part in the {school} charity fun run on Sunday morning.",
        "The five-kilometre route looped around the sports fields and along the river path.",
        f"The event raised ${amount:,} for new playground equipment.",
        f"{a[1]} crossed the line first, while head teacher {b[1]} finished the course dressed as a giant banana to keep a promise made to students.",
        "Volunteers handed out water and oranges at two stations along the route.",
    ]


def _s_garden(rng, school, a, b, c):
    return [
        f"{school} opened its new vegetable garden on {rng.choice(_WEEKDAYS)}, turning an unused corner of the car park into twelve raised beds.",
        "Students planted tomatoes, beans, lettuce and herbs, and each class will be responsible for one bed.",
        f"The project was funded by a ${rng.randint(3, 9)},000 grant from a local hardware store.",
        f"Science teacher {a[1]} said the garden will be used in lessons on plant growth, soil and healthy eating.",
        "Produce from the garden will be used in the school kitchen and shared with families at a harvest event in the autumn.",
    ]


def _s_spelling(rng, school, a, b, c):
    rounds = rng.randint(12, 22)
    word = rng.choice(["chrysanthemum", "onomatopoeia", "bureaucracy", "pharaoh", "silhouette"])
    return [
        f"After {rounds} rounds, {a[1]} won the {school} spelling bee on {rng.choice(_WEEKDAYS)} by correctly spelling \"{word}\".",
        f"{b[1]} finished as runner-up after a long duel that kept the audience on the edge of their seats.",
        "Twenty-four pupils from grades four to eight took part in the contest.",
        f"{a[0]} said {a[2]} had practised with {_poss(a[2])} grandmother every evening for a month.",
        "Both finalists will represent the school at the district spelling bee in March.",
    ]


def _s_art_show(rng, school, a, b, c):
    return [
        f"Artwork by {rng.randint(80, 160)} students from {school} went on display at the town gallery this week.",
        f"The exhibition, called \"{rng.choice(['Our Town in Colour', 'Small Worlds', 'Looking Closer', 'Home'])}\", includes paintings, clay sculptures and a large collage made from recycled packaging.",
        f"Art teacher {a[1]} said students spent most of the term on their pieces.",
        f"One painting by {b[1]}, showing the harbour at sunrise, has already been bought by the gallery's owner.",
        "The show is free and runs until the end of the month.",
    ]


_SCHOOL_KINDS = [_s_science_fair, _s_concert, _s_robotics, _s_book_drive, _s_fun_run,
                 _s_garden, _s_spelling, _s_art_show]


def _gen_school(rng: random.Random, kind) -> str:
    sentences = kind(rng, _school(rng), *_people(rng, 3))
    if rng.random() < 0.4:
        del sentences[rng.randrange(2, len(sentences) - 1)]
    if rng.random() < 0.5:
        sentences.append(rng.choice([
            "Photos from the event will be posted on the school website.",
            "The school thanked parents and local businesses for their support.",
            "The head teacher said the whole school was proud of everyone who took part.",
            "Organisers are already planning next year's event.",
        ]))
    return " ".join(sentences)


# ---------------------------------------------------------------------------
# Genre 6: meeting notes
# ---------------------------------------------------------------------------

_MEETINGS = [
    dict(
        title="Website redesign check-in",
        discussion=[
            "Design team showed two homepage mock-ups; most people preferred option B with the larger search bar.",
            "Mobile pages still take about {n} seconds to load; the target is under two.",
            "Marketing asked for a clearer link to the pricing page.",
            "Accessibility review found low contrast on several buttons.",
        ],
        decisions=["Go with homepage option B.", "Launch date moved back one week to {date}."],
        actions=["{p} to fix button contrast by Friday.", "{p} to compress product images.",
                 "{p} to draft new pricing-page copy."],
    ),
    dict(
        title="Office move planning",
        discussion=[
            "Lease on the current office ends on {date}.",
            "New building has {n} desks; we currently have 52 staff, so some hot-desking is needed.",
            "Movers quoted two options; the cheaper one cannot move on a weekend.",
            "IT needs three days to set up the network before anyone moves in.",
        ],
        decisions=["Book the weekend movers despite the higher cost.",
                   "Introduce hot-desking for teams that are in the office less than three days a week."],
        actions=["{p} to sign the moving contract.", "{p} to send a desk-booking survey to all staff.",
                 "{p} to order new keycards."],
    ),
    dict(
        title="Q3 budget review",
        discussion=[
            "Spending is {n} percent over plan, mostly because of travel and contractor costs.",
            "Software licences could be reduced; about 30 seats are unused.",
            "Sales expects a stronger fourth quarter after two large contracts.",
            "Finance wants updated forecasts from each team.",
        ],
        decisions=["Freeze non-essential travel until the end of the year.",
                   "Cancel unused software licences."],
        actions=["{p} to list unused licences by next Wednesday.", "{p} to send the revised forecast template.",
                 "{p} to review contractor agreements."],
    ),
    dict(
        title="Mobile app release planning",
        discussion=[
            "Version 2.4 is feature-complete, but {n} bugs are still open.",
            "Two of the bugs cause crashes on older Android phones.",
            "Support reports many requests for a dark mode.",
            "Beta testers like the new checkout flow.",
        ],
        decisions=["Release 2.4 only after both crash bugs are fixed.",
                   "Dark mode goes into the next release, not this one."],
        actions=["{p} to fix the Android crash bugs.", "{p} to prepare the app-store release notes.",
                 "{p} to email beta testers about the new date."],
    ),
    dict(
        title="Hiring sync",
        discussion=[
            "{n} candidates applied for the data analyst role; five passed the screening call.",
            "Interview panel feedback is arriving late, which slows everything down.",
            "The junior designer offer was accepted; start date is {date}.",
            "Recruiting agency fees are higher than expected.",
        ],
        decisions=["Panel feedback must be submitted within 48 hours of an interview.",
                   "Pause use of the agency for junior roles."],
        actions=["{p} to schedule final interviews for the analyst role.", "{p} to prepare onboarding for the new designer.",
                 "{p} to update the interview feedback form."],
    ),
    dict(
        title="Customer onboarding review",
        discussion=[
            "New customers take on average {n} days to complete setup, up from 9 last quarter.",
            "Most delays happen at the data-import step.",
            "Customers say the welcome emails are too long.",
            "The help-centre video on imports has a very high view count.",
        ],
        decisions=["Offer a free 30-minute import call to every new customer.",
                   "Shorten welcome emails to three key steps."],
        actions=["{p} to set up a booking page for import calls.", "{p} to rewrite the welcome email sequence.",
                 "{p} to track setup time weekly."],
    ),
    dict(
        title="Community garden committee",
        discussion=[
            "{n} households are on the waiting list for a plot.",
            "The shared tool shed lock was broken again last week.",
            "Water bills rose after a leaking hose went unnoticed.",
            "Several members want a children's corner with a small sandpit.",
        ],
        decisions=["Replace the shed lock with a combination lock.",
                   "Each plot holder must check hoses on their watering day."],
        actions=["{p} to buy and install the new lock.", "{p} to contact the city about extra plots.",
                 "{p} to sketch a layout for the children's corner."],
    ),
    dict(
        title="Annual conference planning",
        discussion=[
            "Venue can host up to {n} people; last year we had 310.",
            "Early-bird ticket sales are slower than last year.",
            "Two keynote speakers have confirmed; a third is still undecided.",
            "Catering quote includes vegetarian options but no vegan menu yet.",
        ],
        decisions=["Extend the early-bird discount by two weeks.", "Ask caterers for a full vegan menu."],
        actions=["{p} to follow up with the third keynote speaker.", "{p} to announce the extended discount.",
                 "{p} to get a revised catering quote."],
    ),
]

_MEETING_NUMS = {
    "Website redesign check-in": (3, 6), "Office move planning": (40, 46),
    "Q3 budget review": (6, 14), "Mobile app release planning": (9, 23), "Hiring sync": (60, 140),
    "Customer onboarding review": (12, 19), "Community garden committee": (14, 30),
    "Annual conference planning": (350, 450),
}


def _gen_meeting(rng: random.Random, item: dict) -> str:
    people = _people(rng, rng.randint(3, 5))
    lo, hi = _MEETING_NUMS[item["title"]]
    month = rng.randrange(12)
    later = _MONTHS[(month + rng.randint(1, 3)) % 12]
    fill = dict(n=rng.randint(lo, hi), date=f"{later} {rng.randint(2, 27)}")
    lines = [f"{item['title']} - {_MONTHS[month]} {rng.randint(2, 27)}",
             "Attendees: " + ", ".join(p[0] for p in people)]
    # decisions and actions refer back to the discussion, so keep every line
    disc = list(item["discussion"])
    rng.shuffle(disc)
    lines.append("Discussion:")
    lines += ["- " + d.format(**fill) for d in disc]
    lines.append("Decisions:")
    lines += ["- " + d.format(**fill) for d in item["decisions"]]
    lines.append("Action items:")
    owners = rng.sample(people, min(len(people), len(item["actions"])))
    for act, owner in zip(item["actions"], owners):
        lines.append("- " + act.format(p=owner[0]))
    if rng.random() < 0.5:
        lines.append(f"Next meeting: {rng.choice(_WEEKDAYS)} at {rng.choice(['9:30', '10:00', '2:00', '3:30'])}.")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Genre 7: product reviews
# ---------------------------------------------------------------------------

_REVIEWS = [
    dict(product="wireless headphones", why="for my daily train commute",
         pros=["The noise cancelling is excellent and makes the train feel silent.",
               "Battery life easily lasts a full week of commuting.",
               "They fold flat and fit in my laptop bag."],
         cons=["After about two hours they start to press on my ears.",
               "The touch controls are too sensitive and pause the music when I adjust them.",
               "The companion app keeps asking me to create an account."]),
    dict(product="blender", why="to make smoothies before work",
         pros=["It crushes frozen fruit and ice in seconds.",
               "The jug is dishwasher safe, which saves time in the morning.",
               "It is much quieter than my old one."],
         cons=["The lid is hard to remove with wet hands.",
               "It is taller than expected and does not fit under my kitchen cabinets.",
               "The motor smelled hot the first few times I used it."]),
    dict(product="pair of hiking boots", why="for a week-long trek in the mountains",
         pros=["They were comfortable straight out of the box with no blisters.",
               "My feet stayed dry through two days of rain.",
               "The grip on wet rock is very reassuring."],
         cons=["They run about half a size small.",
               "The laces came undone constantly until I replaced them.",
               "They are heavy compared with trail shoes."]),
    dict(product="e-reader", why="because my bookshelf was overflowing",
         pros=["The screen is easy to read even in bright sunlight.",
               "The warm light setting is perfect for reading in bed.",
               "The battery lasts weeks, not days."],
         cons=["Page turns are a little slow.",
               "Borrowing library books takes more steps than it should.",
               "The case is sold separately and is expensive."]),
    dict(product="drip coffee maker", why="after my old machine finally broke",
         pros=["The coffee comes out hot and full of flavour.",
               "I can set a timer so coffee is ready when I wake up.",
               "The carafe pours without dripping."],
         cons=["The water tank is hard to fill without spilling.",
               "It beeps loudly five times when it finishes, and there is no way to turn that off.",
               "The warming plate makes the coffee bitter after half an hour."]),
    dict(product="office chair", why="when I started working from home full time",
         pros=["My lower back pain has mostly gone since I started using it.",
               "The armrests adjust in every direction.",
               "Assembly took only twenty minutes."],
         cons=["The seat cushion is firmer than I would like.",
               "One wheel squeaks on hardwood floors.",
               "The mesh back snags on knitted sweaters."]),
    dict(product="two-person tent", why="for weekend camping trips",
         pros=["It is light enough to carry on long hikes.",
               "Setting it up takes about five minutes, even alone.",
               "It stayed dry during a night of heavy rain."],
         cons=["There is barely room for two adults and their bags.",
               "The zips catch on the fabric.",
               "The included pegs bend easily in hard ground."]),
    dict(product="air fryer", why="to cook faster on weeknights",
         pros=["Chips come out crispy with only a spoonful of oil.",
               "It heats up much faster than my oven.",
               "The basket is easy to clean."],
         cons=["The basket is too small to cook for more than two people.",
               "The coating on the basket started to peel after three months.",
               "It takes up a lot of counter space."]),
    dict(product="pair of running shoes", why="while training for my first half marathon",
         pros=["The cushioning feels soft without being sluggish.",
               "They are very breathable on hot days.",
               "I have run 300 kilometres in them and they still look almost new."],
         cons=["The tongue slides to one side during long runs.",
               "They are slippery on wet pavements.",
               "The bright colour faded quickly."]),
    dict(product="desk lamp", why="for late-night studying",
         pros=["The light is bright but not harsh.",
               "I can change the colour temperature from warm to cool.",
               "The arm stays exactly where I put it."],
         cons=["The touch button sometimes ignores my finger.",
               "The base is large and takes up desk space.",
               "It flickers slightly at the lowest setting."]),
    dict(product="backpack", why="for carrying my laptop to university",
         pros=["The padded laptop sleeve feels very protective.",
               "There are lots of small pockets for chargers and pens.",
               "The straps are comfortable even when it is full."],
         cons=["The water bottle pocket is too tight for most bottles.",
               "The fabric is not as waterproof as advertised.",
               "It looks bulky on smaller people."]),
    dict(product="cordless vacuum", why="because dragging out my old vacuum was a chore",
         pros=["It picks up pet hair from carpets surprisingly well.",
               "It is light enough to clean the stairs easily.",
               "The wall mount keeps it out of the way."],
         cons=["The battery lasts only about twenty minutes on full power.",
               "The dust bin is small and needs emptying often.",
               "It is loud enough to scare my cat."]),
]

_VERDICTS = {
    5: ["Honestly, I can't fault it. Highly recommended.", "Best purchase I've made this year.",
        "I would buy it again without hesitation."],
    4: ["Overall I'm very happy and would recommend it, with small reservations.",
        "A few minor annoyances, but good value for the money.",
        "Not perfect, but I'd still recommend it to a friend."],
    3: ["It does the job, but I expected more for the price.",
        "Decent, but I would look at other options before buying.",
        "Mixed feelings: fine for occasional use, not much more."],
    2: ["I'm disappointed and will probably return it.",
        "I can't recommend it at this price.",
        "Unless these problems are fixed, I would skip this one."],
}


def _gen_review(rng: random.Random, item: dict) -> str:
    stars = rng.choice([2, 3, 4, 4, 5])
    n_pros = {5: 3, 4: 2, 3: 2, 2: 1}[stars]
    n_cons = {5: 0, 4: 1, 3: 2, 2: 3}[stars]
    if stars == 5:
        n_cons = rng.choice([0, 1])
    pros = rng.sample(item["pros"], n_pros)
    cons = rng.sample(item["cons"], n_cons)
    when = rng.choice(["two months", "six weeks", "about a year", "three months", "a month"])
    parts = [f"I bought this {item['product']} {when} ago {item['why']}.",
             rng.choice(["I've used it almost every day since.",
                         "I compared several models before choosing this one, mostly on price and reviews.",
                         "It replaced a cheaper one that lasted barely a year.",
                         "I've had enough time with it now to give a fair opinion."])]
    parts += [("First, " if i == 0 else "Also, " if i == 1 else "") + p[0].lower() + p[1:]
              if i < 2 and rng.random() < 0.4 else p for i, p in enumerate(pros)]
    if cons:
        lead = rng.choice(["On the downside,", "However,", "My complaints:", "That said,"])
        parts.append(lead + " " + cons[0][0].lower() + cons[0][1:])
        parts += cons[1:]
    parts.append(rng.choice(_VERDICTS[stars]))
    if len(" ".join(parts).split()) < 60:
        parts.insert(2, f"It cost me about ${rng.randint(3, 25) * 10}, which felt {rng.choice(['fair', 'a bit steep', 'reasonable'])} at the time.")
    body = " ".join(parts)
    title = rng.choice([f"Rating: {stars}/5", f"{stars} out of 5 stars", f"{'*' * stars} ({stars} stars)"])
    return f"{title}\n{body}" if rng.random() < 0.5 else f"{body} {title}."


# ---------------------------------------------------------------------------
# Genre 8: short emails
# ---------------------------------------------------------------------------


def _e_reschedule(rng, s, r):
    d1, d2 = rng.sample(_WEEKDAYS, 2)
    return (f"Subject: Moving our {d1} meeting",
            [f"Hi {r[0]},",
             f"I'm afraid I need to move our project review on {d1}. A client workshop has been scheduled at the same time and I can't avoid it.",
             f"Would {d2} at {rng.choice(['10 a.m.', '11:30', '2 p.m.', '4 p.m.'])} work for you instead? The agenda stays the same: the budget update, the revised timeline and next steps for testing.",
             "If that slot doesn't suit you, send me two or three times that do and I'll fit around you.",
             "Sorry for the short notice."])


def _e_time_off(rng, s, r):
    cover, cpron = rng.choice([p for p in _PEOPLE if p[0] not in (s[0], r[0])])
    return ("Subject: Leave request",
            [f"Dear {r[0]},",
             f"I would like to request annual leave from {_date(rng)} for {rng.choice(['five', 'eight', 'ten'])} working days. My sister is getting married abroad and I'll be travelling for the ceremony.",
             f"Before I leave I will finish the monthly report, and {cover} has agreed to cover urgent customer questions while I'm away.",
             f"I'll set an out-of-office reply with {_poss(cpron)} contact details.",
             "Please let me know if these dates cause any problems for the team."])


def _e_client_update(rng, s, r):
    pct = rng.randint(60, 85)
    return ("Subject: Weekly update on your new website",
            [f"Hello {r[0]},",
             f"Here is this week's progress. The design is finished and development is about {pct} percent complete.",
             "The contact form and gallery pages are working on our test server, and you can preview them using the link from last week.",
             "One issue: we are still waiting for the product photos from your team. Without them we can't finish the shop section.",
             f"If we receive them by {rng.choice(_WEEKDAYS)}, we remain on track for launch at the end of the month."])


def _e_invite(rng, s, r):
    return ("Subject: You're invited - team picnic",
            ["Hi everyone,",
             f"To celebrate the end of a busy quarter, we're holding a team picnic at {rng.choice(['Riverside Park', 'the botanical gardens', 'Lakeshore Park'])} on {_date(rng)}, starting at noon.",
             "Food and drinks will be provided, including vegetarian and gluten-free options. Partners and children are very welcome.",
             "There will be a short quiz and a friendly football match, so bring comfortable shoes.",
             f"Please reply by {rng.choice(_WEEKDAYS)} so we can order the right amount of food. If it rains, we'll move to the office rooftop."])


def _e_feedback(rng, s, r):
    return ("Subject: Feedback on the draft proposal?",
            [f"Hi {r[0]},",
             "I've attached the first draft of the grant proposal for the reading programme. It's about twelve pages.",
             "I'd especially value your thoughts on the budget section, because I'm not sure the staffing costs are realistic, and on whether the introduction is too long.",
             f"The deadline for submission is {_date(rng)}, so comments within the next week would be ideal.",
             "No need for detailed edits; a few bullet points would already help a lot. Thank you!"])


def _e_landlord(rng, s, r):
    return ("Subject: Water shut-off notice",
            ["Dear residents,",
             f"Please note that the water supply to the building will be turned off on {_date(rng)} from 9 a.m. to approximately 3 p.m.",
             "Plumbers will replace the main valve in the basement, which has been leaking for several weeks.",
             "We recommend filling a few bottles of water the night before. The lifts and electricity will not be affected.",
             f"If you have any concerns, for example a medical need, please contact me at the office before {rng.choice(_WEEKDAYS)}. Thank you for your patience."])


def _e_neighbour(rng, s, r):
    return ("Subject: Fence repair",
            [f"Hi {r[0]},",
             "I hope you're well. Last night's wind knocked down two panels of the fence between our gardens, near the apple tree.",
             f"I've had a quote of ${rng.randint(3, 6)}00 from a local carpenter to replace them, including the posts. Since the fence is shared, would you be willing to split the cost?",
             "He can do the job next week if we confirm soon.",
             "Happy to talk about it over the fence, or what's left of it!"])


def _e_refund(rng, s, r):
    return (f"Subject: Refund for order #{rng.randint(10000, 99999)}",
            ["Hello,",
             f"I returned a winter coat to your warehouse on {_date(rng)} because the zip was broken on arrival.",
             "According to the tracking information, the parcel was delivered and signed for two days later.",
             f"However, almost three weeks have passed and I have not received the refund of ${rng.randint(89, 189)}.",
             "Could you please check the status and tell me when I can expect the money? I have attached the return receipt."])


def _e_volunteer(rng, s, r):
    return ("Subject: Volunteers needed this Saturday",
            ["Dear friends of the food bank,",
             f"Our weekend delivery arrived early, and we now need about {rng.randint(8, 15)} extra volunteers this Saturday to sort and pack food boxes.",
             "Shifts run from 9 to 12 and from 1 to 4. No experience is needed, and we provide gloves and aprons.",
             f"Last month volunteers packed over {rng.randint(4, 9)}00 boxes for local families, so every pair of hands makes a difference.",
             "To sign up, just reply to this email with your preferred shift."])


_EMAIL_KINDS = [_e_reschedule, _e_time_off, _e_client_update, _e_invite, _e_feedback,
                _e_landlord, _e_neighbour, _e_refund, _e_volunteer]


def _gen_email(rng: random.Random, kind) -> str:
    sender, recipient = _people(rng, 2)
    subject, body = kind(rng, sender, recipient)
    if len(body) > 5 and rng.random() < 0.5:
        # drop one of the middle sentences (never the greeting, first or last line)
        del body[rng.randrange(2, len(body) - 1)]
    sign = rng.choice(["Best,", "Thanks,", "Kind regards,", "Cheers,", "Many thanks,"])
    if kind is _e_landlord:
        sign_name = f"{sender[1]}, building manager"
    else:
        sign_name = sender[0]
    return "\n".join([subject, ""] + [body[0]] + [" ".join(body[1:])] + [sign, sign_name])


# ---------------------------------------------------------------------------
# Genre 9: abstracts of fictional studies
# ---------------------------------------------------------------------------

_STUDIES = [
    dict(q="whether a ten-minute walk after lunch improves afternoon concentration in office workers",
         design="randomised trial", n=(80, 160), who="office workers", weeks=(4, 8),
         method="Half were asked to walk for ten minutes after lunch, while the rest continued their usual routine. Attention was measured with a short computer task each afternoon.",
         result="The walking group made {x} percent fewer errors than the control group",
         caveat="the study relied on volunteers who may already have been motivated to exercise"),
    dict(q="how urban gardens affect the number of wild bee species in city neighbourhoods",
         design="field survey", n=(20, 40), who="gardens and matching paved sites", weeks=(10, 16),
         method="Bees were counted and identified twice a week at each site during the summer.",
         result="Gardens supported on average {x} percent more bee species than paved sites",
         caveat="the survey covered a single city and one summer"),
    dict(q="whether reading aloud to toddlers every day increases their vocabulary",
         design="controlled study", n=(60, 120), who="families with two-year-olds", weeks=(20, 26),
         method="Parents in the intervention group received picture books and were asked to read aloud for fifteen minutes daily. Vocabulary was assessed at the start and end of the study.",
         result="Children in the reading group knew {x} percent more words at the end than those in the comparison group",
         caveat="parents reported reading time themselves, which may be inaccurate"),
    dict(q="whether blue light from screens in the hour before bed delays sleep in teenagers",
         design="crossover trial", n=(40, 90), who="teenagers aged 14 to 17", weeks=(2, 4),
         method="Each participant spent one week using screens with a night filter and one week without it, wearing a sleep tracker throughout.",
         result="With the filter on, participants fell asleep about {x} minutes earlier on average",
         caveat="the effect was small and varied widely between individuals"),
    dict(q="the effect of adding crushed seashells to garden soil on tomato yield",
         design="greenhouse experiment", n=(90, 150), who="tomato plants", weeks=(12, 14),
         method="Plants were grown in ordinary potting soil or in soil mixed with crushed shells, with watering and light kept identical.",
         result="Plants in shell-enriched soil produced {x} percent more fruit by weight",
         caveat="the results may not apply to soils that are already rich in calcium"),
    dict(q="whether short daily vocabulary quizzes help adults learning a second language",
         design="randomised trial", n=(100, 200), who="adult language learners", weeks=(6, 10),
         method="One group took a five-minute quiz on a phone app every day; the other reviewed the same words from a printed list.",
         result="The quiz group remembered {x} percent more words on a final test",
         caveat="many participants in both groups dropped out before the end"),
    dict(q="whether houseplants improve self-reported mood among people working from home",
         design="pilot study", n=(30, 70), who="remote workers", weeks=(4, 6),
         method="Participants received three easy-care plants for their workspace and rated their mood each evening.",
         result="Average mood scores rose by {x} percent compared with the two weeks before the plants arrived",
         caveat="there was no control group, so other factors such as the change of season may explain part of the effect"),
    dict(q="how often city pigeons visit feeding spots that are cleaned daily compared with those that are not",
         design="observational study", n=(12, 24), who="feeding spots in public squares", weeks=(8, 12),
         method="Cameras recorded pigeon visits at each site, and the number of birds was counted from the footage.",
         result="Uncleaned sites attracted {x} percent more pigeon visits",
         caveat="weather and the number of passers-by were not fully controlled"),
    dict(q="whether a free breakfast programme reduces late arrivals at primary schools",
         design="comparison study", n=(10, 20), who="primary schools", weeks=(30, 36),
         method="Half the schools began serving a free breakfast before classes, and attendance records were compared over a school year.",
         result="Late arrivals fell by {x} percent at schools with the breakfast programme",
         caveat="the schools were not randomly assigned"),
    dict(q="whether mulching with wood chips reduces water use in community gardens",
         design="field experiment", n=(24, 48), who="garden beds", weeks=(10, 14),
         method="Half of the beds were covered with a layer of wood chips; all beds were watered only when soil moisture fell below a set level.",
         result="Mulched beds needed {x} percent less water over the season",
         caveat="the summer was cooler than usual, which may have reduced the difference"),
    dict(q="whether standing desks reduce afternoon back pain among call-centre staff",
         design="randomised trial", n=(60, 110), who="call-centre employees", weeks=(8, 12),
         method="Participants were given either a sit-stand desk or a standard desk and reported back pain on a ten-point scale every week.",
         result="Back-pain scores in the standing-desk group fell by {x} percent",
         caveat="workers knew which desk they had, which could influence their reports"),
    dict(q="how street lighting affects the activity of moths in suburban parks",
         design="field study", n=(16, 30), who="park sites", weeks=(6, 10),
         method="Light traps were placed near lit paths and in dark areas of each park, and moths were counted every night.",
         result="Dark areas recorded {x} percent more moth species than areas near street lamps",
         caveat="the study did not test different types of lamp"),
]


def _gen_abstract(rng: random.Random, item: dict) -> str:
    n = rng.randint(*item["n"])
    weeks = rng.randint(*item["weeks"])
    x = rng.randint(8, 35)
    result = item["result"].format(x=x)
    p = rng.choice(["0.01", "0.03", "0.04", "0.002"])
    opener = rng.choice(["We investigated", "This study examined", "We tested", "In this study we asked"])
    concl = rng.choice([
        "These findings suggest that a simple, low-cost change can have a measurable effect.",
        "The results support further, larger studies.",
        "Our findings may be useful for local policy makers and practitioners.",
    ])
    return " ".join([
        f"{opener} {item['q']}.",
        f"In a {weeks}-week {item['design']} involving {n} {item['who']}, we compared two conditions.",
        item["method"],
        f"{result} (p = {p}).",
        concl,
        f"However, {item['caveat']}.",
    ])


# ---------------------------------------------------------------------------
# Genre 10: customer support chats
# ---------------------------------------------------------------------------


def _c_late(rng, agent, cust):
    order = rng.randint(100000, 999999)
    days = rng.randint(6, 12)
    return [
        f"Customer: Hi, I ordered a desk lamp on {_date(rng)} (order {order}) and it still hasn't arrived. Tracking hasn't updated in {days} days.",
        f"Agent ({agent}): I'm sorry about that. Let me check... The parcel was held at a sorting centre because the label was damaged.",
        "Customer: So is it lost?",
        f"Agent ({agent}): It may turn up, but I don't want you to keep waiting. I've sent a replacement by express delivery at no charge. It should reach you by {rng.choice(_WEEKDAYS)}.",
        "Customer: Great, thank you. What if the first one arrives too?",
        f"Agent ({agent}): Just refuse the delivery or use the free return label in the box.",
    ]


def _c_double(rng, agent, cust):
    amount = f"${rng.randint(20, 90)}.{rng.randint(10, 99)}"
    return [
        f"Customer: Hello, I was charged twice for my last order, {amount} each time.",
        f"Agent ({agent}): Thanks for letting us know. Could you confirm the last four digits of the card you used?",
        f"Customer: It ends in {rng.randint(1000, 9999)}.",
        f"Agent ({agent}): Thanks. I can see the duplicate payment. It was caused by a brief outage on our payment page. I've refunded {amount} to your card just now.",
        "Customer: How long will that take to show up?",
        f"Agent ({agent}): Usually three to five business days, depending on your bank. You'll also receive a confirmation email.",
    ]


def _c_password(rng, agent, cust):
    return [
        "Customer: I can't log in. The password reset email never arrives.",
        f"Agent ({agent}): Sorry for the trouble! Which email address is on the account?",
        f"Customer: {cust[0].lower()}.{rng.choice(_SURNAMES).lower()}@example.com",
        f"Agent ({agent}): I see the problem: the account was registered with a typo in the address. I've corrected it and sent a new reset link.",
        "Customer: Got it, and the reset worked. Thanks!",
        f"Agent ({agent}): Happy to help. I'd also recommend turning on two-step verification in your settings.",
    ]


def _c_size(rng, agent, cust):
    return [
        f"Customer: The hiking jacket I received is size {rng.choice(['M', 'L'])}, but I ordered {rng.choice(['S', 'XL'])}.",
        f"Agent ({agent}): I apologise for the mix-up. Would you like an exchange or a refund?",
        "Customer: An exchange, please. I still want the jacket.",
        f"Agent ({agent}): Done. The correct size is in stock and will ship today. I've emailed you a prepaid label for the wrong one; you have 30 days to send it back.",
        "Customer: Do I need the original packaging?",
        f"Agent ({agent}): Any bag or box is fine. I've also added a 10 percent discount code to your account for the trouble.",
    ]


def _c_broken(rng, agent, cust):
    return [
        "Customer: My new coffee grinder stopped working after two weeks. It makes a clicking noise but doesn't grind.",
        f"Agent ({agent}): That's frustrating, sorry. Have you checked that the bean hopper is locked into place? The motor won't start if it's loose.",
        "Customer: Yes, it's locked. I tried twice.",
        f"Agent ({agent}): Thanks for checking. Since it's under warranty, I'll arrange a free replacement. A courier will collect the faulty grinder on {rng.choice(_WEEKDAYS)}.",
        "Customer: Will the new one come before the old one is picked up?",
        f"Agent ({agent}): Yes, we'll ship it today, so you won't be without a grinder.",
    ]


def _c_cancel(rng, agent, cust):
    price = rng.randint(9, 19)
    return [
        f"Customer: I'd like to cancel my streaming subscription. ${price}.99 a month is too much for how little I use it.",
        f"Agent ({agent}): I understand. Before I cancel, I can offer the basic plan at ${price - 5}.99, which has the same library but includes ads.",
        "Customer: Hmm. Can I pause it instead? I'm travelling for two months.",
        f"Agent ({agent}): Yes, you can pause for up to three months with no charge. Your watch history and profiles will be kept.",
        "Customer: Perfect, let's pause it.",
        f"Agent ({agent}): Done. Your subscription is paused, and we'll email you a week before it restarts.",
    ]


def _c_app_crash(rng, agent, cust):
    return [
        f"Customer: Your banking app crashes every time I open the payments tab. I've had this problem since {rng.choice(_WEEKDAYS)}.",
        f"Agent ({agent}): I'm sorry. Which version of the app do you have?",
        f"Customer: 5.{rng.randint(1, 4)}, on an older tablet.",
        f"Agent ({agent}): Thanks. This is a known problem with the latest update on older devices. Our developers have a fix that should be released within a few days.",
        "Customer: I need to pay a bill today though.",
        f"Agent ({agent}): You can make payments through the website in the meantime, and I can stay on the chat while you do it if you like.",
    ]


def _c_booking(rng, agent, cust):
    return [
        f"Customer: I booked a double room for {_date(rng)}, but I now need to arrive a day later. Is that possible?",
        f"Agent ({agent}): Let me check availability... Yes, the same room type is free. Your stay would be two nights instead of three.",
        "Customer: Will I be charged for the first night anyway?",
        f"Agent ({agent}): Since you're changing more than 48 hours before arrival, there's no fee. Your total drops by the price of one night.",
        "Customer: Excellent. Can you also add breakfast?",
        f"Agent ({agent}): Of course. Breakfast is added for two people, and an updated confirmation is on its way to your inbox.",
    ]


_CHAT_KINDS = [_c_late, _c_double, _c_password, _c_size, _c_broken, _c_cancel, _c_app_crash, _c_booking]


def _gen_support(rng: random.Random, kind) -> str:
    cust, agent_p = _people(rng, 2)
    agent = agent_p[0]
    lines = kind(rng, agent, cust)
    if rng.random() < 0.5:
        lines = [line.replace("Customer:", f"{cust[0]}:") for line in lines]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Genre 11: short stories
# ---------------------------------------------------------------------------


def _st_lighthouse(rng, p, q):
    n = rng.randint(20, 40)
    return [
        f"For {n} years, {p[0]} had kept the lighthouse at {rng.choice(_TOWNS)}, even after the new automatic beacon made the job unnecessary.",
        f"Every evening {p[2]} climbed the stairs, polished the glass and wrote a line in the logbook.",
        "One stormy night the power failed across the bay, and the automatic beacon went dark.",
        f"{p[0]} lit the old oil lamp by hand and kept it burning until dawn.",
        f"In the morning, a fishing crew knocked on {_poss(p[2])} door with a basket of fresh crab to say thank you.",
        f"{p[0]} smiled, opened the logbook and wrote: \"Still needed.\"",
    ]


def _st_bakery(rng, p, q):
    return [
        f"{p[0]} had entered the town baking contest every year and never won.",
        f"This year, with the deadline a day away, {_poss(p[2])} sourdough collapsed in the oven.",
        f"Frustrated, {p[2]} used the flat loaf to make a tray of garlic flatbreads for {_poss(p[2])} neighbour {q[0]}, who was recovering from an operation.",
        f"{q[0]} loved them so much that {q[2]} insisted {p[0]} enter them in the contest instead.",
        "The judges, tired of tasting perfect cakes, gave the flatbreads first prize.",
        f"{p[0]} still keeps the ribbon on the fridge, next to a photo of the failed sourdough.",
    ]


def _st_letter(rng, p, q):
    year = rng.randint(1952, 1979)
    return [
        f"While renovating an old house, {p[0]} found a letter hidden behind the kitchen wallpaper, dated {year}.",
        f"It was a love letter from someone named {q[0]}, promising to return from sea by spring.",
        f"Curious, {p[0]} asked around the village and eventually found an elderly woman who had once lived in the house.",
        f"When {p[2]} handed her the letter, she laughed and cried at the same time.",
        f"{q[0]} had come back, she explained, and they had been married for fifty years; she had simply never known where he hid his first letter.",
    ]


def _st_robot(rng, p, q):
    name = rng.choice(["Tilly", "Bolt", "Pip", "Orbit"])
    return [
        f"{name} was a small cleaning robot that worked nights in the {rng.choice(_TOWNS)} museum.",
        "Every night it swept past the dinosaur skeleton and wondered what the bones had looked like with skin.",
        "One evening a child's drawing fell out of a visitor's bag: a bright green dinosaur with a wide smile.",
        f"{name} kept the drawing inside its storage compartment and looked at it between rooms.",
        f"Months later, curator {p[1]} noticed the crumpled paper during a repair and pinned it beside the skeleton with a label: \"As imagined by a visitor.\"",
        f"{name} swept that corner more carefully than any other.",
    ]


def _st_garden(rng, p, q):
    return [
        f"When {p[0]} moved into {_poss(p[2])} first flat, the only outdoor space was a tiny balcony facing a brick wall.",
        f"{p[2].capitalize()} planted a few tomato seeds in a yoghurt pot, not expecting much.",
        "By midsummer the balcony was full of tomatoes, beans and a sunflower taller than the railing.",
        f"The neighbour across the courtyard, {q[1]}, began leaving notes with gardening tips on the shared stairs.",
        "By autumn the two of them were swapping seeds, recipes and stories, and the brick wall no longer seemed so grey.",
    ]


def _st_train(rng, p, q):
    return [
        f"{p[0]} missed the last train home by less than a minute.",
        f"Stuck at a small station with a dead phone, {p[2]} sat on a bench next to a stranger, {q[0]}, who was also waiting for the morning service.",
        "They started talking about the books in their bags and discovered they had both been reading the same novel.",
        "They spent the night arguing about the ending, sharing a flask of tea and a packet of biscuits.",
        "When the first train arrived at dawn, they swapped phone numbers and promised to start a two-person book club.",
        "It still meets every month.",
    ]


def _st_dog(rng, p, q):
    dog = rng.choice(["Biscuit", "Pepper", "Rufus", "Maple"])
    return [
        f"{p[0]} adopted an old dog named {dog} from the shelter, expecting a quiet companion.",
        f"Instead, {dog} insisted on a long walk at exactly seven every morning, barking until {p[0]} put on {_poss(p[2])} shoes.",
        f"On those walks, {p[0]} began to recognise the same faces: a jogger, a baker opening the shop, a retired teacher named {q[0]}.",
        f"Soon they were stopping to chat, and the teacher invited {_obj(p[2])} to the neighbourhood quiz night.",
        f"A year later, {p[0]} realised that the dog {p[2]} had rescued had really rescued {_obj(p[2])}.",
    ]


def _st_map(rng, p, q):
    return [
        f"{p[0]} and {_poss(p[2])} younger brother found a hand-drawn map in their grandfather's toolbox.",
        "It showed the orchard behind the house, with an X beneath the oldest pear tree.",
        "They spent a whole afternoon digging and finally hit a rusty tin box.",
        "Inside were marbles, a pocket knife and a note: \"Treasure is whatever you find with your friends.\"",
        "Their grandfather, watching from the porch, admitted he had buried it sixty years earlier with his own brother.",
        "That evening the children drew a new map and buried their own box for someone else to find.",
    ]


def _st_snow(rng, p, q):
    return [
        f"The snowstorm closed every road out of {rng.choice(_TOWNS)} on the night of the winter concert.",
        "The guest conductor could not arrive, and the orchestra was ready to cancel.",
        f"{p[0]}, the youngest violinist, suggested that the musicians lead the pieces themselves, taking turns to count in.",
        "The hall was only half full, but the audience stayed for two encores and sang along to the last carol.",
        f"Afterwards, {q[1]}, the orchestra director, said it was the warmest concert they had ever played on the coldest night of the year.",
    ]


_STORY_KINDS = [_st_lighthouse, _st_bakery, _st_letter, _st_robot, _st_garden, _st_train,
                _st_dog, _st_map, _st_snow]


def _gen_story(rng: random.Random, kind) -> str:
    p, q = _people(rng, 2)
    if kind is _st_letter:
        q = (rng.choice(["Arthur", "Walter", "Henry", "Joseph"]), "", "he")
    return " ".join(kind(rng, p, q))


# ---------------------------------------------------------------------------
# Genre 12: recipes
# ---------------------------------------------------------------------------

_RECIPES = [
    dict(dish="lemon garlic pasta", time=20,
         steps=["Boil {g} grams of spaghetti in salted water until al dente, keeping a cup of the cooking water.",
                "Meanwhile, warm olive oil in a pan and gently fry three sliced garlic cloves until golden.",
                "Add the zest and juice of one lemon, then toss in the drained pasta with a splash of the cooking water.",
                "Finish with grated parmesan, black pepper and a handful of chopped parsley."],
         tip="Don't let the garlic brown too much, or the sauce will taste bitter."),
    dict(dish="vegetable curry", time=40,
         steps=["Fry a chopped onion in oil for five minutes, then add garlic, ginger and two tablespoons of curry paste.",
                "Stir in diced sweet potato and a tin of chopped tomatoes, and simmer for fifteen minutes.",
                "Add a tin of chickpeas, a tin of coconut milk and two handfuls of spinach.",
                "Cook for another ten minutes and serve with rice or flatbread."],
         tip="A squeeze of lime just before serving brightens the flavour."),
    dict(dish="banana oat pancakes", time=15,
         steps=["Mash two ripe bananas in a bowl.",
                "Whisk in two eggs, then stir in {g} grams of rolled oats and a pinch of cinnamon.",
                "Heat a lightly oiled pan over medium heat and drop in small spoonfuls of batter.",
                "Cook for two minutes on each side until golden, and serve with yoghurt and berries."],
         tip="Keep the pancakes small, because they are softer than normal pancakes and harder to flip."),
    dict(dish="tomato and bread soup", time=35,
         steps=["Soften a chopped onion and two garlic cloves in olive oil.",
                "Add two tins of tomatoes and 500 millilitres of vegetable stock, and simmer for twenty minutes.",
                "Tear in two thick slices of stale bread and let them soak until the soup thickens.",
                "Stir in torn basil leaves and season with salt and pepper."],
         tip="This soup tastes even better the next day."),
    dict(dish="chicken and vegetable traybake", time=50,
         steps=["Heat the oven to 200 degrees Celsius.",
                "Cut potatoes, carrots and a red onion into chunks and spread them on a large tray with chicken thighs.",
                "Drizzle with olive oil, sprinkle with paprika, salt and dried thyme, and toss everything together.",
                "Roast for about 40 minutes, turning the vegetables halfway, until the chicken is cooked through."],
         tip="Use a big enough tray so the vegetables roast instead of steaming."),
    dict(dish="overnight oats", time=5,
         steps=["In a jar, mix {g} grams of rolled oats with 150 millilitres of milk and two spoonfuls of yoghurt.",
                "Stir in a teaspoon of honey and a handful of frozen berries.",
                "Close the jar and leave it in the fridge overnight.",
                "In the morning, top with nuts or sliced apple and eat cold."],
         tip="Make three jars on Sunday for quick breakfasts during the week."),
    dict(dish="egg fried rice", time=15,
         steps=["Heat oil in a wok until very hot and scramble two beaten eggs, then set them aside.",
                "Stir-fry chopped spring onions and a handful of frozen peas for a minute.",
                "Add {g} grams of cold cooked rice and fry, pressing it against the wok, until it starts to crisp.",
                "Return the eggs, season with soy sauce and a few drops of sesame oil, and toss well."],
         tip="Day-old rice works best, because freshly cooked rice turns mushy."),
    dict(dish="guacamole", time=10,
         steps=["Halve two ripe avocados, remove the stones and scoop the flesh into a bowl.",
                "Mash roughly with a fork, leaving some chunks.",
                "Mix in finely chopped red onion, a diced tomato, chopped coriander and the juice of a lime.",
                "Season with salt and a pinch of chilli flakes, then taste and adjust."],
         tip="Press cling film directly onto the surface to stop it turning brown."),
    dict(dish="apple crumble", time=45,
         steps=["Heat the oven to 180 degrees Celsius and slice four apples into a baking dish with a spoonful of sugar and cinnamon.",
                "Rub {g} grams of flour with 75 grams of cold butter until it looks like breadcrumbs.",
                "Stir in 50 grams of sugar and a handful of oats, then scatter the mixture over the apples.",
                "Bake for 30 to 35 minutes until the top is golden and the fruit is bubbling."],
         tip="Serve warm with custard or vanilla ice cream."),
    dict(dish="lentil salad", time=30,
         steps=["Simmer {g} grams of green lentils in water for about twenty minutes until tender but not mushy, then drain.",
                "While they cook, chop cucumber, cherry tomatoes, red onion and parsley.",
                "Whisk olive oil, red wine vinegar, mustard and a little honey to make a dressing.",
                "Toss the warm lentils with the vegetables and dressing, and crumble feta on top."],
         tip="Dress the lentils while they are still warm so they absorb more flavour."),
    dict(dish="mushroom risotto", time=40,
         steps=["Fry sliced mushrooms in butter until browned, then set them aside.",
                "Soften a chopped onion in the same pan, add {g} grams of risotto rice and stir for a minute.",
                "Add hot stock one ladle at a time, stirring often, for about eighteen minutes.",
                "Stir the mushrooms back in with a knob of butter and plenty of grated parmesan."],
         tip="Keep the stock hot in a separate pan so the rice cooks evenly."),
    dict(dish="chocolate mug cake", time=5,
         steps=["In a large mug, mix four tablespoons of flour, three of sugar and two of cocoa powder.",
                "Add one egg, three tablespoons of milk and three of oil, and stir until smooth.",
                "Drop in a few chocolate chips.",
                "Microwave for about 90 seconds, until risen but still slightly soft in the middle."],
         tip="Microwaves vary, so check after a minute to avoid a rubbery cake."),
    dict(dish="shakshuka", time=30,
         steps=["Fry a sliced onion and a red pepper in olive oil until soft.",
                "Add garlic, cumin and paprika, then pour in a tin of chopped tomatoes and simmer for ten minutes.",
                "Make four small wells in the sauce and crack an egg into each.",
                "Cover and cook gently until the whites are set, then sprinkle with parsley and serve with bread."],
         tip="Take the pan off the heat while the yolks are still runny; they keep cooking."),
    dict(dish="hummus", time=10,
         steps=["Drain a tin of chickpeas, keeping a few spoonfuls of the liquid.",
                "Blend the chickpeas with two tablespoons of tahini, a garlic clove, lemon juice and a pinch of salt.",
                "Add the reserved liquid a spoonful at a time until the hummus is smooth and creamy.",
                "Spread it on a plate, drizzle with olive oil and dust with paprika."],
         tip="An ice cube added while blending makes the hummus extra light."),
]


def _gen_recipe(rng: random.Random, item: dict) -> str:
    if "mug" in item["dish"]:
        serves = 1
    else:
        serves = rng.choice([2, 2, 4, 4, 6]) if item["time"] > 5 else rng.choice([1, 2])
    g = rng.choice([150, 200, 250, 300]) if serves <= 2 else rng.choice([350, 400, 500])
    steps = [s.format(g=g) for s in item["steps"]]
    intro = rng.choice([
        f"This {item['dish']} serves {serves} and takes about {item['time']} minutes from start to finish.",
        f"Here is my go-to {item['dish']}. It is ready in roughly {item['time']} minutes and serves {serves}.",
        f"{item['dish'][0].upper() + item['dish'][1:]} (serves {serves}, about {item['time']} minutes).",
    ])
    if rng.random() < 0.5:
        body = " ".join([intro] + [f"{i + 1}. {s}" for i, s in enumerate(steps)] + [f"Tip: {item['tip']}"])
    else:
        links = ["", "Next, ", "Then ", "Finally, "]
        body = " ".join([intro] + [l + (s[0].lower() + s[1:] if l else s) for l, s in zip(links, steps)]
                        + [item["tip"]])
    return body


# ---------------------------------------------------------------------------
# Genre 13: travel logs
# ---------------------------------------------------------------------------

_TRAVEL = [
    dict(place="Lisbon", acts=["We rode the old yellow tram up to the Alfama district and got lost in its narrow lanes.",
                               "Lunch was grilled sardines at a tiny place with only four tables.",
                               "In the afternoon we walked along the river to Belém and queued for custard tarts.",
                               "The hills are steeper than they look, and my calves were aching by evening."],
         end="We watched the sunset from a viewpoint while a street musician played guitar."),
    dict(place="Kyoto", acts=["We got up at six to see the bamboo grove before the crowds arrived.",
                              "Later we visited a temple with a moss garden so quiet you could hear the wind.",
                              "Lunch was a bowl of cold soba noodles, and in the afternoon I tried a matcha ice cream.",
                              "We rented bicycles, which turned out to be the easiest way to get around."],
         end="In the evening we walked through the old wooden streets of Gion, hoping to glimpse a geiko."),
    dict(place="Edinburgh", acts=["The morning began with a climb up Arthur's Seat in strong wind.",
                                  "From the top we could see the castle, the whole city and the sea.",
                                  "We spent the afternoon on the Royal Mile, ducking into narrow closes and small bookshops.",
                                  "It rained three times and the sun came out three times, all before dinner."],
         end="Dinner was a warming bowl of soup in a pub full of noisy football fans."),
    dict(place="Marrakech", acts=["We spent the morning wandering the souks, where I bargained badly for a leather bag.",
                                  "A shopkeeper offered us mint tea and told us about his family's carpet business.",
                                  "The heat at midday was intense, so we rested in a garden courtyard.",
                                  "At dusk the main square filled with food stalls, musicians and storytellers."],
         end="We ended the day eating grilled vegetables and bread at a crowded stall."),
    dict(place="Vancouver", acts=["We rented bikes and rode the seawall around Stanley Park.",
                                  "It took about two hours with stops for photos of the mountains across the water.",
                                  "Lunch was fish tacos on Granville Island, followed by a wander through the public market.",
                                  "In the afternoon we took a small ferry across False Creek."],
         end="A light drizzle started at sunset, which the locals assured us was completely normal."),
    dict(place="Hanoi", acts=["Crossing the street in the Old Quarter took courage; the trick is to walk slowly and steadily.",
                              "Breakfast was a steaming bowl of pho on a plastic stool by the pavement.",
                              "We walked around Hoan Kiem Lake, where people were doing tai chi and badminton.",
                              "In the afternoon we tried egg coffee, which tastes a bit like liquid tiramisu."],
         end="At night we watched a water puppet show, which was charming even without understanding the words."),
    dict(place="Copenhagen", acts=["We borrowed bikes from our hotel and joined the rush-hour bike lanes, which felt like a river of cyclists.",
                                   "The colourful houses of Nyhavn were even brighter than in photos.",
                                   "We took a canal boat tour and learned how much of the city was built on reclaimed land.",
                                   "Lunch was open sandwiches on dark rye bread."],
         end="In the evening we swam in the harbour baths, which were cold but surprisingly clean."),
    dict(place="Cape Town", acts=["We took the cable car up Table Mountain early, before the famous cloud rolled in.",
                                  "The views over the city and the ocean were breathtaking.",
                                  "In the afternoon we drove down the coast to see the penguins at Boulders Beach.",
                                  "One penguin waddled right past my feet."],
         end="We finished the day with fish and chips at a harbour in the warm evening light."),
    dict(place="Istanbul", acts=["We took a ferry across the Bosphorus, drinking tea from tulip-shaped glasses on deck.",
                                 "On the Asian side we wandered a market full of spices, olives and cheese.",
                                 "Back on the European side, the Grand Bazaar was overwhelming and wonderful.",
                                 "I bought a small ceramic bowl after far too much deliberation."],
         end="We watched the sun set behind the domes and minarets while gulls circled overhead."),
    dict(place="Oaxaca", acts=["We took a morning cooking class and learned to make mole from scratch.",
                               "The sauce had more than twenty ingredients, including chocolate and three kinds of chilli.",
                               "In the afternoon we browsed the market, where I tried fried grasshoppers (crunchy and salty).",
                               "Colourful murals covered almost every wall in the centre."],
         end="In the evening a parade with a brass band passed our hotel, and we followed it for several blocks."),
    dict(place="Bergen", acts=["It rained all morning, which apparently happens most days here.",
                               "We took the funicular up the mountain for views over the harbour and the old wooden warehouses.",
                               "A short hike through the forest brought us to a lake where we ate our packed lunch.",
                               "Back in town we visited the fish market and tried smoked salmon on crackers."],
         end="The clouds cleared just before sunset, turning the whole fjord pink."),
    dict(place="Queenstown", acts=["My friend did a bungee jump while I stayed firmly on the platform taking photos.",
                                   "We then drove along the lake, which was an unreal shade of blue.",
                                   "Lunch was a famously huge burger that we had to queue for.",
                                   "In the afternoon we took the gondola up the hill and rode the luge down three times."],
         end="The stars that night were the brightest I have ever seen."),
]


def _gen_travel(rng: random.Random, item: dict) -> str:
    day = rng.randint(2, 9)
    companion = rng.choice(["my sister", "my partner", "two old friends", "my dad", "an old school friend"])
    head = rng.choice([
        f"Day {day} in {item['place']}.",
        f"Travel diary, {item['place']}, day {day}.",
        f"{item['place']}, day {day} of our trip.",
    ])
    mishaps = [
        "We also managed to take the wrong bus, which added an hour but showed us a neighbourhood we would never have seen.",
        "My phone battery died in the afternoon, so we navigated with a paper map from the hotel.",
        "I forgot my sunscreen and now have a very red nose.",
        f"We walked about {rng.randint(18, 27)},000 steps today according to my watch.",
    ]
    if item["place"] in ("Bergen", "Edinburgh"):
        mishaps[2] = "My shoes are still soaked from the puddles."
    mishap = rng.choice(mishaps)
    acts = list(item["acts"])
    if rng.random() < 0.4:
        acts.pop(rng.randrange(1, len(acts)))
    tail = rng.choice([
        "Tomorrow we plan to take it slower.",
        "I could happily stay here another week.",
        "Exhausted, but it was one of the best days of the trip.",
    ])
    return " ".join([head, f"Travelling with {companion}."] + acts + [mishap, item["end"], tail])


# ---------------------------------------------------------------------------
# Genre 14: workplace / community announcements and memos
# ---------------------------------------------------------------------------

_MEMOS = [
    dict(subject="New hybrid work policy", body=[
        "Starting {date}, all staff are expected in the office on Tuesdays and Thursdays.",
        "The other three days can be worked from home or the office, as you prefer.",
        "Teams may agree on a different pattern with their manager if client work requires it.",
        "The change follows a staff survey in which {n} percent of respondents asked for more predictable office days.",
        "Desk booking through the intranet becomes mandatory from the same date."]),
    dict(subject="Switch to a new expense system", body=[
        "From {date}, expense claims must be submitted through the new mobile app instead of paper forms.",
        "You can photograph receipts directly, and claims will be paid within five working days instead of the current fifteen.",
        "Training sessions of {n} minutes will be held next week; links are on the intranet.",
        "Paper claims submitted after the deadline will be returned.",
        "Questions can go to the finance team's shared inbox."]),
    dict(subject="Car park resurfacing", body=[
        "The staff car park will be closed for resurfacing from {date} for about two weeks.",
        "During this time, staff can park at the leisure centre on the other side of the road, where we have reserved {n} spaces.",
        "A free shuttle will run every fifteen minutes during peak hours.",
        "Cyclists can still use the bike shelter, which is not affected.",
        "We apologise for the inconvenience and thank everyone for their patience."]),
    dict(subject="Kitchen cleaning rota", body=[
        "Following several complaints about the state of the shared kitchen, we are introducing a weekly cleaning rota from {date}.",
        "Each team will be responsible for one week at a time, and the schedule is posted on the fridge.",
        "The fridge will be emptied every Friday at 4 p.m.; anything left inside will be thrown away.",
        "Please label your food with your name and date.",
        "A survey last month found that {n} percent of staff avoid the kitchen because of the mess, so this matters."]),
    dict(subject="Library summer reading challenge", body=[
        "The {town} Public Library's summer reading challenge begins on {date} and is open to all children aged 5 to 12.",
        "Participants who read six books over the summer will receive a certificate and a medal.",
        "Last year {n} children took part, and we hope to beat that number this year.",
        "Weekly storytelling sessions will be held every Wednesday morning in the children's room.",
        "Sign-up is free at the front desk or on the library website."]),
    dict(subject="Pool reopening", body=[
        "The {town} community pool will reopen on {date} after a four-month renovation.",
        "Improvements include new changing rooms, a ramp for wheelchair access and a separate shallow pool for toddlers.",
        "Opening hours are extended to 9 p.m. on weekdays.",
        "To celebrate, entry will be free for the first weekend, limited to {n} swimmers per session.",
        "Swimming lesson registration opens online one week before reopening."]),
    dict(subject="Security badge update", body=[
        "All employees must replace their security badges by {date}.",
        "The old badges use technology that can be copied easily, and our insurer has asked us to upgrade.",
        "New badges can be collected from reception between 8 a.m. and 6 p.m.; please bring a photo ID.",
        "Around {n} badges have already been issued.",
        "After the deadline, old badges will stop opening doors."]),
    dict(subject="Wellness week", body=[
        "Next week, from {date}, is our first wellness week.",
        "Activities include lunchtime yoga, a healthy cooking demonstration and a talk on sleep by a visiting doctor.",
        "On Friday, the office will close at 3 p.m. so everyone can take part in a group walk in the park.",
        "All activities are optional and free, but spaces for yoga are limited to {n} people per session.",
        "Sign-up sheets are at reception."]),
    dict(subject="Recycling collection changes", body=[
        "From {date}, {town} will collect recycling every week instead of every two weeks.",
        "Glass must now be placed in the new blue box delivered to each household, separate from paper and plastic.",
        "Collection day will stay the same for most streets; a full map is on the council website.",
        "The change follows a trial in {n} streets that increased recycling rates noticeably.",
        "Households that did not receive a blue box can request one online."]),
]

_MEMO_NUMS = {
    "New hybrid work policy": (58, 81), "Switch to a new expense system": (30, 30),
    "Car park resurfacing": (60, 140), "Kitchen cleaning rota": (20, 40),
    "Library summer reading challenge": (180, 450), "Pool reopening": (80, 150),
    "Security badge update": (120, 400), "Wellness week": (15, 30),
    "Recycling collection changes": (12, 40),
}


def _gen_memo(rng: random.Random, item: dict) -> str:
    town = rng.choice(_TOWNS)
    fill = dict(date=_date(rng), n=rng.randint(*_MEMO_NUMS[item["subject"]]), town=town)
    body = [s.format(**fill) for s in item["body"]]
    if rng.random() < 0.5:
        k = rng.randrange(1, len(body) - 1)
        if len(" ".join(body[:k] + body[k + 1:]).split()) >= 55:
            del body[k]
    _, sender, _ = _person(rng)
    public = "{town}" in "".join(item["body"])
    if public:
        role = rng.choice(["Community Services", "Town Communications Officer", "Parks and Recreation"])
    else:
        role = rng.choice(["Office Manager", "Facilities Team", "Operations Director", "People Team"])
    if rng.random() < 0.5:
        return "\n".join(["To: Residents" if public else "To: All staff",
                          f"Subject: {item['subject']}", "", " ".join(body), "", f"{sender}, {role}"])
    return f"{item['subject']}: " + " ".join(body)


# ---------------------------------------------------------------------------
# Instructions and assembly
# ---------------------------------------------------------------------------

_GENERAL_INSTRUCTIONS = [
    "Summarize the following text in one sentence.",
    "Give three bullet points that summarize the passage below.",
    "TL;DR this for me.",
    "Write a headline and a one-line summary for the text below.",
    "Summarize this for a busy manager who only has ten seconds to read it.",
    "Summarize the following in under 30 words.",
    "Summarize the passage below in two sentences.",
    "What is the main point of this text? Answer briefly.",
    "Condense the following into a short paragraph of no more than 60 words.",
    "Explain what this text is about to a ten-year-old, in two or three simple sentences.",
    "Write a one-line summary of the text below.",
    "Give me the gist of this in plain language.",
    "Summarize the key facts (who, what, when, where) from the text below.",
    "Summarize the passage, then list any numbers it mentions and what they refer to.",
    "Summarize this in exactly three sentences.",
    "Rewrite the following as a short news brief of about 40 words.",
    "Summarize this in a single social media post of under 280 characters.",
    "List the three most important points from the text below.",
    "Read the passage and write a summary of no more than 50 words.",
    "Briefly summarize what happened in the following text.",
    "Write a short summary of this that could go in a weekly newsletter.",
    "Summarize the following and describe its overall tone in one word.",
    "Give a one-sentence summary followed by two supporting details.",
    "Boil this down to its single most important takeaway.",
    "Summarize the following for someone who has no background on the topic.",
    "Write a concise summary of the text below and give it a short title.",
    "In two or three bullet points, what does this text say?",
    "Summarize the text below, then suggest one sensible follow-up question.",
    "Shorten the following into a summary about a quarter of its length.",
    "Can you sum up the text below in a couple of sentences?",
    "Summarize the passage below without using any direct quotes.",
    "What are the key takeaways from the following? Keep it short.",
    "Write a summary of the text below in the form of a short text message to a friend.",
    "Summarize the following text in five bullet points or fewer, most important first.",
]

_GENRE_INSTRUCTIONS = {
    "council": ["What did the council decide, and why? Summarize in two sentences.",
                "Summarize this local news story, including both the supporters' and the critics' views."],
    "launch": ["Summarize this product announcement: what is the product, who is it for, and what does it cost?",
               "Turn this press report into three short bullet points for a sales team."],
    "weather": ["Summarize the impact of this weather event in one or two sentences.",
                "Write a short alert-style summary of this weather report for local residents."],
    "sports": ["Summarize this match report in one sentence, including the final score.",
               "Give a two-sentence recap of this game for a sports roundup."],
    "school": ["Summarize this school news item for a parents' newsletter in two sentences.",
               "Write a headline and a one-sentence summary for this school announcement."],
    "meeting": ["Extract the key decisions and action items from these meeting notes.",
                "Summarize these meeting notes for a colleague who missed the meeting.",
                "List who is responsible for what according to these notes, and summarize the main decisions."],
    "review": ["Summarize this review and say whether the reviewer recommends the product.",
               "List the main pros and cons mentioned in this review.",
               "In one sentence, what is this reviewer's overall opinion?"],
    "email": ["Summarize this email and say what the sender is asking for.",
              "What does the reader of this email need to do? Summarize in one or two sentences.",
              "Give a one-line summary of this email suitable for an inbox preview."],
    "abstract": ["Summarize the study's aim, method and main finding in plain language.",
                 "Explain the result of this study to a non-scientist in two sentences.",
                 "Summarize this abstract in one sentence and mention its main limitation."],
    "support": ["Summarize the customer's problem and how it was resolved.",
                "Write a brief support-ticket summary of this chat: issue, action taken, outcome.",
                "In one or two sentences, what was the customer's issue and what did the agent do?"],
    "story": ["Summarize the plot of this short story in two sentences.",
              "Summarize this story in one sentence and state its main theme.",
              "Retell this story in three short bullet points."],
    "recipe": ["Summarize this recipe as a quick list of steps.",
               "Summarize this recipe in two sentences: what it is and how it is made.",
               "List the main ingredients mentioned in this recipe and give a one-line summary of the method."],
    "travel": ["Summarize this travel diary entry in three bullet points.",
               "Summarize this travel log in one sentence, mentioning the place and the highlight of the day.",
               "What did the writer do on this day? Give a brief summary."],
    "memo": ["Summarize this announcement: what is changing, when, and what do people need to do?",
             "Turn this notice into two short bullet points for a busy reader.",
             "Summarize this memo in one sentence."],
}

# (genre key, generator, pool of items/kinds, number of passages)
_GENRES = [
    ("council", _gen_council, _COUNCIL_ITEMS, 30),
    ("launch", _gen_launch, _LAUNCH_ITEMS, 30),
    ("weather", _gen_weather, _WEATHER_KINDS, 28),
    ("sports", _gen_sports, _SPORTS, 28),
    ("school", _gen_school, _SCHOOL_KINDS, 28),
    ("meeting", _gen_meeting, _MEETINGS, 24),
    ("review", _gen_review, _REVIEWS, 32),
    ("email", _gen_email, _EMAIL_KINDS, 24),
    ("abstract", _gen_abstract, _STUDIES, 28),
    ("support", _gen_support, _CHAT_KINDS, 24),
    ("story", _gen_story, _STORY_KINDS, 18),
    ("recipe", _gen_recipe, _RECIPES, 28),
    ("travel", _gen_travel, _TRAVEL, 28),
    ("memo", _gen_memo, _MEMOS, 24),
]


def _after(instruction: str) -> str:
    """Adjust an instruction that will be placed after the passage."""
    for old, new in (("the following text", "the text above"), ("the following", "the text above"),
                     ("text below", "text above"), ("passage below", "passage above")):
        instruction = instruction.replace(old, new)
    return instruction


def _format(rng: random.Random, instruction: str, passage: str) -> str:
    if instruction == "TL;DR this for me.":
        return rng.choice([f"{passage}\n\nTL;DR:", f"TL;DR this for me:\n\n{passage}"])
    style = rng.randrange(5)
    if style == 0:
        return f"{instruction}\n\n{passage}"
    if style == 1:
        return f"{instruction}\n\nText:\n{passage}"
    if style == 2:
        return f"{passage}\n\n{_after(instruction)}"
    if style == 3:
        return f"{instruction}\n\n\"\"\"\n{passage}\n\"\"\""
    return f"Here is a text:\n\n{passage}\n\n{_after(instruction)}"


def _original() -> list[tuple[str, str]]:
    """The first 374 prompts, unchanged: the passages drawn from one source item of a genre (the same story with
    other names, places and numbers) share a group, "<genre>-<item>" ("council-3")."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    instr_rng = random.Random(20240611)
    general = list(_GENERAL_INSTRUCTIONS)
    instr_rng.shuffle(general)
    g_idx = 0
    for gi, (key, gen, pool, count) in enumerate(_GENRES):
        rng = random.Random(1000 + gi)
        passages: list[tuple[int, str]] = []
        i = 0
        while len(passages) < count and i < count * 20:
            text = gen(rng, pool[i % len(pool)]).strip()
            if all(text != t for _, t in passages):
                passages.append((i % len(pool), text))
            i += 1
        specific = _GENRE_INSTRUCTIONS[key]
        used: set[tuple[int, str]] = set()
        for item_idx, passage in passages:
            # a third of passages get a genre-specific instruction; the same source
            # item never gets the same instruction twice
            for _ in range(50):
                if rng.random() < 0.34:
                    instruction = rng.choice(specific)
                else:
                    instruction = general[g_idx % len(general)]
                    g_idx += 1
                if (item_idx, instruction) not in used:
                    break
            used.add((item_idx, instruction))
            prompt = _format(rng, instruction, passage).strip()
            if prompt not in seen:
                seen.add(prompt)
                out.append((f"{key}-{item_idx + 1}", prompt))
    random.Random(7).shuffle(out)
    assert all(p and p == p.strip() for _, p in out)
    return out


# ---------------------------------------------------------------------------
# Extension: new genres whose passages are composed sentence by sentence. A genre has subjects (each with its
# own facts) and parts: one sentence is drawn from every part (a part given as (probability, sentences) is
# optional), so passages of one genre share a frame but few sentences. Appended after the original prompts; a
# genre's prompts share a group ("science-news").
# ---------------------------------------------------------------------------
_SCIENCE_NEWS = dict(
    subjects=[
        dict(thing="a new species of tree frog", place="a cloud forest in the Andes", field="biologists",
             detail="The frog is smaller than a thumbnail and calls only after heavy rain.",
             why="it shows how much of the forest's life is still undescribed"),
        dict(thing="a battery that uses sodium instead of lithium", place="a university lab", field="engineers",
             detail="The cells kept 90 percent of their capacity after two thousand charging cycles.",
             why="sodium is cheap and far more common than lithium"),
        dict(thing="a comet that will be visible without a telescope", place="an observatory in Chile",
             field="astronomers", detail="It is expected to be brightest for about a week in the early evening.",
             why="naked-eye comets appear only a few times in a decade"),
        dict(thing="bacteria that break down a common plastic", place="soil near a recycling plant",
             field="microbiologists", detail="In the lab the bacteria digested thin plastic film in about six weeks.",
             why="it could one day help deal with plastic waste"),
        dict(thing="an ancient shipwreck with its cargo intact", place="the seabed off a rocky coast",
             field="archaeologists", detail="Divers counted hundreds of sealed clay jars still stacked in rows.",
             why="intact cargo reveals how goods were traded"),
        dict(thing="a way to grow wheat with less water", place="test fields in a dry region", field="plant scientists",
             detail="The new variety roots more deeply and closes its leaf pores sooner on hot afternoons.",
             why="droughts are becoming more frequent in many farming areas"),
        dict(thing="a blood test that spots a liver disease early", place="a teaching hospital", field="doctors",
             detail="The test looks for a small set of proteins that rise before symptoms appear.",
             why="the disease is much easier to treat when it is found early"),
        dict(thing="whales that sing in a new pattern", place="a remote stretch of ocean", field="marine biologists",
             detail="Underwater microphones recorded the new song spreading from one group to another within a year.",
             why="it suggests whale song is learned and shared like a cultural trend"),
        dict(thing="a material that cools buildings without power", place="a materials science institute",
             field="physicists", detail="The coating reflects sunlight and sends heat out as infrared radiation.",
             why="air conditioning uses a growing share of the world's electricity"),
        dict(thing="a fossil of a feathered dinosaur", place="a quarry in northern China", field="palaeontologists",
             detail="The skeleton is complete down to the tail, with clear impressions of feathers.",
             why="it helps fill the gap between dinosaurs and early birds"),
    ],
    parts=[
        ["A team of {field} has reported {thing}, found in {place}.",
         "{Field} working in {place} say they have discovered {thing}.",
         "Researchers announced on {day} that they had found {thing} in {place}."],
        ["{detail}", "{detail} The results were published this week after review by other experts."],
        ["The lead researcher, {person}, said the result surprised the team.",
         "\"We checked the data several times before we believed it,\" said {person}, who led the work.",
         "{person}, the study's first author, called the finding \"a real step forward\"."],
        ["Experts not involved in the study say it matters because {why}.",
         "The discovery is important, the team argues, because {why}.",
         "Outside scientists welcomed the work, noting that {why}."],
        [(0.7, ["Further studies are planned for next year.", "The team now wants to repeat the work on a larger scale.",
                "Some researchers cautioned that more data will be needed before firm conclusions can be drawn.",
                "Funding for a follow-up project has already been approved."])],
    ],
)

_BUSINESS = dict(
    subjects=[
        dict(company="Northwind Outdoor", sector="outdoor clothing", driver="strong sales of waterproof jackets",
             problem="higher shipping costs"),
        dict(company="Brightside Software", sector="accounting software", driver="new business subscriptions",
             problem="slower growth among small customers"),
        dict(company="Harbor Foods", sector="frozen meals", driver="a popular new vegetarian range",
             problem="rising prices for packaging"),
        dict(company="Kestrel Cycles", sector="bicycles", driver="demand for electric bikes",
             problem="a shortage of certain components"),
        dict(company="Lumen Home", sector="smart lighting", driver="a partnership with a large retailer",
             problem="price cuts by competitors"),
        dict(company="Greenway Transit", sector="electric buses", driver="new contracts with three cities",
             problem="delays at its battery supplier"),
        dict(company="Maple & Pine", sector="furniture", driver="online orders", problem="weaker demand for large items"),
        dict(company="Clearwater Labs", sector="water filters", driver="growth in international markets",
             problem="currency movements"),
    ],
    parts=[
        ["{company}, which makes {sector}, reported revenue of ${rev} million for the last quarter, up {pct} percent "
         "from a year earlier.",
         "Quarterly sales at {company} rose {pct} percent to ${rev} million, the {sector} maker said on {day}.",
         "{company} said its revenue grew {pct} percent year on year, reaching ${rev} million."],
        ["Management credited {driver} for most of the increase.",
         "The company said the growth came mainly from {driver}.",
         "According to the chief executive, {person}, {driver} made the biggest difference."],
        ["Profit was held back by {problem}, and margins slipped slightly.",
         "However, {problem} ate into profits during the period.",
         "The results were not all positive: {problem} weighed on earnings."],
        ["The company plans to hire about {hires} people over the next year.",
         "It expects sales to keep growing, though more slowly, in the coming months.",
         "{company} also announced a new warehouse that should open in {month}.",
         "Shares rose {small} percent in early trading after the announcement."],
        [(0.5, ["Analysts described the figures as better than expected.",
                "Some investors remain cautious about the company's spending plans.",
                "The next results are due in three months."])],
    ],
    nums=dict(rev=(12, 480), pct=(3, 28), hires=(40, 400), small=(2, 9)),
)

_HEALTH_LEAFLET = dict(
    head=1,
    subjects=[
        dict(topic="Getting better sleep", aim="sleep well", tip1="keep a regular bedtime, even at weekends",
             tip2="avoid caffeine after mid-afternoon", sign="you still feel exhausted after weeks of good habits"),
        dict(topic="Staying hydrated in hot weather", aim="stay hydrated", tip1="carry a water bottle and sip often",
             tip2="eat water-rich foods such as melon and cucumber", sign="you feel dizzy, confused or stop sweating"),
        dict(topic="Looking after your back at work", aim="protect your back", tip1="adjust your chair so your feet rest flat",
             tip2="stand up and move every half hour", sign="pain spreads down a leg or comes with numbness"),
        dict(topic="Eating more fibre", aim="eat more fibre", tip1="swap white bread for wholegrain",
             tip2="add beans or lentils to soups and stews", sign="you notice a lasting change in bowel habits"),
        dict(topic="Handwashing to prevent infections", aim="wash your hands properly",
             tip1="scrub for at least twenty seconds with soap", tip2="dry your hands well with a clean towel",
             sign="a cut or sore on your hand becomes red, hot and painful"),
        dict(topic="Protecting your skin from the sun", aim="protect your skin", tip1="use sunscreen of SPF 30 or more",
             tip2="seek shade between 11 a.m. and 3 p.m.", sign="a mole changes shape, colour or size"),
        dict(topic="Walking for health", aim="walk more", tip1="start with ten minutes a day and build up slowly",
             tip2="wear comfortable shoes with good support", sign="you get chest pain or severe breathlessness when walking"),
    ],
    parts=[
        ["{topic}.", "Health tips: {topic}.", "Patient information: {topic}."],
        ["Small daily habits can make a big difference if you want to {aim}.",
         "Many people find it hard to {aim}, but a few simple changes usually help.",
         "This leaflet explains how to {aim} without special equipment or cost."],
        ["First, {tip1}.", "The most useful step is to {tip1}.", "Try to {tip1}."],
        ["It also helps to {tip2}.", "Another good habit is to {tip2}.", "Where possible, {tip2}."],
        [(0.6, ["Keep a simple diary for two weeks to see what works for you.",
                "Ask family members to join in; habits are easier to keep together.",
                "Do not try to change everything at once."])],
        ["Speak to your doctor or pharmacist if {sign}.", "Get medical advice if {sign}.",
         "See a health professional promptly if {sign}."],
    ],
)

_JOB_AD = dict(
    subjects=[
        dict(role="Junior Data Analyst", org="a regional hospital trust", duty="build weekly reports on waiting times",
             need="confidence with spreadsheets and some SQL"),
        dict(role="Line Cook", org="a busy neighbourhood bistro", duty="prepare the lunch menu and keep the station spotless",
             need="at least a year of kitchen experience"),
        dict(role="Warehouse Team Leader", org="an online furniture retailer",
             duty="organize a team of eight and plan daily dispatches", need="experience leading a small team"),
        dict(role="Primary Teaching Assistant", org="a village primary school",
             duty="support reading groups and pupils with additional needs", need="patience and good communication"),
        dict(role="Customer Success Manager", org="a software company", duty="help new clients get started with the product",
             need="a friendly manner and strong problem-solving skills"),
        dict(role="Bike Mechanic", org="a community cycling shop", duty="repair and service bikes of every kind",
             need="hands-on mechanical experience"),
        dict(role="Grant Writer", org="an environmental charity", duty="research funders and write applications",
             need="excellent writing and attention to detail"),
        dict(role="Night Receptionist", org="a family-run hotel", duty="check in late guests and handle phone bookings",
             need="a calm approach and basic computer skills"),
    ],
    parts=[
        ["We are hiring: {role} at {org} in {town}.", "{Org} in {town} is looking for a {role}.",
         "Job opening: {role}, {org}, {town}."],
        ["In this role you will {duty}.", "Your main task will be to {duty}.",
         "Day to day, you will {duty} and work closely with the wider team."],
        ["We are looking for someone with {need}.", "The ideal candidate has {need}.",
         "You will need {need}; training is provided for everything else."],
        ["The position is {hours} hours a week and pays ${pay} per hour.",
         "This is a permanent post of {hours} hours per week, paying ${pay} an hour.",
         "Pay is ${pay} per hour for {hours} hours a week, with paid holidays."],
        [(0.6, ["Flexible start times can be discussed.", "Free parking and a staff discount are included.",
                "We welcome applications from people returning to work after a break."])],
        ["Apply by {date} with a CV and a short cover letter to {person}.",
         "To apply, send your CV to {person} before {date}.", "Applications close on {date}; interviews follow a week later."],
    ],
    nums=dict(hours=(16, 40), pay=(14, 38)),
)

_INSTRUCTIONS = dict(
    head=1,
    subjects=[
        dict(device="the Aura 2 robot vacuum", setup="charge it fully on its dock for four hours",
             use="press the home button twice to start a full clean", care="empty the dust bin after every run"),
        dict(device="the KettlePro smart kettle", setup="rinse it twice and boil a full kettle of water to discard",
             use="choose a temperature in the app and tap Start", care="descale it every month in hard-water areas"),
        dict(device="the Trailmate GPS watch", setup="pair it with your phone through the Trailmate app",
             use="hold the top button to start recording an activity", care="rinse it with fresh water after swimming"),
        dict(device="the Cozy 300 space heater", setup="place it on a flat floor at least a metre from curtains",
             use="turn the dial to the level you want and wait for the green light", care="never cover it or dry clothes on it"),
        dict(device="the SnapPrint photo printer", setup="load the paper cartridge with the glossy side up",
             use="send a photo from your phone and wait about a minute", care="store spare paper in a dry place"),
        dict(device="the BrewMate espresso machine", setup="fill the water tank and run one cycle without coffee",
             use="lock the filter handle in place and press the single-cup button", care="clean the milk wand after each use"),
        dict(device="the Sentinel video doorbell", setup="connect it to your home Wi-Fi using the setup code on the box",
             use="answer visitors from the app when it notifies you", care="recharge the battery when the app warns you"),
    ],
    parts=[
        ["Getting started with {device}.", "Quick start guide: {device}.", "How to use {device}."],
        ["Before first use, {setup}.", "When you unpack it, {setup}.", "Start by making sure you {setup}."],
        ["To use it, {use}.", "In normal use, {use}.", "Once it is set up, simply {use}."],
        [(0.7, ["The light ring shows blue while it works and green when it is finished.",
                "A short beep confirms each setting.", "Most settings can also be changed from the companion app."])],
        ["For best results, {care}.", "To keep it working well, {care}.", "Remember to {care}."],
        [(0.6, ["If anything seems wrong, switch it off and contact support; do not try to open the casing.",
                "The warranty lasts two years from the date of purchase.",
                "Keep this guide for future reference."])],
    ],
)

_INCIDENT = dict(
    subjects=[
        dict(system="the online booking site", symptom="customers could not complete payments",
             cause="an expired security certificate on the payment server", fix="renewed the certificate"),
        dict(system="the office Wi-Fi", symptom="staff on the second floor lost connection repeatedly",
             cause="a faulty network switch", fix="replaced the switch"),
        dict(system="the warehouse scanners", symptom="parcels were scanned but not recorded",
             cause="a software update that changed a database setting", fix="rolled back the update"),
        dict(system="the email service", symptom="messages to external addresses were delayed by hours",
             cause="a full mail queue after a spam attack", fix="blocked the sending addresses and cleared the queue"),
        dict(system="the mobile app", symptom="users were logged out every few minutes",
             cause="a change to how login sessions were stored", fix="restored the old session settings"),
        dict(system="the factory cooling system", symptom="machines on line 3 shut down to avoid overheating",
             cause="a blocked water filter", fix="cleaned the filter and added a pressure alarm"),
        dict(system="the school's online homework portal", symptom="pupils could not upload files",
             cause="a storage limit that had been reached", fix="raised the limit and deleted old test files"),
    ],
    parts=[
        ["Incident summary: on {day}, {system} had a problem for about {minutes} minutes.",
         "Between {time1} and {time2} on {day}, {system} was not working properly.",
         "This report covers the outage of {system} on {day}."],
        ["During that time, {symptom}.", "The main effect was that {symptom}.",
         "Users noticed that {symptom}; around {affected} people were affected."],
        ["The cause was {cause}.", "Investigation showed the root cause to be {cause}.",
         "The team traced the problem to {cause}."],
        ["Engineers {fix}, and service returned to normal.", "The on-call team {fix} to restore service.",
         "The issue was resolved after the team {fix}."],
        [(0.8, ["To prevent a repeat, automatic alerts will now warn the team earlier.",
                "A checklist for future changes has been added to the team handbook.",
                "The team will review monitoring so that a similar issue is spotted within minutes.",
                "No data was lost, and affected users have been contacted."])],
    ],
    nums=dict(minutes=(15, 240), affected=(40, 3000)),
)

_INTERVIEW = dict(
    sep="\n",
    subjects=[
        dict(who="a potter", work="her first solo exhibition", start="a night class ten years ago",
             hard="learning to accept that some pieces crack in the kiln"),
        dict(who="a marathon runner", work="finishing a race on every continent", start="running to lose weight after college",
             hard="training through an injury in the second year"),
        dict(who="a chef", work="a new restaurant focused on local vegetables", start="working in my grandmother's kitchen",
             hard="keeping the menu affordable"),
        dict(who="a children's author", work="a picture book about a shy octopus", start="telling stories to my nephews",
             hard="cutting a story down to a few hundred words"),
        dict(who="a beekeeper", work="a community honey project", start="rescuing a swarm from a neighbour's shed",
             hard="losing two hives in a cold spring"),
        dict(who="a game designer", work="a board game about building cities", start="making paper games as a kid",
             hard="testing the rules with hundreds of players"),
        dict(who="a violin maker", work="a violin played at a national competition", start="repairing old instruments",
             hard="finding wood that is seasoned properly"),
    ],
    parts=[
        ["Interview: {person}, {who}, talks about {work}.", "We spoke to {person}, {who}, about {work}."],
        ["Q: How did it all begin?\nA: It started with {start}. I never planned to make it a career.",
         "Q: Where did your interest come from?\nA: Honestly, {start}. Everything grew from there."],
        ["Q: What has been the hardest part?\nA: Probably {hard}. You learn patience.",
         "Q: Was there a moment you almost gave up?\nA: Yes, {hard}. I'm glad I kept going."],
        [(0.7, ["Q: What does a normal day look like?\nA: Early start, lots of coffee, and a long list I rarely finish.",
                "Q: Who helped you most?\nA: My family, and a mentor who told me to slow down.",
                "Q: What do people misunderstand about your work?\nA: They think it's glamorous. Mostly it's repetition."])],
        ["Q: What's next?\nA: I want to share what I've learned, maybe by teaching.",
         "Q: What's next for you?\nA: A break, and then a bigger project next year.",
         "Q: Any advice for beginners?\nA: Start small, and don't compare yourself with others."],
    ],
)

_PODCAST = dict(
    sep="\n",
    subjects=[
        dict(topic="why people procrastinate", point1="procrastination is more about mood than laziness",
             point2="breaking a task into a first tiny step helps"),
        dict(topic="the science of habits", point1="habits form around cues in our surroundings",
             point2="changing the environment is easier than relying on willpower"),
        dict(topic="saving money on groceries", point1="planning meals before shopping cuts waste",
             point2="store-brand products are often made in the same factories"),
        dict(topic="how to start running", point1="most beginners go too fast", point2="run-walk intervals build stamina safely"),
        dict(topic="learning a language as an adult", point1="adults learn vocabulary faster than children",
             point2="speaking early, even badly, speeds up progress"),
        dict(topic="whether to buy or rent a home", point1="the monthly payment is not the whole cost",
             point2="how long you plan to stay matters most"),
        dict(topic="keeping houseplants alive", point1="overwatering kills more plants than neglect",
             point2="light is usually the limiting factor indoors"),
    ],
    parts=[
        ["Transcript excerpt from episode {ep} of a weekly podcast on everyday life, about {topic}.",
         "From a podcast episode about {topic}:"],
        ["HOST A: Today we're talking about {topic}. I'll admit I'm terrible at it.\n"
         "HOST B: Most people are, which is why we picked it.",
         "HOST A: So, {topic}. Where do we even start?\nHOST B: With a myth, I think."],
        ["HOST B: The first thing listeners should know is that {point1}.\nHOST A: That surprised me when I read it.",
         "HOST B: The research is pretty clear that {point1}.\nHOST A: Really? I always assumed the opposite."],
        [(0.6, ["HOST A: We got a lot of messages about this last week.\nHOST B: Including one very long email from my mum.",
                "HOST A: Let's read a listener question.\nHOST B: Go ahead, it's a good one."])],
        ["HOST B: My practical tip is that {point2}.\nHOST A: Simple, but I can see it working.",
         "HOST A: So what should people actually do?\nHOST B: Remember that {point2}. That's the big one."],
    ],
    nums=dict(ep=(12, 210)),
)

_LISTING = dict(
    subjects=[
        dict(home="a two-bedroom flat", feature="a south-facing balcony", extra="a shared bike store", catch="there is no lift"),
        dict(home="a three-bedroom terraced house", feature="a long back garden", extra="a new boiler fitted last year",
             catch="the kitchen needs updating"),
        dict(home="a studio apartment", feature="large windows and high ceilings", extra="a gym in the building",
             catch="storage space is limited"),
        dict(home="a detached cottage", feature="an original stone fireplace", extra="a small orchard",
             catch="the nearest shop is a twenty-minute drive"),
        dict(home="a loft conversion", feature="exposed brick walls", extra="underfloor heating",
             catch="it is above a busy bar"),
        dict(home="a family bungalow", feature="step-free access throughout", extra="a double garage",
             catch="the roof will need work within a few years"),
    ],
    parts=[
        ["For sale: {home} in {town}, asking ${price},000.", "Now available to rent: {home} in {town} at ${rent} a month.",
         "{Home} in a quiet part of {town} has come on the market."],
        ["Its best feature is {feature}.", "Buyers will love {feature}.", "The highlight is {feature}."],
        ["It also comes with {extra}.", "Other perks include {extra}.", "There is also {extra}."],
        [(0.7, ["The station is a ten-minute walk away.", "Two well-rated schools are nearby.",
                "The current owners have lived there for {years} years.", "Viewings are by appointment only."])],
        ["On the downside, {catch}.", "One thing to note: {catch}.", "To be fair, {catch}."],
        [(0.5, ["Contact {person} at the agency to arrange a viewing.", "Offers are invited before the end of the month."])],
    ],
    nums=dict(price=(180, 950), rent=(700, 2600), years=(4, 30)),
)

_COURT = dict(
    subjects=[
        dict(case="a dispute between two neighbours over a fallen tree", claim="$4,200 for a damaged shed",
             ruling="the tree's owner must pay half of the repair cost", reason="the storm was unusually strong"),
        dict(case="a landlord's claim for unpaid rent", claim="three months of rent",
             ruling="the tenant must repay the rent in monthly instalments", reason="the tenant had lost her job"),
        dict(case="a customer's complaint against a builder", claim="a refund for a leaking extension",
             ruling="the builder must fix the roof within sixty days", reason="the work did not meet the contract"),
        dict(case="a cyclist's claim against the town council", claim="compensation for a fall caused by a pothole",
             ruling="the council must pay $2,800", reason="the pothole had been reported twice before the accident"),
        dict(case="a wedding photographer's claim for an unpaid invoice", claim="the remaining $1,500 fee",
             ruling="the couple must pay the full amount", reason="the photos were delivered as agreed"),
        dict(case="a dog owner's appeal against a fine", claim="the cancellation of a $300 fine",
             ruling="the fine was reduced to $100", reason="the signs in the park were unclear"),
    ],
    parts=[
        ["The small claims court in {town} ruled on {day} in {case}.", "A judge in {town} has decided {case}.",
         "{Case} ended in court in {town} this week."],
        ["The claimant, {person}, asked for {claim}.", "{person} had taken the case to court seeking {claim}."],
        ["The judge decided that {ruling}.", "In the ruling, the court found that {ruling}."],
        ["The judge noted that {reason}.", "The decision took into account that {reason}.",
         "Explaining the decision, the judge said {reason}."],
        [(0.6, ["Both sides said they would accept the outcome.", "The other party, {person2}, said they were disappointed.",
                "Neither side was represented by a lawyer.", "The hearing lasted just under an hour."])],
    ],
)

_NATURE_NOTE = dict(
    subjects=[
        dict(place="the reservoir path", sight="a pair of great crested grebes performing their courtship dance",
             season="early spring", note="the reeds are already noisy with warblers"),
        dict(place="the old railway cutting", sight="a slow-worm basking on a sunny stone", season="late May",
             note="cowslips have spread along the whole bank"),
        dict(place="the beech wood", sight="a carpet of bluebells under the new leaves", season="mid-April",
             note="a woodpecker drummed somewhere out of sight"),
        dict(place="the estuary", sight="thousands of knot wheeling over the mudflats", season="midwinter",
             note="the tide came in faster than I expected"),
        dict(place="the allotments", sight="a hedgehog snuffling under the bean rows at dusk", season="September",
             note="the blackberries are almost finished"),
        dict(place="the heath", sight="a hobby chasing dragonflies over the pond", season="high summer",
             note="the heather is just starting to turn purple"),
    ],
    parts=[
        ["Nature diary: a walk along {place} in {season}.", "Notes from {place}, {season}.",
         "I spent an hour at {place} this {dayname} morning."],
        ["The highlight was {sight}.", "Best of all was {sight}.", "I was lucky enough to watch {sight}."],
        ["The weather was {weather}, and there were few other people about.",
         "It was {weather}, which seemed to suit the wildlife.", "Conditions were {weather}."],
        ["Elsewhere, {note}.", "I also noticed that {note}.", "Worth recording too: {note}."],
        [(0.6, ["I counted {count} different bird species in total.", "I'll come back at dawn next week.",
                "A local volunteer told me numbers are up on last year.", "My notebook got soaked, as usual."])],
    ],
    nums=dict(count=(9, 41)),
    extra=dict(weather=["cold and bright", "mild and damp", "windy with sudden showers", "still and misty",
                        "warm and hazy"]),
)

_COMPLAINT = dict(
    sep="\n",
    subjects=[
        dict(item="a washing machine", problem="it started leaking after two weeks", asked="a replacement or a full refund"),
        dict(item="a weekend hotel stay", problem="the room was not cleaned and the heating did not work",
             asked="a partial refund"),
        dict(item="a delivery of garden furniture", problem="two chairs arrived broken and one was missing",
             asked="the missing and broken items to be replaced"),
        dict(item="a mobile phone contract", problem="I was charged for roaming I never used", asked="the charges to be removed"),
        dict(item="a kitchen renovation", problem="the work finished five weeks late and the worktop is cracked",
             asked="the worktop to be replaced and compensation for the delay"),
        dict(item="a train journey", problem="the train was cancelled and no replacement bus arrived",
             asked="a refund of the ticket and my taxi fare"),
    ],
    parts=[
        ["Dear Customer Services,", "To whom it may concern,", "Dear Sir or Madam,"],
        ["I am writing to complain about {item}, bought on {date} (reference {ref}).",
         "I would like to make a formal complaint about {item} (order {ref})."],
        ["Unfortunately, {problem}.", "I was disappointed to find that {problem}."],
        [(0.7, ["I contacted your helpline twice, but nobody called me back.", "I have attached photos as evidence.",
                "This is not the first time I have had a problem with your company.",
                "I have been a loyal customer for several years."])],
        ["I would now like {asked}.", "I am therefore asking for {asked}.", "To resolve this, I expect {asked}."],
        ["Please reply within fourteen days.\nYours faithfully,\n{person}", "I look forward to your reply.\n{person}"],
    ],
    nums=dict(ref=(100000, 999999)),
)

_LECTURE = dict(
    sep="\n",
    subjects=[
        dict(course="Introduction to Economics", topic="supply and demand",
             idea="prices rise when demand grows faster than supply", example="concert tickets for a famous band"),
        dict(course="Environmental Science", topic="the water cycle", idea="most evaporation happens over the oceans",
             example="morning dew on grass"),
        dict(course="Psychology 101", topic="short-term memory", idea="people hold about seven items in mind at once",
             example="remembering a phone number"),
        dict(course="Art History", topic="perspective in Renaissance painting",
             idea="painters used a vanishing point to create depth", example="a long corridor in a painting"),
        dict(course="Computer Science Basics", topic="binary numbers", idea="computers store everything as ones and zeros",
             example="counting on your fingers in binary"),
        dict(course="Nutrition", topic="how the body uses protein", idea="protein is broken into amino acids and rebuilt",
             example="muscle repair after exercise"),
        dict(course="Urban Planning", topic="walkable neighbourhoods", idea="short blocks and mixed uses encourage walking",
             example="an old town centre compared with an out-of-town retail park"),
    ],
    parts=[
        ["Lecture notes, {course}, week {week}: {topic}.", "{course}: notes on {topic} (week {week})."],
        ["- Main idea: {idea}.", "- Key point: {idea}."],
        ["- Example used in class: {example}.", "- The lecturer illustrated this with {example}."],
        [(0.8, ["- Common exam mistake: mixing up the definitions.", "- Reading for next week: chapter {chapter}.",
                "- Question from a student: does this always hold? Answer: not always; see the exceptions slide.",
                "- Formula on the board to memorise for the test."])],
        ["- Quiz next {dayname} covers this topic.", "- Office hours moved to {dayname} afternoon this week.",
         "- Group project proposals are due in two weeks."],
    ],
    nums=dict(week=(2, 12), chapter=(3, 14)),
)

_RELEASE_NOTES = dict(
    sep="\n",
    subjects=[
        dict(app="the Pocketbook budgeting app", new="shared budgets for couples and housemates",
             fixed="a crash when importing bank statements", changed="the monthly report now opens faster"),
        dict(app="the Trailhead hiking app", new="offline maps for whole regions", fixed="wrong elevation on some routes",
             changed="the route planner now suggests water stops"),
        dict(app="the Lingua flashcard app", new="a speaking practice mode", fixed="streaks resetting after time-zone changes",
             changed="reminders can now be set for several times a day"),
        dict(app="the Fieldnote notes app", new="handwriting recognition", fixed="lost formatting when pasting text",
             changed="search now includes text inside images"),
        dict(app="the Harbor team chat app", new="scheduled messages", fixed="notifications arriving twice",
             changed="threads are now collapsed by default"),
    ],
    parts=[
        ["What's new in version {major}.{minor} of {app}:", "Release notes for {app}, version {major}.{minor}."],
        ["New: {new}.", "Added {new}, one of the most requested features."],
        ["Fixed: {fixed}.", "We fixed {fixed}; thanks to everyone who reported it."],
        ["Changed: {changed}.", "Improvement: {changed}."],
        [(0.7, ["Known issue: some older tablets may show a blank screen on first launch.",
                "This version needs the latest operating system update.",
                "Thanks to our beta testers for their feedback.",
                "Support for the oldest app version will end next month."])],
    ],
    nums=dict(major=(2, 9), minor=(0, 18)),
)

_PROFILE = dict(
    subjects=[
        dict(role="the school crossing guard", years="twenty-six", known="learning every child's name",
             next="volunteering at the town museum"),
        dict(role="the owner of the corner bakery", years="thirty-one", known="giving unsold bread to the shelter",
             next="teaching a weekly baking class"),
        dict(role="the library's children's librarian", years="nineteen", known="her Saturday story hours",
             next="writing a book of local folk tales"),
        dict(role="the volunteer football coach", years="fifteen", known="never turning a child away",
             next="helping start a girls' team"),
        dict(role="the town's last shoe repairer", years="forty", known="fixing shoes other shops said were beyond saving",
             next="passing the shop on to an apprentice"),
        dict(role="the community garden organizer", years="twelve", known="turning an empty lot into a garden",
             next="planting a small orchard"),
    ],
    parts=[
        ["After {years} years as {role}, {person} is stepping back.", "{person} has been {role} in {town} for {years} years.",
         "Few people in {town} are as well known as {person}, {role} for {years} years."],
        ["{They} is best known for {known}.", "Neighbours remember {them} above all for {known}.",
         "Ask anyone, and they will mention {known}."],
        [(0.8, ["\"It never felt like a job,\" {they} says.", "A farewell party is planned at the town hall on {day}.",
                "Former pupils and customers have sent hundreds of cards.",
                "{They} admits the early mornings will not be missed."])],
        ["Next, {they} plans to spend more time {next}.", "Retirement will not be quiet: {they} is {next}.",
         "{They} already has a new project: {next}."],
    ],
)

_MUSEUM = dict(
    subjects=[
        dict(obj="a bronze mirror", origin="a merchant's grave dating from about 200 BCE",
             use="it was polished to reflect a face and decorated on the back", detail="a pattern of clouds and dragons"),
        dict(obj="a quilt made by three sisters", origin="a farmhouse in the 1880s",
             use="it was sewn from worn-out clothes over several winters", detail="hundreds of hexagon patches"),
        dict(obj="an early pocket calculator", origin="a 1972 electronics catalogue",
             use="it could add, subtract, multiply and divide", detail="a red glowing display"),
        dict(obj="a whalebone carving", origin="a nineteenth-century whaling voyage",
             use="sailors carved such objects during long months at sea", detail="a ship under full sail"),
        dict(obj="a Roman oil lamp", origin="a villa excavated in the 1950s",
             use="it burned olive oil through a small wick", detail="a stamped maker's mark"),
        dict(obj="a wartime ration book", origin="a family in the town", use="it controlled how much food each person could buy",
             detail="the stamps that were still unused"),
    ],
    parts=[
        ["Gallery {room}: {obj}.", "This case contains {obj}, found in {origin}.", "Object of the month: {obj}."],
        ["It comes from {origin}.", "The piece was recovered from {origin}.", "Curators date it to {origin}."],
        ["In its time, {use}.", "Originally, {use}."],
        ["Look closely and you can see {detail}.", "Notice {detail}.", "One striking feature is {detail}."],
        [(0.6, ["It was donated to the museum in {donated}.", "A replica you can touch is on the table nearby.",
                "Similar objects are rare because most were melted down or thrown away.",
                "Ask a guide about the conservation work it needed."])],
    ],
    nums=dict(room=(1, 14), donated=(1921, 2019)),
)

_FORUM = dict(
    head=1,
    subjects=[
        dict(issue="my sourdough never rises properly", tried="feeding the starter twice a day and using a warmer spot",
             detail="the loaves come out dense and flat"),
        dict(issue="my laptop fan is loud all the time", tried="closing background apps and cleaning the vents",
             detail="it is loud even when I'm only writing emails"),
        dict(issue="my tomato plants have yellow leaves", tried="watering less and adding compost",
             detail="the yellowing starts at the bottom and moves up"),
        dict(issue="my cat wakes me up at 4 a.m. every day", tried="feeding her later and playing with her before bed",
             detail="she meows at the bedroom door until I get up"),
        dict(issue="my bike gears keep slipping", tried="adjusting the barrel screw and oiling the chain",
             detail="it happens mostly when I climb hills"),
        dict(issue="I can't stick to a study routine", tried="timetables, apps and studying in the library",
             detail="I manage for three days and then give up"),
    ],
    parts=[
        ["Posted in the help forum by {handle}:", "Forum question from {handle}:", "{handle} writes:"],
        ["Hi all, long-time reader, first post. The problem is that {issue}.",
         "I'm at my wits' end: {issue}.", "Hoping someone here can help, because {issue}."],
        ["So far I've tried {tried}, with no luck.", "I've already tried {tried}.",
         "Things I've tried: {tried}. Nothing made a real difference."],
        ["The strange part is that {detail}.", "More detail: {detail}.", "To be specific, {detail}."],
        [(0.6, ["It's been going on for about {weeks} weeks.", "A friend said it's normal, but I'm not so sure.",
                "I'm on a tight budget, so I'd rather not pay for a professional."])],
        ["Any ideas? Thanks in advance!", "What would you do? All suggestions welcome.", "Thanks for reading this far."],
    ],
    nums=dict(weeks=(2, 12)),
    extra=dict(handle=["greenfingers22", "night_owl", "pedalpusher", "breadhead", "quietreader", "tinkerer_88",
                       "coffee_first", "lost_in_chapter3"]),
)

_OPINION = dict(
    subjects=[
        dict(stance="our town should close the high street to cars on weekends",
             pro="shops on pedestrian streets often see more visitors", con="older residents worry about access",
             answer="keep a free shuttle and disabled parking at each end"),
        dict(stance="schools should start an hour later", pro="teenagers' body clocks run late",
             con="parents' work hours do not change", answer="allow flexible drop-off and supervised early rooms"),
        dict(stance="the library should stay open until ten at night", pro="students need quiet space in the evenings",
             con="longer hours cost money", answer="use volunteers and self-service machines after seven"),
        dict(stance="every new building should have solar panels", pro="it cuts bills and emissions for decades",
             con="it adds to the price of new homes", answer="offer grants that cover the extra cost"),
        dict(stance="the town should plant a thousand street trees", pro="trees cool streets in heatwaves",
             con="roots can damage pavements", answer="choose the right species and use root barriers"),
    ],
    parts=[
        ["Opinion: I believe {stance}.", "It is time to admit that {stance}.", "Here is an unpopular view: {stance}."],
        ["The main argument is simple: {pro}.", "The evidence is on our side: {pro}.", "Consider this: {pro}."],
        [(0.6, ["I have lived here for {years} years and seen the same debate again and again.",
                "Other towns have already tried this with good results.",
                "A recent survey suggests most residents agree."])],
        ["Critics say {con}, and they have a point.", "Of course, {con}.", "I understand the objection that {con}."],
        ["But we can {answer}.", "The answer is to {answer}.", "A sensible compromise would be to {answer}."],
        [(0.5, ["Let's stop talking and start a trial next year.", "The council should put it to a vote this spring."])],
    ],
    nums=dict(years=(5, 40)),
)

_NEW_GENRES = {
    "science-news": _SCIENCE_NEWS, "business-report": _BUSINESS, "health-leaflet": _HEALTH_LEAFLET,
    "job-ad": _JOB_AD, "instructions": _INSTRUCTIONS, "incident-report": _INCIDENT, "interview": _INTERVIEW,
    "podcast": _PODCAST, "listing": _LISTING, "court": _COURT, "nature-note": _NATURE_NOTE,
    "complaint": _COMPLAINT, "lecture-notes": _LECTURE, "release-notes": _RELEASE_NOTES, "profile": _PROFILE,
    "museum": _MUSEUM, "forum": _FORUM, "opinion": _OPINION,
}

_NEW_GENRE_INSTRUCTIONS = {
    "science-news": ["Summarize this science news story for a general audience in two sentences.",
                     "What was discovered, by whom, and why does it matter? Answer from the text."],
    "business-report": ["Summarize these company results in one sentence for an investor newsletter.",
                        "List the good news and the bad news in this report."],
    "health-leaflet": ["Turn this leaflet into three short bullet points a patient could stick on the fridge.",
                       "Summarize the advice in this leaflet in two sentences."],
    "job-ad": ["Summarize this job ad: role, main duties, requirements, pay, and how to apply.",
               "In one sentence, who is this job right for?"],
    "instructions": ["Summarize these instructions as a numbered list of at most four steps.",
                     "Give a one-sentence summary of how to use this device."],
    "incident-report": ["Summarize this incident report for non-technical managers: what happened, why, and what "
                        "was done.", "Write a two-line status update based on this incident report."],
    "interview": ["Summarize this interview in three sentences, in the third person.",
                  "What are the main things the interviewee says about their work?"],
    "podcast": ["Summarize the main advice given in this podcast excerpt.",
                "Write a two-sentence episode description based on this transcript."],
    "listing": ["Summarize this property listing in one sentence, including the main drawback.",
                "List the pros and cons of this home according to the listing."],
    "court": ["Summarize this court report: who went to court, about what, and what was decided.",
              "Explain this ruling in one or two plain sentences."],
    "nature-note": ["Summarize this nature diary entry in one sentence.",
                    "What wildlife did the writer see, and where? Summarize briefly."],
    "complaint": ["Summarize this complaint: what went wrong and what the customer wants.",
                  "Write a one-line summary of this letter for a customer-service ticket."],
    "lecture-notes": ["Turn these lecture notes into a two-sentence summary for a classmate who missed the class.",
                      "What are the key takeaways from these notes?"],
    "release-notes": ["Summarize these release notes in one sentence for app store users.",
                      "What changed in this version? Answer in three short bullet points."],
    "profile": ["Summarize this profile in two sentences.", "Who is this person, and why are they being celebrated?"],
    "museum": ["Summarize this museum label in one sentence for a visitor guide.",
               "Rewrite this label as a short summary for children."],
    "forum": ["Summarize this forum post: what is the problem and what has already been tried?",
              "Write a one-sentence title for this forum post that summarizes the problem."],
    "opinion": ["Summarize this opinion piece: the writer's position, main argument, and proposed compromise.",
                "In two sentences, what does the author argue and how do they answer critics?"],
}
_PER_NEW_GENRE = 110


def _compose(rng: random.Random, genre: dict) -> str:
    """One passage of a new genre: a subject's facts and fresh names, numbers and dates, one sentence per part."""
    subject = rng.choice(genre["subjects"])
    first, full, pron = _person(rng)
    _, full2, _ = _person(rng)
    hour = rng.randint(6, 19)
    values = dict(person=full, first=first, person2=full2, they=pron, They=pron.capitalize(), them=_obj(pron),
                  their=_poss(pron), town=rng.choice(_TOWNS), day=rng.choice(_WEEKDAYS),
                  dayname=rng.choice(_WEEKDAYS), date=_date(rng), month=rng.choice(_MONTHS),
                  time1=f"{hour}:{rng.choice(['05', '20', '40'])}", time2=f"{hour + rng.randint(1, 4)}:{rng.choice(['10', '30', '55'])}")
    for key, value in subject.items():
        values[key] = value
        values[key[0].upper() + key[1:]] = value[0].upper() + value[1:]
    for key, (lo, hi) in genre.get("nums", {}).items():
        values[key] = rng.randint(lo, hi)
    for key, options in genre.get("extra", {}).items():
        values[key] = rng.choice(options)
    sentences = []
    for part in genre["parts"]:
        if isinstance(part[0], tuple):
            chance, options = part[0]
            if rng.random() >= chance:
                continue
        else:
            options = part
        sentences.append(rng.choice(options).format(**values))
    head = genre.get("head", 0)
    sep = genre.get("sep", " ")
    return "\n".join(sentences[:head] + [sep.join(sentences[head:])])


def _extended(seen: set[str]) -> list[tuple[str, str]]:
    """Up to `_PER_NEW_GENRE` prompts of each new genre (a group each, named after it): a composed passage with a
    general instruction or, a third of the time, one written for the genre. A prompt that is a near-duplicate
    (token Jaccard >= NEAR_DUPLICATE_JACCARD) of one already kept in its genre is dropped."""
    from data_gen.domains import NEAR_DUPLICATE_JACCARD, prompt_tokens, token_jaccard

    rng = random.Random(20251204)
    general = list(_GENERAL_INSTRUCTIONS)
    rng.shuffle(general)
    g_idx = 0
    out: list[tuple[str, str]] = []
    for key, genre in _NEW_GENRES.items():
        kept: list[frozenset[str]] = []
        for _ in range(_PER_NEW_GENRE * 10):
            if len(kept) == _PER_NEW_GENRE:
                break
            passage = _compose(rng, genre).strip()
            if rng.random() < 0.34:
                instruction = rng.choice(_NEW_GENRE_INSTRUCTIONS[key])
            else:
                instruction = general[g_idx % len(general)]
                g_idx += 1
            prompt = _format(rng, instruction, passage).strip()
            tokens = prompt_tokens(prompt)
            if prompt in seen or any(token_jaccard(tokens, u) >= NEAR_DUPLICATE_JACCARD for u in kept):
                continue
            seen.add(prompt)
            kept.append(tokens)
            out.append((key, prompt))
    rng.shuffle(out)
    return out


def prompts() -> list[tuple[str, str]]:
    """(group, prompt) pairs: the original prompts, then the new genres' (see `_extended`)."""
    result = _original()
    result += _extended({p for _, p in result})
    assert len(result) >= 1850, len(result)
    return result
