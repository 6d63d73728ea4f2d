"""graphtrail.evaluators.scoring: from run records to judged records, scored tables, statistics and findings.

Holds pure functions, no I/O and no drawing:

- :mod:`.judges`: is an answer right, how close, did it change (``apply_judges``);
- :mod:`.metrics`: source support, trajectory fidelity, entity influence, coverage,
  structural faithfulness; :mod:`.stats`: intervals, paired tests, power;
- :mod:`.score`: :func:`score_records`, every table in one call, built from
  :mod:`.conditions` (the condition table), :mod:`.questions` (question and
  entity rows, headline scores) and :mod:`.aggregate`;
- :mod:`.tables`: the row models those tables are made of;
- :mod:`.coverage`: whether each condition's filter reached the tools that
  mattered; :mod:`.findings`: what an evaluation found, in sentences.

May import :mod:`graphtrail.evaluators.records` (and the tracer's and agents'
data types); never :mod:`graphtrail.evaluators.replay`,
:mod:`graphtrail.evaluators.report` or the API. Findings and the coverage
banner read a report only through the :class:`~.tables.ReportTables` protocol.
Submodules are imported on use; this package imports none of them.
"""
