"""SQuAD tokens of many texts at once, as integer keys: one pass over all their bytes with
numpy (:class:`TokenBatch`), the same tokens as :func:`ragmeter.text.squad.tokens`.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ragmeter.scoring.lexical.hash_slots import insert_keys
from ragmeter.text.squad import squad_tokens
from ragmeter.text.words import ARTICLES

__all__ = ["TokenBatch"]

IntArray = npt.NDArray[np.int64]
KeyArray = npt.NDArray[np.uint64]
BoolArray = npt.NDArray[np.bool_]


#: Texts are joined by DEL between spaces: a one-byte token that no kept text has (a
#: pre-tokenised text is printable, and an ASCII text holding DEL takes the exact path).
#: ASCII, so that joining plain ASCII texts keeps one ASCII string, whose UTF-8 bytes are
#: a copy.
_SEPARATOR = "\x7f"
_JOIN = f" {_SEPARATOR} "
_SEPARATOR_KEY = _SEPARATOR_CODE = 0x7F


def _batch_table() -> bytes:
    """Byte table of :class:`TokenBatch` (applied to ASCII text only): lowercase A-Z;
    every ASCII whitespace of ``str.split`` (``\\t\\n\\v\\f\\r``, ``\\x1c``-``\\x1f``, space)
    to a space; any other control character to DEL, the separator: a text with more DEL
    than its separator takes the exact path."""
    table = bytearray(range(256))
    for code in range(ord("A"), ord("Z") + 1):
        table[code] = code + 32
    for code in (*range(0x09, 0x0E), *range(0x1C, 0x20)):
        table[code] = 0x20
    for code in (*range(0x00, 0x09), *range(0x0E, 0x1C)):
        table[code] = _SEPARATOR_CODE
    return bytes(table)


_BATCH_TABLE = _batch_table()
_PUNCTUATION_BYTES = string.punctuation.encode("ascii")
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
    ASCII, or with ASCII control characters that are not whitespace, DEL included) is tokenised by
    :func:`tokens` and its tokens joined by spaces into the same buffer. A text whose
    tokens hold a non-printable character is left out (``ok`` is False; use
    :func:`tokens` for it).

    A token's key identifies it: two tokens are equal exactly when their keys are. A
    token of at most 8 bytes has its bytes (little-endian) as key; a longer one has a
    hash of its bytes, checked byte for byte against the first token of the batch with the
    same hash (so all of them are equal; those of a rare collision are numbered apart). No
    key is 0.

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
            raw = np.frombuffer(data, dtype=np.uint8)
            # Every control character of a text became DEL: only the separators may be.
            if np.count_nonzero(raw == _SEPARATOR_CODE) == n + 1:
                break
            # ASCII control characters: those texts take the exact path (rare).
            exact = [i for i, text in enumerate(segments) if ok[i] and _has_control(text)]
        self._buffer = data
        # Tokens are runs of bytes above space: their edges alternate, start then end (one
        # nonzero pass finds both, twice as fast as one pass each).
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
        # A separator opens each text; it and the articles are dropped.
        dropped = keys == _SEPARATOR_KEY
        self.offsets = np.flatnonzero(dropped)
        for article in _ARTICLE_KEYS:
            dropped |= keys == article
        self.lengths = np.zeros(n, dtype=np.int64)
        if n:
            kept = np.logical_not(dropped[: self.offsets[-1]])
            self.lengths = np.add.reduceat(kept, self.offsets[:-1], dtype=np.int64)
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
        # Every token must equal the first one of its hash (found in a hash table).
        first = _first_of_equal(keys)
        mine = np.flatnonzero(first != np.arange(len(keys)))
        if len(mine) == 0:
            return keys
        before = first[mine]
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


def _first_of_equal(keys: KeyArray) -> IntArray:
    """For every key, the index of a key equal to it, the same one for all of them: the
    keys go in one hash table (at least twice as many slots as keys), and each slot names
    one of the keys it holds."""
    slots = 1 << max(int(2 * len(keys)).bit_length(), 4)
    slot = insert_keys(
        np.zeros(slots, dtype=np.uint64),
        keys,
        np.zeros(len(keys), dtype=np.int64),
        np.full(len(keys), slots - 1, dtype=np.int64),
    )
    owner = np.empty(slots, dtype=np.int64)
    owner[slot] = np.arange(len(keys), dtype=np.int64)
    return owner[slot]


_CONTROL_RE = re.compile("[\x00-\x08\x0e-\x1b\x7f]")


def _has_control(text: str) -> bool:
    return text.isascii() and _CONTROL_RE.search(text) is not None


def _pretokenised(text: str) -> str | None:
    """The exact tokens of ``text`` joined by spaces, or ``None`` when a token holds a
    non-printable character (one the batch would take for a separator)."""
    joined = " ".join(squad_tokens(text))
    return joined if joined.isprintable() else None
