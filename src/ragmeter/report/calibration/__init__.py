"""Calibrating a run's judge with human labels, the run's side: reading the run and checking a
labels file against it, then the report's section.

* :mod:`.calibrate`: :func:`~.calibrate.calibrate_run`, every labelled metric's calibration;
* :mod:`.table`: what calibration reads of a run (:class:`~.table.ScoreTable`, from a
  :class:`~ragmeter.result.RunResult` or a results file read in one pass);
* :mod:`.label_checks`: a labels file checked against the run;
* :mod:`.compare`: the calibrated difference of two calibrated runs;
* :mod:`.section`: the HTML report's calibration section.

The statistics (PPI++, the claim metrics' re-aggregation, the calibration as a value) are in
:mod:`ragmeter.scoring.calibration`.
"""
