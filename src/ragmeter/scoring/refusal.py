"""Does an answer decline? Rules over normalised text, no model.

An answer *refuses* when it declines to answer or says that the context (the documents, the
passages, what the system was given) does not hold the answer: "The documents do not say.",
"I don't know.", "There is no information about the warranty in the retrieved documents."
A negation about the world is not a refusal: "It is not in Paris but in Lyon." answers, and so
do "There is no fee for the first bag." and "The document does not require a signature."
What tells them apart is what the negation is about: refusals deny *knowing*, *finding* or
*being told* (verbs of information: say, mention, specify, contain, find, know, determine...,
with the context or the speaker as subject), answers deny a fact.

An answer that refuses and then answers anyway, with a guess ("I could not find it, but it
may be 1969"), knowledge from outside the context ("From general knowledge, ...") or part of
what was asked ("It gives the 2010 population but not the 2020 one") is *partial*. Partial
counts 0.5 in ``answer_refusal``; where a yes/no decision is needed (answerability accuracy,
precision and recall of refusals) it counts as *not* a refusal: the reader still gets an
answer to act on.

>>> read_refusal("The documents do not say.").kind
'refusal'
>>> read_refusal("It is not in Paris but in Lyon.").kind
'answer'
>>> read_refusal("I could not find it, but it may be 1969.").kind
'partial'

The rules above are English. The usual refusals of French, German, Spanish, Portuguese,
Italian, Dutch, Chinese and Japanese answers are read too (:data:`OTHER_LANGUAGES`): "I do
not know", "I cannot answer", "the context does not mention it", "there is no information",
in each language's words, and a refusal followed by "but" or "probably" there is partial.
Negations about the world in those languages are not read as refusals ("La TVA n'est pas
incluse." answers). Answers in other languages are read as answers.

>>> read_refusal("Je ne sais pas.").kind
'refusal'
>>> read_refusal("Der Kontext enthält keine Informationen dazu.").language
'de'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "OTHER_LANGUAGES",
    "PARTIAL_VALUE",
    "RefusalReading",
    "normalize_for_refusal",
    "read_refusal",
]

RefusalKind = Literal["answer", "refusal", "partial"]

#: ``answer_refusal`` of an answer that refuses and answers anyway.
PARTIAL_VALUE = 0.5


@dataclass(frozen=True, slots=True)
class RefusalReading:
    """What the rules read in an answer: its kind, and the words that decided it."""

    kind: RefusalKind
    #: The words that decline ("do not say"), or None for an answer.
    refusal: str | None = None
    #: The words that answer anyway after a refusal ("but it may be"), or None.
    answered: str | None = None
    #: The sentence of the answer, as written, that declines, or None.
    sentence: str | None = None
    #: The language whose rules read the refusal (``"en"``, ``"fr"``, ...), or None for an
    #: answer.
    language: str | None = None

    @property
    def value(self) -> float:
        """1 for a refusal, :data:`PARTIAL_VALUE` for a partial answer, 0 for an answer."""
        return {"refusal": 1.0, "partial": PARTIAL_VALUE, "answer": 0.0}[self.kind]

    @property
    def refuses(self) -> bool:
        """The yes/no decision: only a full refusal refuses (a partial answer answers)."""
        return self.kind == "refusal"


# ------------------------------------------------------------------------ normalisation

_CONTRACTIONS = (
    (r"\bcan'?t\b", "cannot"),
    (r"\bcan not\b", "cannot"),
    (r"\bwon'?t\b", "will not"),
    (r"\bshan't\b", "shall not"),
    (r"\b(\w+)n't\b", r"\1 not"),
    (r"\bi'm\b", "i am"),
    (r"\bi've\b", "i have"),
    (r"\bi'd\b", "i would"),
    (r"\bi'll\b", "i will"),
    (r"\b(it|there|that|what|here|this)'s\b", r"\1 is"),
    (r"\b(you|we|they)'re\b", r"\1 are"),
)
_CONTRACTION_RES = tuple((re.compile(p), r) for p, r in _CONTRACTIONS)


def normalize_for_refusal(text: str) -> str:
    """Lower case, straight apostrophes, contractions spelt out, markup and extra spaces gone.

    >>> normalize_for_refusal("I **can't** find it — the docs don’t say.")
    'i cannot find it - the docs do not say.'
    """
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    text = re.sub(r"[\u2013\u2014]", "-", text)
    text = re.sub(r"[*_`#>]+", " ", text)
    for pattern, replacement in _CONTRACTION_RES:
        text = pattern.sub(replacement, text)
    return " ".join(text.split())


# ------------------------------------------------------------------------------ patterns

#: What the system was given: the subject of "... does not say".
_SOURCE_NOUN = (
    r"(?:context|contexts|documents?|docs|passages?|texts?|sources?|excerpts?|articles?|"
    r"reports?|manual|materials?|knowledge\s+base|documentation|handbook|transcript|leaflet|"
    r"search\s+results|results|files|pages|information(?:\s+(?:given|provided|available))?|"
    r"data|references?|reference\s+material|extracts?|snippets?|chunks?|records|"
    r"retrieved\s+\w+|provided\s+\w+|given\s+\w+)"
)
#: Verbs of telling and holding: denying them is denying the answer is there.
_TELL_VERB = (
    r"(?:say|says|said|mention|mentions|mentioned|specify|specifies|specified|state|states|"
    r"stated|contain|contains|contained|include|includes|included|provide|provides|provided|"
    r"give|gives|gave|cover|covers|covered|address|addresses|addressed|discuss|discusses|"
    r"discussed|tell|tells|told|answer|answers|answered|indicate|indicates|describe|"
    r"describes|explain|explains|name|names|list|lists|offer|offers|have|has|hold|holds|"
    r"report|reports|identify|identifies|reveal|reveals|show|shows|clarify|clarifies|"
    r"confirm|confirms|touch\s+on|go\s+into|refer\s+to|deal\s+with|talk\s+about|"
    r"seem\s+to\s+(?:mention|contain|include|have|say|cover))"
)
#: Verbs of finding out and answering, after "I cannot" / "unable to".
_KNOW_VERB = (
    r"(?:answer|find|locate|determine|tell|say|know|provide|give|confirm|verify|identify|"
    r"see|help|locate|access|figure\s+out|work\s+out|establish|infer|ascertain|offer|"
    r"speak\s+to|comment|be\s+sure|be\s+certain|pinpoint)"
)
#: What is missing: the answer, the information.
_INFO_NOUN = (
    r"(?:information|info|data|details?|answer|answers|mention|record|records|indication|"
    r"reference|references|evidence|figures?|numbers?|context|documents?|sources?|"
    r"specifics|knowledge|way\s+(?:of|to)\s+(?:know|knowing|tell|telling|say|saying|"
    r"determine|determining))"
)
_DET = r"(?:(?:the|these|those|this|my|your|our|all|any|both|two|three|five|such)\s+)?"
_ADJ = (
    r"(?:(?:provided|given|retrieved|supplied|available|above|following|attached|"
    r"accompanying|shared|listed|cited|relevant|original|same|current|specific|"
    r"reference|source)\s+)*"
)

_REFUSAL_PATTERNS: tuple[str, ...] = (
    # "I don't know", "I have no idea", "no idea"
    r"\bi\s+(?:really\s+|honestly\s+)?(?:do|did)\s+not\s+know\b",
    r"\b(?:i\s+have\s+)?no\s+idea\b",
    r"\bi\s+am\s+not\s+(?:sure|certain)\b",
    r"(?:^|[.!?;]\s)not\s+sure\b",
    # "I cannot answer / find / determine ...", "I was unable to ..."
    r"\bi\s+(?:\w+\s+)?(?:cannot|could\s+not|can\s+only\s+not|am\s+unable\s+to|was\s+unable\s+"
    rf"to|am\s+not\s+able\s+to|was\s+not\s+able\s+to|did\s+not\s+manage\s+to)\s+(?:\w+\s+)?"
    rf"{_KNOW_VERB}\b",
    rf"\b(?:unable|not\s+able)\s+to\s+(?:\w+\s+)?{_KNOW_VERB}\b",
    r"\bi\s+(?:do|did)\s+not\s+(?:see|find|have|get|know\s+of)\s+(?:\w+\s+){0,3}?"
    r"(?:information|info|data|details?|answer|mention|anything|any\s+(?:\w+\s+)?"
    r"(?:documents?|context|sources?)|documents?|access|enough)\b",
    r"\bi\s+(?:do|did)\s+not\s+(?:see|find)\s+(?:it|that|this|the\s+\w+)\s+"
    r"(?:in|among|within|anywhere)\b",
    r"\bi\s+have\s+(?:no|not\s+(?:been\s+given|found)|nothing)\b(?!\s+(?:doubt|problem))",
    r"\bi\s+(?:would|will)\s+need\s+(?:more|additional|further|the)\b",
    r"\bi\s+(?:have\s+)?(?:searched|looked|checked)\b[^.]{0,80}\b(?:found\s+)?(?:no|nothing|not)\b",
    r"\bi\s+was\s+not\s+(?:given|provided)\b",
    r"\b(?:i\s+)?(?:could|can)\s+not\s+(?:find|locate|see)\b",
    r"\bi\s+can\s+only\s+answer\b[^.]{0,60}\b(?:provided|given|documents|context)\b",
    # "The documents do not say", "the context makes no mention", "... is silent"
    rf"\b{_SOURCE_NOUN}\b[^.;:!?]{{0,60}}?\b(?:do|does|did)\s+not\s+(?:\w+\s+)?{_TELL_VERB}\b",
    rf"\b{_SOURCE_NOUN}\b[^.;:!?]{{0,40}}?\b(?:make|makes|made|contain|contains|give|gives|"
    rf"offer|offers|provide|provides|include|includes|have|has|had|hold|holds)\s+no\b",
    rf"\b{_SOURCE_NOUN}\b[^.;:!?]{{0,40}}?\b(?:lack|lacks|lacked|omit|omits|fail|fails|"
    r"failed)\b",
    rf"\b{_SOURCE_NOUN}\s+(?:is|are|was|were|remains?)\s+silent\b",
    r"\b(?:is|are)\s+silent\s+(?:on|about|regarding)\b",
    rf"\b{_SOURCE_NOUN}\b[^.;:!?]{{0,40}}?\b(?:say|says|said|tell|tells|mention|mentions)\s+"
    r"nothing\s+(?:about|on|of|regarding|concerning)\b",
    rf"\b{_SOURCE_NOUN}\b[^.;:!?]{{0,40}}?\b(?:say|says|tell|tells|mention|mentions|"
    r"contain|contains)\s+(?:nothing|no(?:thing)?\s+(?:such|more))\s*[.!]?$",
    # "not mentioned / stated / found in the context", "not in the documents"
    r"\b(?:(?:is|are|was|were|be)\s+(?:not|never)|(?:has|have)\s+not\s+been)\s+"
    r"(?:explicitly\s+|directly\s+|clearly\s+)?(?:mentioned|stated|specified|provided|"
    r"given|found|included|covered|available|present|addressed|discussed|contained|"
    r"listed|described|disclosed|reported|located|defined)\s+(?:in|within|anywhere|by)\b"
    rf"[^.]{{0,30}}\b{_SOURCE_NOUN}\b",
    r"\b(?:it|this|that|which|the\s+answer|this\s+information|this\s+detail|that\s+detail)\s+"
    r"(?:is|was)\s+not\s+(?:explicitly\s+|directly\s+|clearly\s+)?(?:mentioned|stated|"
    r"specified|addressed|discussed|answered|explained)\b",
    rf"\bnot\s+(?:in|within|covered\s+(?:in|by)|part\s+of)\s+{_DET}{_ADJ}{_SOURCE_NOUN}\b",
    r"^not\s+found\b",
    r"(?:^|[.!?;:]\s)not\s+(?:mentioned|stated|specified|answerable|addressed)\b",
    r"\bbut\s+(?:\w+\s+){1,4}(?:is|are|was|were)\s+not\s+(?:mentioned|stated|specified|"
    r"discussed|addressed|described|named|given)\b",
    r"\bno\s+(?:exact|specific|precise|definite|definitive|clear|direct|explicit)\s+\w+\s+"
    r"(?:is|was|are|were)\s+(?:given|provided|mentioned|stated|specified|found|reported)\b",
    r"\bhard\s+to\s+(?:say|tell|determine|know)\b",
    r"\bi\s+am\s+unsure\b|\bunsure\b",
    rf"\b{_SOURCE_NOUN}\b[^.!?]{{0,80}}?\b(?:it|they)\s+(?:do|does|did)\s+not\s+(?:\w+\s+)?"
    rf"{_TELL_VERB}\b",
    rf"\b{_SOURCE_NOUN}\b[^.;:!?]{{0,40}}?\b(?:only\s+(?:cover|covers|covered|discuss|"
    r"discusses|describe|describes|talk\s+about|talks\s+about|deal\s+with|deals\s+with|"
    r"concern|concerns|relate\s+to|relates\s+to)|(?:cover|covers|discuss|discusses|"
    r"describe|describes)\s+only)\b",
    r"\bi\s+(?:did|do|could)\s+not\s+(?:find|locate)\b",
    rf"\b(?:does|do)\s+not\s+(?:appear|exist|occur)\s+(?:anywhere\s+)?in\s+{_DET}{_ADJ}"
    rf"{_SOURCE_NOUN}\b",
    r"\bis\s+not\s+something\s+(?:the|these|that|this)\b[^.]{0,40}\b(?:cover|say|mention|"
    r"address|discuss)",
    r"\b(?:outside|beyond)\s+(?:the\s+)?scope\b",
    # "there is no information / mention / record ...", "no mention of", "nothing about"
    r"\bthere\s+(?:(?:is|are|was|were)\s+(?:no|not\s+any|not\s+enough|not\s+a\s+single)|"
    r"(?:does|do)\s+not\s+(?:seem|appear)\s+to\s+be\s+(?:any|enough)|(?:seems|appears)\s+to"
    rf"\s+be\s+no)\s+(?:\w+\s+)?{_INFO_NOUN}\b",
    r"\bthere\s+(?:is|are|was)\s+not\s+(?:any|enough)\b",
    r"\bthere\s+is\s+nothing\s+(?:in|about|on|regarding|relevant|that)\b",
    r"\bthere\s+(?:is|are)\s+no\s+answer\b",
    rf"\bno\s+(?:relevant\s+|such\s+|specific\s+|explicit\s+|direct\s+)?(?:information|info|"
    rf"data|details|mention|record|indication|answer|reference|results?)\s+(?:about|on|"
    rf"regarding|of|concerning|available|was\s+found|is\s+available|could\s+be|can\s+be|"
    rf"found|in\s+{_DET}{_ADJ}{_SOURCE_NOUN}|is\s+made|was\s+made|is\s+given)\b",
    r"^(?:no\s+(?:relevant\s+)?(?:information|info|data|answer|mention|details)"
    r"(?:\s+(?:available|found|given))?|nothing\s+found|no\s+results?)\s*(?:[.!:;,-]|$)",
    r"\bnothing\s+(?:in|from)\s+(?:the|these|those|what)\b",
    r"\bnothing\s+about\s+(?:that|this|it)\b",
    r"\bnothing\s+relevant\b",
    r"\bnone\s+of\s+(?:the|these|those|my)\s+(?:\w+\s+){0,2}?(?:documents?|passages?|sources?|"
    r"excerpts?|texts?|articles?|results|contexts?|context\s+passages)\b",
    r"\bneither\s+(?:of\s+the\s+)?(?:\w+\s+)?(?:passages?|documents?|sources?|texts?)\b",
    # "cannot be answered / determined", "impossible to say", "unclear"
    r"\b(?:cannot|could\s+not|can\s+not)\s+be\s+(?:answered|determined|found|located|"
    r"confirmed|verified|identified|established|inferred|given)\b",
    r"\b(?:impossible|not\s+possible|no\s+way)\s+(?:for\s+me\s+)?to\s+(?:say|know|tell|"
    r"determine|answer|identify|confirm)\b",
    r"\b(?:not|is\s+not)\s+(?:clear|evident|obvious)\s+(?:from|in|based\s+on)\b",
    r"\bit\s+is\s+(?:unclear|not\s+clear)\b",
    rf"\bunclear\s+(?:from|in|based\s+on)\s+{_DET}{_ADJ}{_SOURCE_NOUN}\b",
    r"^(?:it\s+is\s+)?unclear\b",
    r"\bno\s+answer\s+(?:can|could)\s+be\b",
    r"\b(?:not\s+enough|insufficient|inadequate|no\s+sufficient)\s+"
    r"(?:information|context|data|details?|evidence|detail)\b",
    r"\b(?:information|context|data|details?)\s+(?:is|are|was)\s+(?:insufficient|missing|"
    r"lacking|not\s+(?:enough|sufficient|available|present|included))\b",
    r"\b(?:is|are)\s+(?:missing|absent)\s+from\b",
    r"\bis\s+not\s+(?:answerable|possible\s+to\s+answer)\b",
    r"\b(?:answer|information)\s+(?:is\s+)?(?:unavailable|not\s+available)\b",
    r"\bno\s+relevant\b",
    r"\b(?:is|are)\s+(?:about|on)\s+(?:a\s+)?(?:different|another|other|unrelated)\b",
    r"\bnot\s+(?:relevant|related)\s+to\s+(?:this|the|your)\s+question\b",
    # whole-answer refusals
    r"^(?:unknown|n/?a|none|not\s+applicable|no\s+answer|cannot\s+answer|unanswerable|"
    r"i\s+do\s+not\s+know|no\s+data|nope)\s*(?:[.!]|-|$)",
    r"\b(?:answer|response)\s*:\s*(?:not\s+found|unknown|n/?a|none)\b",
    r"\bas\s+an\s+ai\b",
)
_REFUSAL_RE = re.compile("|".join(f"(?:{p})" for p in _REFUSAL_PATTERNS))

#: Words that answer anyway once the answer has declined: a guess, outside knowledge, or a
#: part of what was asked.
_ANSWERED_PATTERNS: tuple[str, ...] = (
    r"\b(?:it|this|that|they|he|she|the\s+\w+)\s+(?:may|might|could|would)\s+(?:well\s+)?"
    r"(?:be|have|refer|mean|include|be\s+around)\b",
    r"\b(?:probably|likely|possibly|perhaps|maybe|presumably|apparently|reportedly|"
    r"supposedly|roughly|approximately)\b",
    r"\bmy\s+(?:guess|best\s+guess|understanding|estimate)\b",
    r"\bif\s+i\s+had\s+to\s+guess\b",
    r"\bi\s+(?:think|believe|suspect|would\s+(?:guess|say|assume)|assume|imagine)\b",
    r"\b(?:it|this|that|they)\s+(?:seems?|appears?)\b",
    r"\b(?:suggests?|implies|imply|hints?|points?\s+to)\b",
    r"\breading\s+between\s+the\s+lines\b",
    r"\b(?:from|based\s+on|in)\s+(?:my\s+)?(?:general|common|background|own|prior)\s+"
    r"knowledge\b",
    r"\b(?:generally|typically|usually|commonly|widely)\s+(?:speaking|said|known|reported|"
    r"believed|accepted|cited)?\b",
    r"\b(?:news|press)\s+reports\b",
    r"\bonly\s+(?:partly|partially|in\s+part)\b",
    r"\bpartial(?:ly)?\s+answer\b",
    r"\b(?:only|just)\s+(?:that|says?\s+that)\b",
    r"\bbut\s+(?:the\s+\w+|it|they|there|one|another)\s+(?:does\s+)?(?:says?|mentions?|"
    r"states?|lists?|gives?|notes?|shows?|indicates?|puts?)\b",
    r"\bbut\s+not\s+(?:for|when|whether|who|how|what|the|its|his|her|their|which)\b",
    r"\b(?:one|some)\s+(?:source|document|passage)s?\s+says?\b",
)
_ANSWERED_RE = re.compile("|".join(f"(?:{p})" for p in _ANSWERED_PATTERNS))


# ------------------------------------------------------------------- other languages

#: Refusals in the common languages of RAG deployments besides English, over normalised text
#: (lower case, straight apostrophes). Each names what it declines: not knowing, not being
#: able to answer, the sources not saying, no information. Chinese and Japanese have no word
#: boundaries: their phrases are whole.
_OTHER_REFUSALS: dict[str, tuple[str, ...]] = {
    "fr": (
        r"\bje\s+ne\s+(?:le\s+)?(?:sais|connais)\s+pas\b",
        r"\bje\s+l'ignore\b",
        r"\b(?:je\s+n'en\s+ai\s+|je\s+n'ai\s+|)aucune\s+idée\b",
        r"\bje\s+ne\s+(?:peux|pourrais|suis\s+pas\s+en\s+mesure\s+de)\s+(?:pas\s+)?"
        r"(?:vous\s+)?(?:répondre|trouver|dire|déterminer|préciser|confirmer)\b",
        r"\b(?:impossible|pas\s+possible)\s+de\s+(?:répondre|dire|déterminer|savoir)\b",
        r"\b(?:aucune|pas\s+d')\s*(?:information|indication|mention|donnée|réponse)s?\b",
        r"\b(?:ne|n')\s*(?:le\s+|l'|en\s+)?(?:mentionne|mentionnent|précise|précisent|indique|"
        r"indiquent|dit|disent|contient|contiennent|donne|donnent|parle|parlent|aborde|"
        r"abordent)\s+pas\b",
        r"\b(?:n'est|ne\s+sont|n'a\s+pas\s+été|n'ont\s+pas\s+été)\s+(?:pas\s+)?(?:mentionnée?s?|"
        r"précisée?s?|indiquée?s?|spécifiée?s?|abordée?s?|trouvée?s?)\b",
        r"\bje\s+n'ai\s+(?:pas\s+)?(?:trouvé|pu\s+trouver)\b",
    ),
    "de": (
        r"\bich\s+wei(?:ß|ss)\s+(?:es\s+|das\s+)?nicht\b",
        r"\bwei(?:ß|ss)\s+ich\s+nicht\b",
        r"\bkeine\s+ahnung\b",
        r"\b(?:ich|wir)\s+(?:kann|können)\s+(?:\w+\s+){0,4}?nicht\s+(?:beantworten|sagen|"
        r"finden|bestimmen|feststellen)\b",
        r"\b(?:kann|können)\s+(?:ich|wir)\s+(?:\w+\s+){0,3}?nicht\s+(?:beantworten|sagen|"
        r"finden|bestimmen|feststellen)\b",
        r"\bkeine\s+(?:\w+\s+)?(?:informationen|information|angaben|hinweise|daten|antwort)\b",
        r"\b(?:wird|werden|ist|sind|wurde|wurden)\s+(?:\w+\s+){0,3}?nicht\s+(?:erwähnt|"
        r"angegeben|genannt|beschrieben|erläutert)\b",
        r"\bgeht\s+(?:\w+\s+){0,5}?nicht\s+hervor\b",
        r"\bich\s+(?:habe|konnte)\s+(?:\w+\s+){0,3}?(?:nicht|keine|nichts)\s+(?:\w+\s+)?"
        r"(?:gefunden|finden)\b",
    ),
    "es": (
        r"\bno\s+(?:lo\s+sé|lo\s+se|sé)\b",
        r"\b(?:no\s+tengo\s+(?:ninguna\s+)?idea|ni\s+idea)\b",
        r"\bno\s+(?:puedo|podría|soy\s+capaz\s+de)\s+(?:\w+\s+)?(?:responder|contestar|"
        r"determinar|encontrar|decir|confirmar)\b",
        r"\bno\s+(?:hay|tengo|dispongo\s+de|se\s+(?:da|proporciona|encuentra))\s+"
        r"(?:ninguna\s+|suficiente\s+)?(?:información|informacion|datos|respuesta|mención)\b",
        r"\bno\s+se\s+(?:menciona|mencionan|especifica|especifican|indica|indican|dice|"
        r"detalla|detallan)\b",
        r"\bno\s+(?:lo\s+)?(?:menciona|mencionan|especifica|especifican|indica|indican|dice|"
        r"dicen|contiene|contienen|incluye|incluyen)\b",
        r"\bno\s+(?:encontré|he\s+encontrado|pude\s+encontrar)\b",
    ),
    "pt": (
        r"\b(?:eu\s+)?não\s+(?:o\s+)?sei\b",
        r"\bnão\s+(?:faço|tenho)\s+(?:nenhuma\s+|a\s+menor\s+)?ideia\b",
        r"\bnão\s+(?:posso|consigo|sou\s+capaz\s+de)\s+(?:\w+\s+)?(?:responder|determinar|"
        r"encontrar|dizer|confirmar)\b",
        r"\bnão\s+(?:há|existe|existem|tenho)\s+(?:nenhuma\s+|informações\s+)?(?:informação|"
        r"informações|informacao|dados|resposta|menção)\b",
        r"\bnão\s+(?:é|são|foi|foram)\s+(?:mencionad|especificad|indicad|informad)[oa]s?\b",
        r"\bnão\s+(?:o\s+)?(?:menciona|mencionam|especifica|especificam|indica|indicam|diz|"
        r"dizem|contém|contêm|inclui|incluem)\b",
        r"\bnão\s+(?:encontrei|consegui\s+encontrar)\b",
    ),
    "it": (
        r"\bnon\s+(?:lo\s+)?so\b",
        r"\b(?:non\s+(?:ne\s+)?ho\s+(?:nessuna\s+|la\s+minima\s+)?idea|nessuna\s+idea)\b",
        r"\bnon\s+(?:posso|riesco\s+a|sono\s+in\s+grado\s+di)\s+(?:\w+\s+)?(?:rispondere|"
        r"determinare|trovare|dire|confermare)\b",
        r"\b(?:non\s+(?:ci\s+sono|c'è|ho)\s+(?:abbastanza\s+)?|nessuna\s+)(?:informazioni|"
        r"informazione|dati|risposta|menzione)\b",
        r"\bnon\s+(?:è|sono|viene|vengono)\s+(?:\w+\s+)?(?:menzionat|specificat|indicat|"
        r"riportat)[oaie]\b",
        r"\bnon\s+(?:lo\s+)?(?:menziona|menzionano|specifica|specificano|indica|indicano|dice|"
        r"dicono|contiene|contengono)\b",
        r"\bnon\s+(?:ho\s+trovato|riesco\s+a\s+trovare)\b",
    ),
    "nl": (
        r"\bik\s+weet\s+(?:het\s+)?niet\b",
        r"\bweet\s+ik\s+niet\b",
        r"\bgeen\s+idee\b",
        r"\b(?:ik\s+kan|kan\s+ik)\s+(?:\w+\s+){0,3}?niet\s+(?:beantwoorden|zeggen|vinden|"
        r"bepalen)\b",
        r"\bgeen\s+(?:\w+\s+)?(?:informatie|gegevens|antwoord|vermelding)\b",
        r"\b(?:wordt|worden|is|zijn|werd|werden)\s+(?:\w+\s+){0,3}?niet\s+(?:vermeld|genoemd|"
        r"gespecificeerd|aangegeven|beschreven)\b",
        r"\bstaat\s+(?:\w+\s+){0,3}?niet\s+in\b",
        r"\b(?:vermeldt|vermelden|noemt|noemen|bevat|bevatten)\s+(?:\w+\s+){0,2}?(?:niet|geen)\b",
    ),
    "zh": (
        r"我(?:并|真的|也)?不(?:知道|清楚|确定|確定)",
        r"^不(?:知道|清楚)",
        r"(?:无法|無法|不能|没法|沒法)(?:回答|确定|確定|判断|判斷|找到|得知|提供)",
        r"(?:没有|沒有|未|并未|並未)(?:提及|提到|说明|說明|涉及|包含|给出|給出)",
        r"(?:没有|沒有|缺乏|缺少)(?:相关|相關|足够|足夠|具体|具體)?(?:的)?(?:信息|資訊|资料|資料|"
        r"数据|數據|答案)",
        r"(?:找不到|未找到|没有找到|沒有找到)",
    ),
    "ja": (
        r"(?:わかりません|分かりません|知りません|存じません|わからない|分からない)",
        r"(?:答えられません|回答できません|お答えできません|お答えすることができません|"
        r"判断できません|特定できません)",
        r"(?:情報|記載|記述|言及|データ)(?:は|が)(?:ありません|ない|見当たりません|含まれていません)",
        r"(?:記載|言及|説明|明記)されていません",
        r"見つかりませんでした|見つけられませんでした",
    ),
}
#: The languages besides English whose refusals are read (ISO 639-1 codes), by name.
OTHER_LANGUAGES: dict[str, str] = {
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "pt": "Portuguese",
    "it": "Italian",
    "nl": "Dutch",
    "zh": "Chinese",
    "ja": "Japanese",
}
_OTHER_REFUSAL_RES = {
    language: re.compile("|".join(f"(?:{p})" for p in patterns))
    for language, patterns in _OTHER_REFUSALS.items()
}
#: After a refusal in those languages: "but", "however", a guess: the answer goes on.
_OTHER_ANSWERED: dict[str, str] = {
    "fr": r"\b(?:mais|cependant|toutefois|néanmoins|probablement|peut-être|sans\s+doute)\b",
    "de": r"\b(?:aber|jedoch|allerdings|vermutlich|wahrscheinlich|vielleicht|möglicherweise)\b",
    "es": r"\b(?:pero|sin\s+embargo|aunque|probablemente|quizás|quizá|tal\s+vez)\b",
    "pt": r"\b(?:mas|porém|no\s+entanto|embora|provavelmente|talvez)\b",
    "it": r"\b(?:ma|però|tuttavia|sebbene|probabilmente|forse)\b",
    "nl": r"\b(?:maar|echter|hoewel|waarschijnlijk|misschien|mogelijk)\b",
    "zh": r"(?:但是|但|不过|不過|然而|可能|也许|也許|大概)",
    "ja": r"(?:しかし|ただし|ですが|けれども|おそらく|たぶん|かもしれません)",
}
_OTHER_ANSWERED_RES = {k: re.compile(v) for k, v in _OTHER_ANSWERED.items()}


def _other_language(answer: str, text: str) -> RefusalReading | None:
    """A refusal in one of :data:`OTHER_LANGUAGES` (partial when the answer goes on after a
    "but" or a guess with a few more words), or ``None``."""
    for language, pattern in _OTHER_REFUSAL_RES.items():
        found = pattern.search(text)
        if found is None:
            continue
        refusal = found.group(0).strip()
        sentence = _sentence_at(answer, text, found.start())
        after = text[found.end() :]
        more = _OTHER_ANSWERED_RES[language].search(after)
        if more is not None:
            rest = after[more.end() :].strip(" ,;:.!?。、")
            enough = len(rest) >= 6 if language in ("zh", "ja") else len(rest.split()) >= 3
            if enough:
                return RefusalReading("partial", refusal, more.group(0).strip(), sentence, language)
        return RefusalReading("refusal", refusal, sentence=sentence, language=language)
    return None


#: After a refusal: "..., though a similar model supports 150 kg", "..., but it was ...".
_CONTRAST_AFTER_RE = re.compile(
    r"^[^.!?]{0,40}?\b(?:though|although|however|yet|but)\b(?P<clause>[^.!?]*)"
)
#: Before a refusal, in its sentence: "While the documents don't specify the rate, ...".
_CONTRAST_BEFORE_RE = re.compile(r"(?:^|[.!?]\s)(?:while|although|though|whilst)\s[^.!?]*$")
#: "The passages mention the CEO's name but not when she was appointed."
_PART_ONLY_RE = re.compile(
    rf"\b{_SOURCE_NOUN}\b[^.!?]{{0,60}}?\b(?:mention|mentions|give|gives|list|lists|state|"
    r"states|say|says|cover|covers|include|includes|name|names)\b[^.!?]{0,100}?\bbut\s+not\b"
)
#: A clause about the sources, not the world: "the reports end in 2021".
_ABOUT_SOURCES_RE = re.compile(rf"^(?:\w+\s+){{0,2}}?{_SOURCE_NOUN}\b")
_CLAUSE_SPLIT_RE = re.compile(r"(?<=[.!?;])\s+")


def read_refusal(answer: str) -> RefusalReading:
    """Read ``answer`` as an answer, a refusal or a partial answer (see the module doc).

    >>> read_refusal("There is no fee for the first checked bag.").kind
    'answer'
    >>> read_refusal("Sorry, none of the passages mention the author's birthplace.").refusal
    'none of the passages'
    """
    text = normalize_for_refusal(answer)
    if not text:
        return RefusalReading("answer")
    found = _REFUSAL_RE.search(text)
    if found is None:
        part = _PART_ONLY_RE.search(text)
        if part is not None:
            sentence = _sentence_at(answer, text, part.start())
            return RefusalReading("partial", part.group(0), part.group(0), sentence, "en")
        return _other_language(answer, text) or RefusalReading("answer")
    refusal = found.group(0).strip()
    sentence = _sentence_at(answer, text, found.start())
    before, after = text[: found.start()], text[found.end() :]
    answered = _ANSWERED_RE.search(text)
    if answered is not None:
        return RefusalReading("partial", refusal, answered.group(0).strip(), sentence, "en")
    contrast = _CONTRAST_AFTER_RE.search(after)
    if contrast is not None and _states_something(contrast.group("clause")):
        return RefusalReading("partial", refusal, contrast.group(0).strip(), sentence, "en")
    lead = _CONTRAST_BEFORE_RE.search(before)
    if lead is not None and _states_something(after):
        return RefusalReading("partial", refusal, lead.group(0).strip(), sentence, "en")
    for clause in _CLAUSE_SPLIT_RE.split(answer):
        at = text.find(normalize_for_refusal(clause))
        if at < found.end() and at + len(clause) > found.start():
            continue  # the clause that refuses
        if _states_fact(clause):
            return RefusalReading("partial", refusal, clause.strip(), sentence, "en")
    return RefusalReading("refusal", refusal, sentence=sentence, language="en")


def _sentence_at(answer: str, text: str, start: int) -> str:
    """The sentence of ``answer`` (as written) whose normalised form holds position ``start``
    of ``text`` (the normalised answer)."""
    at = 0
    sentences = [part for part in re.split(r"(?<=[.!?])\s+", answer.strip()) if part]
    for part in sentences:
        found = text.find(normalize_for_refusal(part), at)
        if found < 0:
            break
        at = found + len(normalize_for_refusal(part))
        if start < at:
            return part
    return answer.strip()


def _states_something(clause: str) -> bool:
    """Whether ``clause`` (normalised) says something of its own: not another refusal, not a
    remark about the sources, and more than a word or two."""
    clause = clause.strip(" ,;:-")
    if len(clause.split()) < 3 or _REFUSAL_RE.search(clause):
        return False
    return _ABOUT_SOURCES_RE.search(clause) is None


def _states_fact(clause: str) -> bool:
    """Whether a clause of the answer as written states a fact beside the refusal: it has a
    number or a name, and it neither refuses nor speaks about the sources."""
    words = clause.split()
    named = any(word[:1].isupper() and word != "I" for word in words[1:])
    if not (named or re.search(r"\d", clause)):
        return False
    return _states_something(normalize_for_refusal(clause))
