"""Text normalisation, tokenisation and sentence splitting.

``normalize`` and ``tokens`` follow the SQuAD answer normalisation that Unitxt's token
metrics use, step by step: lowercase (``str.lower``, no Unicode normalisation), delete every
character of ``string.punctuation`` (ASCII only: curly quotes and dashes stay), replace the
whole words ``a``, ``an``, ``the`` (regex ``\\b(a|an|the)\\b``) with a space, split on
whitespace. ``tokens`` reproduces that result exactly but skips the regex for plain ASCII
text, where a whole-word article can only be a whole token. :class:`TokenBatch` does the
same for many texts at once with numpy, each token an integer key.

>>> tokens("The cat sat on a mat!")
['cat', 'sat', 'on', 'mat']
>>> normalize("1,000 people -- the well-known  band")
'1000 people wellknown band'
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = [
    "ARTICLES",
    "TokenBatch",
    "normalize",
    "split_sentences",
    "tokens",
    "tokens_for_lookup",
]

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


# --- Many texts at once ------------------------------------------------------------------

IntArray = npt.NDArray[np.int64]
KeyArray = npt.NDArray[np.uint64]
BoolArray = npt.NDArray[np.bool_]


def _batch_table() -> bytes:
    """Byte table of :class:`TokenBatch` (applied to ASCII text only): lowercase A-Z;
    every ASCII whitespace of ``str.split`` (``\\t\\n\\v\\f\\r``, ``\\x1c``-``\\x1f``, space)
    to a space; any other control character to ``\\x01``, which sends its text to the
    exact path."""
    table = bytearray(range(256))
    for code in range(ord("A"), ord("Z") + 1):
        table[code] = code + 32
    for code in (*range(0x09, 0x0E), *range(0x1C, 0x20)):
        table[code] = 0x20
    for code in (*range(0x00, 0x09), *range(0x0E, 0x1C), 0x7F):
        table[code] = 0x01
    return bytes(table)


_BATCH_TABLE = _batch_table()
_PUNCTUATION_BYTES = string.punctuation.encode("ascii")
#: Texts are joined by U+0080 between spaces: a token (UTF-8 C2 80) that no kept text
#: has, as ASCII text cannot hold it and a pre-tokenised text is printable.
_JOIN = " \x80 "
_SEPARATOR_KEY = 0x80C2
#: Keys below this are tokens of at most 3 bytes.
_SHORT_KEYS = np.uint64(1 << 24)
#: ``_MASKS[n]`` keeps the low ``n`` bytes of a little-endian word (``n`` clipped to 8).
_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(9)], dtype=np.uint64)
#: Keys of the articles (each fits one word, so its key is its bytes).
_ARTICLE_KEYS = tuple(int.from_bytes(a.encode("ascii"), "little") for a in sorted(ARTICLES))
_MIX = np.uint64(0x9E3779B97F4A7C15)
_LOW_56 = (1 << 56) - 1
#: Top bytes of the keys of tokens longer than 8 bytes: hashed, then, for the rare
#: tokens whose hash another token shares, numbered.
_HASHED = 1 << 56
_NUMBERED = 2 << 56
#: Tokens longer than this are hashed by Python instead of word by word.
_LONG = 256


class TokenBatch:
    """SQuAD tokens of many texts, found in one pass over all their bytes, as integer keys.

    Plain ASCII text is tokenised on its bytes: one ``bytes.translate`` lowercases it and
    deletes ASCII punctuation for the whole batch, then numpy finds the tokens (runs of
    bytes above space) and drops the articles as whole tokens (every token is
    ``[a-z0-9]+``, so the regex's word boundaries are token boundaries). Other text (non
    ASCII, or with ASCII control characters that are not whitespace) is tokenised by
    :func:`tokens` and its tokens joined by spaces into the same buffer. A text whose
    tokens hold a non-printable character is left out (``ok`` is False; use
    :func:`tokens` for it).

    A token's key identifies it: two tokens are equal exactly when their keys are. A
    token of at most 8 bytes has its bytes (little-endian) as key; a longer one has a
    hash of its bytes, checked byte for byte against every other long token of the batch
    with the same hash (and numbered apart in the rare case of a collision). No key is 0.

    Attributes
    ----------
    ok : ndarray of bool, one per text
        False for a text left out (it then has no tokens here).
    offsets : ndarray of int64, one more than the texts
        Tokens of text ``i`` are ``offsets[i]:offsets[i + 1]``, dropped ones included.
    keys, sizes : ndarray of uint64 / int64, one per token
        Key and length in bytes of every token.
    dropped : ndarray of bool, one per token
        Not a SQuAD token: an article (a, an, the) or the separator that opens each text.
    lengths : ndarray of int64, one per text
        Number of SQuAD tokens: ``len(tokens(text))``.

    Examples
    --------
    >>> batch = TokenBatch.of(["The cat, the mat.", "Ça va", "a\x01b"])
    >>> [batch.tokens(i) for i in range(3)]
    [['cat', 'mat'], ['ça', 'va'], None]
    >>> batch.lengths.tolist(), batch.ok.tolist()
    ([2, 2, 0], [True, True, False])
    """

    __slots__ = ("_buffer", "_starts", "dropped", "keys", "lengths", "offsets", "ok", "sizes")

    def __init__(self, texts: Sequence[str]) -> None:
        n = len(texts)
        segments = list(texts)
        ok = np.ones(n, dtype=bool)
        exact: list[int] = []
        if not all(map(str.isascii, segments)):
            exact = [i for i, text in enumerate(segments) if not text.isascii()]
        while True:
            for i in exact:
                joined = _pretokenised(texts[i])
                ok[i] = joined is not None
                segments[i] = joined or ""
            # A separator opens every text and one more closes the last, then 8 bytes
            # of padding: an 8-byte word read at any token start stays in the buffer.
            data = _JOIN.join(["", *segments, " " * 7]).encode("utf-8")
            data = data.translate(_BATCH_TABLE, _PUNCTUATION_BYTES)
            if b"\x01" not in data:
                break
            # ASCII control characters: those texts take the exact path (rare).
            exact = [i for i, text in enumerate(segments) if ok[i] and _has_control(text)]
        self._buffer = data
        raw = np.frombuffer(data, dtype=np.uint8)
        word = raw > 0x20
        edges = np.flatnonzero(word[1:] != word[:-1])
        starts = edges[0::2] + 1
        sizes = edges[1::2] - edges[0::2]
        keys = self._words()[starts].view(np.uint64)
        keys &= _MASKS.take(sizes, mode="clip")
        self._starts = starts
        self.sizes = sizes
        long = np.flatnonzero(sizes > 8)
        if len(long):
            keys[long] = self._long_keys(long, keys[long])
        # Separators and articles have at most 3 bytes: look among the short tokens only.
        short = np.flatnonzero(keys < _SHORT_KEYS)
        short_keys = keys[short]
        self.offsets = short[short_keys == _SEPARATOR_KEY]
        gone = short_keys == _SEPARATOR_KEY
        for article in _ARTICLE_KEYS:
            gone |= short_keys == article
        gone_at = short[gone]
        dropped = np.zeros(len(keys), dtype=bool)
        dropped[gone_at] = True
        self.lengths = np.diff(self.offsets) - np.diff(np.searchsorted(gone_at, self.offsets))
        self.keys = keys
        self.dropped = dropped
        self.ok = ok

    @classmethod
    def of(cls, texts: Sequence[str]) -> TokenBatch:
        """Tokenise ``texts`` (any strings)."""
        return cls(texts)

    def __len__(self) -> int:
        return len(self.ok)

    def tokens(self, i: int) -> list[str] | None:
        """The SQuAD tokens of text ``i`` (``tokens(texts[i])``), or ``None`` if left out."""
        if not self.ok[i]:
            return None
        lo, hi = int(self.offsets[i]), int(self.offsets[i + 1])
        buffer = self._buffer
        return [
            buffer[start : start + size].decode("utf-8")
            for start, size, dropped in zip(
                self._starts[lo:hi].tolist(),
                self.sizes[lo:hi].tolist(),
                self.dropped[lo:hi].tolist(),
                strict=True,
            )
            if not dropped
        ]

    def same(self, a: IntArray, b: IntArray) -> BoolArray:
        """Whether tokens ``a[k]`` and ``b[k]`` are equal, byte for byte, for every ``k``."""
        equal = self.sizes[a] == self.sizes[b]
        pending = np.flatnonzero(equal)
        first, second = self._starts[a[pending]], self._starts[b[pending]]
        left = self.sizes[a[pending]]
        huge = left > _LONG
        if huge.any():
            buffer = self._buffer
            for k, p, q, size in zip(
                pending[huge].tolist(),
                first[huge].tolist(),
                second[huge].tolist(),
                left[huge].tolist(),
                strict=True,
            ):
                equal[k] = buffer[p : p + size] == buffer[q : q + size]
            keep = ~huge
            pending, first, second, left = pending[keep], first[keep], second[keep], left[keep]
        words = self._words()
        while len(pending):
            mask = _MASKS.take(left, mode="clip")
            agree = (words[first].view(np.uint64) & mask) == (words[second].view(np.uint64) & mask)
            equal[pending[~agree]] = False
            more = agree & (left > 8)
            pending, first, second = pending[more], first[more] + 8, second[more] + 8
            left = left[more] - 8
        return equal

    def _words(self) -> npt.NDArray[np.void]:
        """The 8 bytes from every position of the buffer (read as ``uint64`` after a
        gather: a void item has no alignment, so the gather stays fast)."""
        return np.ndarray((len(self._buffer) - 7,), dtype="V8", buffer=self._buffer, strides=(1,))

    def _long_keys(self, long: IntArray, first_words: KeyArray) -> KeyArray:
        """Keys of the tokens ``long`` (longer than 8 bytes): a hash of their bytes, made
        exact by comparing the tokens that share a hash (numbered apart if they differ)."""
        starts, sizes = self._starts[long], self.sizes[long]
        keys = first_words.copy()
        second_words = np.zeros(len(long), dtype=np.uint64)
        buffer = self._buffer
        for k in np.flatnonzero(sizes > _LONG).tolist():
            start = int(starts[k])
            keys[k] = hash(buffer[start : start + int(sizes[k])]) & _LOW_56
        words = self._words()
        pending = np.flatnonzero(sizes <= _LONG)
        position, left = starts[pending] + 8, sizes[pending] - 8
        keys[pending] ^= left.astype(np.uint64)
        second = True
        while len(pending):
            word = words[position].view(np.uint64) & _MASKS.take(left, mode="clip")
            if second:  # bytes 8-15 of every token, kept for the comparison below
                second_words[pending] = word
                second = False
            keys[pending] = (keys[pending] ^ word) * _MIX
            more = left > 8
            pending, position, left = pending[more], position[more] + 8, left[more] - 8
        keys &= np.uint64(_LOW_56)
        keys |= np.uint64(_HASHED)
        # Tokens of equal hash are neighbours once sorted: each must equal the one before.
        order = np.argsort(keys)
        ordered = keys[order]
        after = np.flatnonzero(ordered[1:] == ordered[:-1]) + 1
        if len(after) == 0:
            return keys
        mine, before = order[after], order[after - 1]
        equal = sizes[mine] == sizes[before]
        equal &= first_words[mine] == first_words[before]
        equal &= second_words[mine] == second_words[before]
        beyond = np.flatnonzero(equal & (sizes[mine] > 16))
        if len(beyond):
            equal[beyond] = self.same(long[mine[beyond]], long[before[beyond]])
        if not equal.all():  # tokens sharing a hash: number each distinct one (rare)
            numbers: dict[bytes, int] = {}
            for k in np.flatnonzero(np.isin(keys, keys[mine[~equal]])).tolist():
                start = int(starts[k])
                token = buffer[start : start + int(sizes[k])]
                keys[k] = _NUMBERED + numbers.setdefault(token, len(numbers))
        return keys


_CONTROL_RE = re.compile("[\x00-\x08\x0e-\x1b\x7f]")


def _has_control(text: str) -> bool:
    return text.isascii() and _CONTROL_RE.search(text) is not None


def _pretokenised(text: str) -> str | None:
    """The exact tokens of ``text`` joined by spaces, or ``None`` when a token holds a
    non-printable character (one the batch would take for a separator)."""
    joined = " ".join(_squad_tokens(text))
    return joined if joined.isprintable() else None


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


#: Pairs of words of opposite meaning, each word in one pair only: a claim that holds one
#: where its premise holds the other says the opposite (the offline verifier's antonym
#: conflict). The shipped model's training data keeps its own shorter list
#: (``training/verifier_data.py``), so its recipe reproduces the model.
ANTONYMS: tuple[tuple[str, str], ...] = (
    ("increase", "decrease"),
    ("increased", "decreased"),
    ("increases", "decreases"),
    ("increasing", "decreasing"),
    ("rise", "fall"),
    ("rose", "fell"),
    ("rises", "falls"),
    ("raised", "lowered"),
    ("grew", "shrank"),
    ("larger", "smaller"),
    ("largest", "smallest"),
    ("higher", "lower"),
    ("highest", "lowest"),
    ("more", "less"),
    ("most", "least"),
    ("many", "few"),
    ("before", "after"),
    ("first", "last"),
    ("north", "south"),
    ("northern", "southern"),
    ("east", "west"),
    ("eastern", "western"),
    ("early", "late"),
    ("earlier", "later"),
    ("earliest", "latest"),
    ("win", "lose"),
    ("won", "lost"),
    ("wins", "loses"),
    ("open", "closed"),
    ("public", "private"),
    ("major", "minor"),
    ("majority", "minority"),
    ("positive", "negative"),
    ("above", "below"),
    ("older", "younger"),
    ("oldest", "youngest"),
    ("long", "short"),
    ("longer", "shorter"),
    ("strong", "weak"),
    ("stronger", "weaker"),
    ("success", "failure"),
    ("succeeded", "failed"),
    ("accepted", "rejected"),
    ("allowed", "banned"),
    ("legal", "illegal"),
    ("maximum", "minimum"),
    ("best", "worst"),
    ("better", "worse"),
    ("cheap", "expensive"),
    ("cheaper", "costlier"),
    ("rich", "poor"),
    ("inside", "outside"),
    ("always", "never"),
    ("male", "female"),
    ("start", "end"),
    ("started", "ended"),
    ("joined", "left"),
    ("buy", "sell"),
    ("bought", "sold"),
    ("import", "export"),
    ("imports", "exports"),
    ("imported", "exported"),
    ("faster", "slower"),
    ("fastest", "slowest"),
    ("heavier", "lighter"),
    ("hotter", "colder"),
    ("warmer", "cooler"),
    ("true", "false"),
    ("alive", "dead"),
    ("included", "excluded"),
    ("entered", "exited"),
    ("arrived", "departed"),
    ("domestic", "foreign"),
    ("internal", "external"),
    ("ancient", "modern"),
    ("safe", "dangerous"),
    ("easy", "difficult"),
    ("same", "different"),
    ("gain", "loss"),
)
#: Each word of :data:`ANTONYMS` with its opposite.
ANTONYM_OF: dict[str, str] = {a: b for a, b in ANTONYMS} | {b: a for a, b in ANTONYMS}
