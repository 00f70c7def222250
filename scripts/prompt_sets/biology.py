"""Biology prompts for self-distillation: cell biology, genetics, evolution, ecology,
physiology, microbiology and plant science, composed from varied hand-written templates."""

import random

from . import from_families, topic_grid

_SEED = 7_311_204


def _cycle(options, i):
    """Pick a phrasing deterministically so neighbouring items read differently."""
    return options[i % len(options)]


# ---------------------------------------------------------------------------
# Cell biology: organelles, each paired with a cell in which it matters a lot.
# ---------------------------------------------------------------------------
_ORGANELLES = [
    ("mitochondrion", "a heart muscle cell that never stops working"),
    ("chloroplast", "a leaf mesophyll cell on a sunny day"),
    ("ribosome", "a plasma cell that releases thousands of antibodies per second"),
    ("rough endoplasmic reticulum", "a pancreatic cell that secretes digestive enzymes"),
    ("smooth endoplasmic reticulum", "a liver cell that detoxifies drugs"),
    ("Golgi apparatus", "a goblet cell in the gut lining that secretes mucus"),
    ("lysosome", "a macrophage that has just engulfed a bacterium"),
    ("peroxisome", "a liver cell breaking down long fatty acids"),
    ("nucleus", "a skin cell preparing to divide"),
    ("nucleolus", "a fast-growing cell that needs huge numbers of ribosomes"),
    ("central vacuole", "a plant cell in a seedling that is starting to wilt"),
    ("cell wall", "a plant cell that has been placed in pure water"),
    ("plasma membrane", "a nerve cell sending an electrical signal"),
    ("cytoskeleton", "a white blood cell crawling toward an infection"),
    ("centrosome", "an animal cell entering mitosis"),
    ("flagellum", "a human sperm cell"),
    ("contractile vacuole", "a Paramecium living in a freshwater pond"),
]

_ORGANELLE_FORMS = [
    "Describe the function of the {o} and explain why it is especially important in {c}.",
    "What does the {o} do, and why would {c} depend on it so heavily? Answer in three or four sentences.",
    "Imagine you are giving a guided tour inside {c}. Introduce the {o} to your visitors and explain what job it does there.",
    "Explain the structure and function of the {o}. Then give one reason it matters for {c}.",
]


def _organelles():
    return [
        _cycle(_ORGANELLE_FORMS, i).format(o=o, c=c)
        for i, (o, c) in enumerate(_ORGANELLES)
    ]


# ---------------------------------------------------------------------------
# Processes explained step by step, each with its own specific follow-up.
# ---------------------------------------------------------------------------
_PROCESSES = [
    ("glycolysis", "Where in the cell does it happen, and what are its net products?"),
    ("the Krebs cycle", "Say which molecules enter the cycle and what it produces."),
    ("the electron transport chain", "Explain why oxygen is needed at the end of it."),
    ("the light-dependent reactions of photosynthesis", "Mention where water is split and where oxygen comes from."),
    ("the Calvin cycle", "Explain how ATP and NADPH from the light reactions are used."),
    ("DNA replication", "Include the roles of helicase, DNA polymerase and ligase."),
    ("transcription in a eukaryotic cell", "Finish by describing how the pre-mRNA is processed before it leaves the nucleus."),
    ("translation at the ribosome", "Explain how the ribosome knows where to start and stop."),
    ("mitosis", "Say what the chromosomes are doing in each phase."),
    ("meiosis", "Point out the two moments where genetic variation is created."),
    ("receptor-mediated endocytosis", "Use cholesterol uptake by cells as your example."),
    ("an action potential travelling along a neuron", "Describe what sodium and potassium ions do at each stage."),
    ("synaptic transmission between two neurons", "Explain what stops the signal once the message has been passed on."),
    ("muscle contraction", "Include the roles of calcium, actin, myosin and ATP."),
    ("blood clotting after a small cut", "Mention platelets and fibrin."),
    ("the digestion of a starchy meal", "Follow the starch from the mouth to the absorption of glucose in the small intestine."),
    ("urine formation in a nephron", "Cover filtration, reabsorption and secretion."),
    ("primary ecological succession on bare volcanic rock", "Name the kinds of organisms that typically arrive at each stage."),
    ("nitrogen fixation and the rest of the nitrogen cycle", "Name the groups of bacteria involved at each step."),
    ("seed germination", "Explain what triggers it and where the seedling gets energy before it can photosynthesize."),
    ("the lytic cycle of a bacteriophage", "End by explaining why the host cell bursts."),
    ("the formation of a new species by geographic isolation", "Use a population split by a river or mountain range as the example."),
    ("the inflammatory response to a splinter", "Explain why the area becomes red, warm and swollen."),
]

_PROCESS_FORMS = [
    "Explain {p} step by step. {f}",
    "Walk me through {p} as a numbered list of stages. {f}",
    "Describe what happens during {p}, from start to finish, in no more than six steps. {f}",
]


def _processes():
    return [
        _cycle(_PROCESS_FORMS, i).format(p=p, f=f)
        for i, (p, f) in enumerate(_PROCESSES)
    ]


# ---------------------------------------------------------------------------
# Compare and contrast.
# ---------------------------------------------------------------------------
_PAIRS = [
    ("mitosis", "meiosis"),
    ("prokaryotic cells", "eukaryotic cells"),
    ("DNA", "RNA"),
    ("aerobic respiration", "anaerobic respiration"),
    ("plant cells", "animal cells"),
    ("genotype", "phenotype"),
    ("homologous structures", "analogous structures"),
    ("innate immunity", "adaptive immunity"),
    ("viruses", "bacteria"),
    ("xylem", "phloem"),
    ("diffusion", "active transport"),
    ("C3 plants", "C4 plants"),
    ("r-selected species", "K-selected species"),
    ("monocots", "dicots"),
    ("endotherms", "ectotherms"),
    ("allopatric speciation", "sympatric speciation"),
    ("mutualism", "commensalism"),
    ("a food chain", "a food web"),
    ("arteries", "veins"),
    ("Gram-positive bacteria", "Gram-negative bacteria"),
    ("primary succession", "secondary succession"),
    ("the lytic cycle", "the lysogenic cycle"),
    ("the sympathetic nervous system", "the parasympathetic nervous system"),
    ("B cells", "T cells"),
    ("competitive inhibition", "non-competitive inhibition of an enzyme"),
    ("artificial selection", "natural selection"),
    ("gymnosperms", "angiosperms"),
]

_PAIR_FORMS = [
    "Compare and contrast {a} and {b}.",
    "What are the key differences between {a} and {b}? Give two differences and one similarity.",
    "Write a short bullet-point comparison of {a} versus {b}.",
    "A classmate keeps mixing up {a} and {b}. How would you explain the difference to them in a few sentences?",
    "Create a small comparison table for {a} and {b} with three rows of features.",
]


def _compare():
    return [
        _cycle(_PAIR_FORMS, i).format(a=a, b=b) for i, (a, b) in enumerate(_PAIRS)
    ]


# ---------------------------------------------------------------------------
# Definitions and glossary entries.
# ---------------------------------------------------------------------------
_TERMS = [
    ("allele", "an allele"), ("gene pool", "a gene pool"), ("genetic drift", "genetic drift"),
    ("keystone species", "a keystone species"), ("trophic level", "a trophic level"),
    ("homeostasis", "homeostasis"), ("codon", "a codon"), ("plasmid", "a plasmid"),
    ("ecological niche", "an ecological niche"), ("carrying capacity", "carrying capacity"),
    ("biodiversity", "biodiversity"), ("point mutation", "a point mutation"),
    ("operon", "an operon"), ("antibody", "an antibody"), ("stomata", "stomata"),
    ("meristem", "a meristem"), ("endosymbiotic theory", "the endosymbiotic theory"),
    ("horizontal gene transfer", "horizontal gene transfer"),
    ("founder effect", "the founder effect"), ("population bottleneck", "a population bottleneck"),
    ("epistasis", "epistasis"), ("polygenic trait", "a polygenic trait"),
    ("sex-linked trait", "a sex-linked trait"), ("biofilm", "a biofilm"),
    ("quorum sensing", "quorum sensing"), ("negative feedback", "negative feedback"),
    ("apoptosis", "apoptosis"), ("transpiration", "transpiration"),
    ("chemosynthesis", "chemosynthesis"), ("biomagnification", "biomagnification"),
    ("coevolution", "coevolution"), ("codominance", "codominance"),
    ("osmoregulation", "osmoregulation"), ("telomere", "a telomere"),
]

_TERM_FORMS = [
    "Define '{t}' in biology and give one example.",
    "What does the term '{t}' mean? Illustrate it with a real example from nature or the human body.",
    "Give a one-sentence definition of {a}, then explain in two more sentences why biologists care about it.",
    "Write a glossary entry for '{t}' suitable for a high school biology textbook.",
    "In plain language, what is meant by {a}?",
]


def _definitions():
    return [_cycle(_TERM_FORMS, i).format(t=t, a=a) for i, (t, a) in enumerate(_TERMS)]


# ---------------------------------------------------------------------------
# "What would happen if" predictions.
# ---------------------------------------------------------------------------
_WHAT_IF = [
    "What would happen to a red blood cell placed in distilled water? Explain your answer in terms of osmosis.",
    "Predict what would happen to a meadow food web if all the bees in the region disappeared.",
    "If a mutation destroyed the start codon of a gene, what would happen to the protein that gene normally encodes?",
    "Suppose a potted plant is kept in complete darkness for two weeks. What happens to it, and why?",
    "What would happen to the ATP supply of a muscle cell if oxygen suddenly ran out during a sprint?",
    "If DNA ligase stopped working during replication, what problem would the cell be left with?",
    "Imagine every decomposer vanished from a forest overnight. Describe what would change over the following years.",
    "A person's pancreas stops producing insulin. Predict what happens to their blood glucose level and explain why.",
    "What would happen to a plant on a hot, sunny day if its stomata stayed closed the whole time?",
    "What happens to the rate of an enzyme-controlled reaction when the temperature rises well above the enzyme's optimum? Explain at the molecular level.",
    "If gametes were produced by mitosis instead of meiosis, what would happen to the chromosome number over several generations?",
    "Sea otters eat sea urchins, and urchins eat kelp. What chain of effects might follow if sea otters disappeared from a kelp forest?",
    "What would happen to a cell if the membranes of its lysosomes ruptured?",
    "Predict how gas exchange would be affected if a person's alveoli lost much of their surface area, as happens in emphysema.",
    "What would happen to a freshwater fish that was suddenly moved into seawater? Explain in terms of water balance.",
    "What would happen to blood clotting in a person who had very few platelets?",
    "If a population of deer lost all its predators, how might its size and the surrounding vegetation change over time?",
    "Suppose a lake receives a large amount of fertilizer runoff. Predict the sequence of events that could lead to a fish kill.",
    "What would happen to a bacterial population exposed to an antibiotic at a dose that kills most but not all of the cells?",
    "If the hypothalamus could no longer sense body temperature, what would happen when the person went out on a freezing day?",
    "What would happen to the offspring of a cross if a gene for flower color showed incomplete dominance instead of complete dominance?",
]


# ---------------------------------------------------------------------------
# Explain to a 12-year-old.
# ---------------------------------------------------------------------------
_KID_TOPICS = [
    "how vaccines train the immune system",
    "why we need to breathe in oxygen",
    "what DNA is and why it matters",
    "how plants make their own food from sunlight",
    "why many leaves change color in autumn",
    "how bees help flowers make seeds",
    "why some bacteria are actually good for us",
    "how a tadpole turns into a frog",
    "why we get goosebumps when we are cold",
    "how the heart pumps blood around the body",
    "what evolution means",
    "why identical twins look so alike",
    "how a broken bone heals",
    "how fish breathe underwater",
    "why it matters to take antibiotics exactly as a doctor prescribes",
]

_KID_FORMS = [
    "Explain to a 12-year-old {t}.",
    "A curious 12-year-old wants to know {t}. How would you explain it using an everyday comparison?",
    "In simple words a middle-school student would understand, explain {t} in about five sentences.",
]


def _kids():
    return [_cycle(_KID_FORMS, i).format(t=t) for i, t in enumerate(_KID_TOPICS)]


# ---------------------------------------------------------------------------
# List examples.
# ---------------------------------------------------------------------------
_EXAMPLE_CATEGORIES = [
    ("mutualistic relationships in nature", "four", 0),
    ("organisms that reproduce asexually", "five", 1),
    ("vestigial structures in the human body", "three", 2),
    ("invasive species and the problem each one causes", "three", 3),
    ("adaptations that help desert plants save water", "four", 0),
    ("human hormones and the gland that makes each one", "five", 3),
    ("decomposers", "four", 2),
    ("diseases caused by viruses", "five", 1),
    ("foods that are made with the help of microorganisms", "four", 0),
    ("homologous structures found in vertebrate limbs", "three", 2),
    ("convergent evolution", "three", 1),
    ("plant tropisms and the stimulus each responds to", "three", 3),
    ("single-celled eukaryotes", "four", 0),
    ("animals that go through complete metamorphosis", "four", 2),
    ("ways that seeds are dispersed", "four", 1),
    ("digestive enzymes and what each one breaks down", "four", 3),
    ("genetic disorders caused by a single gene", "three", 0),
    ("adaptations of mammals to very cold climates", "four", 2),
    ("ecosystem services that forests provide to people", "four", 1),
    ("biological molecules that contain nitrogen", "four", 0),
]

_EXAMPLE_FORMS = [
    "List {n} examples of {c}, and say in one line why each one fits.",
    "Give {n} examples of {c}.",
    "Name {n} {c}, adding a short explanation for each.",
    "Name {n} {c}.",
]


def _examples():
    return [_EXAMPLE_FORMS[k].format(c=c, n=n) for c, n, k in _EXAMPLE_CATEGORIES]


# ---------------------------------------------------------------------------
# Multiple-choice questions (answer and justify).
# ---------------------------------------------------------------------------
_MCQ = [
    ("Which organelle is the main site of ATP production in animal cells?",
     ["ribosome", "mitochondrion", "Golgi apparatus", "lysosome"]),
    ("Which base pairs with adenine in RNA?",
     ["thymine", "cytosine", "uracil", "guanine"]),
    ("In pea plants, tall (T) is dominant over short (t). What fraction of the offspring of a Tt x Tt cross is expected to be short?",
     ["0", "1/4", "1/2", "3/4"]),
    ("Which of these is a producer in a grassland ecosystem?",
     ["grasshopper", "hawk", "clover", "mushroom"]),
    ("During which phase of mitosis do sister chromatids separate?",
     ["prophase", "metaphase", "anaphase", "telophase"]),
    ("Which blood vessels carry blood away from the heart?",
     ["veins", "arteries", "capillaries", "lymphatic vessels"]),
    ("Which molecule carries amino acids to the ribosome?",
     ["mRNA", "tRNA", "rRNA", "DNA polymerase"]),
    ("Which process produces genetically identical daughter cells?",
     ["meiosis", "fertilization", "mitosis", "crossing over"]),
    ("Which gas do plants mainly take in for photosynthesis?",
     ["oxygen", "nitrogen", "carbon dioxide", "methane"]),
    ("Which structure is found in bacterial cells but NOT in animal cells?",
     ["ribosome", "cell wall", "plasma membrane", "cytoplasm"]),
    ("A population's allele frequencies change purely by chance from one generation to the next. What is this called?",
     ["natural selection", "gene flow", "genetic drift", "mutation"]),
    ("Which part of the nephron is mainly responsible for filtering blood?",
     ["glomerulus", "loop of Henle", "collecting duct", "ureter"]),
    ("Which hormone lowers blood glucose?",
     ["glucagon", "adrenaline", "insulin", "cortisol"]),
    ("Which kingdom do mushrooms belong to?",
     ["Plantae", "Fungi", "Protista", "Animalia"]),
    ("Which of the following is an example of a density-dependent limiting factor?",
     ["a volcanic eruption", "a hard frost", "an infectious disease", "a flood"]),
    ("In which part of the chloroplast does the Calvin cycle take place?",
     ["thylakoid membrane", "stroma", "outer membrane", "intermembrane space"]),
]

_MCQ_LEADS = [
    "Answer this multiple-choice question and explain why the other options are wrong.",
    "Choose the correct answer and justify it in two or three sentences.",
    "Multiple choice: pick one option and briefly explain your reasoning.",
]


def _mcq():
    out = []
    for i, (q, opts) in enumerate(_MCQ):
        letters = " ".join(f"{l}) {o}" for l, o in zip("ABCD", opts))
        out.append(f"{_cycle(_MCQ_LEADS, i)} {q} {letters}")
    return out


# ---------------------------------------------------------------------------
# Short-answer quiz questions.
# ---------------------------------------------------------------------------
_QUIZ = [
    "What is the name of the molecule that stores genetic information in most living things?",
    "How many chromosomes are found in a normal human body cell?",
    "Which blood cells carry oxygen?",
    "What pigment makes plants green?",
    "What type of bond holds the two strands of DNA together?",
    "What is the smallest unit of life?",
    "Which organ produces bile?",
    "What do we call an organism that can make its own food?",
    "Which scientist proposed the theory of evolution by natural selection together with Alfred Russel Wallace?",
    "What is the name of the tiny air sacs in the lungs?",
    "What kind of cell division produces eggs and sperm?",
    "Which part of the brain coordinates balance and fine movement?",
    "What is the monomer of a protein?",
    "Which gas is released as a by-product of photosynthesis?",
    "What sugar is found in the backbone of DNA?",
    "Which vessels carry water up from the roots of a plant?",
    "What is the name of the protein in red blood cells that binds oxygen?",
    "What do we call a group of organisms of one species living in the same area?",
    "What is the main function of white blood cells?",
    "What is the term for an organism's physical appearance as determined by its genes and environment?",
]

_QUIZ_FORMS = [
    "Quick quiz: {q} Give the answer and one sentence of explanation.",
    "Short-answer question: {q}",
    "Quiz time! {q} Answer in one or two sentences.",
    "{q} Then add one interesting related fact.",
]


def _quiz():
    return [_cycle(_QUIZ_FORMS, i).format(q=q) for i, q in enumerate(_QUIZ)]


# ---------------------------------------------------------------------------
# Genetics problems with numbers.
# ---------------------------------------------------------------------------
_GENETICS = [
    "In guinea pigs, black fur (B) is dominant over white fur (b). Two heterozygous black guinea pigs are crossed. Draw the Punnett square and give the expected genotype and phenotype ratios.",
    "A woman with blood type AB has children with a man with blood type O. What blood types could their children have, and in what proportions?",
    "Red-green color blindness is X-linked recessive. A carrier woman and a man with normal vision have a son. What is the probability that the son is color-blind? Explain.",
    "In snapdragons, red (RR) and white (WW) flowers show incomplete dominance and the heterozygote is pink. What offspring ratio do you expect from crossing two pink plants?",
    "A test cross is done on a tall pea plant of unknown genotype, and half of the 80 offspring are short. What was the genotype of the tall parent? Explain how you know.",
    "In a dihybrid cross AaBb x AaBb with independent assortment, what fraction of offspring is expected to show both recessive traits?",
    "Two parents who are both carriers of cystic fibrosis plan to have a child. What is the chance the child will have the condition, and what is the chance the child will be a carrier?",
    "In cattle, the roan coat is the result of codominance between red (R) and white (W) alleles. What coat types would you expect from a roan bull crossed with a white cow, and in what ratio?",
    "A man with hemophilia (an X-linked recessive trait) and a woman who is not a carrier have a daughter. What is her genotype, and could she pass hemophilia on to her sons?",
    "In a cross between a pea plant with round yellow seeds (RrYy) and one with wrinkled green seeds (rryy), what phenotypes are expected and in what ratio?",
    "A couple has three daughters. What is the probability that their fourth child will be a boy? Explain why the earlier births do not change the answer.",
    "Mendel crossed true-breeding purple-flowered pea plants with true-breeding white-flowered ones. Describe the F1 and F2 results he observed and what they told him about inheritance.",
    "Huntington's disease is caused by a dominant allele. If one parent is heterozygous and the other has two normal alleles, what is the probability that a child inherits the condition?",
    "A brown-eyed man whose mother had blue eyes marries a blue-eyed woman. Assuming eye color is controlled by a single gene with brown dominant, what is the chance their first child has blue eyes?",
    "Two genes are 12 map units apart on the same chromosome. What does that tell you about how often they are separated by crossing over?",
]

_HW = [
    (16, "a recessive coat color"),
    (1, "albinism (a recessive trait)"),
    (49, "a recessive leaf shape"),
    (25, "attached earlobes (treated here as a simple recessive trait)"),
    (4, "a recessive wing mutation"),
    (9, "white flowers (recessive to purple)"),
    (36, "a recessive yellow shell color"),
    (64, "a recessive short-tail trait"),
]


def _hardy_weinberg():
    forms = [
        "In a population in Hardy-Weinberg equilibrium, {f}% of individuals show {t}. Estimate the frequencies of both alleles and the percentage of heterozygous carriers.",
        "In a large, randomly mating population, about {f} in every 100 individuals show {t}. Assuming Hardy-Weinberg equilibrium, what percentage of the population are carriers? Show each step.",
    ]
    return [_cycle(forms, i).format(f=f, t=t) for i, (f, t) in enumerate(_HW)]


def _growth():
    rng = random.Random(_SEED + 2)
    organisms = [
        "E. coli cells", "yeast cells", "Bacillus cells", "Streptococcus cells",
        "bacteria in a flask of broth", "cyanobacteria in a culture tube",
    ]
    out = []
    for i, org in enumerate(organisms):
        start = rng.choice([10, 50, 100, 200, 500, 1000])
        doubling = rng.choice([20, 30, 60])
        gens = rng.choice([3, 4, 5, 6])
        minutes = doubling * gens
        hours = minutes // 60
        if minutes % 60:
            span = f"{minutes} minutes"
        else:
            span = "1 hour" if hours == 1 else f"{hours} hours"
        if i % 2 == 0:
            out.append(
                f"A culture starts with {start} {org} that double every {doubling} minutes. "
                f"Assuming unlimited resources, how many cells will there be after {span}? Show your calculation."
            )
        else:
            out.append(
                f"Starting from {start} {org} with a doubling time of {doubling} minutes, how many "
                f"cells would you expect after {span}? Then explain why real cultures eventually stop growing this fast."
            )
    return out


_ENERGY = [
    "Producers in a grassland capture 20,000 kJ of energy per square meter per year. Using the 10% rule, roughly how much energy reaches the tertiary consumers? Show the steps.",
    "If a field of corn stores 50,000 kJ of energy, approximately how much energy is available to a hawk that eats snakes that eat mice that eat the corn? Explain why so much is lost.",
    "A lake's algae fix 8,000 kJ of energy. Roughly how much of it reaches small fish that eat zooplankton that eat the algae? Use the 10% rule and state its limitations.",
    "Use the 10% rule to explain why eating plants directly can feed more people than feeding those plants to cattle first.",
    "Why are food chains rarely longer than four or five trophic levels? Include a quick energy calculation in your answer.",
]


def _dna_tasks():
    rng = random.Random(_SEED + 3)
    bases = "ACGT"
    out = []
    for i in range(5):
        seq = "".join(rng.choice(bases) for _ in range(rng.choice([9, 12, 15])))
        if i % 2 == 0:
            out.append(f"Write the complementary strand for the DNA sequence 5'-{seq}-3', labelling its 5' and 3' ends.")
        else:
            out.append(f"A template DNA strand reads 3'-{seq}-5'. Write the mRNA transcribed from it, and explain the base-pairing rules you used.")
    stops = ["TAA", "TAG", "TGA"]
    codons = ["TTT", "GGC", "AAA", "GAA", "CTG", "TGG", "CAT", "GCT", "AGC", "TAC", "GTT", "CGA"]
    for i in range(5):
        middle = "".join(rng.choice(codons) for _ in range(rng.choice([2, 3, 4])))
        seq = "ATG" + middle + rng.choice(stops)
        if i % 2 == 0:
            out.append(f"The coding strand of a short gene is 5'-{seq}-3'. Write the mRNA and translate it into amino acids using the standard genetic code.")
        else:
            out.append(f"How many codons, including the stop codon, are in the coding sequence 5'-{seq}-3', and how many amino acids will the resulting peptide contain? Explain.")
    return out


# ---------------------------------------------------------------------------
# Experiment design.
# ---------------------------------------------------------------------------
_EXPERIMENTS = [
    "Design a simple experiment to test whether light intensity affects the rate of photosynthesis in pondweed. Name the independent, dependent and controlled variables.",
    "How could a student test whether temperature affects the activity of the enzyme amylase? Outline the method and what results would support the hypothesis.",
    "Plan an experiment to find out whether radish seeds germinate better in light or in darkness. What would you measure, and how many seeds would you use?",
    "Describe how you could use potato cylinders and different sugar solutions to estimate the water potential of potato tissue.",
    "A gardener thinks coffee grounds make tomato plants grow taller. Design a fair test of this claim.",
    "Outline an experiment to test whether a new hand soap reduces the number of bacteria on people's hands. What would your control be?",
    "How would you investigate whether woodlice prefer damp or dry environments? Describe the setup and how you would avoid bias.",
    "Design an experiment to test whether exercise intensity affects heart rate recovery time in volunteers. What ethical precautions would you take?",
    "How could you show that carbon dioxide is produced by germinating seeds? Describe a simple setup with a control.",
    "Propose an experiment to test whether the antibiotic ampicillin inhibits the growth of a harmless lab strain of E. coli. Describe how you would measure the effect.",
    "Design a field study to estimate the number of daisies on a school lawn. Explain how you would place your quadrats and calculate the estimate.",
    "A student wants to know whether yeast ferments sucrose faster than glucose. Describe an experiment, including how to measure the rate of fermentation.",
    "How would you test the hypothesis that plant shoots grow toward light? Describe the groups you would set up.",
    "Design a mark-recapture study to estimate a population of beetles in a small woodland. Show how you would calculate the estimate from your data.",
]


# ---------------------------------------------------------------------------
# Scenario interpretation.
# ---------------------------------------------------------------------------
_SCENARIOS = [
    "A farmer sprays the same insecticide every year, and after five years it barely kills the beetles anymore. Explain what happened using natural selection.",
    "Hikers notice that pine trees near the top of a mountain are short and twisted, while those lower down are tall and straight. Suggest biological reasons for the difference.",
    "A runner's legs burn and feel weak at the end of a 400-meter sprint, but recover after a few minutes of rest. Explain what was happening in her muscle cells.",
    "After wolves were reintroduced to a national park, willow trees along the rivers began to recover. Propose an explanation involving the food web.",
    "A patient's blood test shows high levels of antibodies against measles, even though he has not been ill recently. Give two possible explanations.",
    "On a small island, lizards living on broad tree trunks have longer legs than lizards of the same species living on thin twigs. How might this difference have arisen?",
    "A pond that was crystal clear in spring turns bright green by midsummer, and dead fish appear at the surface. Explain the likely sequence of events.",
    "A slice of apple turns brown when left on the counter, but stays pale when dipped in lemon juice. Explain what is happening biologically.",
    "Bread dough left in a warm kitchen rises much faster than dough left in the fridge. Explain why, using what you know about yeast.",
    "A tomato plant kept on a windowsill bends toward the glass over a week. Explain the cellular mechanism behind this.",
    "A hospital notices that infections from one bacterial strain are no longer cured by the usual antibiotic. What might have happened in the bacterial population?",
    "Two species of warbler feed in the same spruce trees but each feeds in a different part of the tree. What ecological idea does this illustrate, and why does it matter?",
    "A gardener cuts the tip off the main stem of a basil plant, and the plant becomes bushier. Explain why this happens.",
    "Someone who moves to a high-altitude city feels breathless at first, but after a few weeks feels normal again. What changes in the body explain this?",
    "In a cave, a population of fish has lost its eyes over many generations. Suggest how evolution could explain this loss.",
]


# ---------------------------------------------------------------------------
# Cause and effect.
# ---------------------------------------------------------------------------
_CAUSE_EFFECT = [
    "What causes sickle cell disease at the DNA level, and how does that change affect red blood cells?",
    "Explain how rising ocean temperatures cause coral bleaching and what effect bleaching has on reef ecosystems.",
    "How does a lack of iodine in the diet lead to a goiter? Trace the cause and effect.",
    "Explain the cause-and-effect chain by which smoking damages the cilia in the airways and raises the risk of lung infections.",
    "When oxygen runs short in hard-working muscle, what causes lactate to build up, and what happens to that lactate after exercise stops?",
    "How does deforestation of a hillside lead to soil erosion and changes in nearby rivers?",
    "Explain how a single change to one base of DNA can cause a premature stop codon, and what effect that has on the protein.",
    "How does habitat fragmentation affect gene flow between populations, and what are the long-term consequences?",
    "What causes seasonal changes in the fur color of animals like the snowshoe hare, and how does this help them survive?",
    "Explain how overuse of antibiotics in farm animals can affect human health.",
    "How does a drop in blood pressure trigger the release of hormones from the kidneys, and what effect do those hormones have?",
    "Describe how acid rain forms and explain its effects on lakes and forests.",
]


# ---------------------------------------------------------------------------
# Misconceptions.
# ---------------------------------------------------------------------------
_MISCONCEPTIONS = [
    "humans evolved from chimpanzees",
    "plants get most of their mass from the soil",
    "plants do photosynthesis instead of respiration",
    "antibiotics are an effective treatment for the common cold",
    "individual animals evolve during their lifetime to fit their environment",
    "dominant traits are always the most common in a population",
    "bacteria are all harmful and should be eliminated",
    "blood is blue inside the veins and turns red when it meets air",
    "the heart is on the far left side of the chest",
    "only animals are made of cells that need energy",
    "mutations are always harmful",
    "a species with a bigger genome is always more complex",
]

_MISCONCEPTION_FORMS = [
    "A student claims that {m}. Explain what is wrong with this statement.",
    "Correct this common misconception in a few sentences: \"{M}.\"",
    "Someone tells you that {m}. How would you politely correct them, using evidence?",
]


def _misconceptions():
    out = []
    for i, m in enumerate(_MISCONCEPTIONS):
        upper = m[0].upper() + m[1:]
        out.append(_cycle(_MISCONCEPTION_FORMS, i).format(m=m, M=upper))
    return out


# ---------------------------------------------------------------------------
# True or false with justification.
# ---------------------------------------------------------------------------
_TRUE_FALSE = [
    "All bacteria cause disease.",
    "Viruses can reproduce only inside a host cell.",
    "Mitochondria contain their own DNA.",
    "Fungi are more closely related to plants than to animals.",
    "Enzymes are used up in the reactions they catalyze.",
    "Red blood cells in mammals have no nucleus.",
    "Photosynthesis happens only in leaves.",
    "Every cell in your body contains the same genes, but not all genes are switched on in every cell.",
    "Natural selection acts on individuals, but populations are what evolve.",
    "Sharks are mammals because they give birth to live young in some species.",
    "The human appendix has no function at all.",
    "A virus is smaller than a typical bacterium.",
    "Insects breathe through lungs.",
    "Sex in humans is determined by the X or Y chromosome carried in the sperm.",
]

_TF_FORMS = [
    "True or false: {s} Justify your answer.",
    "Is this statement true or false? \"{s}\" Explain in two or three sentences.",
]


def _true_false():
    return [_cycle(_TF_FORMS, i).format(s=s) for i, s in enumerate(_TRUE_FALSE)]


# ---------------------------------------------------------------------------
# Ordering steps.
# ---------------------------------------------------------------------------
_ORDERING = [
    "Put these stages of mitosis in the correct order and describe each briefly: telophase, prophase, anaphase, metaphase.",
    "Arrange these levels of organization from smallest to largest: organ, cell, organism, tissue, organ system, molecule.",
    "Order these steps of protein synthesis: tRNA brings amino acids, mRNA leaves the nucleus, transcription, the ribosome reaches a stop codon, the ribosome binds mRNA.",
    "Place these in the order air passes through them when you breathe in: bronchi, trachea, alveoli, larynx, nasal cavity, bronchioles.",
    "Put these events of the menstrual cycle in order: ovulation, menstruation, thickening of the uterine lining, rise in LH.",
    "Sort these stages of ecological succession on a bare sand dune into order: shrubs, pioneer grasses, mature woodland, lichens and mosses.",
    "Arrange these taxonomic ranks from the broadest to the most specific: species, order, kingdom, genus, class, family, phylum, domain.",
    "Put the path of a red blood cell in order, starting in the right atrium: left ventricle, lungs, right ventricle, aorta, left atrium, body tissues.",
]


# ---------------------------------------------------------------------------
# Role of X in Y.
# ---------------------------------------------------------------------------
_ROLES = [
    ("ATP synthase", "cellular respiration"),
    ("RNA polymerase", "gene expression"),
    ("helicase", "DNA replication"),
    ("hemoglobin", "oxygen transport"),
    ("insulin", "blood sugar regulation"),
    ("auxin", "phototropism"),
    ("nitrogen-fixing bacteria", "soil fertility"),
    ("mycorrhizal fungi", "plant nutrition"),
    ("the loop of Henle", "water conservation by the kidney"),
    ("surfactant", "breathing"),
    ("bile", "the digestion of fats"),
    ("helper T cells", "the adaptive immune response"),
    ("the sodium-potassium pump", "keeping a neuron ready to fire"),
    ("restriction enzymes", "genetic engineering"),
    ("crossing over", "genetic variation"),
    ("villi", "nutrient absorption in the small intestine"),
    ("guard cells", "controlling water loss in plants"),
]

_ROLE_FORMS = [
    "What role is played by {x} in {y}?",
    "Explain the importance of {x} in {y}, in about four sentences.",
    "In what ways does {y} depend on {x}? Give a concrete example.",
    "Without {x}, what would go wrong in {y}? Start by explaining the normal role.",
]


def _roles():
    return [_cycle(_ROLE_FORMS, i).format(x=x, y=y) for i, (x, y) in enumerate(_ROLES)]


# ---------------------------------------------------------------------------
# Organs and body systems.
# ---------------------------------------------------------------------------
_ORGANS = [
    "pancreas", "liver", "spleen", "thyroid gland", "diaphragm", "kidney",
    "small intestine", "gallbladder", "thymus", "cerebellum", "adrenal gland",
    "large intestine", "spinal cord",
]

_ORGAN_FORMS = [
    "Which organ system does the {o} belong to, and what are its main functions?",
    "Describe where the {o} is located in the human body and what it does.",
    "Explain how the {o} helps the body maintain homeostasis.",
]


def _organs():
    return [_cycle(_ORGAN_FORMS, i).format(o=o) for i, o in enumerate(_ORGANS)]


# ---------------------------------------------------------------------------
# Classification and microbes.
# ---------------------------------------------------------------------------
_CLASSIFY = [
    "Escherichia coli", "baker's yeast", "a button mushroom", "a fern",
    "an amoeba", "a methane-producing archaeon from a cow's gut",
    "a moss", "a sea sponge", "giant kelp", "a lichen",
]


def _classification():
    forms = [
        "Classify {o} into its domain and kingdom, and name one feature that supports your classification.",
        "Which domain of life does {o} belong to? Explain how you would tell, based on its cells.",
    ]
    out = [_cycle(forms, i).format(o=o) for i, o in enumerate(_CLASSIFY)]
    out[-1] = "A lichen is often described as two organisms in one. Which organisms make up a lichen, and how does each benefit?"
    return out


_MICROBES = [
    "Staphylococcus aureus", "the influenza virus", "Candida albicans",
    "Plasmodium falciparum", "Lactobacillus", "HIV", "Penicillium",
    "Mycobacterium tuberculosis", "Giardia", "Saccharomyces cerevisiae",
    "bacteriophage T4", "Rhizobium",
]


def _microbes():
    forms = [
        "Is {m} a bacterium, a virus, a fungus or a protist? Describe one feature of its structure and one way it affects humans.",
        "Give a short profile of {m}: what kind of microorganism it is, where it lives, and why it matters to people.",
        "What kind of organism is {m}, and how does it reproduce?",
    ]
    return [_cycle(forms, i).format(m=m) for i, m in enumerate(_MICROBES)]


# ---------------------------------------------------------------------------
# Plants.
# ---------------------------------------------------------------------------
_PLANT_HORMONES = [
    ("auxin", "rooting powder for cuttings"),
    ("gibberellin", "the spraying of seedless grapes to enlarge the fruit"),
    ("cytokinin", "growing new plants in tissue culture"),
    ("abscisic acid", "stomatal closure during a drought"),
    ("ethylene", "the ripening of bananas in storage rooms"),
]

_PLANT_MISC = [
    "Why do the roots of a plant need oxygen, and what happens to plants growing in waterlogged soil?",
    "Explain how water moves from the soil, through a plant, and out of its leaves. Mention cohesion and tension.",
    "How do flowering plants achieve double fertilization, and what does each fertilization event produce?",
    "Why do cacti have spines instead of broad leaves? Explain the trade-offs.",
    "How do carnivorous plants like the Venus flytrap benefit from catching insects, given that they can photosynthesize?",
    "Why do many deciduous trees drop their leaves in winter? Give the biological advantages.",
    "Explain how a potato plant can reproduce both sexually and asexually.",
    "Describe the structure of a leaf in cross-section and explain how each layer helps photosynthesis.",
]


def _plants():
    out = []
    for i, (h, use) in enumerate(_PLANT_HORMONES):
        if i % 2 == 0:
            out.append(f"What is the role of the plant hormone {h}? Connect it to the practical example of {use}.")
        else:
            out.append(f"Explain how {h} affects plant growth or development, using {use} as an example.")
    return out + _PLANT_MISC


# ---------------------------------------------------------------------------
# Evolution evidence and ecology cycles.
# ---------------------------------------------------------------------------
_EVIDENCE = [
    "the fossil record of whales",
    "the bone structure of a human arm, a bat wing and a whale flipper",
    "similarities in DNA sequences between species",
    "the distribution of finch species on the Galapagos Islands",
    "bacteria that evolve antibiotic resistance within a few years",
    "vestigial structures such as the pelvic bones of some snakes",
    "the fact that all living things use nearly the same genetic code",
]


def _evidence():
    forms = [
        "Explain how {e} can be used as evidence for evolution.",
        "What can {e} tell us about common ancestry? Explain briefly.",
    ]
    return [_cycle(forms, i).format(e=e) for i, e in enumerate(_EVIDENCE)]


_CYCLES = [
    ("carbon cycle", "burning fossil fuels"),
    ("nitrogen cycle", "heavy use of synthetic fertilizer"),
    ("water cycle", "large-scale deforestation"),
    ("phosphorus cycle", "mining phosphate and runoff from farms"),
]


def _cycles():
    return [
        f"Describe the main steps of the {c} and explain how {h} disturbs it."
        for c, h in _CYCLES
    ]


# ---------------------------------------------------------------------------
# "Why" questions.
# ---------------------------------------------------------------------------
_WHY = [
    "Why do cells divide instead of simply growing bigger and bigger?",
    "Why are viruses usually not considered to be alive?",
    "Why does sexual reproduction produce more genetic variation than asexual reproduction?",
    "Why is biodiversity important for the stability of an ecosystem?",
    "Why do we feel thirsty after eating very salty food?",
    "Why are there far fewer large predators than small herbivores in an ecosystem?",
    "Why can't humans digest cellulose, while cows can?",
    "Why do people get a fever when they have an infection? Explain the possible benefit.",
    "Why does a flu vaccine need to be updated every year, while a measles vaccine does not?",
    "Why is the surface area to volume ratio important for cells?",
    "Why do some species on islands become giant or dwarf compared with their mainland relatives?",
    "Why do muscles get tired during long exercise?",
    "Why do polar bears have black skin under their white fur?",
    "Why is inbreeding harmful to small populations?",
    "Why do plants in tropical rainforests often have large, thin leaves?",
]


# ---------------------------------------------------------------------------
# Fill in the blank.
# ---------------------------------------------------------------------------
_BLANKS = [
    "The process by which water moves across a partially permeable membrane is called ____.",
    "The site of protein synthesis in the cell is the ____.",
    "A group of similar cells working together to perform a function is called a ____.",
    "The molecule that serves as the cell's main energy currency is ____.",
    "An organism with two identical alleles for a gene is said to be ____ for that gene.",
    "The first organisms to colonize bare rock in primary succession are called ____ species.",
    "The structures that connect muscles to bones are called ____.",
    "The loss of water vapor from the leaves of a plant is called ____.",
    "A relationship in which one organism benefits and the other is harmed is called ____.",
    "The membrane-bound sac that contains digestive enzymes in animal cells is the ____.",
]

_BLANK_FORMS = [
    "Fill in the blank and explain your answer: {b}",
    "Complete the sentence, then add one sentence of explanation: {b}",
]


def _blanks():
    return [_cycle(_BLANK_FORMS, i).format(b=b) for i, b in enumerate(_BLANKS)]


# ---------------------------------------------------------------------------
# Analogies.
# ---------------------------------------------------------------------------
_ANALOGIES = [
    ("the cell membrane", "a security checkpoint at an airport"),
    ("enzymes and their substrates", "a lock and key"),
    ("DNA, genes and proteins", "a cookbook, recipes and dishes"),
    ("the nervous system", "a telephone network"),
    ("the immune system", "a country's defense forces"),
    ("mitochondria", "a power station"),
    ("the kidneys", "a recycling and water treatment plant"),
    ("ribosomes", "a factory assembly line"),
    ("a food web", "a spider's web"),
]


def _analogies():
    forms = [
        "Explain {x} using the analogy of {a}. Then point out one way the analogy breaks down.",
        "Compare {x} to {a}. Which parts of the comparison fit well and which do not?",
    ]
    return [_cycle(forms, i).format(x=x, a=a) for i, (x, a) in enumerate(_ANALOGIES)]


# ---------------------------------------------------------------------------
# Data interpretation.
# ---------------------------------------------------------------------------
_DATA = [
    "A student counted oxygen bubbles from pondweed at different temperatures: 10 °C gave 4 bubbles per minute, 20 °C gave 11, 30 °C gave 19, 40 °C gave 9. Describe the trend and explain it.",
    "The rate of an enzyme reaction was measured at pH 3, 5, 7 and 9, giving 2, 15, 28 and 6 units respectively. What is the likely optimum pH, and why does activity fall on either side?",
    "A population of hares was counted each year: 100, 180, 320, 400, 410, 405. Describe the shape of this growth curve and explain what is limiting the population in the last years.",
    "Potato pieces were placed in sugar solutions for an hour. In 0.0 M they gained 8% mass, in 0.2 M they gained 2%, in 0.4 M they lost 5%, and in 0.6 M they lost 11%. Estimate the concentration at which they would not change mass, and explain.",
    "A person's resting heart rate is 70 beats per minute and each beat pumps 70 mL of blood. Calculate the cardiac output in liters per minute and explain what it means.",
    "In a survey of two ponds, pond A had 5 species with roughly equal numbers, while pond B had 5 species but one species made up 90% of individuals. Which pond is more diverse, and why?",
    "A microscope field of view shows 40 onion root-tip cells, of which 8 are in mitosis. If the full cell cycle lasts 20 hours, estimate how long mitosis takes. Explain your reasoning.",
]


# ---------------------------------------------------------------------------
# Summaries for revision.
# ---------------------------------------------------------------------------
_SUMMARIES = [
    "the theory of evolution by natural selection",
    "the double-helix structure of DNA",
    "the cell theory",
    "how neurons transmit signals",
    "the difference between the light reactions and the Calvin cycle",
    "how the lungs and heart work together",
    "how the immune system remembers a past infection",
    "what makes an ecosystem stable",
    "how genes are switched on and off in bacteria",
    "how hormones differ from nerve signals",
]


def _summaries():
    forms = [
        "Write a three-sentence summary of {t} for a revision flashcard.",
        "Summarize {t} in a short paragraph a student could learn before a test.",
    ]
    return [_cycle(forms, i).format(t=t) for i, t in enumerate(_SUMMARIES)]


# ---------------------------------------------------------------------------
# Adaptations.
# ---------------------------------------------------------------------------
_ADAPT = [
    ("camel", "hot deserts"),
    ("polar bear", "the Arctic"),
    ("saguaro cactus", "the dry Sonoran Desert"),
    ("emperor penguin", "the Antarctic winter"),
    ("mangrove tree", "salty coastal mud"),
    ("deep-sea anglerfish", "the dark deep ocean"),
    ("water lily", "still ponds"),
    ("kangaroo rat", "deserts with almost no drinking water"),
    ("cheetah", "hunting on open grassland"),
    ("arctic fox", "the tundra"),
    ("hummingbird", "feeding on nectar"),
]


def _adaptations():
    forms = [
        "How is the {o} adapted to {e}? Describe three adaptations.",
        "Name three structural or behavioral adaptations that help the {o} survive in {e}, and explain each.",
    ]
    return [_cycle(forms, i).format(o=o, e=e) for i, (o, e) in enumerate(_ADAPT)]


# ---------------------------------------------------------------------------
# Classic experiments.
# ---------------------------------------------------------------------------
_CLASSIC = [
    "Griffith's experiment with pneumococcus bacteria and mice",
    "the Meselson-Stahl experiment",
    "the Hershey-Chase experiment",
    "the Miller-Urey experiment",
    "Mendel's series of pea plant crosses",
    "Pasteur's swan-neck flask experiment",
    "Fleming's discovery of penicillin",
    "the long-term study of finches on Daphne Major by Peter and Rosemary Grant",
    "Darwin's observations on the voyage of the Beagle",
]


def _classic():
    forms = [
        "Describe {e} and explain what it showed.",
        "What question was {e} trying to answer, and what did it conclude?",
        "Summarize {e} in four sentences: the setup, the result, and why it mattered.",
    ]
    return [_cycle(forms, i).format(e=e) for i, e in enumerate(_CLASSIC)]


# ---------------------------------------------------------------------------
# Assemble.
# ---------------------------------------------------------------------------
# A templated family (a function) is one group; every prompt of a standalone list is its own group.
_FAMILIES = {
    "organelles": _organelles,
    "processes": _processes,
    "compare": _compare,
    "definitions": _definitions,
    "what-if": _WHAT_IF,
    "kids": _kids,
    "examples": _examples,
    "mcq": _mcq,
    "quiz": _quiz,
    "genetics": _GENETICS,
    "hardy-weinberg": _hardy_weinberg,
    "growth": _growth,
    "energy": _ENERGY,
    "dna-tasks": _dna_tasks,
    "experiments": _EXPERIMENTS,
    "scenarios": _SCENARIOS,
    "cause-effect": _CAUSE_EFFECT,
    "misconceptions": _misconceptions,
    "true-false": _true_false,
    "ordering": _ORDERING,
    "roles": _roles,
    "organs": _organs,
    "classification": _classification,
    "microbes": _microbes,
    "plants": _plants,
    "evidence": _evidence,
    "cycles": _cycles,
    "why": _WHY,
    "blanks": _blanks,
    "analogies": _analogies,
    "data": _DATA,
    "summaries": _summaries,
    "adaptations": _adaptations,
    "classic": _classic,
}


def _original() -> list[tuple[str, str]]:
    """The first 459 prompts, unchanged (a templated family's prompts share a group, e.g. "organelles")."""
    return from_families(_FAMILIES, _SEED)


# ---------------------------------------------------------------------------
# Extension: many more topics, each asked several different kinds of question (a kind's prompts share a group),
# appended after the original prompts.
# ---------------------------------------------------------------------------
# (topic, a concrete case to anchor it)
_TOPICS = [
    # cells and molecules
    ("osmosis in living cells", "a slug shrivelling when salt is sprinkled on it"),
    ("facilitated diffusion through channel proteins", "glucose entering red blood cells"),
    ("the sodium-potassium pump", "a resting nerve cell keeping its charge"),
    ("enzyme specificity and the induced-fit model", "lactase breaking down milk sugar"),
    ("the effect of temperature on enzyme activity", "a fever of 41 degrees Celsius"),
    ("ATP as the energy currency of the cell", "a sprinter's muscles in the first ten seconds of a race"),
    ("cell signalling with second messengers", "adrenaline raising blood sugar during a scare"),
    ("apoptosis, or programmed cell death", "the webbing between a human embryo's fingers disappearing"),
    ("the cell cycle checkpoints", "a skin cell with damaged DNA after sunburn"),
    ("stem cells and cell differentiation", "bone marrow making new blood cells every day"),
    ("the fluid mosaic model of the membrane", "how cholesterol keeps membranes flexible in the cold"),
    ("protein folding and denaturation", "an egg white turning solid when it is fried"),
    ("the structure of carbohydrates", "why we can digest starch but not wood"),
    ("lipids and their roles in the body", "a hibernating bear living off its fat stores"),
    ("nucleotides and the structure of nucleic acids", "a DNA test identifying a person from a hair"),
    ("the endosymbiotic origin of mitochondria", "mitochondria having their own small circular DNA"),
    ("cell size and the surface area to volume ratio", "why an elephant is not built from giant cells"),
    ("exocytosis and the secretory pathway", "an insulin-producing cell after a meal"),
    ("fermentation in yeast", "bread dough rising in a warm kitchen"),
    ("lactic acid fermentation in muscle", "the burning feeling in the legs after sprinting uphill"),
    ("photosynthetic pigments", "leaves turning yellow and red in autumn"),
    ("photorespiration", "wheat crops losing yield on hot dry days"),
    ("chemiosmosis and ATP synthase", "the way some poisons stop cells making energy"),
    # genetics and molecular biology
    ("dominant and recessive alleles", "two brown-eyed parents having a blue-eyed child"),
    ("codominance and incomplete dominance", "roan cattle and pink snapdragons"),
    ("sex-linked inheritance", "red-green colour blindness being more common in men"),
    ("genetic linkage and crossing over", "two genes that are usually inherited together"),
    ("polygenic traits", "the wide range of human heights"),
    ("gene mutations and their effects", "sickle cell anemia caused by one changed base"),
    ("chromosome mutations", "Down syndrome and an extra copy of chromosome 21"),
    ("the genetic code and codons", "a point mutation that changes nothing in the protein"),
    ("gene regulation in eukaryotes", "liver and skin cells having the same DNA but different jobs"),
    ("the lac operon", "E. coli switching to lactose when glucose runs out"),
    ("epigenetics and DNA methylation", "identical twins becoming less alike as they age"),
    ("mitochondrial inheritance", "tracing the maternal line of a family with mitochondrial DNA"),
    ("pedigree analysis", "a family tree showing a rare inherited disease"),
    ("the polymerase chain reaction (PCR)", "detecting a virus from a tiny nasal swab"),
    ("gel electrophoresis", "comparing DNA from a crime scene with suspects"),
    ("CRISPR gene editing", "attempts to cure sickle cell disease by editing blood stem cells"),
    ("genetically modified crops", "rice engineered to produce vitamin A"),
    ("DNA sequencing", "reading the genome of a new virus within days"),
    ("recombinant DNA and bacterial plasmids", "bacteria producing human insulin"),
    ("gene therapy", "treating an inherited form of blindness"),
    ("non-coding RNA and microRNAs", "small RNAs that silence genes in plants and animals"),
    ("the human genome project", "how many genes a human actually has"),
    ("genetic testing and ethics", "a test that reveals a high risk of a disease with no cure"),
    # evolution
    ("natural selection", "peppered moths during the industrial revolution"),
    ("genetic drift", "a small island population losing genetic variety"),
    ("the founder effect", "a rare disease being common in one isolated community"),
    ("gene flow between populations", "wolves moving between two national parks"),
    ("sexual selection", "a peacock's enormous tail"),
    ("coevolution", "flowers and the insects that pollinate them"),
    ("convergent evolution", "dolphins and sharks having similar body shapes"),
    ("adaptive radiation", "the many beak shapes of Darwin's finches"),
    ("antibiotic resistance as evolution", "MRSA spreading in hospitals"),
    ("the fossil record", "the transitional fossil Tiktaalik"),
    ("molecular clocks", "estimating when humans and chimpanzees split"),
    ("human evolution", "Neanderthal DNA found in modern humans"),
    ("mass extinctions", "the asteroid impact that ended the age of dinosaurs"),
    ("vestigial structures", "the human appendix and wisdom teeth"),
    ("phylogenetic trees", "whales being more closely related to hippos than to fish"),
    ("speciation by polyploidy", "wheat and many other crop plants"),
    ("kin selection and altruism", "worker bees that never reproduce"),
    # ecology
    ("energy flow through food chains", "why there are so few top predators"),
    ("trophic cascades", "the return of wolves to Yellowstone"),
    ("keystone species", "sea otters protecting kelp forests"),
    ("invasive species", "cane toads spreading across Australia"),
    ("carrying capacity", "deer on an island with no predators"),
    ("predator-prey cycles", "the lynx and snowshoe hare populations in Canada"),
    ("interspecific competition", "two kinds of barnacles on the same rocky shore"),
    ("the ecological niche", "several warbler species feeding in the same tree"),
    ("biomes", "the differences between a tundra and a tropical rainforest"),
    ("eutrophication", "algal blooms in a lake after fertilizer runoff"),
    ("bioaccumulation and biomagnification", "mercury levels in large tuna"),
    ("the carbon cycle", "how burning fossil fuels changes the atmosphere"),
    ("coral reef ecology", "coral bleaching in a marine heatwave"),
    ("wetlands and their functions", "a marsh protecting a town from floods"),
    ("soil ecology", "earthworms and fungi breaking down dead leaves"),
    ("pollination ecology", "the decline of bee populations"),
    ("habitat fragmentation", "a motorway cutting a forest in two"),
    ("rewilding and conservation", "bringing beavers back to European rivers"),
    ("ecological footprints", "the land needed to feed one person for a year"),
    ("climate change and species ranges", "birds arriving earlier in spring"),
    ("ocean acidification", "shellfish struggling to build their shells"),
    ("population growth models", "bacteria growing in a flask with limited food"),
    ("ecosystem services", "the value of insects that pollinate crops"),
    # human physiology
    ("the cardiac cycle", "what a doctor hears through a stethoscope"),
    ("blood pressure regulation", "standing up quickly and feeling dizzy"),
    ("gas exchange in the alveoli", "a climber breathing thin air on a high mountain"),
    ("the control of breathing", "why you cannot hold your breath until you faint"),
    ("hemoglobin and oxygen transport", "carbon monoxide poisoning"),
    ("the lymphatic system", "swollen glands in the neck during a cold"),
    ("kidney function and water balance", "producing less urine on a hot day"),
    ("the liver's many jobs", "the liver clearing alcohol from the blood"),
    ("digestion in the small intestine", "how villi increase the area for absorption"),
    ("the gut microbiome", "the effect of a course of antibiotics on gut bacteria"),
    ("hormonal control of blood glucose", "what happens after eating a sugary snack"),
    ("the thyroid gland and metabolism", "feeling cold and tired with an underactive thyroid"),
    ("the stress response", "cortisol levels during exam season"),
    ("the menstrual cycle hormones", "how hormonal contraceptives work"),
    ("pregnancy and the placenta", "how a fetus gets oxygen without breathing"),
    ("bone growth and remodelling", "astronauts losing bone mass in space"),
    ("skeletal muscle fibre types", "sprinters and marathon runners having different muscles"),
    ("thermoregulation", "sweating and shivering to keep body temperature steady"),
    ("the structure of the eye and vision", "needing glasses for short sight"),
    ("hearing and the inner ear", "hearing loss from loud concerts"),
    ("taste and smell", "food tasting bland when you have a blocked nose"),
    ("the skin as an organ", "the skin healing after a graze"),
    ("homeostasis and negative feedback", "a thermostat-like control of body temperature"),
    # nervous system and behaviour
    ("the structure of the brain", "what an MRI scan shows about different brain regions"),
    ("neurotransmitters", "how caffeine keeps people awake"),
    ("reflex arcs", "pulling your hand away from a hot pan"),
    ("memory formation", "forgetting most of what you read the day before"),
    ("sleep and circadian rhythms", "jet lag after flying across time zones"),
    ("neuroplasticity", "stroke patients relearning to walk"),
    ("animal communication", "the waggle dance of honeybees"),
    ("learned and innate behaviour", "ducklings following the first moving object they see"),
    ("animal migration", "arctic terns flying from pole to pole"),
    ("social behaviour in animals", "meerkats taking turns as lookouts"),
    # immunology and microbiology
    ("antibodies and antigens", "a blood donor's blood type"),
    ("vaccines and immune memory", "a booster shot years after the first dose"),
    ("herd immunity", "measles returning when vaccination rates fall"),
    ("allergies", "hay fever in spring"),
    ("autoimmune disease", "type 1 diabetes"),
    ("inflammation", "a sprained ankle swelling up"),
    ("bacterial growth and reproduction", "food poisoning from rice left out overnight"),
    ("viral replication", "a cold virus spreading through a classroom"),
    ("fungi and their roles", "the mushrooms and moulds in a forest"),
    ("protists", "the parasite that causes malaria"),
    ("biofilms", "plaque on teeth"),
    ("the discovery and action of antibiotics", "penicillin breaking bacterial cell walls"),
    ("pathogens and how diseases spread", "cholera spreading through contaminated water"),
    ("zoonotic diseases", "viruses that jump from bats to humans"),
    ("microbes in food production", "bacteria turning milk into yogurt"),
    # plants
    ("transpiration and water transport", "a tree lifting water to leaves 80 metres up"),
    ("stomata and gas exchange in leaves", "plants closing their pores during a drought"),
    ("phototropism and auxin", "a houseplant bending toward the window"),
    ("flowering and photoperiod", "poinsettias that only bloom when nights are long"),
    ("plant defences", "acacia trees and the ants that guard them"),
    ("seed dispersal", "burrs sticking to a dog's fur"),
    ("plant nutrition and minerals", "yellow leaves on a plant short of nitrogen"),
    ("root nodules and nitrogen-fixing bacteria", "farmers planting clover to enrich soil"),
    ("alternation of generations", "the life cycle of a fern"),
    ("vegetative propagation", "growing a new plant from a cutting"),
    ("plant adaptations to dry habitats", "cacti storing water in their stems"),
    ("the structure of a leaf", "why leaves are thin and flat"),
    ("fruit ripening and ethylene", "a banana ripening faster in a paper bag"),
    # development, reproduction and diversity
    ("embryonic development", "how a single fertilized egg becomes a body with many cell types"),
    ("metamorphosis", "a tadpole turning into a frog"),
    ("sexual and asexual reproduction", "aphids that switch between the two"),
    ("the classification of living things", "why the platypus puzzled early naturalists"),
    ("the diversity of invertebrates", "insects making up most known animal species"),
    ("the evolution of flight", "birds, bats and insects each evolving wings"),
    ("amphibian decline", "the chytrid fungus killing frogs worldwide"),
    ("marine life in the deep sea", "animals living around hydrothermal vents"),
    ("regeneration", "a salamander regrowing a lost leg"),
    ("ageing and telomeres", "why cells stop dividing after many divisions"),
    ("cloning", "Dolly the sheep"),
    ("biodiversity hotspots", "Madagascar's many species found nowhere else"),
    ("extremophiles", "bacteria living in boiling hot springs"),
    ("the origin of life", "simple molecules forming in early Earth conditions"),
    ("bioinformatics", "comparing genes across hundreds of species with a computer"),
    ("model organisms in research", "fruit flies and their role in genetics"),
    ("biotechnology in medicine", "monoclonal antibodies used as drugs"),
    ("ethics of animal research", "testing a new vaccine in mice before people"),
]

_PER_TOPIC = 10  # kinds of question per topic

_TOPIC_FORMS = {
    "topic-simple": "Explain {t} in simple terms, using {c} as the example.",
    "topic-revision": "Revision notes, please: the key points about {t} as bullets, with {c} as the worked example.",
    "topic-misconception": "What do people commonly get wrong about {t}? Use {c} to show what is actually true.",
    "topic-mcq": "Write three multiple-choice questions on {t}, one of them about {c}, with the answers.",
    "topic-experiment": "Design a school-lab investigation of {t}, inspired by {c}. Name the variables.",
    "topic-child": "Explain {t} to a curious ten-year-old, starting from {c}.",
    "topic-why-matters": "Why does {t} matter outside the classroom? Connect it to {c}.",
    "topic-disrupted": "Think about {c}. What goes wrong, biologically, when {t} is disrupted or fails?",
    "topic-flashcards": "Make five flashcards on {t}, including one about {c}.",
    "topic-history": "How did scientists come to understand {t}? Give a brief history, then explain {c} with what "
                     "we know now.",
    "topic-diagram": "Describe the labelled diagram you would draw to explain {t} through {c}.",
    "topic-application": "Give two practical uses of understanding {t}: one related to {c}, one of your choice.",
    "topic-explain-case": "Explain {c}. Which part of {t} is at work there?",
    "topic-three-sentences": "Summarize {t} in three sentences, the last one about {c}.",
    "topic-open-questions": "Which open research questions remain about {t}?",
    "topic-exam-answer": "Write a six-mark exam question on {t} built around {c}, plus a model answer.",
    "topic-analogy": "Give an everyday analogy for {t}, apply it to {c}, and say where the analogy breaks down.",
    "topic-steps": "List the main stages or components of {t} in order, then explain {c} in terms of them.",
    "topic-methods": "Which methods do biologists use to study {t}? How would they investigate {c}?",
    "topic-vocabulary": "Which key terms does a student need to explain {c} in terms of {t}? Define each in one "
                        "sentence.",
    "topic-true-false": "Four true-or-false statements about {t}, one of them on {c}, with answers.",
    "topic-evolution-link": "How does {t} relate to natural selection? Use {c} if it fits.",
    "topic-evidence": "What evidence supports our current understanding of {t}? Refer to {c} if it helps.",
    "topic-university": "At first-year university level, explain {t}, using {c} to illustrate a technical point.",
    "topic-case": "Use {c} as a short case study: which principles of {t} does it illustrate, and how?",
    "topic-talk": "Plan a five-minute talk on {t} that opens with {c}. Give an outline and two likely audience "
                  "questions.",
    "topic-headline": "Write a catchy newspaper-style headline and a short explainer about {c}, making clear what "
                      "it teaches us about {t}.",
    "topic-debate": "Set up a classroom debate related to {t}, using {c} as the starting point. What would each side "
                    "argue?",
    "topic-predict": "Suppose conditions changed in {c}. Using what you know about {t}, predict what would happen "
                     "and why.",
    "topic-data": "Invent a small, realistic data table about {c} and explain what it shows about {t}.",
    "topic-worksheet": "Create a short worksheet on {t}: two recall questions, one question applying it to {c}, and "
                       "one challenge question.",
    "topic-story": "Tell the story of {c} from the point of view of a cell or organism involved, in a way that "
                   "teaches {t}.",
    "topic-mistake": "A student answers an exam question about {c} by saying it has nothing to do with {t}. Write "
                     "feedback explaining the link.",
    "topic-scale": "Explain {t} at three scales, molecules, cells and whole organisms or ecosystems, using {c} "
                   "where it fits.",
    "topic-connect": "How does {t} connect to other big ideas in biology? Build a short concept map in words, "
                     "starting from {c}.",
    "topic-careers": "Which jobs use knowledge of {t} day to day? Mention one linked to {c}.",
    "topic-ethics": "Are there ethical or social questions linked to {t}? Discuss briefly with reference to {c}.",
    "topic-one-minute": "I have one minute to explain {t} to a friend while we look at {c}. What do I say?",
    "topic-feynman": "Explain {t} as if teaching it to a classmate, then list the gaps a listener might still have "
                     "about {c}.",
    "topic-compare-case": "Compare {c} with another example of {t}. What is the same and what is different?",
    "topic-quiz-hard": "Write one hard, thought-provoking question about {t} that uses {c}, and explain the answer.",
    "topic-field-trip": "Plan a field trip or museum visit that would help students understand {t}, ending with a "
                        "discussion of {c}.",
    "topic-glossary-case": "Write a glossary entry for {t}, with {c} as the illustrative example.",
    "topic-cause-chain": "Lay out the chain of causes and effects in {c}, and name the step where {t} comes in.",
    "topic-podcast": "Write the opening of a science podcast episode about {t}, hooking listeners with {c}.",
    "topic-check-claim": "Someone online claims {c} proves that everything we know about {t} is wrong. How would "
                         "you check that claim?",
}


def prompts() -> list[tuple[str, str]]:
    """(group, prompt) pairs in a fixed, deterministic order: the original prompts, then `_PER_TOPIC` kinds of
    question about each of `_TOPICS` (a kind's prompts share a group, e.g. "topic-analogy")."""
    result = _original()
    result += topic_grid(_TOPICS, _TOPIC_FORMS, _PER_TOPIC, _SEED + 1, taken=[p for _, p in result])
    assert len(result) >= 1850, len(result)
    return result
