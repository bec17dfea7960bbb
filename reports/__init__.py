"""What a run leaves for people: its record and the documents rendered from it.

``record.py`` holds the run's record: each test's result (``FixOneTestResult``),
its view (``FixStatusView``) and the run's summary (``RunSummary``), the
results of the workflows. The renderers turn it into ``report.md``
(``markdown.py``), ``report.html`` (``html.py``), ``summary.json``
(``summary_file.py``), JUnit XML (``junit.py``) and per-test timelines from the
event logs (``timeline.py``).

Layer: below ``activities/`` and ``workflows/``. The finalize activity
(``activities/workspace.finalize_run``) writes the reports and the workflow
builds the summary, so both import this package; the reports import neither.
No Temporal here: the data and plain functions the finalize activity calls.
"""
