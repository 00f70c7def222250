"""Chemistry prompts for self-distillation: stoichiometry, equations, acids and bases, periodic
trends, bonding, organic groups, thermochemistry, gas laws and lab safety, from varied templates."""

import random

from . import from_families, topic_grid

_SEED = 4_118_930


def _cycle(options, i):
    """Pick a phrasing deterministically so neighbouring items read differently."""
    return options[i % len(options)]


# ---------------------------------------------------------------------------
# Compounds used in numeric stoichiometry: (name, formula).
# ---------------------------------------------------------------------------
_COMPOUNDS = [
    ("water", "H2O"),
    ("carbon dioxide", "CO2"),
    ("sodium chloride", "NaCl"),
    ("glucose", "C6H12O6"),
    ("calcium carbonate", "CaCO3"),
    ("ammonia", "NH3"),
    ("methane", "CH4"),
    ("sodium hydroxide", "NaOH"),
    ("sulfuric acid", "H2SO4"),
    ("potassium nitrate", "KNO3"),
    ("magnesium oxide", "MgO"),
    ("ethanol", "C2H5OH"),
    ("copper(II) sulfate", "CuSO4"),
    ("sodium bicarbonate", "NaHCO3"),
]


def _mass_to_moles():
    rng = random.Random(_SEED + 1)
    forms = [
        "How many moles are in {m} g of {n} ({f})? Show the molar mass calculation.",
        "Convert {m} g of {n} ({f}) to moles, rounding to three significant figures.",
        "A sample of {n} ({f}) has a mass of {m} g. How many moles and how many molecules or formula units does it contain?",
    ]
    out = []
    for i, (n, f) in enumerate(_COMPOUNDS):
        m = rng.choice([5.0, 10.0, 12.5, 18.0, 25.0, 36.0, 50.0, 72.0, 100.0, 150.0])
        out.append(_cycle(forms, i).format(m=f"{m:g}", n=n, f=f))
    return out


def _moles_to_mass():
    rng = random.Random(_SEED + 2)
    forms = [
        "What is the mass of {k} mol of {n} ({f})?",
        "A recipe for an experiment calls for {k} mol of {n} ({f}). How many grams should you weigh out?",
    ]
    picks = rng.sample(_COMPOUNDS, 8)
    out = []
    for i, (n, f) in enumerate(picks):
        k = rng.choice(["0.250", "0.500", "1.50", "2.00", "0.0100", "3.25", "0.125"])
        out.append(_cycle(forms, i).format(k=k, n=n, f=f))
    return out


# ---------------------------------------------------------------------------
# Solutions: molarity and dilution.
# ---------------------------------------------------------------------------
_SOLUTES = [
    ("sodium chloride", "NaCl"),
    ("potassium chloride", "KCl"),
    ("glucose", "C6H12O6"),
    ("sodium hydroxide", "NaOH"),
    ("calcium chloride", "CaCl2"),
    ("potassium permanganate", "KMnO4"),
]


def _molarity():
    rng = random.Random(_SEED + 3)
    out = []
    for i, (n, f) in enumerate(_SOLUTES):
        g = rng.choice([2.0, 5.85, 10.0, 20.0, 29.2, 45.0])
        v = rng.choice([100, 250, 500, 750])
        if i % 2 == 0:
            out.append(f"{g:g} g of {n} ({f}) is dissolved in enough water to make {v} mL of solution. What is the molarity?")
        else:
            out.append(f"Calculate the molar concentration of a solution made by dissolving {g:g} g of {f} in water and topping it up to {v} mL. Explain each step.")
    return out


_DILUTIONS = [
    "You need 500 mL of 0.10 M HCl, and the stock bottle is 2.0 M. What volume of stock do you need, and how would you prepare it safely?",
    "25.0 mL of 6.0 M NaOH is diluted to a final volume of 300 mL. What is the new concentration?",
    "How much water must be added to 50 mL of 1.0 M sugar solution to make it 0.20 M?",
    "A lab technician dilutes 10.0 mL of 12 M hydrochloric acid to 1.00 L. What is the concentration of the diluted acid, and why should the acid be added to the water rather than the reverse?",
    "Explain the equation C1V1 = C2V2 and use it to find the concentration after 40 mL of 0.50 M copper(II) sulfate is diluted to 200 mL.",
]


# ---------------------------------------------------------------------------
# Reaction stoichiometry, limiting reagent, yield.
# ---------------------------------------------------------------------------
_STOICH = [
    "How many grams of carbon dioxide form when 16.0 g of methane burns completely? The equation is CH4 + 2O2 -> CO2 + 2H2O.",
    "In the reaction 2H2 + O2 -> 2H2O, how many grams of water can be made from 4.0 g of hydrogen gas and excess oxygen?",
    "How many grams of calcium oxide are produced when 50.0 g of calcium carbonate is heated and decomposes completely (CaCO3 -> CaO + CO2)?",
    "Iron is made in a blast furnace by Fe2O3 + 3CO -> 2Fe + 3CO2. What mass of iron can be obtained from 320 g of iron(III) oxide?",
    "How many liters of oxygen at STP are needed to burn 2.0 mol of propane? The balanced equation is C3H8 + 5O2 -> 3CO2 + 4H2O.",
    "In the Haber process, N2 + 3H2 -> 2NH3. How many moles of ammonia can be formed from 6 moles of hydrogen, assuming excess nitrogen?",
    "What mass of sodium chloride is formed when 20.0 g of sodium hydroxide reacts completely with hydrochloric acid?",
    "Zinc reacts with hydrochloric acid: Zn + 2HCl -> ZnCl2 + H2. What volume of hydrogen gas at STP is produced from 6.54 g of zinc?",
]

_LIMITING = [
    "10.0 g of hydrogen reacts with 64.0 g of oxygen to form water. Which reactant is limiting, and how much water forms?",
    "In the reaction 2Al + 3Cl2 -> 2AlCl3, 27.0 g of aluminum is mixed with 71.0 g of chlorine. Identify the limiting reagent and the mass of product.",
    "A student mixes 5.0 g of magnesium with 5.0 g of oxygen gas to make magnesium oxide. Which reactant runs out first? Show your working.",
    "Explain what a limiting reagent is using a sandwich-making analogy, then connect it to a real reaction.",
    "When 3.0 mol of nitrogen and 6.0 mol of hydrogen react to form ammonia, which gas is in excess and by how many moles?",
]

_YIELD = [
    "A reaction has a theoretical yield of 25.0 g but only 19.5 g of product is collected. What is the percent yield, and what could explain the loss?",
    "A student heats 10.0 g of calcium carbonate and collects 5.0 g of calcium oxide. Calculate the percent yield.",
    "Why is the actual yield of a chemical reaction almost always less than the theoretical yield? Give three reasons.",
    "An esterification reaction gives 8.8 g of ethyl acetate from a theoretical 13.2 g. Calculate the percent yield and suggest why esterifications often give low yields.",
]


# ---------------------------------------------------------------------------
# Empirical formula and percent composition.
# ---------------------------------------------------------------------------
_EMPIRICAL = [
    "A compound contains 40.0% carbon, 6.7% hydrogen and 53.3% oxygen by mass. Determine its empirical formula.",
    "A sample of an iron oxide is 69.9% iron and 30.1% oxygen by mass. What is its empirical formula?",
    "A hydrocarbon is 85.7% carbon and 14.3% hydrogen by mass, and its molar mass is about 56 g/mol. Find the empirical and molecular formulas.",
    "Analysis of a compound shows 52.2% carbon, 13.0% hydrogen and 34.8% oxygen. Work out its empirical formula step by step.",
    "A compound of nitrogen and oxygen contains 30.4% nitrogen. What is its empirical formula, and what molecule might it be if the molar mass is 92 g/mol?",
]

_PERCENT = [
    ("oxygen", "water (H2O)"),
    ("nitrogen", "ammonium nitrate (NH4NO3)"),
    ("carbon", "glucose (C6H12O6)"),
    ("calcium", "calcium carbonate (CaCO3)"),
    ("iron", "iron(III) oxide (Fe2O3)"),
    ("water", "copper(II) sulfate pentahydrate (CuSO4·5H2O)"),
]


def _percent():
    forms = [
        "Calculate the percent by mass of {e} in {c}.",
        "What percentage of the mass of {c} is {e}? Show how you got the answer.",
    ]
    return [_cycle(forms, i).format(e=e, c=c) for i, (e, c) in enumerate(_PERCENT)]


# ---------------------------------------------------------------------------
# Balancing equations.
# ---------------------------------------------------------------------------
_SKELETONS = [
    "H2 + O2 -> H2O",
    "Fe + O2 -> Fe2O3",
    "C3H8 + O2 -> CO2 + H2O",
    "Al + HCl -> AlCl3 + H2",
    "N2 + H2 -> NH3",
    "KClO3 -> KCl + O2",
    "C2H6 + O2 -> CO2 + H2O",
    "Na + H2O -> NaOH + H2",
    "Al + O2 -> Al2O3",
    "P4 + O2 -> P4O10",
    "C6H12O6 + O2 -> CO2 + H2O",
    "Pb(NO3)2 + KI -> PbI2 + KNO3",
    "NH3 + O2 -> NO + H2O",
    "H2O2 -> H2O + O2",
    "C4H10 + O2 -> CO2 + H2O",
    "Cu + AgNO3 -> Cu(NO3)2 + Ag",
    "Na2CO3 + HCl -> NaCl + H2O + CO2",
    "Ca(OH)2 + H3PO4 -> Ca3(PO4)2 + H2O",
]

_BALANCE_FORMS = [
    "Balance this chemical equation: {e}",
    "Balance the equation {e} and explain the order in which you balanced the elements.",
    "Write the balanced form of {e}, then check that atoms of every element are conserved.",
]


def _balancing():
    return [_cycle(_BALANCE_FORMS, i).format(e=e) for i, e in enumerate(_SKELETONS)]


# ---------------------------------------------------------------------------
# Reaction types and predicting products.
# ---------------------------------------------------------------------------
_CLASSIFY = [
    "2Mg + O2 -> 2MgO",
    "2H2O -> 2H2 + O2",
    "Zn + CuSO4 -> ZnSO4 + Cu",
    "AgNO3 + NaCl -> AgCl + NaNO3",
    "CH4 + 2O2 -> CO2 + 2H2O",
    "HNO3 + KOH -> KNO3 + H2O",
    "CaCO3 -> CaO + CO2",
    "2Na + Cl2 -> 2NaCl",
    "BaCl2 + Na2SO4 -> BaSO4 + 2NaCl",
    "Cl2 + 2KBr -> 2KCl + Br2",
]


def _classify():
    forms = [
        "Classify the reaction {e} as synthesis, decomposition, single replacement, double replacement, combustion or neutralization, and explain your choice.",
        "What type of reaction is {e}? Justify your answer briefly.",
    ]
    return [_cycle(forms, i).format(e=e) for i, e in enumerate(_CLASSIFY)]


_PREDICT = [
    "Predict the products when hydrochloric acid reacts with sodium hydroxide, and write the balanced equation.",
    "What happens when a piece of magnesium ribbon is dropped into dilute hydrochloric acid? Give the products and a balanced equation.",
    "Predict the products of the complete combustion of ethanol, and balance the equation.",
    "Will a precipitate form when solutions of lead(II) nitrate and potassium iodide are mixed? If so, name it and give its color.",
    "Predict what happens when an iron nail is placed in copper(II) sulfate solution, and explain it using the reactivity series.",
    "What products form when sodium bicarbonate reacts with vinegar (acetic acid)? Write the equation.",
    "Predict whether copper metal will react with dilute hydrochloric acid, and explain why or why not.",
    "What gas is produced when calcium carbonate reacts with hydrochloric acid, and how could you test for it?",
]


# ---------------------------------------------------------------------------
# Acids, bases and pH.
# ---------------------------------------------------------------------------
_PH_STRONG = [
    ("HCl", "0.010"), ("HNO3", "0.0010"), ("HCl", "0.050"), ("NaOH", "0.0010"),
    ("KOH", "0.020"), ("NaOH", "0.10"), ("HBr", "0.0025"), ("Ca(OH)2", "0.0050"),
]


def _ph_strong():
    forms = [
        "What is the pH of a {c} M {s} solution? Show your calculation.",
        "Calculate the pH and pOH of {c} M {s} at 25 °C.",
        "A solution of {s} has a concentration of {c} M. Find [H+], then the pH, and say whether the solution is acidic or basic.",
    ]
    return [_cycle(forms, i).format(c=c, s=s) for i, (s, c) in enumerate(_PH_STRONG)]


_PH_OTHER = [
    "What is the pH of 0.10 M acetic acid? Its Ka is 1.8 x 10^-5. Explain any approximation you make.",
    "A solution has a pH of 4. How many times more acidic is it than a solution with a pH of 6?",
    "The pH of a solution is 9.5. What are the hydrogen ion and hydroxide ion concentrations?",
    "10 mL of 1.0 M HCl is diluted to 1.0 L with water. What is the pH of the new solution?",
    "Calculate the pH of a buffer containing 0.20 M acetic acid and 0.20 M sodium acetate, given pKa = 4.76. Why is the answer so simple?",
    "Ammonia is a weak base with Kb = 1.8 x 10^-5. Estimate the pH of a 0.10 M ammonia solution.",
    "Why does the pH of pure water decrease slightly when it is heated, even though it stays neutral?",
]

_TITRATION = [
    "25.0 mL of NaOH solution is exactly neutralized by 20.0 mL of 0.100 M HCl. What is the concentration of the NaOH?",
    "How many mL of 0.250 M NaOH are needed to neutralize 30.0 mL of 0.150 M H2SO4? Remember that sulfuric acid has two acidic hydrogens.",
    "Describe how to carry out an acid-base titration with a burette and phenolphthalein, step by step.",
    "Sketch in words the shape of a titration curve when a strong base is added to a weak acid, and explain where the equivalence point lies.",
    "A vinegar sample of 10.0 mL needs 16.0 mL of 0.500 M NaOH to reach the endpoint. What is the molarity of acetic acid in the vinegar?",
]

_CONJUGATE = [
    "NH3 + H2O ⇌ NH4+ + OH-",
    "HCl + H2O -> H3O+ + Cl-",
    "HCO3- + H2O ⇌ CO3^2- + H3O+",
    "CH3COOH + NH3 ⇌ CH3COO- + NH4+",
    "HSO4- + OH- ⇌ SO4^2- + H2O",
]


def _conjugate():
    forms = [
        "Identify the Brønsted-Lowry acid, base, conjugate acid and conjugate base in: {r}",
        "In the reaction {r}, which species donates a proton and which accepts one? Name the conjugate pairs.",
    ]
    return [_cycle(forms, i).format(r=r) for i, r in enumerate(_CONJUGATE)]


# ---------------------------------------------------------------------------
# Periodic trends.
# ---------------------------------------------------------------------------
_TREND_PAIRS = [
    ("larger atomic radius", "Na", "Cl"),
    ("larger atomic radius", "K", "Na"),
    ("higher first ionization energy", "Mg", "Al"),
    ("higher first ionization energy", "N", "O"),
    ("higher electronegativity", "F", "I"),
    ("higher electronegativity", "O", "S"),
    ("larger radius", "Na+", "Na"),
    ("larger radius", "Cl-", "Cl"),
    ("greater metallic character", "Cs", "Li"),
    ("higher first ionization energy", "He", "Ne"),
    ("larger radius", "O2-", "F-"),
    ("greater reactivity as a metal", "K", "Ca"),
    ("greater reactivity as a nonmetal", "F2", "Cl2"),
]


def _trend_pairs():
    forms = [
        "Which has the {p}, {a} or {b}? Explain using atomic structure.",
        "Between {a} and {b}, which has the {p}? Give the reason in two or three sentences.",
        "Predict which of {a} and {b} has the {p}, and explain the periodic trend involved.",
    ]
    return [_cycle(forms, i).format(p=p, a=a, b=b) for i, (p, a, b) in enumerate(_TREND_PAIRS)]


_TREND_WHY = [
    "Why does atomic radius decrease from left to right across a period?",
    "Explain why first ionization energy generally increases across a period but decreases down a group.",
    "Why are the noble gases so unreactive? Relate your answer to their electron configurations.",
    "Why do alkali metals become more reactive as you go down group 1, while halogens become less reactive down group 17?",
    "What is effective nuclear charge, and how does it help explain periodic trends?",
    "Why is there a large jump between the second and third ionization energies of magnesium?",
]


# ---------------------------------------------------------------------------
# Electron configurations.
# ---------------------------------------------------------------------------
_ELEMENTS = [
    ("carbon", "Use it to explain why carbon usually forms four bonds."),
    ("oxygen", "How many unpaired electrons does it have?"),
    ("sodium", "Why does sodium lose one electron so easily?"),
    ("chlorine", "What ion does it form, and which noble gas does that ion resemble?"),
    ("calcium", "Which electrons are removed when it forms Ca2+?"),
    ("iron", "Which electrons are lost first when iron forms Fe2+ and Fe3+?"),
    ("bromine", "Which block and group of the periodic table is it in?"),
    ("phosphorus", "How many unpaired electrons are in its 3p subshell?"),
    ("potassium", "Why does the 4s orbital fill before 3d?"),
    ("argon", "Why does this configuration make argon so unreactive?"),
    ("copper", "Which ions does copper commonly form, and which electrons does it lose?"),
    ("sulfur", "What ion does sulfur most commonly form?"),
]


def _configs():
    forms = [
        "Write the full electron configuration of {e}. {f}",
        "What is the electron configuration of {e}, in both full and noble-gas shorthand form? {f}",
        "Give the electron configuration of {e}. {f}",
    ]
    out = [_cycle(forms, i).format(e=e, f=f) for i, (e, f) in enumerate(_ELEMENTS)]
    out.append("Chromium and copper have unusual electron configurations. Write them and explain why they differ from the expected filling order.")
    return out


# ---------------------------------------------------------------------------
# Bonding, VSEPR and intermolecular forces.
# ---------------------------------------------------------------------------
_BOND_PAIRS = [
    ("sodium", "chlorine"), ("carbon", "hydrogen"), ("oxygen", "hydrogen"),
    ("magnesium", "oxygen"), ("nitrogen", "hydrogen"), ("carbon", "oxygen"),
    ("potassium", "bromine"), ("hydrogen", "fluorine"),
]


def _bond_types():
    forms = [
        "What type of bond forms between {a} and {b}: ionic, polar covalent or nonpolar covalent? Use electronegativity to explain.",
        "Predict the bonding between {a} and {b} atoms and describe what happens to their electrons.",
    ]
    return [_cycle(forms, i).format(a=a, b=b) for i, (a, b) in enumerate(_BOND_PAIRS)]


_MOLECULES = [
    ("CH4", "Why is the bond angle about 109.5° rather than 90°?"),
    ("NH3", "Why is its bond angle smaller than in methane?"),
    ("H2O", "How do the two lone pairs affect the bond angle?"),
    ("CO2", "Why is the molecule nonpolar even though each C=O bond is polar?"),
    ("BF3", "Why is boron an exception to the octet rule here?"),
    ("SF6", "How can sulfur hold more than eight electrons in its valence shell?"),
    ("PCl5", "Which different bond angles are present?"),
    ("XeF4", "Where do the lone pairs sit, and why?"),
    ("SO2", "Is the molecule polar?"),
    ("CCl4", "Why is it nonpolar despite having polar bonds?"),
    ("H2S", "Compare its bond angle with that of water."),
    ("ClF3", "Why is the shape T-shaped rather than trigonal planar?"),
]


def _vsepr():
    forms = [
        "Use VSEPR theory to predict the shape of {m}. {f}",
        "What is the molecular geometry of {m}? Give the number of bonding pairs and lone pairs on the central atom. {f}",
        "Describe the Lewis structure of {m}. {f}",
    ]
    return [_cycle(forms, i).format(m=m, f=f) for i, (m, f) in enumerate(_MOLECULES)]


_IMF_PAIRS = [
    ("water", "hydrogen sulfide"),
    ("ethanol", "dimethyl ether"),
    ("pentane", "neopentane (2,2-dimethylpropane)"),
    ("iodine (I2)", "chlorine (Cl2)"),
    ("hydrogen fluoride", "hydrogen chloride"),
    ("butan-1-ol", "butane"),
    ("sodium chloride", "hexane"),
]


def _imf():
    forms = [
        "Which has the higher boiling point, {a} or {b}? Explain in terms of the forces between their particles.",
        "Compare the intermolecular forces in {a} and {b}, and predict which one boils at the higher temperature.",
    ]
    return [_cycle(forms, i).format(a=a, b=b) for i, (a, b) in enumerate(_IMF_PAIRS)]


# ---------------------------------------------------------------------------
# Organic chemistry.
# ---------------------------------------------------------------------------
_ORGANIC = [
    ("ethanol", "CH3CH2OH"),
    ("acetone", "CH3COCH3"),
    ("acetic acid", "CH3COOH"),
    ("ethyl acetate", "CH3COOCH2CH3"),
    ("methylamine", "CH3NH2"),
    ("diethyl ether", "CH3CH2OCH2CH3"),
    ("formaldehyde", "HCHO"),
    ("acetamide", "CH3CONH2"),
    ("chloroethane", "CH3CH2Cl"),
    ("propene", "CH3CH=CH2"),
    ("acetonitrile", "CH3CN"),
]


def _functional_groups():
    forms = [
        "Identify the functional group in {n} ({f}) and name one property it gives the molecule.",
        "What functional group is present in {f}, and what family of organic compounds does {n} belong to?",
    ]
    return [_cycle(forms, i).format(n=n, f=f) for i, (n, f) in enumerate(_ORGANIC)]


_NAMING = [
    ("CH3CH2CH2OH", "Name one structural isomer of it as well."),
    ("CH3CH(CH3)CH3", "How is it related to butane?"),
    ("CH3CH2COOH", "What would you expect its solution in water to do to litmus paper?"),
    ("CH3CH2CH2CH2CH3", "Is it a gas or a liquid at room temperature?"),
    ("CH2=CHCH2CH3", "Why does the number in the name matter?"),
    ("CH3CH2CHO", "Which functional group does it contain?"),
    ("CH3COCH2CH3", "Why is no position number needed in its name?"),
    ("HC≡CCH3", "What type of carbon-carbon bond does it contain?"),
]


def _naming():
    forms = [
        "Give the IUPAC name of {s}. {f}",
        "Name the compound {s} using IUPAC rules. {f}",
    ]
    return [_cycle(forms, i).format(s=s, f=f) for i, (s, f) in enumerate(_NAMING)]


_ORGANIC_RXNS = [
    "What happens when bromine water is added to ethene? Name the reaction type and explain why the color disappears.",
    "Describe how an ester is made from a carboxylic acid and an alcohol. Use ethanol and acetic acid as the example.",
    "What is the difference between an addition reaction and a substitution reaction in organic chemistry? Give one example of each.",
    "Explain how polyethylene is formed from ethene monomers.",
    "What products form when ethanol is oxidized with acidified potassium dichromate, and how does the color of the solution change?",
    "Explain why alkanes are fairly unreactive while alkenes react readily with halogens.",
    "How does soap form when a fat is heated with sodium hydroxide? Name the process.",
    "What are isomers? Draw or describe the two structural isomers of butane.",
    "Explain what cracking is in the oil industry and why it is useful.",
]


# ---------------------------------------------------------------------------
# Thermochemistry.
# ---------------------------------------------------------------------------
def _heat():
    rng = random.Random(_SEED + 4)
    subs = [
        ("water", "4.18"), ("aluminum", "0.897"), ("copper", "0.385"),
        ("ethanol", "2.44"), ("iron", "0.449"), ("water", "4.18"),
    ]
    out = []
    for i, (s, c) in enumerate(subs):
        m = rng.choice([50, 100, 150, 250, 500])
        t1 = rng.choice([15, 20, 22, 25])
        t2 = t1 + rng.choice([10, 25, 40, 55])
        if i % 3 == 0:
            out.append(f"How much heat is needed to warm {m} g of {s} from {t1} °C to {t2} °C? The specific heat capacity is {c} J/(g·°C).")
        elif i % 3 == 1:
            out.append(f"A {m} g block of {s} (c = {c} J/(g·°C)) cools from {t2} °C to {t1} °C. How much heat does it release? Show q = mcΔT.")
        else:
            out.append(f"Calculate the energy required to raise the temperature of {m} g of {s} by {t2 - t1} °C, given a specific heat of {c} J/(g·°C). Give the answer in kJ.")
    return out


_THERMO = [
    "Estimate ΔH for H2 + Cl2 -> 2HCl using bond energies: H-H 436 kJ/mol, Cl-Cl 243 kJ/mol, H-Cl 431 kJ/mol. Is the reaction exothermic or endothermic?",
    "Explain Hess's law and why it lets chemists calculate enthalpy changes that are hard to measure directly.",
    "Is dissolving ammonium nitrate in water exothermic or endothermic? Explain how instant cold packs use this.",
    "Why does burning methane release energy even though energy is needed to break its bonds?",
    "A student burns 1.0 g of a nut under a can of 100 g of water and the water warms by 12 °C. Estimate the energy released per gram of nut and give two reasons the true value is higher.",
    "In a coffee-cup calorimeter, 50.0 mL of 1.0 M HCl and 50.0 mL of 1.0 M NaOH are mixed and the temperature rises by 6.8 °C. Estimate the enthalpy of neutralization per mole of water formed.",
    "Explain the difference between enthalpy and entropy, and give an example of a process driven mainly by an increase in entropy.",
    "Why does ice melt spontaneously at room temperature but not at -10 °C? Use ΔG = ΔH - TΔS in your explanation.",
    "Describe what an energy profile diagram shows for an exothermic reaction, and mark where the activation energy is.",
]


# ---------------------------------------------------------------------------
# Gas laws.
# ---------------------------------------------------------------------------
def _gas_laws():
    rng = random.Random(_SEED + 5)
    out = []
    for _ in range(3):
        v1 = rng.choice([2.0, 4.0, 5.0, 10.0, 12.0])
        p1 = rng.choice([100, 101, 120, 150])
        p2 = p1 * rng.choice([2, 3, 4]) if rng.random() < 0.5 else p1 // 2
        out.append(f"A gas occupies {v1:g} L at {p1} kPa. What volume will it occupy at {p2} kPa if the temperature stays constant? Name the law you use.")
    for _ in range(3):
        v1 = rng.choice([1.5, 2.0, 3.0, 6.0])
        t1 = rng.choice([0, 20, 27, 50])
        t2 = t1 + rng.choice([30, 60, 100, 150])
        out.append(f"A balloon holds {v1:g} L of air at {t1} °C. Assuming constant pressure, what is its volume at {t2} °C? Remember to convert to kelvin.")
    return out


_GAS_MISC = [
    "What volume does 2.0 mol of an ideal gas occupy at STP (0 °C and 1 atm)?",
    "How many moles of gas are in a 10.0 L tank at 300 K and 2.50 atm? Use R = 0.0821 L·atm/(mol·K).",
    "A sealed can of gas at 25 °C and 1.2 atm is heated to 125 °C. What is the new pressure, and why are aerosol cans labelled 'do not heat'?",
    "A gas sample occupies 500 mL at 27 °C and 1.00 atm. What is its volume at 127 °C and 2.00 atm?",
    "A mixture contains 2.0 mol of nitrogen and 1.0 mol of oxygen at a total pressure of 90 kPa. What is the partial pressure of each gas?",
    "Use Graham's law to compare the effusion rates of helium and oxygen. Which escapes faster from a balloon, and by roughly what factor?",
    "Explain the kinetic molecular theory and use it to explain why gas pressure rises when temperature increases at constant volume.",
    "Why do real gases deviate from ideal behavior at high pressure and low temperature?",
    "What is the density of carbon dioxide gas at STP? Show how you used the molar volume.",
    "Why does a sealed bag of chips puff up when you drive up a mountain?",
]


# ---------------------------------------------------------------------------
# Equilibrium, kinetics, electrochemistry, nuclear.
# ---------------------------------------------------------------------------
_EQUILIBRIUM = [
    ("N2(g) + 3H2(g) ⇌ 2NH3(g), which is exothermic", "the pressure is increased"),
    ("N2(g) + 3H2(g) ⇌ 2NH3(g), which is exothermic", "the temperature is raised"),
    ("2NO2(g) ⇌ N2O4(g), where NO2 is brown and N2O4 is colorless", "the flask is placed in ice water, given that the forward reaction is exothermic"),
    ("Fe^3+(aq) + SCN-(aq) ⇌ FeSCN^2+(aq)", "more Fe^3+ ions are added"),
    ("CaCO3(s) ⇌ CaO(s) + CO2(g)", "carbon dioxide is removed from the container"),
    ("H2(g) + I2(g) ⇌ 2HI(g)", "the pressure is doubled"),
    ("CH3COOH + C2H5OH ⇌ CH3COOC2H5 + H2O", "water is removed as it forms"),
]


def _equilibrium():
    forms = [
        "For the equilibrium {r}, predict what happens to the position of equilibrium when {c}. Use Le Chatelier's principle.",
        "Consider {r}. How does the system respond if {c}? Explain your reasoning.",
    ]
    out = [_cycle(forms, i).format(r=r, c=c) for i, (r, c) in enumerate(_EQUILIBRIUM)]
    out.append("Write the equilibrium constant expression for 2SO2(g) + O2(g) ⇌ 2SO3(g), and explain what a very large K value would tell you.")
    out.append("Does a catalyst change the position of an equilibrium? Explain what it does change.")
    return out


_KINETICS = [
    "List four factors that affect the rate of a chemical reaction and explain each using collision theory.",
    "Why does powdered sugar burn far faster than a sugar cube?",
    "Why does food spoil more slowly in a refrigerator? Use the idea of activation energy.",
    "Explain how a catalytic converter in a car speeds up the removal of pollutants.",
    "The half-life of a first-order reaction is 30 minutes. What fraction of the reactant remains after 2 hours?",
    "A reaction's rate doubles when the concentration of reactant A doubles. What is the order of the reaction with respect to A, and how would the rate change if A tripled?",
]

_ELECTRO = [
    "Assign oxidation numbers to every atom in KMnO4.",
    "In the reaction Zn + Cu^2+ -> Zn^2+ + Cu, which species is oxidized, which is reduced, and which is the reducing agent?",
    "Describe how a zinc-copper galvanic cell produces electricity. Which electrode is the anode?",
    "Why does iron rust faster near the sea? Explain the electrochemistry involved.",
    "Explain how electrolysis of molten sodium chloride produces sodium and chlorine, and write the half-equations.",
    "What is the oxidation number of sulfur in H2SO4, in SO2 and in H2S? Show your method.",
    "How does galvanizing protect steel from corrosion, even when the zinc coating is scratched?",
    "Use standard electrode potentials of Cu^2+/Cu (+0.34 V) and Zn^2+/Zn (-0.76 V) to calculate the standard cell potential of a Daniell cell.",
]

_NUCLEAR = [
    "Iodine-131 has a half-life of about 8 days. How much of a 40 mg sample remains after 24 days?",
    "Carbon-14 has a half-life of about 5,730 years. A bone contains one quarter of the carbon-14 found in living tissue. Roughly how old is it?",
    "Compare alpha, beta and gamma radiation in terms of what they are, their penetrating power and how they can be shielded.",
    "Write the nuclear equation for the alpha decay of uranium-238.",
    "What is the difference between nuclear fission and nuclear fusion? Give an example of where each happens.",
]


# ---------------------------------------------------------------------------
# Lab safety.
# ---------------------------------------------------------------------------
_SAFETY = [
    "Why should you always add acid to water, and never water to concentrated acid, when diluting?",
    "A classmate spills a small amount of dilute hydrochloric acid on the bench. What are the correct steps to deal with it?",
    "When should you use a fume hood in a school or university lab? Give three examples.",
    "What is a safety data sheet (SDS), and what kinds of information does it contain?",
    "Describe the safe way to heat a liquid in a test tube over a Bunsen burner.",
    "How should you smell a chemical in the lab, and why?",
    "What should you do immediately if a chemical splashes into your eye in the lab?",
    "Why must flammable solvents like ethanol be kept away from open flames, even when the bottle is closed?",
    "What do the hazard pictograms for 'corrosive', 'flammable' and 'toxic' look like, and what does each warn you about?",
    "A student wants to pour leftover chemicals down the sink to save time. Explain why this can be a problem and what should be done instead.",
    "Why are open-toed shoes and loose hair dangerous in a chemistry lab?",
    "Which type of fire extinguisher should not be used on an electrical fire, and why?",
    "Why should you never return unused chemicals to their stock bottle?",
    "Why is it dangerous to mix household bleach with cleaners containing ammonia or acids? Explain in general chemical terms.",
]


# ---------------------------------------------------------------------------
# Concepts: definitions, comparisons, explain-to-a-child, what-if, everyday.
# ---------------------------------------------------------------------------
_TERMS = [
    ("mole", "a mole"), ("isotope", "an isotope"), ("catalyst", "a catalyst"),
    ("electronegativity", "electronegativity"), ("oxidation", "oxidation"),
    ("buffer solution", "a buffer solution"), ("activation energy", "activation energy"),
    ("allotrope", "an allotrope"), ("molarity", "molarity"),
    ("covalent bond", "a covalent bond"), ("polymer", "a polymer"),
    ("enthalpy", "enthalpy"), ("ion", "an ion"), ("valence electron", "a valence electron"),
    ("solubility", "solubility"), ("precipitate", "a precipitate"),
    ("half-life", "half-life"), ("amphoteric", "an amphoteric substance"),
]

_TERM_FORMS = [
    "Define the term '{t}' in chemistry and give an example.",
    "What is meant by {a}? Explain with a simple example.",
    "Write a two-sentence textbook definition of {a}, followed by a common everyday or lab example.",
]


def _definitions():
    return [_cycle(_TERM_FORMS, i).format(t=t, a=a) for i, (t, a) in enumerate(_TERMS)]


_COMPARE = [
    ("ionic bonds", "covalent bonds"),
    ("a strong acid", "a concentrated acid"),
    ("physical changes", "chemical changes"),
    ("elements", "compounds"),
    ("mixtures", "pure substances"),
    ("exothermic reactions", "endothermic reactions"),
    ("oxidation", "reduction"),
    ("isotopes", "ions"),
    ("molarity", "molality"),
    ("empirical formulas", "molecular formulas"),
    ("alkanes", "alkenes"),
    ("galvanic cells", "electrolytic cells"),
    ("intramolecular forces", "intermolecular forces"),
    ("accuracy", "precision in lab measurements"),
]

_COMPARE_FORMS = [
    "Compare and contrast {a} and {b}.",
    "What is the difference between {a} and {b}? Give an example of each.",
    "Summarize the differences between {a} and {b} in a short bullet-point list.",
    "Students often confuse {a} and {b}. Clear up the confusion in four sentences.",
]


def _compare():
    return [_cycle(_COMPARE_FORMS, i).format(a=a, b=b) for i, (a, b) in enumerate(_COMPARE)]


_KIDS = [
    "why salt disappears when you stir it into water",
    "what atoms are",
    "why iron objects rust",
    "why baking soda and vinegar fizz",
    "how fireworks get their colors",
    "why ice floats on water",
    "what makes something an acid",
    "why a cake rises in the oven",
    "why fire needs air to keep burning",
    "what the periodic table is for",
]


def _kids():
    forms = [
        "Explain to a 12-year-old {t}.",
        "A curious 12-year-old asks you {t}. How would you explain it, using an everyday comparison?",
    ]
    return [_cycle(forms, i).format(t=t) for i, t in enumerate(_KIDS)]


_WHAT_IF = [
    "What would happen if you dropped a small piece of sodium into a bowl of water? Explain the chemistry, and why this is only done as a teacher demonstration.",
    "What would happen to the boiling point of water if you added a lot of salt? Explain why.",
    "If water molecules were linear instead of bent, how might the properties of water be different?",
    "What would happen to the equilibrium yield of ammonia if a factory ran the Haber process at a much lower pressure?",
    "What would happen to the volume of a balloon if you put it in a freezer? Explain with the gas laws.",
    "If hydrogen bonds did not exist, what would happen to the boiling point of water?",
    "What would happen to the rate of a reaction if you doubled the temperature from 20 °C to 40 °C? Explain qualitatively.",
    "What would happen if you forgot to include a salt bridge in a galvanic cell?",
    "Predict what would happen if you mixed solutions of silver nitrate and sodium chloride.",
    "What would happen to the pH of a buffer if you added a few drops of strong acid, compared with adding the same acid to pure water?",
]

_EVERYDAY = [
    "Why does spreading salt on icy roads help melt the ice?",
    "Why do bubbles form when you open a bottle of soda, and why does warm soda go flat faster?",
    "How does soap remove grease from your hands? Explain using polar and nonpolar molecules.",
    "Why does a cut apple turn brown, and how does lemon juice slow this down?",
    "Why do antacid tablets relieve heartburn? Name the type of reaction involved.",
    "How does a hand warmer pack that contains iron powder produce heat?",
    "Why do silver spoons tarnish over time, and how can the tarnish be removed chemically?",
    "Why does a pressure cooker cook food faster than an ordinary pot?",
    "How does baking powder make bread or muffins rise?",
    "Why do oil and vinegar separate in a salad dressing, and what does an emulsifier like egg yolk do?",
    "Why is carbon monoxide from a faulty heater dangerous, and how does a detector help?",
]


# ---------------------------------------------------------------------------
# Multiple choice, quiz, true/false.
# ---------------------------------------------------------------------------
_MCQ = [
    ("Which element has the highest electronegativity?", ["oxygen", "chlorine", "fluorine", "nitrogen"]),
    ("What is the pH of a neutral solution at 25 °C?", ["0", "7", "10", "14"]),
    ("Which of these is a noble gas?", ["nitrogen", "argon", "chlorine", "hydrogen"]),
    ("What is the molar mass of water, to the nearest whole number?", ["16 g/mol", "17 g/mol", "18 g/mol", "20 g/mol"]),
    ("Which type of bond holds the atoms of a sodium chloride crystal together?", ["metallic", "ionic", "hydrogen", "nonpolar covalent"]),
    ("What is the shape of a carbon dioxide molecule?", ["bent", "trigonal planar", "linear", "tetrahedral"]),
    ("Which functional group is present in all carboxylic acids?", ["-OH only", "-COOH", "-CHO", "-NH2"]),
    ("When the temperature of a gas increases at constant volume, its pressure:", ["decreases", "stays the same", "increases", "becomes zero"]),
    ("Which of these solutions is the most acidic?", ["pH 2", "pH 5", "pH 7", "pH 12"]),
    ("How many valence electrons does a nitrogen atom have?", ["3", "5", "7", "2"]),
    ("In the reaction 2H2 + O2 -> 2H2O, how many moles of water form from 3 moles of O2 and excess hydrogen?", ["3", "4", "6", "2"]),
    ("Which particle has a negative charge?", ["proton", "neutron", "electron", "alpha particle"]),
    ("Which of these is a physical change?", ["burning paper", "rusting iron", "melting butter", "baking bread"]),
    ("What is the correct formula for aluminum oxide?", ["AlO", "Al2O3", "AlO3", "Al3O2"]),
]

_MCQ_LEADS = [
    "Answer the multiple-choice question and explain your choice.",
    "Pick the correct option, then say briefly why each other option is wrong.",
    "Multiple choice (one correct answer, with justification):",
]


def _mcq():
    out = []
    for i, (q, opts) in enumerate(_MCQ):
        letters = " ".join(f"{l}) {o}" for l, o in zip("ABCD", opts))
        out.append(f"{_cycle(_MCQ_LEADS, i)} {q} {letters}")
    return out


_QUIZ = [
    "What is the chemical symbol for potassium?",
    "What is Avogadro's number, approximately?",
    "What is the most abundant gas in Earth's atmosphere?",
    "How many protons are in a carbon-12 nucleus?",
    "What is the common name for dihydrogen monoxide?",
    "Which group of the periodic table contains the halogens?",
    "What is the charge on a sulfide ion?",
    "What gas turns limewater cloudy?",
    "What is the chemical formula of table sugar?",
    "What color does litmus paper turn in a base?",
    "Which metal is liquid at room temperature?",
    "What is the name of the compound with formula Na2SO4?",
    "What is the volume of one mole of an ideal gas at STP, in liters?",
    "What is the name of the bond between two amino acids?",
]


def _quiz():
    forms = [
        "Quick quiz: {q}",
        "Short answer, with one sentence of explanation: {q}",
        "Chemistry quiz question: {q} Add a related fact.",
    ]
    return [_cycle(forms, i).format(q=q) for i, q in enumerate(_QUIZ)]


_TRUE_FALSE = [
    "All acids contain oxygen.",
    "A catalyst is used up during the reaction it speeds up.",
    "Isotopes of the same element have the same chemical properties.",
    "Diamond and graphite are both made only of carbon.",
    "Dissolving sugar in water is a chemical change.",
    "The mass of the products of a reaction in a sealed container equals the mass of the reactants.",
    "A higher pH means a higher concentration of hydrogen ions.",
    "Metals tend to lose electrons when they form ions.",
    "Noble gases never form compounds.",
    "Boiling water breaks the covalent bonds inside water molecules.",
]


def _true_false():
    forms = [
        "True or false: {s} Explain your answer.",
        "Is the following statement true or false? \"{s}\" Give a short justification.",
    ]
    return [_cycle(forms, i).format(s=s) for i, s in enumerate(_TRUE_FALSE)]


# ---------------------------------------------------------------------------
# Experiments and measurement skills.
# ---------------------------------------------------------------------------
_EXPERIMENTS = [
    "Design an experiment to find how temperature affects the rate at which magnesium reacts with hydrochloric acid. Name the variables and the safety precautions.",
    "How could you determine the concentration of an unknown HCl solution in the lab? Outline the method.",
    "Plan an experiment to compare how well three different antacid tablets neutralize acid.",
    "Describe how you would separate a mixture of sand, salt and iron filings.",
    "How could you use paper chromatography to find out whether a black marker ink is a mixture of dyes?",
    "Design an experiment to show that the mass is conserved when vinegar reacts with baking soda. What must you do about the gas produced?",
    "Describe how to make pure, dry crystals of copper(II) sulfate from copper(II) oxide and dilute sulfuric acid.",
    "How would you test whether a white powder is sodium chloride or sodium carbonate, using simple lab tests?",
    "Plan an investigation into whether the surface area of marble chips affects how fast they react with acid.",
    "How can a flame test be used to identify metal ions? Name the colors for sodium, potassium, lithium and copper.",
]

_MEASUREMENT = [
    "How many significant figures are in 0.004050? Explain the rules you used.",
    "Convert 2.5 atm to kilopascals and to mmHg, showing the conversion factors.",
    "A student measures the density of aluminum three times: 2.68, 2.71 and 2.69 g/cm³. The accepted value is 2.70 g/cm³. Comment on the accuracy and precision.",
    "Convert 350 mL of a 0.20 M solution into the number of moles of solute, and express the volume in cubic decimeters.",
    "Why should you read a burette at eye level, and what is parallax error?",
    "Round 6.0221 x 10^23 to three significant figures and explain how rounding affects a calculated answer.",
]


# ---------------------------------------------------------------------------
# Solubility and precipitation.
# ---------------------------------------------------------------------------
_SOLUBILITY = [
    "Is silver chloride soluble in water? Use the solubility rules to explain, and say how this is used to test for chloride ions.",
    "Write the net ionic equation for the precipitation of barium sulfate from barium chloride and sodium sulfate solutions.",
    "Why does sugar dissolve faster in hot tea than in iced tea?",
    "Explain why oil does not dissolve in water, using the rule 'like dissolves like'.",
    "Why does the solubility of oxygen in water decrease as the water warms, and what does this mean for fish in summer?",
    "What is a saturated solution, and how could you show that a solution is saturated?",
]


# ---------------------------------------------------------------------------
# Assemble.
# ---------------------------------------------------------------------------
# A templated family (a function) is one group; every prompt of a standalone list is its own group.
_FAMILIES = {
    "mass-to-moles": _mass_to_moles,
    "moles-to-mass": _moles_to_mass,
    "molarity": _molarity,
    "dilutions": _DILUTIONS,
    "stoich": _STOICH,
    "limiting": _LIMITING,
    "yield": _YIELD,
    "empirical": _EMPIRICAL,
    "percent": _percent,
    "balancing": _balancing,
    "classify": _classify,
    "predict": _PREDICT,
    "ph-strong": _ph_strong,
    "ph-other": _PH_OTHER,
    "titration": _TITRATION,
    "conjugate": _conjugate,
    "trend-pairs": _trend_pairs,
    "trend-why": _TREND_WHY,
    "configs": _configs,
    "bond-types": _bond_types,
    "vsepr": _vsepr,
    "imf": _imf,
    "functional-groups": _functional_groups,
    "naming": _naming,
    "organic-rxns": _ORGANIC_RXNS,
    "heat": _heat,
    "thermo": _THERMO,
    "gas-laws": _gas_laws,
    "gas-misc": _GAS_MISC,
    "equilibrium": _equilibrium,
    "kinetics": _KINETICS,
    "electro": _ELECTRO,
    "nuclear": _NUCLEAR,
    "safety": _SAFETY,
    "definitions": _definitions,
    "compare": _compare,
    "kids": _kids,
    "what-if": _WHAT_IF,
    "everyday": _EVERYDAY,
    "mcq": _mcq,
    "quiz": _quiz,
    "true-false": _true_false,
    "experiments": _EXPERIMENTS,
    "measurement": _MEASUREMENT,
    "solubility": _SOLUBILITY,
}


def _original() -> list[tuple[str, str]]:
    """The first 405 prompts, unchanged (a templated family's prompts share a group, e.g. "molarity")."""
    return from_families(_FAMILIES, _SEED)


# ---------------------------------------------------------------------------
# Extension: many more topics, each asked several different kinds of question (a kind's prompts share a group),
# appended after the original prompts.
# ---------------------------------------------------------------------------
# (topic, a concrete case to anchor it)
_TOPICS = [
    # atoms and the periodic table
    ("isotopes and relative atomic mass", "chlorine having an atomic mass of about 35.5"),
    ("the structure of the atom", "Rutherford's gold foil experiment"),
    ("electron shells and orbitals", "why sodium gives off a yellow flame"),
    ("emission spectra", "astronomers identifying helium in the Sun"),
    ("ionization energy", "why helium is so unreactive"),
    ("electronegativity", "the partial charges in a water molecule"),
    ("atomic radius across a period", "fluorine atoms being smaller than lithium atoms"),
    ("the alkali metals", "potassium fizzing violently in water"),
    ("the halogens", "chlorine displacing bromine from a salt solution"),
    ("the noble gases", "argon being used inside light bulbs"),
    ("transition metals", "copper compounds being blue or green"),
    ("metalloids", "silicon being used in computer chips"),
    ("the history of the periodic table", "Mendeleev leaving gaps for undiscovered elements"),
    ("allotropes of carbon", "diamond, graphite and graphene"),
    # bonding and structure
    ("ionic bonding", "table salt forming a crystal lattice"),
    ("covalent bonding", "two hydrogen atoms sharing electrons"),
    ("metallic bonding", "copper wires conducting electricity"),
    ("polar and non-polar molecules", "oil and water not mixing"),
    ("hydrogen bonding", "ice floating on water"),
    ("van der Waals forces", "a gecko walking up a glass wall"),
    ("giant covalent structures", "the high melting point of quartz"),
    ("molecular shape and VSEPR theory", "methane being tetrahedral rather than flat"),
    ("resonance structures", "all bonds in benzene being the same length"),
    ("hybridization of orbitals", "the triple bond in acetylene"),
    ("lattice energy", "magnesium oxide melting at a much higher temperature than sodium chloride"),
    ("sigma and pi bonds", "why ethene cannot rotate around its double bond"),
    ("crystal structures", "why some metals are easy to bend and others brittle"),
    # moles and stoichiometry
    ("the mole concept", "counting atoms in a teaspoon of sugar"),
    ("limiting reagents", "making sandwiches when you run out of bread"),
    ("percentage yield", "a lab synthesis that gives less aspirin than expected"),
    ("atom economy", "designing a greener industrial process"),
    ("concentration and molarity", "making up a saline drip for a hospital"),
    ("titration calculations", "finding the acid content of vinegar"),
    ("empirical and molecular formulas", "analysing an unknown compound from a combustion test"),
    ("gas volumes and molar volume", "the airbag in a car inflating from a solid"),
    ("parts per million", "measuring lead in drinking water"),
    # reactions
    ("combustion reactions", "a gas stove burning methane"),
    ("incomplete combustion", "carbon monoxide from a faulty boiler"),
    ("precipitation reactions", "testing tap water for chloride with silver nitrate"),
    ("displacement reactions", "an iron nail turning copper-coloured in copper sulfate solution"),
    ("redox reactions", "rust forming on a bicycle chain"),
    ("oxidation states", "manganese changing colour in permanganate reactions"),
    ("corrosion and its prevention", "galvanizing steel with zinc"),
    ("thermal decomposition", "limestone being heated to make quicklime"),
    ("neutralization", "taking an antacid for heartburn"),
    ("reactions of acids with metals", "magnesium ribbon fizzing in hydrochloric acid"),
    ("reactions of carbonates with acids", "limestone statues being damaged by acid rain"),
    ("the reactivity series", "why gold is found as a pure metal in nature"),
    # acids, bases and solutions
    ("the pH scale", "comparing lemon juice, milk and soap"),
    ("strong and weak acids", "hydrochloric acid and vinegar at the same concentration"),
    ("buffer solutions", "blood keeping its pH near 7.4"),
    ("indicators", "red cabbage juice changing colour"),
    ("acid rain", "sulfur dioxide from coal power stations"),
    ("solubility and temperature", "sugar dissolving faster in hot tea"),
    ("saturated and supersaturated solutions", "a hand warmer that crystallizes when clicked"),
    ("colligative properties", "salt being spread on icy roads"),
    ("osmotic pressure", "pickling cucumbers in brine"),
    ("hard and soft water", "limescale building up in a kettle"),
    ("Ka and pKa", "comparing the strengths of organic acids"),
    ("the autoionization of water", "why pure water has a pH of 7 at 25 degrees Celsius"),
    # energy and thermodynamics
    ("exothermic and endothermic reactions", "instant cold packs used in first aid"),
    ("bond enthalpies", "estimating the energy released by burning hydrogen"),
    ("Hess's law", "finding the enthalpy of a reaction that cannot be measured directly"),
    ("specific heat capacity", "the sea warming more slowly than the land"),
    ("calorimetry", "measuring the energy content of a peanut"),
    ("entropy", "a drop of ink spreading through water"),
    ("Gibbs free energy", "ice melting above 0 degrees Celsius but not below"),
    ("activation energy", "a match needing a strike to start burning"),
    ("fuel cells", "hydrogen-powered buses"),
    ("energy in food and fuels", "comparing the energy in a kilogram of fat and of sugar"),
    # rates and equilibrium
    ("collision theory", "food going off faster in a warm room"),
    ("catalysts", "catalytic converters in car exhausts"),
    ("enzymes as biological catalysts", "biological washing powders working at low temperatures"),
    ("the effect of surface area on rate", "powdered sugar burning explosively in a factory"),
    ("rate equations and orders of reaction", "the breakdown of a drug in the bloodstream"),
    ("dynamic equilibrium", "a sealed bottle of fizzy drink"),
    ("Le Chatelier's principle", "the Haber process for making ammonia"),
    ("equilibrium constants", "predicting how far a reaction goes"),
    ("solubility product", "kidney stones forming from calcium oxalate"),
    ("reaction mechanisms", "ozone being destroyed by chlorine radicals"),
    # electrochemistry
    ("electrolysis", "extracting aluminium from its ore"),
    ("electrochemical cells", "a lemon battery powering a small LED"),
    ("rechargeable batteries", "lithium-ion batteries in phones"),
    ("electroplating", "silver-plated cutlery"),
    ("standard electrode potentials", "predicting whether a metal will dissolve in acid"),
    # organic chemistry
    ("alkanes and fuels", "the fractions separated from crude oil"),
    ("alkenes and addition reactions", "turning vegetable oil into margarine"),
    ("alcohols", "ethanol in hand sanitizer"),
    ("carboxylic acids", "the sour taste of vinegar"),
    ("esters", "the fruity smells added to sweets"),
    ("isomerism", "two molecules with the same formula but different smells"),
    ("chirality", "the thalidomide tragedy"),
    ("addition polymers", "polythene carrier bags"),
    ("condensation polymers", "nylon and polyester fabrics"),
    ("biodegradable plastics", "compostable coffee cups"),
    ("aromatic compounds", "benzene rings in aspirin"),
    ("amines and amides", "the smell of fish and the strength of proteins"),
    ("nucleophilic substitution", "making alcohols from haloalkanes"),
    ("cracking hydrocarbons", "turning heavy oil into petrol"),
    ("organic functional group tests", "bromine water turning colourless"),
    ("drug design", "how aspirin was developed from willow bark"),
    ("soaps and detergents", "soap removing grease from dishes"),
    ("fats and oils", "saturated and unsaturated fats in the diet"),
    ("carbohydrate chemistry", "caramelizing sugar in a pan"),
    ("proteins and amino acids", "hair changing shape with heat styling"),
    # analysis and lab techniques
    ("chromatography", "separating the dyes in a black marker pen"),
    ("mass spectrometry", "detecting banned substances in athletes"),
    ("infrared spectroscopy", "breathalysers measuring alcohol"),
    ("NMR spectroscopy", "how an MRI scanner relates to chemistry"),
    ("flame tests", "the colours of fireworks"),
    ("distillation", "making drinking water from seawater"),
    ("filtration and crystallization", "getting pure salt from rock salt"),
    ("measurement uncertainty in the lab", "reading a burette to two decimal places"),
    ("lab safety and hazard symbols", "storing bleach away from acids"),
    ("standard solutions", "preparing a solution of known concentration for a titration"),
    # states of matter and gases
    ("kinetic theory of gases", "a balloon shrinking in a freezer"),
    ("the ideal gas law", "tyre pressure rising after a long drive"),
    ("real gases", "gases condensing under high pressure"),
    ("changes of state", "sweat cooling the skin as it evaporates"),
    ("vapour pressure and boiling point", "water boiling at a lower temperature on a mountain"),
    ("phase diagrams", "dry ice turning straight into gas"),
    ("diffusion of gases", "smelling perfume across a room"),
    ("partial pressures", "scuba divers breathing compressed air"),
    # environment, industry and everyday chemistry
    ("the greenhouse effect", "carbon dioxide absorbing infrared radiation"),
    ("the ozone layer", "CFCs that used to be in fridges"),
    ("water treatment", "chlorine being added to drinking water"),
    ("fertilizers", "ammonium nitrate used on farms"),
    ("the Haber process", "feeding billions of people with synthetic fertilizer"),
    ("the contact process", "sulfuric acid production"),
    ("extracting metals from ores", "a blast furnace making iron"),
    ("recycling metals and plastics", "aluminium cans being recycled many times"),
    ("green chemistry", "replacing toxic solvents with water"),
    ("nanoparticles", "sunscreens containing zinc oxide"),
    ("chemistry of cooking", "the Maillard reaction browning a steak"),
    ("baking chemistry", "baking soda making cakes rise"),
    ("cleaning chemistry", "why you must never mix bleach and ammonia"),
    ("cosmetics chemistry", "emulsifiers in a hand cream"),
    ("chemistry of batteries in electric cars", "why cold weather reduces a car's range"),
    ("ceramics and glass", "toughened glass in car windows"),
    ("smart materials", "shape-memory alloys in glasses frames"),
    ("carbon capture", "removing carbon dioxide from power station flue gas"),
    ("microplastics", "plastic fragments found in sea salt"),
    ("radioactivity and half-life", "carbon dating an ancient bone"),
    ("nuclear fission and fusion", "nuclear power stations and the Sun"),
    ("medical uses of radioisotopes", "iodine-131 treating thyroid conditions"),
    ("forensic chemistry", "testing a blood stain with luminol"),
    ("pigments and dyes", "why blue jeans fade"),
    ("explosives and rapid reactions", "the chemistry of fireworks"),
    ("semiconductors and doping", "solar panels made from silicon"),
    ("superconductors", "magnets in MRI machines"),
    ("chemical equilibria in the ocean", "coral reefs and dissolved carbon dioxide"),
    ("the chemistry of the atmosphere", "smog over a busy city"),
    ("alloys", "stainless steel not rusting"),
]

_PER_TOPIC = 11  # kinds of question per topic

_TOPIC_FORMS = {
    "topic-simple": "Explain {t} in simple terms, using {c} as the example.",
    "topic-particles": "Describe what the particles are doing in {c}, and link it to {t}.",
    "topic-misconception": "What do students often get wrong about {t}? Use {c} to set the record straight.",
    "topic-mcq": "Write three multiple-choice questions on {t}, one of them about {c}, with the answers.",
    "topic-practical": "Plan a safe school practical on {t} inspired by {c}. Include the equipment and the main "
                       "hazards.",
    "topic-child": "Explain {t} to a curious ten-year-old, starting from {c}.",
    "topic-everyday": "Why should a non-chemist care about {t}? Connect it to {c}.",
    "topic-equation": "Write the equation or equations that describe {c}, and explain what they show about {t}.",
    "topic-flashcards": "Make five flashcards on {t}, including one about {c}.",
    "topic-history": "How did chemists work out {t}? Give a short history, then explain {c} with what we know now.",
    "topic-diagram": "Describe the labelled diagram or graph you would draw to explain {t} through {c}.",
    "topic-industry": "Where does {t} matter in industry or technology? Start with {c} and add one more example.",
    "topic-calculation": "Make up a worked calculation about {c} that practises {t}, and solve it step by step.",
    "topic-three-sentences": "Summarize {t} in three sentences, the last one about {c}.",
    "topic-research": "Which open questions or active research areas remain around {t}?",
    "topic-exam-answer": "Write a six-mark exam question on {t} built around {c}, plus a model answer.",
    "topic-analogy": "Give an everyday analogy for {t}, apply it to {c}, and say where the analogy breaks down.",
    "topic-steps": "List the key ideas behind {t} in a logical order, then explain {c} using them.",
    "topic-safety": "What safety or environmental issues come with {t}? Consider {c}.",
    "topic-vocabulary": "Which key terms does a student need to explain {c} in terms of {t}? Define each in one "
                        "sentence.",
    "topic-true-false": "Four true-or-false statements about {t}, one of them on {c}, with answers.",
    "topic-predict": "Using {t}, predict what would change in {c} if the temperature or the amounts were changed.",
    "topic-evidence": "What experimental evidence supports our model of {t}? Refer to {c} if it helps.",
    "topic-university": "At first-year university level, explain {t}, using {c} to illustrate a subtle point.",
    "topic-case": "Use {c} as a short case study: which principles of {t} does it illustrate, and how?",
    "topic-explain-case": "Explain {c}. Which part of {t} is at work there?",
    "topic-headline": "Write a catchy headline and a short explainer about {c} that makes clear what it teaches "
                      "about {t}.",
    "topic-debate": "Set up a classroom debate linked to {t}, starting from {c}. What would each side argue?",
    "topic-data": "Invent a small, realistic table of measurements about {c} and explain what it shows about {t}.",
    "topic-worksheet": "Create a short worksheet on {t}: two recall questions, one applying it to {c}, and one "
                       "challenge question.",
    "topic-story": "Tell the story of {c} from the point of view of one atom or molecule involved, in a way that "
                   "teaches {t}.",
    "topic-mistake": "A student writes that {c} has nothing to do with {t}. Write feedback explaining the link.",
    "topic-scale": "Explain {t} at two levels, the particle level and what we can see and measure, using {c}.",
    "topic-connect": "How does {t} link to other big ideas in chemistry? Build a short concept map in words, "
                     "starting from {c}.",
    "topic-careers": "Which jobs use knowledge of {t} every day? Mention one linked to {c}.",
    "topic-sustainability": "How could {c} be made greener or safer, using ideas from {t}?",
    "topic-one-minute": "I have one minute to explain {t} to a friend while we look at {c}. What do I say?",
    "topic-compare-case": "Compare {c} with another example of {t}. What is the same and what is different?",
    "topic-quiz-hard": "Write one hard, thought-provoking question about {t} that uses {c}, and explain the answer.",
    "topic-demo": "Describe a safe teacher demonstration related to {c} that shows {t}, and what the class should "
                  "notice.",
    "topic-glossary-case": "Write a glossary entry for {t}, with {c} as the illustrative example.",
    "topic-cause-chain": "Lay out the chain of causes and effects in {c}, and name the step where {t} comes in.",
    "topic-podcast": "Write the opening of a chemistry podcast episode about {t}, hooking listeners with {c}.",
    "topic-check-claim": "An advert says {c} proves a product is 'chemical-free'. Using {t}, explain what is wrong "
                         "with that claim.",
    "topic-units": "Which quantities and units would you measure to study {c}, and how do they relate to {t}?",
    "topic-history-person": "Which scientists shaped our understanding of {t}? Tell the story briefly and finish "
                            "with {c}.",
}


def prompts() -> list[tuple[str, str]]:
    """(group, prompt) pairs in a fixed, deterministic order: the original prompts, then `_PER_TOPIC` kinds of
    question about each of `_TOPICS` (a kind's prompts share a group, e.g. "topic-analogy")."""
    result = _original()
    result += topic_grid(_TOPICS, _TOPIC_FORMS, _PER_TOPIC, _SEED + 1, taken=[p for _, p in result])
    assert len(result) >= 1850, len(result)
    return result
