"""Every case of the shared corpus parses perfectly, with the framework given
and with it detected, scored by the corpus's own scorer
(shared/tools/score_corpus.py): totals, flags, ids, statuses, and file, line
and message of every test."""

from __future__ import annotations

import importlib.util
import json

import pytest

from greenloop.cli.corpus import RESULT_FIELDS, case_run
from greenloop.parsers import parse
from greenloop.parsers.registry import canonical
from tests.conftest import shared_dir

CORPUS = shared_dir() / "corpus"
CASES = sorted(p.parent for p in CORPUS.glob("*/*/expected.json"))


def _scorer():
    spec = importlib.util.spec_from_file_location("score_corpus", shared_dir() / "tools" / "score_corpus.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SCORER = _scorer()


def test_corpus_is_present():
    assert len(CASES) >= 70, f"expected the 70-case public corpus under {CORPUS}"


@pytest.mark.parametrize("detect", [False, True], ids=["given", "detected"])
@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_case_scores_perfect(case, detect):
    expected = json.loads((case / "expected.json").read_text())
    report = parse(case_run(case), None if detect else canonical(case.parent.name))
    got = json.loads(json.dumps(report.model_dump(mode="json", include=RESULT_FIELDS)))
    score = SCORER.score_case(expected, got)
    by_id = {t["id"]: t for t in got["tests"]}
    wrong = [
        (t["id"], t["status"], by_id.get(t["id"], {}).get("status", "MISSING"))
        for t in expected["tests"]
        if by_id.get(t["id"], {}).get("status") != t["status"]
    ]
    extra = sorted(set(by_id) - {t["id"] for t in expected["tests"]})
    assert score["perfect"], f"wrong statuses {wrong[:8]}, extra ids {extra[:8]}, totals {got['totals']}"
    assert (score["file_ok"], score["line_ok"], score["msg_ok"]) == (
        score["file_n"], score["line_n"], score["msg_n"],
    ), {k: score[k] for k in ("file_ok", "file_n", "line_ok", "line_n", "msg_ok", "msg_n")}
    if detect:
        assert report.framework == canonical(case.parent.name), report.detection
