"""Metrics the user writes in Python: ``@ragmeter.metric`` (:mod:`.definition`), scored in the
runner like ragmeter's own (:mod:`.family`), loaded by module name or the entry point
group ``ragmeter.metrics`` (:mod:`.plugins`)."""
