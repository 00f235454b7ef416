"""Calibrating a judge with human labels, the statistics: pure numpy, no I/O.

* :mod:`.ppi`: the estimators (the judge's mean, the labels' mean, PPI++, active inference,
  label budgets, agreement statistics);
* :mod:`.estimates`: one metric's estimates from the paired values (people ``Y``, judge ``f``),
  with the small-sample policy, the label budget and the row-level agreement;
* :mod:`.claims`: the claim metrics' re-aggregation (a metric recomputed from the people's
  verdicts on labelled claims and the corrected verdict rates on the others);
* :mod:`.record`: the calibration as a value (:class:`~.record.Calibration`), what
  ``ragmeter calibrate --json`` prints and the run record keeps.

Reading a run and a labels file, and the report's section, are in
:mod:`ragmeter.report.calibration`.
"""
