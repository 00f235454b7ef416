"""Text normalisation, tokenisation and sentence splitting.

``normalize`` and ``tokens`` follow the SQuAD answer normalisation that Unitxt's token
metrics use, step by step: lowercase (``str.lower``, no Unicode normalisation), delete every
character of ``string.punctuation`` (ASCII only: curly quotes and dashes stay), replace the
whole words ``a``, ``an``, ``the`` (regex ``\\b(a|an|the)\\b``) with a space, split on
whitespace. ``tokens`` reproduces that result exactly but skips the regex for plain ASCII
text, where a whole-word article can only be a whole token.

>>> tokens("The cat sat on a mat!")
['cat', 'sat', 'on', 'mat']
>>> normalize("1,000 people -- the well-known  band")
'1000 people wellknown band'
"""

from __future__ import annotations

import re
import string

__all__ = ["ARTICLES", "normalize", "split_sentences", "tokens", "tokens_for_lookup"]

#: Words SQuAD normalisation drops.
ARTICLES: frozenset[str] = frozenset({"a", "an", "the"})

_PUNCTUATION_TABLE = str.maketrans("", "", string.punctuation)
_ARTICLE_RE = re.compile(r"\b(a|an|the)\b")


def _ascii_table() -> bytes:
    """Byte table for ASCII text: lowercase A-Z; map to NUL the control characters that
    are neither letters, digits, punctuation nor whitespace to ``str.split`` (next to
    them the regex's word boundary differs from a token boundary)."""
    table = bytearray(range(256))
    for code in range(ord("A"), ord("Z") + 1):
        table[code] = code + 32
    for code in (*range(0x00, 0x09), *range(0x0E, 0x1C), 0x7F):
        table[code] = 0
    return bytes(table)


_ASCII_TABLE = _ascii_table()
_ASCII_PUNCTUATION = string.punctuation.encode("ascii")


def _plain_ascii(text: str) -> str | None:
    """Lowercased ``text`` without punctuation when it is plain ASCII, else ``None``.

    On such text every token is ``[a-z0-9]+``, so a whole-word article is a whole token.
    """
    if not text.isascii():
        return None
    cleaned = text.encode("ascii").translate(_ASCII_TABLE, _ASCII_PUNCTUATION)
    if b"\x00" in cleaned:
        return None
    return cleaned.decode("ascii")


def _squad_tokens(text: str) -> list[str]:
    """The SQuAD pipeline itself, for text that is not plain ASCII."""
    return _ARTICLE_RE.sub(" ", text.lower().translate(_PUNCTUATION_TABLE)).split()


def tokens(text: str) -> list[str]:
    """SQuAD-normalised tokens of ``text``, exactly as Unitxt's token metrics see them.

    Parameters
    ----------
    text : str
        Any text; the empty string gives no tokens.

    Returns
    -------
    list of str
        Lowercased tokens without ASCII punctuation and without the articles a/an/the.

    Examples
    --------
    >>> tokens("Einstein was born in 1879.")
    ['einstein', 'was', 'born', 'in', '1879']
    >>> tokens("don't don’t")
    ['dont', 'don’t']
    >>> tokens("")
    []
    """
    plain = _plain_ascii(text)
    if plain is not None:
        return [t for t in plain.split() if t not in ARTICLES]
    return _squad_tokens(text)


def tokens_for_lookup(text: str) -> tuple[list[str], bool]:
    """Tokens of ``text`` for looking up in a bag of SQuAD tokens, the cheapest way.

    Same as :func:`tokens`, except that plain ASCII text keeps its articles: a bag of
    SQuAD tokens never holds one, so they never match, and skipping the filter saves a
    pass over every token. The flag says whether the articles were removed (the list is
    then exactly ``tokens(text)``).

    Examples
    --------
    >>> tokens_for_lookup("The cat, a mat.")
    (['the', 'cat', 'a', 'mat'], False)
    >>> tokens_for_lookup("The “cat”")
    (['“cat”'], True)
    """
    plain = _plain_ascii(text)
    if plain is not None:
        return plain.split(), False
    return _squad_tokens(text), True


def normalize(text: str) -> str:
    """SQuAD-normalised ``text``: its tokens joined by single spaces.

    Examples
    --------
    >>> normalize("  The Beatles,\\tA band. ")
    'beatles band'
    """
    return " ".join(tokens(text))


# Abbreviations after which a period does not end a sentence (compared lowercased,
# without the final period).
_ABBREVIATIONS = frozenset(
    {
        "e.g",
        "i.e",
        "cf",
        "vs",
        "viz",
        "approx",
        "ca",
        "dr",
        "mr",
        "mrs",
        "ms",
        "prof",
        "sr",
        "jr",
        "st",
        "mt",
        "gen",
        "col",
        "lt",
        "sgt",
        "capt",
        "rev",
        "hon",
        "no",
        "nos",
        "fig",
        "figs",
        "eq",
        "ref",
        "vol",
        "pp",
        "ed",
        "eds",
        "al",
        "inc",
        "ltd",
        "co",
        "corp",
        "dept",
        "est",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "u.s",
        "u.k",
        "a.m",
        "p.m",
    }
)
# A candidate boundary: terminal punctuation, optional closing quotes/brackets, whitespace.
_BOUNDARY_RE = re.compile(r"[.!?…]+[\"'”’»)\]]*\s+")
# A line break that starts a list item, or a blank line: always a boundary.
_BREAK_RE = re.compile(r"\n[ \t]*\n\s*|\n(?=[ \t]*(?:[-*•]|\d+[.)])\s)")
_OPENERS = "\"'“‘«([¿¡"


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences with a few regular expressions.

    A sentence ends at ``.``, ``!``, ``?`` or ``…`` (with any closing quotes or brackets)
    followed by whitespace and then an uppercase letter, a digit or an opening quote or
    bracket; a blank line or a line that starts a list item also ends one. A period does
    not end a sentence after a known abbreviation ("e.g.", "Dr.", "Fig.") or a single
    capital initial ("J. K. Rowling"); decimals such as 3.14 have no space after the
    point and never split.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    list of str
        Sentences stripped of surrounding whitespace; empty pieces are dropped.

    Examples
    --------
    >>> split_sentences("Dr. Smith paid $3.50 for it, e.g. Today. Then he left! Why?")
    ['Dr. Smith paid $3.50 for it, e.g. Today.', 'Then he left!', 'Why?']
    >>> split_sentences("J. K. Rowling wrote it. It sold well.")
    ['J. K. Rowling wrote it.', 'It sold well.']
    >>> split_sentences("")
    []
    """
    sentences: list[str] = []
    for block in _BREAK_RE.split(text):
        start = 0
        for match in _BOUNDARY_RE.finditer(block):
            end = match.end()
            if end >= len(block) or not _starts_sentence(block[end]):
                continue
            if block[match.start()] == "." and _is_abbreviation(block, match.start()):
                continue
            piece = block[start:end].strip()
            if piece:
                sentences.append(piece)
            start = end
        piece = block[start:].strip()
        if piece:
            sentences.append(piece)
    return sentences


def _starts_sentence(char: str) -> bool:
    return char.isupper() or char.isdigit() or char in _OPENERS


def _is_abbreviation(block: str, period: int) -> bool:
    """True when the word that ends just before ``block[period]`` is an abbreviation."""
    begin = period
    while begin > 0 and not block[begin - 1].isspace() and block[begin - 1] not in _OPENERS:
        begin -= 1
    word = block[begin:period]
    if len(word) == 1 and word.isalpha() and word.isupper():
        return True  # an initial: "J. K. Rowling"
    return word.lower() in _ABBREVIATIONS
