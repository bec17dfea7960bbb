"""Language detection: the table, confidence and ambiguity error."""

from __future__ import annotations

import pytest

from greenloop.domain.errors import ErrorKind, GreenloopError
from greenloop.parsers.language import detect_language


def make(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize("files, language, confidence", [
    ({"package.json": '{"scripts": {"test": "jest"}}'}, "javascript", "high"),
    ({"package.json": '{"name": "x"}'}, "javascript", "medium"),
    ({"package.json": '{"scripts": {"test": "vitest"}}', "tsconfig.json": "{}"}, "typescript", "high"),
    ({"pyproject.toml": "[tool.pytest.ini_options]\n"}, "python", "high"),
    ({"requirements.txt": "requests\n"}, "python", "medium"),
    ({"go.mod": "module example.com/x\n"}, "go", "high"),
    ({"Gemfile": "gem 'rspec'\n"}, "ruby", "high"),
    ({"x.gemspec": ""}, "ruby", "medium"),
    ({"Cargo.toml": "[package]\n"}, "rust", "high"),
    ({"pom.xml": "<project/>"}, "java", "high"),
    ({"build.gradle.kts": ""}, "java", "high"),
])
def test_indicator_table(tmp_path, files, language, confidence):
    found = detect_language(make(tmp_path, files))
    assert (found.language, found.confidence) == (language, confidence)


def test_high_confidence_beats_medium(tmp_path):
    # A Go service with a requirements.txt for its tooling is a Go project.
    found = detect_language(make(tmp_path, {"go.mod": "module m\n", "requirements.txt": "x\n"}))
    assert found.language == "go"


def test_more_specific_file_wins_between_equals(tmp_path):
    # pytest.ini (a test configuration) is more specific than a package.json with a test script.
    found = detect_language(make(tmp_path, {"pytest.ini": "[pytest]\n", "package.json": '{"scripts": {"test": "x"}}'}))
    assert found.language == "python"


def test_equal_indicators_are_an_ambiguity_error(tmp_path):
    with pytest.raises(GreenloopError) as err:
        detect_language(make(tmp_path, {"go.mod": "module m\n", "Cargo.toml": "[package]\n"}))
    assert err.value.kind is ErrorKind.LANGUAGE_DETECTION_FAILED
    assert set(err.value.context["found"]) == {"go.mod", "Cargo.toml"}


def test_no_indicator_lists_files_checked(tmp_path):
    with pytest.raises(GreenloopError) as err:
        detect_language(tmp_path)
    assert err.value.kind is ErrorKind.LANGUAGE_DETECTION_FAILED
    assert "package.json" in err.value.context["files_checked"]


def test_explicit_language_aliases(tmp_path):
    assert detect_language(tmp_path, "golang").language == "go"
    with pytest.raises(GreenloopError) as err:
        detect_language(tmp_path, "cobol")
    assert err.value.kind is ErrorKind.VALIDATION_ERROR


def test_a_test_runner_dependency_makes_package_json_a_strong_indicator(tmp_path):
    (tmp_path / "package.json").write_text('{"devDependencies": {"tape": "^5"}}')
    (tmp_path / "requirements.txt").write_text("requests\n")
    found = detect_language(tmp_path)
    assert (found.language, found.confidence) == ("javascript", "high")
