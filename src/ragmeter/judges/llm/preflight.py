"""The judge's check before a run: the key is there when the endpoint needs one, the endpoint
answers, and it lists the model (a warning when not; a server without ``/models`` is let
through, the first request will tell)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ragmeter.errors import JudgeError, JudgeUnavailableError, keyword
from ragmeter.judges.llm.replies import error_message, redact_key

if TYPE_CHECKING:
    from ragmeter.judges.llm.openai_judge import OpenAIJudge

__all__ = ["check_endpoint"]

# The judge's logger: what preflight says is the judge's to say.
log = logging.getLogger("ragmeter.judges.llm.openai_judge")


async def check_endpoint(judge: OpenAIJudge) -> None:
    """Check ``judge``'s key and endpoint before the first sample; raise JudgeError (or
    JudgeUnavailableError) if unusable."""
    import openai

    if judge._api_key is None and judge.key_required:
        raise JudgeError(judge._missing_key_message())
    _, client = judge._bind()
    try:
        page = await client.with_options(timeout=min(judge.timeout, 15.0)).models.list()
    except openai.APIStatusError as exc:
        if exc.status_code in (401, 403):
            raise judge._http_error(exc.status_code, error_message(exc)) from None
        # Some compatible servers have no /models route; the first request will tell.
        log.info(
            "Judge preflight: %s has no usable /models (HTTP %s).",
            judge.public_endpoint,
            exc.status_code,
        )
        return
    except openai.APIConnectionError as exc:
        raise JudgeUnavailableError(
            redact_key(
                f"Cannot reach the judge endpoint {judge.public_endpoint} "
                f"({exc.__cause__ or exc}). Start the server, or fix "
                f"{keyword('base_url')} / OPENAI_BASE_URL.",
                judge._api_key,
            )
        ) from None
    models = [m.id for m in getattr(page, "data", []) or []]
    if models and judge.model not in models:
        log.warning(
            "Judge model %r is not listed by %s (it lists %s).",
            judge.model,
            judge.public_endpoint,
            ", ".join(models[:10]),
        )
