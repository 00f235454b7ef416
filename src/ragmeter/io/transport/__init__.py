"""The HTTP transport of the judges and embedders that call an OpenAI-compatible endpoint:
requests with a deadline and size caps, the no-reply breaker (:mod:`.http`), the retry
policy (:mod:`.retry_policy`) and the loop that applies them (:mod:`.retries`)."""
