"""The phase-testing protocol's input/output schemas."""

from __future__ import annotations

import json

import pytest

from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.runner.protocol import PhaseTestInput, error_output, parse_input


def test_minimal_input_gets_the_documented_defaults():
    inp = parse_input('{"working_directory": "/srv/app"}')
    assert (inp.max_retries, inp.retry_backoff_ms, inp.timeout_seconds) == (3, [5000, 10000, 15000], 300)
    assert [inp.backoff_s(n) for n in (1, 2, 3, 4)] == [5.0, 10.0, 15.0, 15.0]


@pytest.mark.parametrize("raw, field", [
    ({"working_directory": "/a", "colour": "red"}, "colour"),
    ({"working_directory": "relative/path"}, "working_directory"),
    ({"working_directory": "/a", "max_retries": 11}, "max_retries"),
    ({"working_directory": "/a", "language": "cobol"}, "language"),
    ({"working_directory": "/a", "retry_backoff_ms": [-1]}, "retry_backoff_ms"),
    ({}, "working_directory"),
])
def test_invalid_input_is_one_validation_error_naming_the_field(raw, field):
    with pytest.raises(GreenloopError) as err:
        parse_input(json.dumps(raw))
    assert err.value.kind is ErrorKind.VALIDATION_ERROR
    assert field in err.value.message


def test_error_output_matches_the_schema_example():
    out = error_output(GreenloopError("working_directory does not exist", working_directory="/nope", exists=False))
    data = json.loads(out.to_json())
    assert data["status"] == "fail" and data["test_command"] is None and data["build_command"] is None
    assert data["errors"] == [{"type": "validation_error", "message": "working_directory does not exist",
                               "context": {"working_directory": "/nope", "exists": False}}]
    assert "user_override" not in data
    assert PhaseTestInput.model_json_schema()["additionalProperties"] is False
