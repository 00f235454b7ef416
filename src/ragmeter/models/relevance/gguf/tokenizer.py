"""The tokenizer a GGUF file describes, rebuilt with the ``tokenizers`` library.

A GGUF stores its vocabulary, merges and special token ids as ``tokenizer.ggml.*`` metadata.
This module builds from them the same tokenizer transformers builds when it loads the file
(``transformers.integrations.gguf``), without transformers:

- ``gpt2`` (byte-level BPE, e.g. SmolLM2): the file's vocabulary and merges, GPT-2's
  byte-level pre-tokenizer and decoder.
- ``llama`` (SentencePiece BPE, Gemma 3's files): spaces become ``▁``, byte fallback,
  merges recovered from the vocabulary in file order (the files list none).

Tokens the file marks as control (type 3) are added as special tokens, user-defined ones
(type 4) as plain added tokens, so that both are always matched whole.

:func:`build_tokenizer` runs once, at conversion; :class:`GGUFTokenizer` saves itself as
``tokenizer.json`` plus ``tokenizer_meta.json`` and loads from them at run time.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ragmeter.errors import ModelUnavailableError

__all__ = ["GGUFTokenizer", "build_tokenizer"]

_CONTROL, _USER_DEFINED = 3, 4
_SPACE = "\u2581"


@dataclass(frozen=True, slots=True)
class TokenizerMeta:
    """What encoding needs beyond ``tokenizer.json``."""

    bos_id: int | None
    eos_id: int | None
    add_bos: bool
    bos_token: str
    eos_token: str
    chat_template: str | None


class GGUFTokenizer:
    """A ``tokenizers.Tokenizer`` with the file's BOS/EOS rules and chat template."""

    def __init__(self, tokenizer: Any, meta: TokenizerMeta) -> None:
        self.tokenizer = tokenizer
        self.meta = meta

    @property
    def eos_id(self) -> int | None:
        return self.meta.eos_id

    def encode(self, texts: list[str], *, add_special_tokens: bool) -> list[list[int]]:
        """Token ids of each text; with ``add_special_tokens``, BOS first when the file asks."""
        rows = [e.ids for e in self.tokenizer.encode_batch(texts, add_special_tokens=False)]
        if add_special_tokens and self.meta.add_bos and self.meta.bos_id is not None:
            rows = [[self.meta.bos_id, *row] for row in rows]
        return rows

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=False)

    def chat(self, user: str) -> str:
        """``user`` as the user turn of the file's chat template, generation prompt appended."""
        if self.meta.chat_template is None:
            raise ModelUnavailableError("This model's GGUF has no chat template.")
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        return env.from_string(self.meta.chat_template).render(
            messages=[{"role": "user", "content": user}],
            add_generation_prompt=True,
            bos_token=self.meta.bos_token,
            eos_token=self.meta.eos_token,
        )

    def save(self, folder: Path) -> None:
        self.tokenizer.save(str(folder / "tokenizer.json"))
        (folder / "tokenizer_meta.json").write_text(json.dumps(asdict(self.meta), indent=1))

    @classmethod
    def load(cls, folder: Path) -> GGUFTokenizer:
        from tokenizers import Tokenizer

        meta = TokenizerMeta(**json.loads((folder / "tokenizer_meta.json").read_text()))
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        _return_freed_memory()
        return cls(tokenizer, meta)


def _return_freed_memory() -> None:
    """Give the C heap's freed pages back to the system (glibc's ``malloc_trim``).

    Parsing a large ``tokenizer.json`` (Gemma 3's: 262,144 words, 514,906 merges) leaves about
    190 MB freed but still resident in the heap; the tokenizer itself keeps about 95 MB
    (``bench/context_relevance_onnx.py --memory-stages``). Nothing happens off glibc.
    """
    import ctypes
    import ctypes.util
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # musl and others: no malloc_trim
        return
    trim(0)


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's printable spelling of each byte."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    printable += range(ord("®"), ord("ÿ") + 1)
    chars = list(printable)
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(printable, chars, strict=True)}


def _byte_level(meta: dict[str, Any]) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    spelling = _bytes_to_unicode()
    alphabet = set(spelling.values())
    vocab = {
        token if set(token) <= alphabet else "".join(spelling[b] for b in token.encode()): index
        for index, token in enumerate(meta["ggml.tokens"])
    }
    merges = [tuple(merge.split(" ")) for merge in meta.get("ggml.merges") or []]
    tokenizer = Tokenizer(models.BPE(vocab, merges, fuse_unk=False))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer, alphabet


def _recovered_merges(vocab: dict[str, int], scores: dict[str, int]) -> list[tuple[str, str]]:
    """Merges implied by a vocabulary, best first (transformers' ``generate_merges``)."""
    found: list[tuple[str, str, int]] = []
    for merge, score in scores.items():
        local = [
            (merge[:i], merge[i:], score)
            for i in range(1, len(merge))
            if merge[:i] in vocab and merge[i:] in vocab
        ]
        local.sort(key=lambda m: (vocab[m[0]], vocab[m[1]]))
        found.extend(local)
    found.sort(key=lambda m: (m[2], len(m[0]), len(m[1])), reverse=True)
    return [(left, right) for left, right, _ in found]


def _sentencepiece_bpe(meta: dict[str, Any]) -> Any:
    """Gemma's tokenizer: tokens of blanks respelled with ``▁``, merges in file order."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers

    tokens = [_SPACE * len(t) if " " in t and not t.strip() else t for t in meta["ggml.tokens"]]
    vocab = {token: index for index, token in enumerate(tokens)}
    merges = _recovered_merges(vocab, {token: -index for index, token in enumerate(tokens)})
    unk_id = meta.get("ggml.unknown_token_id")
    unk = tokens[unk_id] if unk_id is not None else "<unk>"
    tokenizer = Tokenizer(
        models.BPE(vocab, merges, fuse_unk=True, unk_token=unk, dropout=None, byte_fallback=True)
    )
    tokenizer.pre_tokenizer = pre_tokenizers.Split(
        pattern=" ", behavior="merged_with_previous", invert=False
    )
    tokenizer.decoder = decoders.Sequence(
        [decoders.Replace(_SPACE, " "), decoders.ByteFallback(), decoders.Fuse()]
    )
    tokenizer.normalizer = normalizers.Replace(" ", _SPACE)
    return tokenizer, None


def build_tokenizer(meta: dict[str, Any]) -> GGUFTokenizer:
    """The tokenizer described by a GGUF's ``tokenizer.*`` metadata (prefix removed).

    Raises
    ------
    ModelUnavailableError
        The file's tokenizer model is neither ``gpt2`` nor ``llama``.
    """
    from tokenizers import AddedToken

    kind = meta.get("ggml.model")
    if kind == "gpt2":
        tokenizer, alphabet = _byte_level(meta)
    elif kind == "llama":
        tokenizer, alphabet = _sentencepiece_bpe(meta)
    else:
        raise ModelUnavailableError(
            f"Cannot build a tokenizer for a GGUF with tokenizer model {kind!r}; "
            "supported: gpt2 (byte-level BPE), llama (SentencePiece BPE)."
        )
    tokens: list[str] = meta["ggml.tokens"]
    types: list[int] = meta.get("ggml.token_type") or []
    control = [
        AddedToken(token, normalized=False, special=True)
        for token, kind_of in zip(tokens, types, strict=False)
        if kind_of == _CONTROL and (alphabet is None or set(token) <= alphabet)
    ]
    if control:
        tokenizer.add_special_tokens(control)
    vocab = tokenizer.get_vocab()
    user = [
        AddedToken(token, normalized=False, special=False)
        for token, kind_of in zip(tokens, types, strict=False)
        if kind_of == _USER_DEFINED and token in vocab
    ]
    if user:
        tokenizer.add_tokens(user)
    bos = meta.get("ggml.bos_token_id")
    eos = meta.get("ggml.eos_token_id")
    return GGUFTokenizer(
        tokenizer,
        TokenizerMeta(
            bos_id=None if bos is None else int(bos),
            eos_id=None if eos is None else int(eos),
            add_bos=bool(meta.get("ggml.add_bos_token", kind == "llama")),
            bos_token="" if bos is None else tokens[int(bos)],
            eos_token="" if eos is None else tokens[int(eos)],
            chat_template=meta.get("chat_template"),
        ),
    )
