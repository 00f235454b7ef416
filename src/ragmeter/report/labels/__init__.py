"""Labels from people on a sample of a run: the labelling page (``ragmeter label``).

- :mod:`ragmeter.report.labels.sample`: which rows (uniform random; stratified, for looking).
- :mod:`ragmeter.report.labels.page`: the self-contained HTML page and its export format
  (``page.js`` and ``page.css`` beside it are inlined into every page).
"""
