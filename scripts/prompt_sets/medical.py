"""Medical QA prompts for self-distillation: conditions, symptoms, medications, anatomy, lab values,
patient questions, clinical vignettes, prevention and first aid; educational and non-harmful."""


from . import from_families, topic_grid

_SEED = 9_052_761


def _cycle(options, i):
    """Pick a phrasing deterministically so neighbouring items read differently."""
    return options[i % len(options)]


def _a(phrase):
    """Prefix a noun phrase with the right indefinite article."""
    return ("an " if phrase[0].lower() in "aeiou" else "a ") + phrase


# ---------------------------------------------------------------------------
# Conditions, each with a specific angle so prompts are not mere noun swaps.
# ---------------------------------------------------------------------------
_CONDITIONS = [
    ("high blood pressure (hypertension)", "why it is often called a 'silent killer'"),
    ("type 2 diabetes", "how it differs from type 1 diabetes"),
    ("asthma", "what happens inside the airways during an attack"),
    ("chronic obstructive pulmonary disease (COPD)", "its link with smoking"),
    ("migraine", "how it differs from an ordinary tension headache"),
    ("iron-deficiency anemia", "why it makes people tired"),
    ("hypothyroidism", "which body functions slow down"),
    ("gastroesophageal reflux disease (GERD)", "why symptoms are often worse when lying down"),
    ("osteoarthritis", "how it differs from rheumatoid arthritis"),
    ("gout", "the role of uric acid"),
    ("osteoporosis", "why it is more common in older women"),
    ("a urinary tract infection", "why it is more common in women than in men"),
    ("pneumonia", "how it affects the air sacs of the lungs"),
    ("celiac disease", "why a gluten-free diet is the main treatment"),
    ("eczema (atopic dermatitis)", "common triggers of flare-ups"),
    ("kidney stones", "why drinking plenty of water helps prevent them"),
    ("appendicitis", "why it is treated as an emergency"),
    ("deep vein thrombosis", "why long flights can raise the risk"),
    ("atrial fibrillation", "why it increases the risk of stroke"),
    ("heart failure", "why patients may notice swollen ankles"),
    ("epilepsy", "what happens in the brain during a seizure"),
    ("Parkinson's disease", "the role of dopamine"),
    ("shingles", "its connection to chickenpox"),
    ("sleep apnea", "why it causes daytime sleepiness"),
    ("Crohn's disease", "how it differs from ulcerative colitis"),
    ("peptic ulcer disease", "the role of Helicobacter pylori"),
    ("glaucoma", "why regular eye checks matter"),
    ("psoriasis", "why it is linked to the immune system"),
    ("chronic kidney disease", "its connection with diabetes and high blood pressure"),
    ("Lyme disease", "how it is transmitted"),
]

_OVERVIEW_FORMS = [
    "What is {c}? In your answer, explain {a}.",
    "Give a brief overview of {c}, including {a}.",
    "Explain {c} in plain language, and make sure to cover {a}.",
    "I just read about {c}. Can you explain the condition and {a}?",
]


def _overviews():
    return [_cycle(_OVERVIEW_FORMS, i).format(c=c, a=a) for i, (c, a) in enumerate(_CONDITIONS)]


_SYMPTOM_CONDITIONS = [
    "hypothyroidism", "hyperthyroidism", "type 1 diabetes in a child",
    "a heart attack in women", "a stroke", "iron-deficiency anemia",
    "influenza", "strep throat", "appendicitis", "depression",
    "vitamin B12 deficiency", "a concussion", "dehydration in an older adult",
    "Lyme disease in its early stage",
]


def _symptoms():
    forms = [
        "What are the common symptoms of {c}?",
        "List the typical signs and symptoms of {c}, and say which ones should prompt a visit to a doctor.",
        "How might {c} show up in everyday life? Describe the usual symptoms in simple terms.",
    ]
    return [_cycle(forms, i).format(c=c) for i, c in enumerate(_SYMPTOM_CONDITIONS)]


_RISK = [
    "type 2 diabetes", "coronary artery disease", "osteoporosis", "stroke",
    "skin cancer", "colorectal cancer", "gallstones", "deep vein thrombosis",
    "kidney stones", "age-related macular degeneration",
]


def _risks():
    forms = [
        "What are the main risk factors for {c}? Separate those that can be changed from those that cannot.",
        "Which lifestyle factors raise the risk of {c}, and which risks cannot be modified?",
    ]
    return [_cycle(forms, i).format(c=c) for i, c in enumerate(_RISK)]


_DIAGNOSIS = [
    ("type 2 diabetes", "fasting glucose and HbA1c"),
    ("hypothyroidism", "TSH and free T4"),
    ("iron-deficiency anemia", "a complete blood count and ferritin"),
    ("a urinary tract infection", "urinalysis and urine culture"),
    ("pneumonia", "a chest X-ray"),
    ("a heart attack", "an ECG and troponin levels"),
    ("celiac disease", "antibody blood tests and an intestinal biopsy"),
    ("deep vein thrombosis", "a D-dimer test and a leg ultrasound"),
    ("osteoporosis", "a DEXA bone density scan"),
    ("strep throat", "a rapid antigen test or throat culture"),
    ("sleep apnea", "a sleep study"),
]


def _diagnosis():
    forms = [
        "How is {c} usually diagnosed? Explain what {t} show.",
        "A doctor suspects {c} and orders {t}. What is {e} looking for?",
        "Explain the role of {t} in diagnosing {c}.",
    ]
    out = []
    for i, (c, t) in enumerate(_DIAGNOSIS):
        form = _cycle(forms, i)
        if form.startswith("How is") and " and " not in t:
            form = "How is {c} usually diagnosed? Explain what {t} can show."
        each = "each test" if " and " in t or " or " in t else "this test"
        out.append(form.format(c=c, t=t, e=each))
    return out


_TREATMENT = [
    "mild persistent asthma", "a gout flare", "hypothyroidism", "acid reflux",
    "iron-deficiency anemia", "high LDL cholesterol", "a simple urinary tract infection",
    "plantar fasciitis", "mild to moderate depression", "type 2 diabetes newly diagnosed in an adult",
    "an ankle sprain", "acne in a teenager",
]


def _treatments():
    forms = [
        "Give an overview of the usual treatment options for {c}.",
        "How is {c} typically managed? Mention both lifestyle measures and medical treatment.",
        "What treatments do doctors commonly consider for {c}, and what are the goals of treatment?",
    ]
    return [_cycle(forms, i).format(c=c) for i, c in enumerate(_TREATMENT)]


# ---------------------------------------------------------------------------
# Medications: (drug, class, a specific counseling angle).
# ---------------------------------------------------------------------------
_DRUGS = [
    ("lisinopril", "ACE inhibitor", "why some people develop a dry cough"),
    ("amlodipine", "calcium channel blocker", "why ankle swelling can occur"),
    ("metoprolol", "beta blocker", "why it slows the heart rate"),
    ("atorvastatin", "statin", "why muscle aches should be reported"),
    ("metformin", "biguanide", "why it is often taken with meals"),
    ("omeprazole", "proton pump inhibitor", "why long-term use is reviewed regularly"),
    ("ibuprofen", "NSAID", "why it can irritate the stomach"),
    ("acetaminophen (paracetamol)", "analgesic and antipyretic", "why it is important not to exceed the labelled daily limit"),
    ("amoxicillin", "penicillin antibiotic", "why a penicillin allergy matters"),
    ("ciprofloxacin", "fluoroquinolone antibiotic", "the warning about tendon problems"),
    ("warfarin", "vitamin K antagonist anticoagulant", "why regular INR blood tests are needed"),
    ("sertraline", "selective serotonin reuptake inhibitor (SSRI)", "why it can take several weeks to work"),
    ("levothyroxine", "thyroid hormone replacement", "why it is usually taken on an empty stomach"),
    ("albuterol (salbutamol)", "short-acting beta-2 agonist", "why it can cause shakiness"),
    ("a fluticasone inhaler", "inhaled corticosteroid", "why rinsing the mouth after use is advised"),
    ("prednisone", "oral corticosteroid", "why it should not be stopped abruptly after long use"),
    ("furosemide", "loop diuretic", "why potassium levels are monitored"),
    ("losartan", "angiotensin II receptor blocker (ARB)", "how it differs from an ACE inhibitor"),
    ("cetirizine", "second-generation antihistamine", "why it causes less drowsiness than older antihistamines"),
    ("diphenhydramine", "first-generation antihistamine", "why it can make people drowsy"),
    ("allopurinol", "xanthine oxidase inhibitor", "why it is used to prevent rather than treat gout attacks"),
    ("clopidogrel", "antiplatelet drug", "why patients are told to mention it before dental work or surgery"),
    ("doxycycline", "tetracycline antibiotic", "why sun sensitivity can occur"),
    ("alendronate", "bisphosphonate", "why patients are told to stay upright after taking it"),
    ("ondansetron", "5-HT3 receptor antagonist antiemetic", "why it is often given to people having chemotherapy or surgery"),
    ("simvastatin", "statin", "why grapefruit juice is a concern"),
    ("insulin glargine", "long-acting insulin", "how it differs from rapid-acting insulin"),
    ("sumatriptan", "triptan", "why it is taken at the start of a migraine"),
]

_DRUG_FORMS = [
    "What is {d} used for, and what drug class does it belong to? Also explain {a}.",
    "Explain how {d} works as {ka}, and describe {a}.",
    "A patient has just been prescribed {d}. In simple terms, what should they know about it, including {a}?",
    "What are the common side effects of {d}? Also cover {a}.",
]


def _drugs():
    return [
        _cycle(_DRUG_FORMS, i).format(d=d, k=k, ka=_a(k), a=a) for i, (d, k, a) in enumerate(_DRUGS)
    ]


_DRUG_CLASSES = [
    ("ACE inhibitors", "lower blood pressure"),
    ("beta blockers", "protect the heart"),
    ("statins", "lower cholesterol"),
    ("SSRIs", "treat depression"),
    ("proton pump inhibitors", "reduce stomach acid"),
    ("loop diuretics", "remove excess fluid"),
    ("anticoagulants", "prevent blood clots"),
    ("bronchodilators", "ease breathing in asthma"),
    ("opioid analgesics", "relieve severe pain, and why their use is closely supervised"),
    ("bisphosphonates", "strengthen bones"),
]


def _drug_classes():
    forms = [
        "Explain the mechanism by which {c} {p}.",
        "How do {c} {p}? Name one example drug and one common side effect.",
    ]
    return [_cycle(forms, i).format(c=c, p=p) for i, (c, p) in enumerate(_DRUG_CLASSES)]


_DRUG_COMPARE = [
    "What is the difference between ibuprofen and acetaminophen in how they work and when each might be chosen?",
    "Compare bacterial and viral infections, and explain why antibiotics do not work against viruses.",
    "How do rescue inhalers differ from preventer inhalers in asthma care?",
    "What is the difference between a generic drug and a brand-name drug?",
    "Compare warfarin with newer anticoagulants such as apixaban in terms of monitoring and food interactions.",
    "Compare first-generation and second-generation antihistamines.",
    "What is the difference between type 1 and type 2 diabetes treatments, and why do all people with type 1 need insulin?",
    "How does low-dose aspirin for heart protection differ in purpose from aspirin taken for a headache?",
]

_INTERACTIONS = [
    "Why are people taking warfarin advised to keep their intake of leafy green vegetables consistent?",
    "Why should NSAIDs be used with caution by people with kidney disease or stomach ulcers?",
    "Why is alcohol a concern for people taking acetaminophen regularly?",
    "Why should some antibiotics, such as doxycycline, not be taken at the same time as milk or antacids?",
    "Why do pharmacists ask about all the medicines and supplements a patient takes, including herbal products like St John's wort?",
    "Why should people taking a blood thinner check with a pharmacist before taking over-the-counter pain relievers?",
]


# ---------------------------------------------------------------------------
# Patient-style questions.
# ---------------------------------------------------------------------------
_PATIENT = [
    "I've had a sore throat and a fever of 38.5 °C for three days, and it hurts to swallow. Should I see a doctor, or wait it out?",
    "I get heartburn almost every night after dinner. What can I change in my habits, and when should I get it checked?",
    "My blood pressure reading at the pharmacy was 148/94. I feel fine. Should I be worried, and what should I do next?",
    "I twisted my ankle playing football yesterday and it is swollen but I can walk on it. How should I look after it?",
    "I have a cold with a runny nose and cough. Should I ask my doctor for antibiotics?",
    "I often wake up at night needing to urinate and I'm always thirsty lately. Could this mean something?",
    "My 4-year-old has a fever of 38 °C but is playing and drinking normally. When should I worry?",
    "I forgot to take my blood pressure pill this morning and it's now evening. What is the usual advice, and who should I ask?",
    "I've had a headache most afternoons for two weeks. What common causes should I think about, and which warning signs mean I should see a doctor quickly?",
    "I'm 45 and my doctor mentioned colorectal cancer screening. What does screening involve and why start at this age?",
    "I feel tired all the time even though I sleep eight hours. What kinds of things could a doctor check?",
    "I have a red, itchy rash on both elbows that keeps coming back. What could it be, and what kind of doctor should I see?",
    "My father was just diagnosed with atrial fibrillation. What does that mean for him day to day?",
    "I was bitten by a tick while hiking two days ago. What should I watch for?",
    "I've started a new antidepressant and feel a bit nauseous. Is this normal, and should I stop taking it?",
    "I'm pregnant and wondering why my midwife told me to take folic acid. What does it do?",
    "My cholesterol came back high. Besides medication, what can I do about it?",
    "I get short of breath climbing stairs, which didn't happen a year ago. Should I get this checked?",
    "I burned my hand on a hot pan and there is a small blister. How should I care for it at home?",
    "My teenager gets panic attacks before exams. What is a panic attack and how can we help?",
    "I have lower back pain after moving furniture. What can I do at home, and what symptoms would need urgent care?",
    "My eyes feel dry and gritty after long days at the computer. What might help?",
    "I'm going on a long-haul flight next week. How can I lower my risk of blood clots?",
    "I have a mole that has changed shape and gotten darker. Should I have it looked at?",
    "My doctor said I have prediabetes. What does that mean and can it be reversed?",
    "I've been coughing for four weeks after a cold. Is that still normal?",
    "Is it safe to take ibuprofen and acetaminophen together for a bad toothache? What should I check first?",
    "My grandmother seems more forgetful lately. What is the difference between normal aging and dementia?",
]


# ---------------------------------------------------------------------------
# Clinical vignettes.
# ---------------------------------------------------------------------------
_VIGNETTES = [
    "A 58-year-old man who smokes presents with crushing chest pain spreading to his left arm, sweating and nausea for 30 minutes. What is the most likely diagnosis, and what initial tests are important?",
    "A 24-year-old woman has burning on urination, frequency and urgency for two days, with no fever or back pain. What is the likely diagnosis, and how is it usually confirmed?",
    "A 19-year-old student has fever, a severe headache, neck stiffness and sensitivity to light. What serious condition must be considered, and why is it urgent?",
    "A 70-year-old woman suddenly develops weakness of her right arm, a drooping face on the right and slurred speech. What is the likely diagnosis, and why does the time of onset matter?",
    "A 30-year-old woman reports weight loss, a fast heartbeat, heat intolerance and a tremor. Which gland is probably involved, and what blood test would help?",
    "A 12-year-old boy has lost weight over a month, drinks constantly and urinates often. What condition is likely, and what simple test can support it?",
    "A 45-year-old man wakes at night with a very painful, red, swollen big toe after a heavy meal with alcohol. What is the most likely diagnosis?",
    "A 65-year-old woman has a hip fracture after a minor fall. What underlying bone condition should be investigated, and how?",
    "A 28-year-old woman has fatigue, pale skin and heavy menstrual periods. Her hemoglobin is low. What type of anemia is most likely, and what further test would confirm it?",
    "A 35-year-old man has pain that began around his belly button and moved to the lower right abdomen, with fever and loss of appetite. What is the likely diagnosis?",
    "A 60-year-old man with a long smoking history has a chronic cough with sputum and breathlessness that has slowly worsened over years. What condition is likely, and what test confirms it?",
    "A 50-year-old woman has swelling and pain in one calf after a long flight. What condition should be ruled out, and how?",
    "A 40-year-old woman has aching joints in both hands, with morning stiffness lasting over an hour. What condition does this pattern suggest?",
    "A 6-year-old has itchy, dry patches in the creases of his elbows and knees, and a history of hay fever. What is the likely diagnosis?",
    "A 55-year-old man with diabetes has a foot ulcer he did not notice because he cannot feel pain there. Explain why this happens and why foot care matters in diabetes.",
    "A 33-year-old woman has episodes of one-sided throbbing headache with nausea and sensitivity to light, each lasting about a day. What is the likely diagnosis?",
    "A 72-year-old man on a diuretic reports muscle weakness and cramps, and his potassium is 3.0 mmol/L. What is the likely cause?",
    "A 25-year-old has bloating, diarrhea and weight loss, and blood tests show iron deficiency. What digestive condition should be considered, and what tests would help?",
    "An 80-year-old woman becomes confused over two days, and her urine is cloudy and foul-smelling. What common cause of sudden confusion in older adults should be considered?",
    "A 47-year-old woman has episodes of pain in the upper right abdomen after fatty meals. What is the likely cause, and which imaging test is usually used first?",
    "A 22-year-old runner collapses on a hot day, is confused, and has a very high body temperature. What condition is this, and what is the immediate priority?",
    "A 68-year-old man has had gradually worsening blurred central vision that makes reading difficult. Name two possible eye conditions and how they are told apart.",
    "A 3-year-old suddenly starts coughing and wheezing while eating peanuts, with no prior illness. What should be suspected?",
    "A 52-year-old woman on warfarin has an INR of 5.2 and noticed easy bruising. What does this result mean?",
]

_VIGNETTE_SUFFIXES = [
    "",
    " Explain your reasoning briefly.",
    " Answer for a medical student, in under 150 words.",
]


def _vignettes():
    return [v + _cycle(_VIGNETTE_SUFFIXES, i) for i, v in enumerate(_VIGNETTES)]


# ---------------------------------------------------------------------------
# Lab values.
# ---------------------------------------------------------------------------
_LAB_RESULTS = [
    "A fasting blood glucose of 132 mg/dL on two separate days",
    "An HbA1c of 6.0%",
    "A serum potassium of 6.1 mmol/L",
    "A serum sodium of 128 mmol/L",
    "A TSH of 9.5 mIU/L with a low free T4",
    "A hemoglobin of 9.8 g/dL in an adult woman",
    "A platelet count of 60 x 10^9/L",
    "A white blood cell count of 16 x 10^9/L with mostly neutrophils",
    "An LDL cholesterol of 190 mg/dL",
    "An eGFR of 42 mL/min/1.73 m²",
    "A ferritin of 6 ng/mL",
    "An INR of 2.5 during warfarin treatment for atrial fibrillation",
]


def _labs():
    forms = [
        "{r}: is this normal, and what might it suggest?",
        "How would a doctor interpret {r_l}? Give the usual normal range for comparison.",
        "Explain to a patient what {r_l} means, and what the next steps might be.",
    ]
    out = []
    for i, r in enumerate(_LAB_RESULTS):
        r_l = r[0].lower() + r[1:]
        out.append(_cycle(forms, i).format(r=r, r_l=r_l))
    return out


_LAB_TESTS = [
    "a complete blood count (CBC)", "a lipid panel", "a liver function test",
    "an HbA1c test", "a urinalysis", "a C-reactive protein (CRP) test",
    "a basic metabolic panel", "a troponin test", "a PSA test",
    "a thyroid function test",
]


def _lab_tests():
    forms = [
        "What does {t} measure, and why might a doctor order one?",
        "Explain in simple terms what {t} is used for and what abnormal results might point to.",
    ]
    return [_cycle(forms, i).format(t=t) for i, t in enumerate(_LAB_TESTS)]


# ---------------------------------------------------------------------------
# Anatomy and physiology.
# ---------------------------------------------------------------------------
_ANATOMY = [
    ("liver", "what happens when it is damaged by long-term heavy drinking"),
    ("pancreas", "its two roles, in digestion and in hormone production"),
    ("spleen", "how people manage without it after it has been removed"),
    ("thyroid gland", "how its hormones affect metabolism"),
    ("adrenal glands", "what they release during a stressful situation"),
    ("kidneys", "how they help control blood pressure"),
    ("rotator cuff", "why it is often injured in sports that involve throwing"),
    ("anterior cruciate ligament (ACL)", "how it is commonly torn"),
    ("pituitary gland", "why it is sometimes called the 'master gland'"),
    ("gallbladder", "what happens to digestion after it is removed"),
    ("diaphragm", "its role in breathing"),
    ("meniscus of the knee", "what symptoms a tear might cause"),
    ("appendix", "why inflammation there can become dangerous"),
    ("prostate", "why it can cause urinary symptoms as men age"),
]


def _anatomy():
    forms = [
        "Where is the {o} located, and what does it do? Also explain {x}.",
        "Describe the structure and function of the {o}, including {x}.",
        "Give a short anatomy lesson on the {o}: location, job, and {x}.",
    ]
    out = []
    for i, (o, x) in enumerate(_ANATOMY):
        form = _cycle(forms, i)
        if o in ("adrenal glands", "kidneys"):
            form = form.replace("is located", "are located").replace(" does it do", " do they do")
        out.append(form.format(o=o, x=x))
    return out


_PHYSIOLOGY = [
    "Trace the path of blood through the four chambers of the heart, naming the valves it passes.",
    "How does the body keep blood sugar within a normal range after a meal and during fasting?",
    "Explain how the kidneys filter the blood and make urine, in five steps.",
    "How does the body cool itself down on a hot day?",
    "Explain what blood pressure numbers mean: what is systolic and what is diastolic pressure?",
    "How do the lungs get oxygen into the blood and carbon dioxide out?",
    "What happens in the body during the 'fight or flight' response?",
    "How does the immune system respond the second time it meets the same germ?",
    "Explain how a nerve impulse travels from the brain to a muscle to produce movement.",
    "How does bone heal after a fracture? Describe the main stages.",
]


# ---------------------------------------------------------------------------
# First aid.
# ---------------------------------------------------------------------------
_FIRST_AID = [
    ("a minor burn from touching a hot oven tray", "what not to put on it"),
    ("an adult who is choking and cannot speak or cough", "when to call emergency services"),
    ("a nosebleed", "the correct head position"),
    ("a sprained ankle", "what the RICE method stands for"),
    ("someone who has fainted", "how to position them and when to get help"),
    ("a bee sting", "the signs of a serious allergic reaction"),
    ("heat exhaustion during a summer hike", "how it differs from heatstroke"),
    ("a person with diabetes who is shaky, sweaty and confused", "why a sugary drink may help if they can swallow"),
    ("a person having a seizure", "what you should never do during the seizure"),
    ("a small cut that is bleeding steadily", "signs that it might need stitches"),
    ("a suspected broken arm", "how to keep it still while waiting for help"),
    ("a child who may have swallowed a household cleaning product", "why you should contact poison control before doing anything else"),
    ("someone who collapses and is not breathing normally", "the basic steps of CPR and how an AED is used"),
    ("a dog bite that breaks the skin", "why medical advice is important afterwards"),
]


def _first_aid():
    forms = [
        "What are the first aid steps for {s}? Include {x}.",
        "Describe how to give first aid for {s}, and explain {x}.",
        "Explain, step by step, what a bystander should do for {s}. Mention {x}.",
    ]
    return [_cycle(forms, i).format(s=s, x=x) for i, (s, x) in enumerate(_FIRST_AID)]


# ---------------------------------------------------------------------------
# Prevention, screening, vaccines.
# ---------------------------------------------------------------------------
_PREVENTION = [
    "heart disease", "type 2 diabetes", "influenza spreading through a household",
    "skin cancer", "falls in older adults", "food poisoning at home",
    "osteoporosis", "hospital-acquired infections", "tooth decay in children",
    "back injuries at work", "mosquito-borne diseases while traveling",
    "noise-induced hearing loss",
]


def _prevention():
    forms = [
        "What are the most effective ways to prevent {c}?",
        "Give five practical, evidence-based tips for reducing the risk of {c}.",
        "What can be done to lower the risk of {c}? Explain why each measure works.",
    ]
    return [_cycle(forms, i).format(c=c) for i, c in enumerate(_PREVENTION)]


_SCREENING = [
    "Why is a Pap smear or HPV test used in cervical cancer screening, and what does it look for?",
    "What is a mammogram, and why is it used for breast cancer screening?",
    "Why do doctors recommend regular blood pressure checks for adults even when they feel well?",
    "What is the purpose of newborn screening with a heel-prick blood test?",
    "What are the options for colorectal cancer screening, and how do they differ?",
    "Why might a doctor recommend a lung cancer screening CT scan for a long-term heavy smoker?",
    "What is the difference between a screening test and a diagnostic test? Give an example of each.",
]

_VACCINES = [
    ("the MMR vaccine", "which three diseases it protects against"),
    ("the HPV vaccine", "why it is given before people become sexually active"),
    ("the annual flu vaccine", "why it must be updated each year"),
    ("the tetanus vaccine", "why boosters are needed after some wounds"),
    ("the hepatitis B vaccine", "why it is given to newborns in many countries"),
    ("the shingles vaccine", "why it is offered to older adults"),
    ("herd immunity", "why it protects people who cannot be vaccinated"),
]


def _vaccines():
    forms = [
        "Explain {v}, including {x}.",
        "What should people know about {v}? Cover {x}.",
    ]
    return [_cycle(forms, i).format(v=v, x=x) for i, (v, x) in enumerate(_VACCINES)]


# ---------------------------------------------------------------------------
# Terminology, procedures, comparisons.
# ---------------------------------------------------------------------------
_TERMS = [
    "tachycardia", "hypertension", "edema", "dyspnea", "hepatomegaly",
    "nephrolithiasis", "bradycardia", "hyperglycemia", "arthralgia",
    "tinnitus", "syncope", "gastroenteritis", "cholecystectomy", "pruritus",
]


def _terms():
    forms = [
        "What does the medical term '{t}' mean? Break it into its word parts if possible.",
        "Define '{t}' and give an example of when a doctor might use this word.",
        "Explain the medical term {t} in everyday language.",
    ]
    return [_cycle(forms, i).format(t=t) for i, t in enumerate(_TERMS)]


_ROOTS = [
    "What do the prefixes 'hyper-' and 'hypo-' mean in medical terms? Give two examples of each.",
    "What does the suffix '-itis' mean? List five conditions that use it.",
    "Explain the difference between the suffixes '-ectomy', '-otomy' and '-oscopy', with an example of each.",
    "What body parts do the roots 'cardi-', 'hepat-', 'nephr-' and 'gastr-' refer to?",
]

_PROCEDURES = [
    "an MRI scan", "a CT scan", "a colonoscopy", "an electrocardiogram (ECG)",
    "an echocardiogram", "a lumbar puncture", "an upper endoscopy",
    "spirometry", "a biopsy", "a stress test",
]


def _procedures():
    forms = [
        "What is {p}, what is it used for, and what can a patient expect during it?",
        "Explain {p} to a nervous patient who has never had one.",
    ]
    return [_cycle(forms, i).format(p=p) for i, p in enumerate(_PROCEDURES)]


_COMPARE = [
    ("a cold", "the flu"),
    ("a heart attack", "cardiac arrest"),
    ("type 1 diabetes", "type 2 diabetes"),
    ("an ischemic stroke", "a hemorrhagic stroke"),
    ("Crohn's disease", "ulcerative colitis"),
    ("osteoarthritis", "rheumatoid arthritis"),
    ("a food allergy", "a food intolerance"),
    ("viral conjunctivitis", "bacterial conjunctivitis"),
    ("a sprain", "a strain"),
    ("an MRI", "a CT scan"),
    ("heat exhaustion", "heatstroke"),
    ("dementia", "delirium"),
]


def _compare():
    forms = [
        "What is the difference between {a} and {b}?",
        "Compare {a} and {b} in terms of cause, symptoms and treatment.",
        "How can someone tell {a} apart from {b}? Keep it brief and practical.",
    ]
    return [_cycle(forms, i).format(a=a, b=b) for i, (a, b) in enumerate(_COMPARE)]


# ---------------------------------------------------------------------------
# MCQ, quiz, true/false, myths.
# ---------------------------------------------------------------------------
_MCQ = [
    ("Which organ produces insulin?", ["liver", "pancreas", "kidney", "spleen"]),
    ("Which vitamin deficiency causes scurvy?", ["vitamin A", "vitamin B12", "vitamin C", "vitamin D"]),
    ("Which of these is a common side effect of ACE inhibitors?", ["dry cough", "hair loss", "blue vision", "weight loss"]),
    ("What is the normal resting heart rate range for most adults?", ["30-50 beats per minute", "60-100 beats per minute", "110-140 beats per minute", "150-180 beats per minute"]),
    ("Which blood test is most useful for monitoring long-term blood sugar control?", ["fasting glucose", "HbA1c", "serum sodium", "troponin"]),
    ("Which type of blood vessel carries oxygen-rich blood from the lungs to the heart?", ["pulmonary artery", "pulmonary vein", "vena cava", "coronary artery"]),
    ("Which drug class is albuterol?", ["beta blocker", "short-acting beta-2 agonist", "corticosteroid", "antihistamine"]),
    ("What does the 'R' in the RICE method for sprains stand for first?", ["run", "rest", "rub", "rotate"]),
    ("Which organism causes most cases of stomach ulcers?", ["Escherichia coli", "Helicobacter pylori", "Candida albicans", "Staphylococcus aureus"]),
    ("Which bone is the longest in the human body?", ["humerus", "tibia", "femur", "spine"]),
    ("Low levels of which hormone cause hypothyroidism?", ["cortisol", "thyroxine", "insulin", "adrenaline"]),
    ("Which of these is a warning sign of stroke?", ["sudden facial drooping", "a mild runny nose", "itchy skin", "dry eyes"]),
    ("Which mineral is most important for healthy bones alongside vitamin D?", ["sodium", "calcium", "iron", "potassium"]),
    ("Which class of drugs treats bacterial infections?", ["antivirals", "antibiotics", "antihistamines", "antacids"]),
    ("Which of these conditions is caused by a virus?", ["strep throat", "tuberculosis", "shingles", "a urinary tract infection"]),
]

_MCQ_LEADS = [
    "Answer this multiple-choice question and explain the correct choice.",
    "Medical quiz (choose A, B, C or D and justify):",
    "Select the best answer and briefly explain why the others are incorrect.",
]


def _mcq():
    out = []
    for i, (q, opts) in enumerate(_MCQ):
        letters = " ".join(f"{l}) {o}" for l, o in zip("ABCD", opts))
        out.append(f"{_cycle(_MCQ_LEADS, i)} {q} {letters}")
    return out


_QUIZ = [
    "What is the normal human body temperature, roughly, in Celsius?",
    "Which organ filters toxins from the blood and makes bile?",
    "How many chambers does the human heart have?",
    "What is the name of the largest artery in the body?",
    "Which vitamin is made in the skin when exposed to sunlight?",
    "What is the medical name for the kneecap?",
    "Which blood type is often called the universal donor for red cells?",
    "What do white blood cells mainly do?",
    "What does BMI stand for, and how is it calculated?",
    "Which part of the eye controls how much light enters?",
    "What is the main function of the small intestine?",
    "Which gland in the neck regulates metabolism?",
]


def _quiz():
    forms = [
        "Quick health quiz: {q}",
        "Short-answer medical question: {q} Add one sentence of context.",
    ]
    return [_cycle(forms, i).format(q=q) for i, q in enumerate(_QUIZ)]


_MYTHS = [
    "you can catch a cold from going outside with wet hair",
    "antibiotics help you recover faster from the flu",
    "cracking your knuckles causes arthritis",
    "you should put butter on a burn",
    "vaccines cause autism",
    "you only use 10% of your brain",
    "you need to drink exactly eight glasses of water a day",
    "you should tilt your head back during a nosebleed",
    "feeding a cold and starving a fever helps you recover",
    "if you feel fine, your blood pressure must be normal",
]


def _myths():
    forms = [
        "Myth or fact: {m}. Explain what the evidence says.",
        "Many people believe that {m}. Is this true? Give a short, evidence-based answer.",
    ]
    return [_cycle(forms, i).format(m=m) for i, m in enumerate(_MYTHS)]


_TRUE_FALSE = [
    "High blood pressure usually causes noticeable symptoms.",
    "Type 2 diabetes can sometimes be put into remission through weight loss.",
    "A person can have a heart attack without chest pain.",
    "Antibiotic resistance happens when a person's body becomes used to antibiotics.",
    "Most sore throats are caused by viruses.",
    "Osteoporosis only affects women.",
    "Generic medicines contain the same active ingredient as the brand-name version.",
    "A normal blood oxygen saturation in a healthy adult at sea level is usually 95% or higher.",
]


def _true_false():
    forms = [
        "True or false: {s} Explain briefly.",
        "Is this statement true or false? \"{s}\" Justify your answer.",
    ]
    return [_cycle(forms, i).format(s=s) for i, s in enumerate(_TRUE_FALSE)]


# ---------------------------------------------------------------------------
# Red flags, child explanations, what-if, lifestyle, nutrition, mental health.
# ---------------------------------------------------------------------------
_RED_FLAGS = [
    "a headache", "abdominal pain", "chest pain", "a fever in a baby under three months old",
    "back pain", "shortness of breath", "a cough", "dizziness",
]


def _red_flags():
    forms = [
        "What warning signs with {s} mean a person should seek emergency care right away?",
        "When is {s} a reason to go to the emergency department rather than wait for a regular appointment?",
    ]
    return [_cycle(forms, i).format(s=s) for i, s in enumerate(_RED_FLAGS)]


_KIDS = [
    "what happens when you get a vaccine",
    "why we get a fever when we are sick",
    "why washing hands stops germs from spreading",
    "what asthma is",
    "why you need to brush your teeth",
    "how a cast helps a broken bone heal",
    "what allergies are",
    "why doctors listen to the heart with a stethoscope",
    "why sleep is important for growing bodies",
]


def _kids():
    forms = [
        "Explain to a 12-year-old {t}.",
        "A 12-year-old patient asks {t}. How would you explain it in a friendly, reassuring way?",
        "In simple words for a child of about 12, explain {t}.",
    ]
    return [_cycle(forms, i).format(t=t) for i, t in enumerate(_KIDS)]


_WHAT_IF = [
    "What would happen to the body if the kidneys stopped working?",
    "What happens to blood sugar levels if a person with type 1 diabetes misses several insulin doses? Explain why this is dangerous.",
    "What would happen if a person stopped taking a prescribed antibiotic course early because they felt better?",
    "What happens to the body during severe dehydration?",
    "What happens in the heart muscle if a coronary artery becomes completely blocked?",
    "What would happen to calcium levels and bones if a person had very little vitamin D for years?",
    "What happens to the lungs over time when someone smokes for many years?",
    "What would happen if the thyroid gland produced far too much hormone?",
    "What happens to the body when the blood sodium level falls too low, for example after drinking extreme amounts of water during a marathon?",
]

_LIFESTYLE = [
    ("high blood pressure", "salt intake and physical activity"),
    ("type 2 diabetes", "diet and weight"),
    ("GERD", "meal timing and sleeping position"),
    ("osteoarthritis of the knee", "exercise and weight"),
    ("high cholesterol", "dietary fats and fiber"),
    ("insomnia", "sleep habits and screen use"),
    ("irritable bowel syndrome", "diet and stress"),
    ("COPD", "smoking cessation and pulmonary rehabilitation"),
]


def _lifestyle():
    forms = [
        "What lifestyle changes help people manage {c}? Focus on {f}.",
        "Besides medication, how can someone with {c} improve their health? Discuss {f}.",
    ]
    return [_cycle(forms, i).format(c=c, f=f) for i, (c, f) in enumerate(_LIFESTYLE)]


_NUTRITION = [
    ("vitamin B12", "people following a vegan diet"),
    ("vitamin D", "people who rarely go outdoors"),
    ("iron", "teenage girls and pregnant women"),
    ("folate", "women planning a pregnancy"),
    ("calcium", "older adults"),
    ("iodine", "people living in regions with iodine-poor soil"),
    ("vitamin C", "people who eat very few fruits and vegetables"),
    ("vitamin A", "young children in places where food choices are very limited"),
]


def _nutrition():
    forms = [
        "What does {n} do in the body, and why might {g} be at risk of not getting enough?",
        "Describe the signs of {n} deficiency and explain why {g} are more likely to be affected.",
    ]
    return [_cycle(forms, i).format(n=n, g=g) for i, (n, g) in enumerate(_NUTRITION)]


_MENTAL = [
    "What is the difference between ordinary sadness and clinical depression?",
    "What are common symptoms of generalized anxiety disorder, and what treatments are available?",
    "How does regular exercise benefit mental health?",
    "What is cognitive behavioral therapy, and how does it help people with anxiety?",
    "What are the signs of burnout, and how is it different from depression?",
    "How can someone support a friend who seems to be struggling with their mental health, and where can they point them for professional help?",
]


# ---------------------------------------------------------------------------
# Pathophysiology step by step and differential diagnosis.
# ---------------------------------------------------------------------------
_PATHO = [
    "Explain step by step how atherosclerosis develops and how it can lead to a heart attack.",
    "Describe step by step how an allergic reaction to pollen produces sneezing and itchy eyes.",
    "Explain step by step how insulin resistance develops into type 2 diabetes.",
    "Walk through, step by step, how a blood clot in a leg vein can end up in the lungs.",
    "Explain step by step how untreated high blood pressure damages the heart, kidneys and brain over time.",
    "Describe the steps by which a bacterial infection in the bladder can spread to the kidneys.",
    "Explain how gallstones form, step by step.",
    "Explain step by step how asthma triggers lead to narrowed airways.",
]

_DIFFERENTIAL = [
    "List the common causes of chest pain, from harmless to life-threatening.",
    "What are some common causes of chronic fatigue that a doctor might look for?",
    "Name four possible causes of a persistent cough lasting more than eight weeks.",
    "What conditions can cause swollen ankles, and how might a doctor tell them apart?",
    "List common causes of dizziness and explain how vertigo differs from feeling lightheaded.",
    "What are the main causes of low back pain in young adults?",
    "What could cause unintentional weight loss in an older adult? List several possibilities.",
]


# ---------------------------------------------------------------------------
# Assemble.
# ---------------------------------------------------------------------------
# A templated family (a function) is one group; every prompt of a standalone list is its own group.
_FAMILIES = {
    "overviews": _overviews,
    "symptoms": _symptoms,
    "risks": _risks,
    "diagnosis": _diagnosis,
    "treatments": _treatments,
    "drugs": _drugs,
    "drug-classes": _drug_classes,
    "drug-compare": _DRUG_COMPARE,
    "interactions": _INTERACTIONS,
    "patient": _PATIENT,
    "vignettes": _vignettes,
    "labs": _labs,
    "lab-tests": _lab_tests,
    "anatomy": _anatomy,
    "physiology": _PHYSIOLOGY,
    "first-aid": _first_aid,
    "prevention": _prevention,
    "screening": _SCREENING,
    "vaccines": _vaccines,
    "terms": _terms,
    "roots": _ROOTS,
    "procedures": _procedures,
    "compare": _compare,
    "mcq": _mcq,
    "quiz": _quiz,
    "myths": _myths,
    "true-false": _true_false,
    "red-flags": _red_flags,
    "kids": _kids,
    "what-if": _WHAT_IF,
    "lifestyle": _lifestyle,
    "nutrition": _nutrition,
    "mental": _MENTAL,
    "patho": _PATHO,
    "differential": _DIFFERENTIAL,
}


def _original() -> list[tuple[str, str]]:
    """The first 415 prompts, unchanged (a templated family's prompts share a group, e.g. "overviews")."""
    return from_families(_FAMILIES, _SEED)


# ---------------------------------------------------------------------------
# Extension: many more topics, each asked several different kinds of question (a kind's prompts share a group),
# appended after the original prompts. Educational and non-harmful, like the rest of the set.
# ---------------------------------------------------------------------------
# (topic, a patient situation or concrete case to anchor it)
_TOPICS = [
    # cardiovascular
    ("heart failure", "an older man whose ankles swell and who gets breathless lying flat"),
    ("atrial fibrillation", "a woman who notices an irregular, racing pulse on her smartwatch"),
    ("angina", "chest tightness that comes on when climbing a hill and eases with rest"),
    ("deep vein thrombosis", "a swollen, painful calf after a long flight"),
    ("high cholesterol", "a routine blood test showing a raised LDL level"),
    ("peripheral artery disease", "calf pain when walking that stops after a short rest"),
    ("heart valve disease", "a heart murmur found at a school medical check"),
    ("stroke", "sudden weakness of one arm and slurred speech"),
    ("fainting (syncope)", "a teenager who faints after standing for a long time in the heat"),
    ("varicose veins", "a hairdresser with aching, bulging leg veins"),
    # respiratory
    ("pneumonia", "a fever, cough with coloured sputum and pain on breathing in"),
    ("asthma control", "a child who coughs at night and wheezes when playing football"),
    ("sleep apnea", "loud snoring with pauses in breathing and daytime sleepiness"),
    ("pulmonary embolism", "sudden breathlessness a week after hip surgery"),
    ("tuberculosis", "a persistent cough, night sweats and weight loss"),
    ("bronchiolitis in babies", "an infant who is breathing fast and feeding poorly during winter"),
    ("croup", "a toddler with a barking cough at night"),
    ("cystic fibrosis", "a newborn screening result that needs follow-up"),
    ("smoking cessation", "a long-time smoker who wants to quit before surgery"),
    # endocrine and metabolic
    ("type 1 diabetes", "a child who is losing weight, very thirsty and passing lots of urine"),
    ("type 2 diabetes management", "a newly diagnosed adult worried about needing insulin"),
    ("hypoglycemia", "a person with diabetes who becomes shaky and confused before lunch"),
    ("hyperthyroidism", "weight loss, a racing heart and feeling hot all the time"),
    ("gestational diabetes", "a routine glucose test in the second trimester"),
    ("polycystic ovary syndrome", "irregular periods, acne and difficulty losing weight"),
    ("osteoporosis", "a wrist fracture after a minor fall in a woman over 60"),
    ("vitamin D deficiency", "an office worker with aching bones during a dark winter"),
    ("gout", "a sudden, very painful, red big toe joint overnight"),
    ("obesity and metabolic health", "a person whose waist size has crept up over ten years"),
    ("adrenal insufficiency", "fatigue, dizziness and salt cravings"),
    # gastrointestinal and liver
    ("gastroesophageal reflux disease", "burning behind the breastbone after large evening meals"),
    ("irritable bowel syndrome", "bloating and changing bowel habits that get worse with stress"),
    ("celiac disease", "diarrhoea, tiredness and anemia that improve on a gluten-free diet"),
    ("inflammatory bowel disease", "a young adult with bloody diarrhoea and weight loss"),
    ("gallstones", "pain under the right ribs after a fatty meal"),
    ("appendicitis", "pain that starts around the belly button and moves to the lower right"),
    ("fatty liver disease", "an ultrasound showing a fatty liver in someone who rarely drinks"),
    ("hepatitis B", "a blood test before starting work in a hospital"),
    ("stomach ulcers", "gnawing upper abdominal pain and long-term use of anti-inflammatory painkillers"),
    ("constipation", "an older person on several medicines who struggles to open their bowels"),
    ("gastroenteritis", "a family with vomiting and diarrhoea after a party"),
    ("colorectal cancer screening", "a home stool test kit arriving in the post at age 50"),
    # kidney and urinary
    ("chronic kidney disease", "a blood test showing a falling eGFR in someone with diabetes"),
    ("kidney stones", "severe pain in the side that comes in waves and spreads to the groin"),
    ("urinary tract infections", "burning when passing urine and needing to go very often"),
    ("enlarged prostate", "a man in his sixties who gets up several times a night to urinate"),
    ("urinary incontinence", "leaking urine when coughing or sneezing after childbirth"),
    ("dehydration", "an older person who drank little during a heatwave"),
    # neurological
    ("migraine management", "a student who misses classes with one-sided headaches and light sensitivity"),
    ("epilepsy", "a first seizure in a teenager"),
    ("Parkinson's disease", "a tremor in one hand at rest and smaller handwriting"),
    ("multiple sclerosis", "blurred vision in one eye that improves over weeks"),
    ("dementia", "a parent who repeats questions and gets lost on familiar routes"),
    ("concussion", "a rugby player who is dazed after a tackle"),
    ("carpal tunnel syndrome", "tingling fingers at night in someone who types all day"),
    ("shingles", "a painful band of blisters on one side of the chest"),
    ("Bell's palsy", "waking up with one side of the face drooping"),
    ("peripheral neuropathy", "numb feet in a person who has had diabetes for years"),
    # musculoskeletal
    ("osteoarthritis", "stiff, painful knees that are worse after walking"),
    ("rheumatoid arthritis", "swollen finger joints that are stiff for an hour every morning"),
    ("low back pain", "back pain after lifting boxes during a house move"),
    ("tendinitis", "elbow pain in a tennis player"),
    ("sprains and strains", "an ankle that rolled on uneven ground"),
    ("fractures and bone healing", "a forearm cast after a fall from a bike"),
    ("frozen shoulder", "a shoulder that has slowly become stiff and painful over months"),
    ("plantar fasciitis", "sharp heel pain with the first steps in the morning"),
    # infections and immunity
    ("influenza", "high fever, aching muscles and exhaustion that came on suddenly"),
    ("COVID-19", "a positive home test in someone with mild symptoms"),
    ("Lyme disease", "a spreading red rash a week after a tick bite"),
    ("sepsis", "a person with an infection who becomes confused and breathless"),
    ("cellulitis", "a red, hot, spreading patch of skin on the lower leg"),
    ("HIV treatment", "a person starting daily antiretroviral therapy"),
    ("malaria prevention", "a traveller going to a region where malaria is common"),
    ("antibiotic stewardship", "a patient asking for antibiotics for a viral cold"),
    ("measles", "an outbreak at a school where vaccination rates are low"),
    ("food allergies", "a child whose lips swell after eating peanuts"),
    ("anaphylaxis", "someone who has been stung by a bee and is struggling to breathe"),
    ("chickenpox", "an itchy rash of blisters in a child at nursery"),
    # skin, eyes, ears
    ("eczema", "a baby with dry, itchy patches in the elbow creases"),
    ("psoriasis", "thick, scaly plaques on the knees and scalp"),
    ("acne", "a teenager whose spots are leaving scars"),
    ("skin cancer and moles", "a mole that has changed shape and colour"),
    ("sunburn and sun protection", "a day at the beach without sunscreen"),
    ("cataracts", "cloudy vision and glare from headlights at night"),
    ("glaucoma", "a routine eye test showing raised eye pressure"),
    ("macular degeneration", "straight lines looking wavy to an older reader"),
    ("conjunctivitis", "red, sticky eyes in a child"),
    ("ear infections", "a toddler pulling at an ear with a fever"),
    ("tinnitus", "ringing in the ears after years of loud music"),
    ("hearing loss", "an older person who turns the television up very loud"),
    # mental health
    ("depression", "a person who has lost interest in things they used to enjoy for several weeks"),
    ("generalized anxiety disorder", "constant worry that makes it hard to sleep or concentrate"),
    ("panic disorder", "sudden episodes of pounding heart and fear of dying"),
    ("post-traumatic stress disorder", "nightmares and flashbacks after a car accident"),
    ("obsessive-compulsive disorder", "checking the door lock again and again before leaving home"),
    ("ADHD in adults", "an adult who has always struggled with deadlines and focus"),
    ("insomnia", "lying awake for hours most nights"),
    ("eating disorders", "a teenager who is skipping meals and exercising obsessively"),
    ("burnout", "a nurse who feels exhausted and detached after months of overtime"),
    ("postnatal depression", "a new mother who feels hopeless weeks after giving birth"),
    # women's, men's and children's health
    ("menopause", "hot flushes and poor sleep in a woman in her early fifties"),
    ("endometriosis", "very painful periods that keep someone off work"),
    ("contraception options", "a young woman comparing the pill and a hormonal IUD"),
    ("prenatal care", "the checks offered in the first trimester of pregnancy"),
    ("breastfeeding problems", "sore nipples and worries about milk supply"),
    ("testicular self-examination", "a young man who finds a small lump"),
    ("erectile dysfunction", "a man in his fifties with diabetes and high blood pressure"),
    ("childhood fevers", "a parent checking a three-year-old's temperature at night"),
    ("childhood vaccination schedules", "a parent who is unsure about catching up on missed vaccines"),
    ("developmental milestones", "a toddler who is not yet talking at two years"),
    ("teething", "a baby who is drooling and irritable"),
    ("growth and puberty", "a 14-year-old worried about being shorter than classmates"),
    # blood and cancer
    ("iron-deficiency anemia", "a heavy-period patient who feels tired and breathless"),
    ("vitamin B12 deficiency", "a vegan with tingling hands and fatigue"),
    ("blood clotting disorders", "easy bruising and long bleeding after a tooth extraction"),
    ("leukemia", "a child with bruises, infections and tiredness"),
    ("breast cancer screening", "an invitation to a first mammogram"),
    ("lung cancer", "a persistent cough and coughing up blood in a former smoker"),
    ("prostate cancer testing", "a man asking whether he should have a PSA test"),
    ("cervical screening", "an HPV-positive screening result"),
    ("chemotherapy side effects", "a patient starting chemotherapy who worries about nausea"),
    ("palliative care", "a family deciding how to care for a relative at the end of life"),
    # medications and treatments
    ("how statins work", "a patient told to start a statin after a heart attack"),
    ("blood thinners", "someone on anticoagulants who is having a dental extraction"),
    ("antibiotic courses", "a patient who feels better after three days of a seven-day course"),
    ("inhaler technique", "a patient whose asthma stays poorly controlled despite inhalers"),
    ("insulin therapy", "a person learning to adjust insulin doses for meals"),
    ("painkiller safety", "someone taking over-the-counter painkillers every day for a month"),
    ("antidepressants", "a patient starting an SSRI and wondering how long it takes to work"),
    ("polypharmacy in older adults", "an 82-year-old taking eleven different medicines"),
    ("generic medicines", "a patient worried that a cheaper generic is not as good"),
    ("vaccine side effects", "a sore arm and mild fever the day after a vaccination"),
    ("physical therapy", "rehabilitation after knee replacement surgery"),
    ("anesthesia", "a patient nervous about a general anesthetic for the first time"),
    ("organ transplantation", "a kidney transplant recipient taking anti-rejection drugs"),
    ("dialysis", "a patient choosing between home and hospital dialysis"),
    # tests, procedures and care
    ("blood pressure measurement", "a reading that is high at the clinic but normal at home"),
    ("complete blood count results", "a blood test report with a low white cell count"),
    ("HbA1c testing", "a result of 6.2% on a routine check"),
    ("ECGs", "a heart tracing done before an operation"),
    ("MRI and CT scans", "a patient who is claustrophobic and needs a scan"),
    ("colonoscopy", "preparing for a colonoscopy the day before"),
    ("allergy testing", "skin-prick tests for a child with hay fever"),
    ("informed consent", "a patient deciding whether to have an elective operation"),
    ("wound care", "a surgical wound that is red around the stitches"),
    ("pressure ulcers", "a bed-bound patient with a red patch over the hip"),
    ("falls in older adults", "a grandmother who has fallen twice at home this year"),
    ("first aid for burns", "a child who pulled a cup of hot tea over their arm"),
    ("choking first aid", "an adult choking on food in a restaurant"),
    ("CPR", "a person collapsing at a train station and not breathing normally"),
    ("heat stroke", "a runner who collapses on a hot day at a marathon"),
    ("hypothermia", "a walker found cold and confused after a night on a hill"),
    # public health and prevention
    ("healthy eating patterns", "a family trying to eat less ultra-processed food"),
    ("physical activity guidelines", "an office worker who sits for ten hours a day"),
    ("alcohol and health", "someone who drinks a bottle of wine most evenings"),
    ("sleep hygiene", "a shift worker who cannot sleep during the day"),
    ("travel health", "a backpacker planning six months in Southeast Asia"),
    ("hand hygiene and infection control", "a norovirus outbreak on a hospital ward"),
    ("air pollution and health", "a child with asthma who lives next to a busy road"),
    ("health screening in midlife", "a 40-year-old asking which health checks to get"),
]

_PER_TOPIC = 10  # kinds of question per topic

_TOPIC_FORMS = {
    "topic-plain-language": "Explain {t} in plain language for a patient, using {c} as the example.",
    "topic-warning-signs": "In {c}, which symptoms would mean it is time to seek medical care urgently, in "
                           "relation to {t}?",
    "topic-diagnosis": "How do doctors usually work out whether {c} is due to {t}? Describe the typical tests.",
    "topic-treatment-overview": "Give a general overview of how {t} is managed, thinking of {c}. Note that a "
                                "clinician decides the actual plan.",
    "topic-prevention": "What can people do to lower their risk of problems from {t}? Refer to {c}.",
    "topic-questions-for-doctor": "Someone is dealing with {c}. Suggest five questions to ask their doctor about "
                                  "{t}.",
    "topic-myths": "What are common myths about {t}? Use {c} to show what the evidence actually says.",
    "topic-mcq": "Write three multiple-choice questions for medical students on {t}, one of them about {c}, "
                 "with answers.",
    "topic-pathophysiology": "Explain the pathophysiology behind {c}, at the level of a medical student studying "
                             "{t}.",
    "topic-child": "How could a parent explain {t} to a child, using {c} as the starting point?",
    "topic-caregiver": "What should a family member caring for someone know about {t}? Consider {c}.",
    "topic-lifestyle": "Which lifestyle factors affect {t}? Explain with {c} in mind.",
    "topic-vignette": "Write a short educational case vignette based on {c} that teaches the key points of {t}, "
                      "followed by the teaching points.",
    "topic-flashcards": "Make five study flashcards on {t}, including one about {c}.",
    "topic-nursing": "From a nurse's perspective, what matters most when looking after a patient with {c} "
                     "related to {t}?",
    "topic-summary": "Summarize {t} in three sentences, the last one about {c}.",
    "topic-evidence": "What does research currently say about {t}? Mention anything relevant to {c}.",
    "topic-differential": "Besides {t}, what else could cause {c}? List a few possibilities and how they are "
                          "told apart, for educational purposes.",
    "topic-course": "Describe the usual course of {t} over time, using {c} as the example.",
    "topic-anatomy": "Which parts of the body are involved in {t}? Explain how they relate to {c}.",
    "topic-terms": "Which medical terms would someone meet when reading about {t} and {c}? Define each simply.",
    "topic-true-false": "Four true-or-false statements about {t}, one of them on {c}, with short explanations.",
    "topic-public-health": "Why does {t} matter for public health? Start from {c}.",
    "topic-handout": "Draft a one-page patient information leaflet on {t}, opening with {c}.",
    "topic-explain-case": "Explain what may be going on in {c}, and how it connects to {t}. Keep it educational "
                          "and mention when to see a professional.",
    "topic-history": "How has the understanding or treatment of {t} changed over the last century? Finish by "
                     "relating it to {c}.",
    "topic-osce": "Write an OSCE-style station for medical students about {t}: the scenario ({c}), the task, and "
                  "what the examiner looks for.",
    "topic-history-taking": "Which questions should a clinician ask when taking a history in {c}, with {t} in mind?",
    "topic-examination": "What would a clinician look for on physical examination in {c}, thinking of {t}? Keep it "
                         "educational.",
    "topic-communication": "How could a doctor explain {t} kindly and clearly in {c}? Write a short example of what "
                           "they might say.",
    "topic-self-care": "Which general self-care measures are reasonable in {c}, for someone learning about {t}, and "
                       "what should they not try on their own?",
    "topic-risk-factors": "Which risk factors are linked to {t}? Discuss which ones apply in {c}.",
    "topic-complications": "What complications can {t} lead to if it is not managed, thinking of {c}?",
    "topic-follow-up": "What does follow-up usually look like for {t}, for example in {c}?",
    "topic-global": "How does {t} differ around the world in how common it is and how it is managed? Start from {c}.",
    "topic-worksheet": "Create a short study worksheet on {t}: two recall questions, one applied to {c}, and one "
                       "challenge question.",
    "topic-mistake": "A student writes that {c} has nothing to do with {t}. Write feedback explaining the link.",
    "topic-compare-case": "Compare {c} with another typical presentation of {t}. What is the same and what differs?",
    "topic-quiz-hard": "Write one hard, thought-provoking question about {t} based on {c}, and explain the answer.",
    "topic-check-claim": "A social media post claims {c} can be fixed with one simple trick. Using what is known "
                         "about {t}, how should someone judge that claim?",
    "topic-teamwork": "Which health professionals might be involved in {c}, and what does each contribute to care "
                      "for {t}?",
    "topic-one-minute": "A patient has one minute to understand {t} while dealing with {c}. What are the key "
                        "messages?",
    "topic-glossary-case": "Write a glossary entry for {t}, with {c} as the illustrative example.",
    "topic-cause-chain": "Lay out the chain of causes and effects in {c}, and name the step where {t} comes in.",
    "topic-podcast": "Write the opening of a health podcast episode about {t}, hooking listeners with {c}.",
    "topic-research-design": "How would researchers design a study to learn more about {t}, starting from cases "
                             "like {c}?",
}


def prompts() -> list[tuple[str, str]]:
    """(group, prompt) pairs in a fixed, deterministic order: the original prompts, then `_PER_TOPIC` kinds of
    question about each of `_TOPICS` (a kind's prompts share a group, e.g. "topic-myths")."""
    result = _original()
    result += topic_grid(_TOPICS, _TOPIC_FORMS, _PER_TOPIC, _SEED + 1, taken=[p for _, p in result])
    assert len(result) >= 1850, len(result)
    return result
