"""A condition of the user's, or of their family's, that every answer should allow for: "I'm
allergic to ...", "I'm colour blind", "my son is autistic", "we keep kosher", "Ik ben
linkshandig". A fact to keep even when it is said in passing (judge.py)."""

from __future__ import annotations

from tmg.memory.teaching.phrases import Phrases, Words

_CONDITION = ("(allergic|intolerant|lactose-intolerant|gluten-intolerant|left-handed|lefthanded|colour-blind"
              "|color-blind|colourblind|colorblind|diabetic|dyslexic|autistic|deaf|vegan|vegetarian|pescatarian"
              "|coeliac|celiac|epileptic|asthmatic|pregnant)")
# ... in the languages people type to the assistant ("Ik ben linkshandig", "je suis allergique").
_CONDITION_ELSEWHERE = (
    "(allergique|allergisch|alérgico|alérgica|alergico|alergica|allergico|allergica|allergikus|uczulona|uczulony"
    "|linkshandig|linkshänder|linkshänderin|zurdo|zurda|mancino|mancina|canhoto|canhota|gaucher|gauchère|gauchere"
    "|vänsterhänt|venstrehendt|venstrehåndet|vasenkätinen|leworęczny|leworęczna|leworeczny|leworeczna|levák|levačka"
    "|daltonien|daltonienne|farbenblind|daltónico|daltónica|daltonico|daltonica|kleurenblind|färgblind|farveblind"
    "|diabétique|diabetique|diabetiker|diabetikerin|diabético|diabética|diabetico|diabetica|diabeticus|diabeetikko"
    "|végétarien|végétarienne|vegetarien|vegetarier|vegetarierin|vegetariano|vegetariana|vegetarisch|vegetariër"
    "|kasvissyöjä|wegetarianką|wegetarianinem|vegetarián|vegetariánka|végane|vegane|veganer|veganerin|vegano"
    "|vegana|veganist|vegaani|weganką|weganinem|cœliaque|coeliaque|celíaco|celíaca|celiaco|celiaca|zöliakie"
    "|sourd|sourde|taub|sordo|sorda|surdo|surda|doof|döv|kuuro|dyslexique|legasthenikerin|legastheniker|disléxico"
    "|disléxica|dislessico|dislessica|dyslectisch|autiste|autist|autistin|autista|autistisch|enceinte|schwanger"
    "|embarazada|incinta|grávida|gravida|zwanger|gravid|raskaana)")
_DEGREE = "(also|very|severely|badly|mildly|quite|a|an|)"
_KIN = "son daughter wife husband partner kid child kids children boy girl mum mom dad mother father baby".split()
CONDITION = Phrases(
    f"(i'm|im|i am|i've been|ive been) {_DEGREE} {_CONDITION}",
    f"my ({'|'.join(_KIN)}) (is|are|has been) {_DEGREE} {_CONDITION}",
    f"my ({'|'.join(kin + chr(39) + 's' for kin in _KIN)}) {_DEGREE} {_CONDITION}",  # "my son's autistic"
    "(i'm|im|i am) (colour|color|red-green|red green) blind", "(i'm|im|i am) (left|right) handed",
    "(i'm|im|i am) red-green (colour|color) blind",
    "(i'm|im|i am) (hard of hearing|type 1 diabetic|type 2 diabetic|t1 diabetic|in a wheelchair|a wheelchair user)",
    "(i|we) have (adhd|dyslexia|diabetes|epilepsy|asthma|coeliac|celiac|autism|coeliac disease|celiac disease)",
    "(i|we) (keep|eat) (kosher|halal)", "(i|we) (don't|dont|do not|can't|cant|cannot) eat (meat|pork|fish|gluten"
    "|dairy|nuts|beef|shellfish|eggs)",
    *(f"(je suis|ich bin|soy|estoy|sono|sou|estou|ik ben|jag är|jeg er|olen|jestem|jsem) {_DEGREE} {kind}"
      for kind in (_CONDITION, _CONDITION_ELSEWHERE)))


# "he's autistic" is theirs only after "my son ..." in the same clause (not a friend's, unnamed).
_PRONOUNED = Phrases(f"(he's|she's|they're|he is|she is|they are) {_DEGREE} {_CONDITION}")
_ALLERGY = frozenset("allergy allergies intolerance".split())
_HAVE = frozenset("have has 've got".split())


def condition(words: Words) -> bool:
    """Whether the clause states such a condition of the user's or their family's."""
    if CONDITION.find(words) >= 0:
        return True
    pronoun = _PRONOUNED.find(words)
    if pronoun > 0 and _kin_before(words[:pronoun]):
        return True  # "my son is 6 and he's autistic"
    for index, word in enumerate(words):  # "I have a severe peanut allergy", "my son has a nut allergy"
        if word in _ALLERGY:
            before = words[max(0, index - 6):index]
            if ({"i", "we"} & set(before) or _kin_before(before)) and _HAVE & set(before):
                return True
    return False


def _kin_before(words: list[str]) -> bool:
    return any(w == "my" and kin in _KIN for w, kin in zip(words, words[1:], strict=False))
