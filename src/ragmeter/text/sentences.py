"""Sentence splitting with a few regular expressions (no model)."""

from __future__ import annotations

import re

__all__ = ["split_sentences"]

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
