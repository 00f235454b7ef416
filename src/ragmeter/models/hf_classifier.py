"""A Hugging Face entailment classifier of (premise, claim) pairs, from a local folder.

Used by the ``nli:`` claim verifier (:mod:`ragmeter.judges.hf_entailment`) for checkers such as
MiniCheck-RoBERTa/DeBERTa, NLI cross-encoders (DeBERTa-v3 MNLI/ANLI) and Vectara's
HHEM-2.1-open. The model comes from a local folder or the local Hugging Face cache; the hub is
asked only with ``allow_download=True``. ragmeter never runs a model
repository's own code (``trust_remote_code``).

* **Families.** Any ``*ForSequenceClassification`` checkpoint (BERT, RoBERTa, DeBERTa-v2/v3,
  T5, ...) loads through ``AutoModelForSequenceClassification`` and reads the pair premise
  first, claim second, as MNLI and MiniCheck do. HHEM-2.1-open (``config.json`` with
  ``foundation`` and ``prompt``) is a T5 token classifier over its foundation (flan-t5-base,
  which must be local too): its model card's prompt is filled with the premise and the
  claim, and the first token's softmax gives the support, as its own ``predict`` does. A
  checkpoint whose classification head is not in the file (a base model, a seq2seq
  generator such as MiniCheck-Flan-T5) is refused: its head would be random.
* **Labels** from ``config.json`` (:mod:`ragmeter.models.nli_labels`), or ``label=``.
* **Length.** A premise longer than the model's window is cut into windows of up to
  ``max_length`` minus the claim's tokens, overlapping by a quarter, cut at word starts;
  the caller takes the maximum over windows (MiniCheck's procedure). Pairs are sorted by
  length and run in padded batches under ``torch.inference_mode``.
* **Identity.** ``revision`` is a sha256 of ``config.json`` and of each weights file's name,
  size, first and last MiB: a different checkpoint in the same folder gets a different name.

Nothing here imports torch or transformers until the model loads.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ragmeter.errors import ConfigError, ModelUnavailableError, param
from ragmeter.models._runtime import (
    cached_model,
    enable_offline_hub,
    encodable,
    require_torch_stack,
    torch_setup,
)
from ragmeter.models.nli_labels import LabelRule, support_label

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "ClassifierSpec",
    "HFClassifier",
    "check_device",
    "fingerprint",
    "read_spec",
    "resolve_model",
]

DEFAULT_BATCH_SIZE = 16
#: Share of a window repeated at the start of the next one.
WINDOW_OVERLAP = 0.25
#: Files fetched with allow_download (never other frameworks' weights).
_DOWNLOAD_PATTERNS = ["*.json", "*.txt", "*.model", "*.safetensors", "pytorch_model*.bin"]
_WEIGHTS = ("*.safetensors", "pytorch_model*.bin")
_MIB = 1 << 20
_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?")
Family = Literal["sequence-classification", "hhem"]


def _how() -> str:
    """How to supply the model, naming the options as the caller does."""
    return (
        "Copy the model folder (config.json, weights, tokenizer files) to this machine and "
        f"pass 'nli:PATH' as {param('verifier')}, or place the model in the local Hugging Face "
        "cache (huggingface-cli download NAME on a machine that can reach the hub), or allow "
        f"the download with {_allow_download()}."
    )


def _allow_download() -> str:
    return param("allow_download", "allow_download=True")


def check_device(device: str | None) -> str:
    """``device`` if it is ``auto``, ``cpu``, ``cuda`` or ``cuda:N`` (``None``: ``auto``)."""
    chosen = "auto" if device is None else device.strip().lower()
    if not _DEVICE.fullmatch(chosen):
        raise ConfigError(
            f"{param('device')} must be 'cpu', 'cuda', 'cuda:N' or 'auto'. Got {device!r}."
        )
    return chosen


def resolve_model(spec: str, *, allow_download: bool = False) -> tuple[Path, str]:
    """The local folder of ``spec`` (a folder, or a model id in the local Hugging Face
    cache; fetched from the hub only with ``allow_download``) and the name to show for it."""
    name = spec.strip()
    if not name:
        raise ConfigError("The verifier names no model. Use nli:PATH or nli:ORG/NAME.")
    require_torch_stack("The nli: verifier")
    path = Path(name).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise ModelUnavailableError(f"The model folder {name!r} has no config.json. {_how()}")
        return path.resolve(), path.resolve().name
    if not allow_download:
        enable_offline_hub()
    from huggingface_hub import snapshot_download

    try:
        folder = snapshot_download(
            name, local_files_only=not allow_download, allow_patterns=_DOWNLOAD_PATTERNS
        )
    except Exception as error:  # not found in the cache, an invalid id, the hub unreachable
        where = (
            "could not be fetched from the hub"
            if allow_download
            else "is neither a local folder nor in the local Hugging Face cache"
        )
        raise ModelUnavailableError(
            f"The model {name!r} {where} ({type(error).__name__}: {error}). {_how()} "
            f"({_allow_download()} also needs HF_HUB_OFFLINE unset or 0.)"
        ) from error
    return Path(folder), name


def fingerprint(folder: Path) -> str:
    """12 hex digits of a sha256 over ``config.json`` and each weights file's name, size,
    first and last MiB (cheap for a large checkpoint, different for a fine-tuned one)."""
    digest = hashlib.sha256((folder / "config.json").read_bytes())
    files = sorted({p for pattern in _WEIGHTS for p in folder.glob(pattern)})
    for weights in files:
        size = weights.stat().st_size
        digest.update(f"{weights.name}:{size}".encode())
        with weights.open("rb") as handle:
            digest.update(handle.read(_MIB))
            if size > 2 * _MIB:
                handle.seek(size - _MIB)
                digest.update(handle.read(_MIB))
    return digest.hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class ClassifierSpec:
    """What ``config.json`` says about a checkpoint, read without torch."""

    folder: Path
    display: str
    revision: str
    family: Family
    rule: LabelRule
    #: A prompt with ``{text1}`` (premise) and ``{text2}`` (claim), else pair encoding.
    template: str | None = None
    #: HHEM's foundation model folder (its config and tokenizer).
    foundation: Path | None = None
    foundation_name: str | None = None

    @property
    def name(self) -> str:
        return f"nli:{self.display}@{self.revision}"


def _read_config(folder: Path) -> dict[str, Any]:
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ModelUnavailableError(
            f"Cannot read {folder / 'config.json'}: {error}. {_how()}"
        ) from error
    if not isinstance(config, dict):
        raise ModelUnavailableError(f"{folder / 'config.json'} is not a JSON object. {_how()}")
    return config


def read_spec(
    spec: str, *, label: str | None = None, allow_download: bool = False
) -> ClassifierSpec:
    """Resolve ``spec`` and read its family, labels and template (no torch, no weights)."""
    folder, display = resolve_model(spec, allow_download=allow_download)
    config = _read_config(folder)
    architectures = [str(a) for a in config.get("architectures") or ()]
    num_labels = config.get("num_labels")
    rule = support_label(config.get("id2label"), num_labels, label)
    prompt = config.get("prompt")
    if isinstance(config.get("foundation"), str) and isinstance(prompt, str):
        if "{text1}" not in prompt or "{text2}" not in prompt:
            raise ModelUnavailableError(
                f"The model at {folder} has a prompt without {{text1}} and {{text2}}: {prompt!r}."
            )
        if rule.index is None:
            raise ModelUnavailableError(
                f"The HHEM-style model at {folder} has a single label; it needs two."
            )
        foundation, foundation_name = resolve_model(
            config["foundation"], allow_download=allow_download
        )
        return ClassifierSpec(
            folder, display, fingerprint(folder), "hhem", rule, prompt, foundation, foundation_name
        )
    wrong = [a for a in architectures if not a.endswith("ForSequenceClassification")]
    if wrong:
        raise ModelUnavailableError(
            f"The model at {folder} is a {', '.join(wrong)}, not a sequence classifier "
            "(its config's architectures). The nli: verifier runs *ForSequenceClassification "
            "checkpoints (MiniCheck-RoBERTa-Large, MiniCheck-DeBERTa-v3-Large, NLI "
            "cross-encoders) and HHEM-2.1-open; a generator such as MiniCheck-Flan-T5 is "
            "not one."
        )
    return ClassifierSpec(folder, display, fingerprint(folder), "sequence-classification", rule)


@dataclass(slots=True)
class _Loaded:
    model: Any
    tokenizer: Any
    max_length: int
    device: str
    lock: threading.Lock = field(default_factory=threading.Lock)


def _max_length(tokenizer: Any, config: Any) -> int:
    """The tokenizer's limit, capped by the position table (RoBERTa's starts after padding)."""
    limits = []
    declared = getattr(tokenizer, "model_max_length", None)
    if isinstance(declared, int) and 0 < declared < 100_000:
        limits.append(declared)
    positions = getattr(config, "max_position_embeddings", None)
    if isinstance(positions, int) and positions > 0:
        offset = 0
        if getattr(config, "model_type", "") in ("roberta", "xlm-roberta", "camembert"):
            offset = (getattr(config, "pad_token_id", None) or 0) + 1
        limits.append(positions - offset)
    return min(limits) if limits else 512


def _torch_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ModelUnavailableError(
            f"The device {device!r} was asked for ({param('device')}), and torch sees no CUDA "
            f"device (torch {torch.__version__}). Use 'cpu' or 'auto'."
        )
    return device


def _read_weights(folder: Path) -> dict[str, Any]:
    import torch

    state: dict[str, Any] = {}
    shards = sorted(folder.glob("*.safetensors"))
    if shards:
        from safetensors.torch import load_file

        for shard in shards:
            state.update(load_file(str(shard)))
    else:
        for shard in sorted(folder.glob("pytorch_model*.bin")):
            state.update(torch.load(shard, map_location="cpu", weights_only=True))
    if not state:
        raise ModelUnavailableError(f"The model folder {folder} has no weights. {_how()}")
    return state


def _load_hhem(spec: ClassifierSpec) -> tuple[Any, Any]:
    """HHEM-2.1-open without its repository code: a T5 token classifier built from the
    foundation's config, with the checkpoint's ``t5.*`` weights."""
    from transformers import AutoConfig, AutoTokenizer, T5ForTokenClassification

    if spec.foundation is None:
        raise ConfigError(f"The HHEM-style model at {spec.folder} names no foundation model.")
    config = AutoConfig.from_pretrained(spec.foundation, local_files_only=True)
    labels = _read_config(spec.folder).get("id2label") or {}
    config.num_labels = max(len(labels), 2)
    model = T5ForTokenClassification(config)
    state = {k[3:]: v for k, v in _read_weights(spec.folder).items() if k.startswith("t5.")}
    missing, unexpected = model.load_state_dict(state, strict=False)
    tensors = dict(model.named_parameters(remove_duplicate=False))
    loaded = {id(tensors[k]) for k in state if k in tensors}
    untrained = [k for k in missing if k not in tensors or id(tensors[k]) not in loaded]
    if untrained or unexpected:
        raise ModelUnavailableError(
            f"The HHEM checkpoint at {spec.folder} does not fit a T5 token classifier over "
            f"{spec.foundation_name}: missing {sorted(untrained)[:5]}, unexpected "
            f"{sorted(unexpected)[:5]}."
        )
    tokenizer = AutoTokenizer.from_pretrained(spec.foundation, local_files_only=True)
    return model, tokenizer


def _load(spec: ClassifierSpec, device: str) -> _Loaded:
    torch_setup()
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    where = _torch_device(device)
    try:
        if spec.family == "hhem":
            model, tokenizer = _load_hhem(spec)
        else:
            tokenizer = AutoTokenizer.from_pretrained(spec.folder, local_files_only=True)
            model, info = AutoModelForSequenceClassification.from_pretrained(
                spec.folder, local_files_only=True, dtype=torch.float32, output_loading_info=True
            )
            untrained = sorted(info.get("missing_keys") or ())
            if untrained:
                raise ModelUnavailableError(
                    f"The checkpoint at {spec.folder} has no trained classification head "
                    f"(missing from its weights: {', '.join(untrained[:5])}); its verdicts "
                    "would be random. Pass a fine-tuned checker or NLI model."
                )
    except (OSError, ValueError, KeyError) as error:
        raise ModelUnavailableError(
            f"Cannot load the verifier model from {spec.folder}: {error}. ragmeter never runs "
            f"a model repository's own code (trust_remote_code). {_how()}"
        ) from error
    model.eval()
    model.to(where)
    # Premises are tokenized whole to cut windows; the warning that one is longer than the
    # model's window is noise here (every pair the model sees fits).
    warned = getattr(tokenizer, "deprecation_warnings", None)
    if isinstance(warned, dict):
        warned["sequence-length-is-longer-than-the-specified-maximum"] = True
    return _Loaded(model, tokenizer, _max_length(tokenizer, model.config), where)


class HFClassifier:
    """Support probabilities of (premise, claim) pairs; the model loads on first use.

    Parameters
    ----------
    spec : str or ClassifierSpec
        A local folder or a model id in the local Hugging Face cache.
    label : str, optional
        The support label's name or index (else read from ``config.json``).
    device : str, default "auto"
        ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (CUDA when torch sees one).
    allow_download : bool, default False
        Fetch a model id from the hub when it is not cached.
    batch_size : int, default 16
        Pairs per forward pass.
    """

    def __init__(
        self,
        spec: str | ClassifierSpec,
        *,
        label: str | None = None,
        device: str | None = "auto",
        allow_download: bool = False,
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        if batch_size < 1:
            raise ConfigError(f"The verifier's batch_size must be >= 1. Got {batch_size}.")
        self.device = check_device(device)
        self.spec = (
            spec
            if isinstance(spec, ClassifierSpec)
            else read_spec(spec, label=label, allow_download=allow_download)
        )
        self.name = self.spec.name
        self.batch_size = batch_size
        self._loaded: _Loaded | None = None
        #: Forward passes run and pairs scored so far (tests and benchmarks read them).
        self.forward_calls = 0
        self.pairs_scored = 0

    @property
    def rule(self) -> LabelRule:
        return self.spec.rule

    def load(self) -> _Loaded:
        """Load the model and tokenizer (once per process and device)."""
        if self._loaded is None:
            key = f"{self.spec.folder}|{self.spec.family}|{self.device}"
            self._loaded = cached_model(
                "nli-classifier", key, lambda: _load(self.spec, self.device)
            )
        return self._loaded

    @property
    def max_length(self) -> int:
        return self.load().max_length

    # -- windows ------------------------------------------------------------------------

    def claim_tokens(self, claims: Sequence[str]) -> list[int]:
        """Tokens each claim takes in a pair with an empty premise (special tokens and the
        template included): what is left of ``max_length`` is the premise's budget."""
        if not claims:
            return []
        loaded = self.load()
        claims = encodable(claims)
        with loaded.lock:
            if self.spec.template is not None:
                texts = [self.spec.template.format(text1="", text2=c) for c in claims]
                encoded = loaded.tokenizer(texts)
            else:
                encoded = loaded.tokenizer([""] * len(claims), claims)
        return [len(ids) for ids in encoded["input_ids"]]

    def tokens(self, text: str) -> int:
        """Tokens of ``text`` alone (no special tokens)."""
        loaded = self.load()
        with loaded.lock:
            encoded = loaded.tokenizer(encodable([text])[0], add_special_tokens=False)
        return len(encoded["input_ids"])

    def windows(self, premise: str, budget: int) -> tuple[str, ...]:
        """``premise`` as it is when it fits ``budget`` tokens, else overlapping windows of at
        most ``budget`` tokens, each starting and ending at a word boundary where it can."""
        text = encodable([premise])[0]
        if not text.strip():
            return ()
        budget = max(budget, 8)
        loaded = self.load()
        tokenizer = loaded.tokenizer
        if not getattr(tokenizer, "is_fast", False):
            with loaded.lock:
                ids = tokenizer(text, add_special_tokens=False)["input_ids"]
                if len(ids) <= budget:
                    return (text,)
                spans = _spans(len(ids), budget, lambda i: True)
                return tuple(tokenizer.decode(ids[s:e], skip_special_tokens=True) for s, e in spans)
        with loaded.lock:
            encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
        offsets = encoded["offset_mapping"]
        if len(offsets) <= budget:
            return (text,)

        def word_start(i: int) -> bool:
            start = offsets[i][0]
            return start == 0 or text[start - 1].isspace() or text[start].isspace()

        spans = _spans(len(offsets), budget, word_start)
        return tuple(text[offsets[s][0] : offsets[e - 1][1]].strip() for s, e in spans)

    # -- scoring ------------------------------------------------------------------------

    def _encode(self, loaded: _Loaded, pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
        premises = encodable([p for p, _ in pairs])
        claims = encodable([c for _, c in pairs])
        common = {
            "padding": True,
            "truncation": True,
            "max_length": loaded.max_length,
            "return_tensors": "pt",
        }
        if self.spec.template is not None:
            texts = [
                self.spec.template.format(text1=p, text2=c)
                for p, c in zip(premises, claims, strict=True)
            ]
            encoded = loaded.tokenizer(texts, **common)
        else:
            encoded = loaded.tokenizer(premises, claims, **common)
        if "token_type_ids" in encoded and getattr(loaded.model.config, "type_vocab_size", 2) < 2:
            del encoded["token_type_ids"]  # RoBERTa-style: one segment embedding only
        return {k: v.to(loaded.device) for k, v in encoded.items()}

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """The support probability of each (premise, claim) pair, in order."""
        out = np.zeros(len(pairs), dtype=np.float64)
        if not pairs:
            return out
        import torch

        loaded = self.load()
        index = self.rule.index
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            # One batch at a time holds the lock: tokenizing for windows goes on between.
            with loaded.lock, torch.inference_mode():
                logits = loaded.model(**self._encode(loaded, [pairs[i] for i in chunk])).logits
            if self.spec.family == "hhem":
                logits = logits[:, 0, :]  # the first token's label, as HHEM's predict
            logits = logits.float()
            if index is None:
                probs = torch.sigmoid(logits[:, 0])
            else:
                probs = torch.softmax(logits, dim=-1)[:, index]
            out[chunk] = probs.cpu().numpy()
            self.forward_calls += 1
            self.pairs_scored += len(chunk)
        return out

    def describe(self) -> dict[str, Any]:
        spec = self.spec
        out: dict[str, Any] = {
            "model": spec.display,
            "path": str(spec.folder),
            "revision": spec.revision,
            "family": spec.family,
            "label": spec.rule.describe(),
            "input": (
                f"template {spec.template!r} (premise as text1, claim as text2)"
                if spec.template is not None
                else "pair: premise first, claim second"
            ),
            "device": self._loaded.device if self._loaded is not None else self.device,
            "batch_size": self.batch_size,
        }
        if spec.foundation_name is not None:
            out["foundation"] = spec.foundation_name
        if self._loaded is not None:
            out["max_length"] = self._loaded.max_length
        return out


def _spans(n: int, budget: int, starts_word: Any) -> list[tuple[int, int]]:
    """Token spans ``[s, e)`` of at most ``budget`` covering ``0..n``, each overlapping the
    previous by about ``WINDOW_OVERLAP``; ends and starts moved to a word start when one lies
    in the window's last / first quarter."""
    overlap = int(budget * WINDOW_OVERLAP)
    spans: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(start + budget, n)
        if end < n:
            floor = max(start + budget - overlap, start + 1)
            snapped = next((e for e in range(end, floor - 1, -1) if starts_word(e)), end)
            end = snapped
        spans.append((start, end))
        if end >= n:
            return spans
        nxt = max(end - overlap, start + 1)
        ceiling = min(nxt + overlap, end)
        start = next((s for s in range(nxt, ceiling) if starts_word(s)), nxt)
