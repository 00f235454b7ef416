"""SQuAD answer normalisation, exactly as Unitxt's token metrics apply it.

Step by step: lowercase (``str.lower``, no Unicode normalisation), delete every character of
``string.punctuation`` (ASCII only: curly quotes and dashes stay), replace the whole words
``a``, ``an``, ``the`` (regex ``\\b(a|an|the)\\b``) with a space, split on whitespace.
:func:`tokens` reproduces that result exactly but skips the regex for plain ASCII text,
where a whole-word article can only be a whole token.

>>> tokens("The cat sat on a mat!")
['cat', 'sat', 'on', 'mat']
>>> normalize("1,000 people -- the well-known  band")
'1000 people wellknown band'
"""

from __future__ import annotations

import re
import string

from ragmeter.text.words import ARTICLES

__all__ = ["normalize", "squad_tokens", "tokens", "tokens_for_lookup"]

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


def squad_tokens(text: str) -> list[str]:
    """The SQuAD pipeline itself, step by step (slower than :func:`tokens` on plain ASCII).

    Examples
    --------
    >>> squad_tokens("The “cat”, a mat")
    ['“cat”', 'mat']
    """
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
    return squad_tokens(text)


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
    return squad_tokens(text), True


def normalize(text: str) -> str:
    """SQuAD-normalised ``text``: its tokens joined by single spaces.

    Examples
    --------
    >>> normalize("  The Beatles,\\tA band. ")
    'beatles band'
    """
    return " ".join(tokens(text))
