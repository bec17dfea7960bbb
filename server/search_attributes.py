"""Custom search attributes, so people can filter runs in the Web UI and CLI
(``GreenloopRepo = '...' AND GreenloopState = 'ESCALATED'``).

They must be registered in the namespace: ``greenloop server`` does it for the
embedded dev server; on a cluster, ``temporal operator search-attribute create``
(see deploy/README.md). The keys are defined here, below the workflows that set
them (``workflows/search.py``) and beside the server code that registers them.
"""

from __future__ import annotations

from temporalio.common import SearchAttributeKey

REPO = SearchAttributeKey.for_keyword("GreenloopRepo")
STATE = SearchAttributeKey.for_keyword("GreenloopState")
FAILING = SearchAttributeKey.for_int("GreenloopFailing")
ALL = [REPO, STATE, FAILING]
