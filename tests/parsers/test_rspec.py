"""RSpec parser: synthetic outputs written from rspec-core 3's formatter rules
(progress, documentation, JSON), spec sources for what the output omits, and
bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from greenloop.parsers import parse as parse_any
from greenloop.parsers.locate import SourceIndex
from greenloop.parsers.models import Status
from greenloop.parsers.rspec import COMMAND_RE, OUTPUT_RE, parse_options
from greenloop.parsers.run_output import RunOutput
from greenloop.parsers.source.ruby import SpecIndex, generated_description, ruby_float
from tests.parsers.helpers import by_id

ESC = "\x1b"

SPEC = """\
require "spec_helper"

RSpec.describe Invoice do
  describe "#total" do
    it "sums the lines" do
      expect(invoice.total).to eq(30)
    end

    it "applies the discount" do
      expect(invoice.total).to eq(27)
    end
  end

  describe ".parse" do
    [["10", 10], ["3.5", 3.5]].each do |text, amount|
      it "reads #{text} as #{amount}" do
        expect(Invoice.parse(text)).to eq(amount)
      end
    end
  end

  context "when archived" do
    it "cannot change" do
      pending("archiving is not done")
      expect(invoice).to be_frozen
    end

    it "prints a receipt" do
      skip "no printer"
    end

    xit "mails the customer" do
    end
  end
end

RSpec.describe "Invoice export" do
  it "writes csv" do
    expect(1).to eq(1)
  end
end
"""

PENDING_SECTION = """\
Pending: (Failures listed here are expected and do not affect your suite's status)

  1) Invoice when archived cannot change
     # archiving is not done
     Failure/Error: expect(invoice).to be_frozen
       expected `#<Invoice lines=[]>.frozen?` to be truthy, got false
     # ./spec/invoice_spec.rb:25:in `block (3 levels) in <top (required)>'

  2) Invoice when archived prints a receipt
     # no printer
     # ./spec/invoice_spec.rb:28

  3) Invoice when archived mails the customer
     # Temporarily skipped with xit
     # ./spec/invoice_spec.rb:32
"""

FAILURES_SECTION = """\
Failures:

  1) Invoice#total applies the discount
     Failure/Error: expect(invoice.total).to eq(27)

       expected: 27
            got: 30

       (compared using ==)
     # ./spec/invoice_spec.rb:10:in `block (3 levels) in <top (required)>'

  2) Invoice.parse reads 3.5 as 3.5
     Failure/Error: Float(text)

     ArgumentError:
       invalid value for Float(): "3,5"
     # ./lib/invoice.rb:9:in `Float'
     # ./spec/invoice_spec.rb:17:in `block (4 levels) in <top (required)>'
"""

TAIL = """\
Finished in 0.01 seconds (files took 0.1 seconds to load)
8 examples, 2 failures, 3 pending

Failed examples:

rspec ./spec/invoice_spec.rb:9 # Invoice#total applies the discount
rspec './spec/invoice_spec.rb[1:2:2]' # Invoice.parse reads 3.5 as 3.5
"""


def project(tmp_path: Path, spec: str = SPEC, name: str = "spec/invoice_spec.rb") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(spec)
    return tmp_path


def parse(run: RunOutput):
    """The whole parse: RSpec's parser, then the normalizer (lines through ``rspec.locate``)."""
    return parse_any(run, "rspec")


def run_of(tmp_path: Path, stdout: str, command: str = "rspec", exit_code: int = 1, stderr: str = "") -> RunOutput:
    return RunOutput(command=command, exit_code=exit_code, stdout_text=stdout, stderr_text=stderr, cwd=tmp_path)


# ---------------------------------------------------------------- progress formatter


def test_progress_takes_failures_pending_and_passing_examples_from_sources(tmp_path: Path) -> None:
    out = "..F.F***.\n\n" + PENDING_SECTION + "\n" + FAILURES_SECTION + "\n" + TAIL
    report = parse(run_of(project(tmp_path), out))
    tests = by_id(report)
    assert report.totals.model_dump() == {
        "passed": 3, "failed": 2, "errored": 0, "skipped": 2, "xfailed": 1, "xpassed": 0}
    # a describe with a class glues "#x" / ".x" onto it; a string group does not
    assert tests["Invoice#total sums the lines"].status == Status.PASSED
    assert tests["Invoice#total sums the lines"].line == 5
    assert tests["Invoice export writes csv"].status == Status.PASSED
    # an example built in a loop over a literal table, by its interpolated title
    assert tests["Invoice.parse reads 10 as 10"].status == Status.PASSED
    assert tests["Invoice.parse reads 10 as 10"].line == 16
    failed = tests["Invoice.parse reads 3.5 as 3.5"]
    assert failed.status == Status.FAILED and failed.file == "spec/invoice_spec.rb" and failed.line == 16
    assert failed.message.startswith('ArgumentError:\n       invalid value for Float(): "3,5"')
    assert "./lib/invoice.rb:9" in failed.details
    discount = tests["Invoice#total applies the discount"]
    assert discount.message.startswith("expected: 27\n            got: 30")
    # pending that still fails -> xfailed; skip / xit -> skipped
    xf = tests["Invoice when archived cannot change"]
    assert (xf.status, xf.native_status, xf.message, xf.line) == (
        Status.XFAILED, "pending", "archiving is not done", 23)
    assert tests["Invoice when archived prints a receipt"].status == Status.SKIPPED
    assert tests["Invoice when archived mails the customer"].message == "Temporarily skipped with xit"
    assert tests["Invoice when archived mails the customer"].line == 32
    assert report.warnings == []
    assert "spec-sources" in report.sources


def test_progress_without_sources_keeps_named_examples_and_warns(tmp_path: Path) -> None:
    out = "..F.F***.\n\n" + PENDING_SECTION + "\n" + FAILURES_SECTION + "\n" + TAIL
    report = parse(run_of(tmp_path, out))
    assert report.totals.failed == 2 and report.totals.passed == 0
    # file/line still come from the "Failed examples" rerun list
    t = by_id(report)["Invoice#total applies the discount"]
    assert (t.file, t.line) == ("spec/invoice_spec.rb", 9)
    assert any("passing" in w for w in report.warnings)


def test_fixed_pending_is_a_failure(tmp_path: Path) -> None:
    out = """.F

Failures:

  1) Cart totals with tax FIXED
     Expected pending 'tax rules missing' to fail. No error was raised.
     # ./spec/cart_spec.rb:4

Finished in 0.002 seconds (files took 0.05 seconds to load)
2 examples, 1 failure

Failed examples:

rspec ./spec/cart_spec.rb:4 # Cart totals with tax
"""
    report = parse(run_of(tmp_path, out))
    t = by_id(report)["Cart totals with tax"]
    assert t.status == Status.FAILED and t.native_status == "failed (FIXED)"
    assert t.message == "Expected pending 'tax rules missing' to fail. No error was raised."
    assert (t.file, t.line) == ("spec/cart_spec.rb", 4)


def test_timeout_error_marks_the_example_timed_out(tmp_path: Path) -> None:
    out = """F

Failures:

  1) Poller waits for the job
     Failure/Error: sleep 5

     Timeout::Error:
       execution expired
     # ./spec/poller_spec.rb:3:in `block (2 levels) in <top (required)>'

Finished in 1 second (files took 0.05 seconds to load)
1 example, 1 failure
"""
    report = parse(run_of(tmp_path, out))
    t = by_id(report)["Poller waits for the job"]
    assert t.timed_out and report.timed_out
    assert "execution expired" in t.message
    # no rerun list, no sources: the first spec frame of the backtrace
    assert (t.file, t.line) == ("spec/poller_spec.rb", 3)


# ---------------------------------------------------------------- documentation formatter


def test_documentation_tree_with_colours_and_stray_output(tmp_path: Path) -> None:
    def c(code: str, text: str) -> str:
        return f"{ESC}[{code}m{text}{ESC}[0m"

    out = "\n".join([
        "Randomized with seed 4242",
        "",
        "Ledger",
        "  #balance",
        c("32", "    starts at zero"),
        c("31", "    adds credits (FAILED - 1)"),
        "  printing",
        "DEBUG: writing ledger",  # the test's own puts, unindented
        c("32", "    prints a header"),
        c("33", "    prints colours (PENDING: terminal not ready)"),
        "",
        "Ledger exports",
        c("32", "  writes json"),
        "",
        "Pending: (Failures listed here are expected and do not affect your suite's status)",
        "",
        "  1) Ledger printing prints colours",
        c("36", "     # terminal not ready"),
        c("36", "     # ./spec/ledger_spec.rb:14"),
        "",
        "Failures:",
        "",
        "  1) Ledger#balance adds credits",
        c("31", "     Failure/Error: expect(ledger.balance).to eq(5)"),
        c("31", "       expected: 5"),
        c("31", "            got: 0"),
        c("36", "     # ./spec/ledger_spec.rb:8:in `block (3 levels) in <top (required)>'"),
        "",
        "Finished in 0.01 seconds (files took 0.1 seconds to load)",
        c("31", "5 examples, 1 failure, 1 pending"),
        "",
        "Randomized with seed 4242",
        "",
    ])
    report = parse(run_of(tmp_path, out, "rspec --format documentation --force-color --order rand"))
    tests = by_id(report)
    assert set(tests) == {
        "Ledger#balance starts at zero", "Ledger#balance adds credits", "Ledger printing prints a header",
        "Ledger printing prints colours", "Ledger exports writes json"}
    assert tests["Ledger printing prints a header"].status == Status.PASSED
    assert tests["Ledger printing prints colours"].status == Status.SKIPPED
    assert tests["Ledger#balance adds credits"].message.startswith("expected: 5")
    assert report.warnings == []


def test_documentation_glue_follows_failure_names_over_the_heuristic(tmp_path: Path) -> None:
    # "Parser" described by a string: "#run" is joined with a space, as the
    # failure's full description shows.
    out = """
Parser
  #run
    works
    breaks (FAILED - 1)

Failures:

  1) Parser #run breaks
     Failure/Error: raise "x"

     RuntimeError:
       x
     # ./spec/parser_spec.rb:6:in `block (3 levels) in <top (required)>'

Finished in 0.01 seconds (files took 0.1 seconds to load)
2 examples, 1 failure
"""
    report = parse(run_of(tmp_path, out, "rspec -fd"))
    assert set(by_id(report)) == {"Parser #run works", "Parser #run breaks"}


def test_documentation_from_dot_rspec_file(tmp_path: Path) -> None:
    (tmp_path / ".rspec").write_text("--require spec_helper\n--format documentation\n")
    out = "\nQueue\n  pushes\n  pops\n\nFinished in 0.01 seconds (files took 0.1 seconds to load)\n2 examples, 0 failures\n"
    report = parse(run_of(tmp_path, out, exit_code=0))
    assert sorted(by_id(report)) == ["Queue pops", "Queue pushes"]


# ---------------------------------------------------------------- JSON formatter


def json_doc(examples: list[dict], summary: tuple[int, int, int, int], messages: list[str] | None = None) -> str:
    total, failures, pending, errors = summary
    return json.dumps({
        "version": "3.12.0", "messages": messages or [], "examples": examples,
        "summary": {"duration": 0.1, "example_count": total, "failure_count": failures,
                    "pending_count": pending, "errors_outside_of_examples_count": errors},
        "summary_line": f"{total} examples, {failures} failures",
    })


def ex(full: str, status: str, line: int, sid: str, **extra) -> dict:
    return {"id": f"./spec/invoice_spec.rb[{sid}]", "description": full.split()[-1], "full_description": full,
            "status": status, "file_path": "./spec/invoice_spec.rb", "line_number": line, "run_time": 0.001,
            "pending_message": extra.pop("pending_message", None), **extra}


JSON_EXAMPLES = [
    ex("Invoice#total sums the lines", "passed", 5, "1:1:1"),
    ex("Invoice#total applies the discount", "failed", 9, "1:1:2", exception={
        "class": "RSpec::Expectations::ExpectationNotMetError",
        "message": "\nexpected: 27\n     got: 30\n\n(compared using ==)\n",
        "backtrace": ["<ROOT>/spec/invoice_spec.rb:10:in `block (3 levels) in <top (required)>'"]}),
    ex("Invoice when archived cannot change", "pending", 23, "1:3:1", pending_message="archiving is not done"),
    ex("Invoice when archived prints a receipt", "pending", 27, "1:3:2", pending_message="no printer"),
    ex("Invoice slow path", "failed", 40, "1:4", exception={
        "class": "Timeout::Error", "message": "execution expired", "backtrace": []}),
    ex("Invoice fixed", "failed", 44, "1:5", pending_message="was broken", exception={
        "class": "RSpec::Core::Pending::PendingExampleFixedError",
        "message": "Expected example to fail since it is pending, but it passed.", "backtrace": []}),
]


def test_json_file_with_progress_console(tmp_path: Path) -> None:
    project(tmp_path)
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "rspec.json").write_text(json_doc(JSON_EXAMPLES, (6, 3, 2, 0)))
    out = ".F**FF\n\n" + PENDING_SECTION + "\nFinished in 0.1 seconds (files took 0.1 seconds to load)\n6 examples, 3 failures, 2 pending\n"
    report = parse(run_of(tmp_path, out, "rspec --format progress --format json --out reports/rspec.json"))
    tests = by_id(report)
    assert report.sources == ["json:reports/rspec.json"]
    assert len(tests) == 6
    # the console's Pending section tells the failing `pending` from the skip
    assert tests["Invoice when archived cannot change"].status == Status.XFAILED
    assert tests["Invoice when archived prints a receipt"].status == Status.SKIPPED
    assert tests["Invoice when archived prints a receipt"].message == "no printer"
    assert tests["Invoice#total applies the discount"].message.startswith("expected: 27")
    assert (tests["Invoice#total applies the discount"].file, tests["Invoice#total applies the discount"].line) == (
        "spec/invoice_spec.rb", 9)
    assert tests["Invoice slow path"].timed_out and report.timed_out
    fixed = tests["Invoice fixed"]
    assert fixed.status == Status.FAILED and fixed.native_status == "failed (FIXED)"
    assert "Expected pending 'was broken' to fail. No error was raised." in fixed.message
    assert report.warnings == []


def test_json_on_stdout_after_test_output_uses_sources_for_pending(tmp_path: Path) -> None:
    project(tmp_path)
    out = "some puts from a test\npartial line " + json_doc(JSON_EXAMPLES[:4], (4, 1, 2, 0))
    report = parse(run_of(tmp_path, out, "bundle exec rspec --format json"))
    tests = by_id(report)
    assert report.sources == ["json:stdout"]
    # no Pending section on the console: a `pending` call in the body means xfailed
    assert tests["Invoice when archived cannot change"].status == Status.XFAILED
    assert tests["Invoice when archived prints a receipt"].status == Status.SKIPPED
    assert "expected: 27" in tests["Invoice#total applies the discount"].message


def test_truncated_json_report_falls_back_to_console(tmp_path: Path) -> None:
    project(tmp_path)
    (tmp_path / "r.json").write_text(json_doc(JSON_EXAMPLES, (6, 3, 2, 0))[:300])
    out = "..F.F***.\n\n" + PENDING_SECTION + "\n" + FAILURES_SECTION + "\n" + TAIL
    report = parse(run_of(tmp_path, out, "rspec -f p -f j -o r.json"))
    assert any("r.json" in w and "truncated" in w for w in report.warnings)
    assert "console" in report.sources
    assert report.totals.failed == 2 and report.totals.passed == 3


def test_missing_json_report_warns(tmp_path: Path) -> None:
    report = parse(run_of(tmp_path, "F\n\nFinished in 0.1 seconds (files took 0.1 seconds to load)\n1 example, 1 failure\n",
                          "rspec --format json --out nowhere/r.json --format progress"))
    assert any("nowhere/r.json does not exist" in w for w in report.warnings)


# ---------------------------------------------------------------- errors outside examples


def test_load_error_is_an_errored_file_and_a_build_error(tmp_path: Path) -> None:
    project(tmp_path, "RSpec.describe 'x' do\n  it 'y' do\n    foo(\n  end\nend\n", "spec/broken_spec.rb")
    out = """
An error occurred while loading ./spec/broken_spec.rb.
Failure/Error: __send__(method, file)

SyntaxError:
  <ROOT>/spec/broken_spec.rb:4: syntax error, unexpected `end'
# <RUBYGEMS>/gems/rspec-core-3.12.0/lib/rspec/core/configuration.rb:2117:in `load'


Finished in 0.00005 seconds (files took 0.1 seconds to load)
0 examples, 0 failures, 1 error occurred outside of examples
"""
    report = parse(run_of(tmp_path, out))
    assert report.build_error
    [t] = report.tests
    assert (t.id, t.status, t.file, t.line) == ("./spec/broken_spec.rb", Status.ERRORED, "spec/broken_spec.rb", 4)
    assert "syntax error, unexpected `end'" in t.message
    assert report.warnings == []


def test_load_error_in_json_messages(tmp_path: Path) -> None:
    msg = ("An error occurred while loading ./spec/a_spec.rb.\nFailure/Error: require 'nope'\n\nLoadError:\n"
           "  cannot load such file -- nope\n# ./spec/a_spec.rb:1:in `<top (required)>'\n")
    out = json_doc([], (0, 0, 0, 1), [msg])
    report = parse(run_of(tmp_path, out, "rspec --format json"))
    [t] = report.tests
    assert report.build_error and t.id == "./spec/a_spec.rb" and t.line == 1
    assert "cannot load such file -- nope" in t.message


def test_before_suite_error_is_errored_without_build_error(tmp_path: Path) -> None:
    out = """
An error occurred in a `before(:suite)` hook.
Failure/Error: raise "db down"

RuntimeError:
  db down
# ./spec/spec_helper.rb:3:in `block (2 levels) in <top (required)>'


Finished in 0.0001 seconds (files took 0.1 seconds to load)
0 examples, 0 failures, 1 error occurred outside of examples
"""
    report = parse(run_of(tmp_path, out))
    [t] = report.tests
    assert t.status == Status.ERRORED and "before(:suite)" in t.id and "db down" in t.message
    assert not report.build_error


# ---------------------------------------------------------------- killed runs and filters


def test_run_killed_by_timeout_maps_dots_onto_sources(tmp_path: Path) -> None:
    project(tmp_path, 'RSpec.describe "Sync" do\n  it "starts" do\n  end\n\n  it "waits" do\n    sleep\n  end\n\n'
                      '  it "ends" do\n  end\nend\n', "spec/sync_spec.rb")
    report = parse(run_of(tmp_path, ".", "timeout 5 rspec", exit_code=124))
    tests = by_id(report)
    assert tests["Sync starts"].status == Status.PASSED
    waits = tests["Sync waits"]
    assert waits.status == Status.FAILED and waits.timed_out and waits.line == 5
    assert "Sync ends" not in tests and report.timed_out


def test_location_filter_selects_examples_like_rspec(tmp_path: Path) -> None:
    project(tmp_path)
    out = "..\n\nFinished in 0.01 seconds (files took 0.1 seconds to load)\n2 examples, 0 failures\n"
    # line 11 is inside "applies the discount"; line 4 is the "#total" group
    report = parse(run_of(tmp_path, out, "rspec spec/invoice_spec.rb:4", exit_code=0))
    assert sorted(by_id(report)) == ["Invoice#total applies the discount", "Invoice#total sums the lines"]
    report = parse(run_of(tmp_path, out.replace("..", ".").replace("2 examples", "1 example"),
                          "rspec spec/invoice_spec.rb:11", exit_code=0))
    assert list(by_id(report)) == ["Invoice#total applies the discount"]


def test_example_filter_and_id_filter(tmp_path: Path) -> None:
    project(tmp_path)
    out = "..\n\nFinished in 0.01 seconds (files took 0.1 seconds to load)\n2 examples, 0 failures\n"
    report = parse(run_of(tmp_path, out, "rspec -e 'reads'", exit_code=0))
    assert sorted(by_id(report)) == ["Invoice.parse reads 10 as 10", "Invoice.parse reads 3.5 as 3.5"]
    report = parse(run_of(tmp_path, out, "rspec 'spec/invoice_spec.rb[1:2]'", exit_code=0))
    assert sorted(by_id(report)) == ["Invoice.parse reads 10 as 10", "Invoice.parse reads 3.5 as 3.5"]


# ---------------------------------------------------------------- spec sources


def test_spec_index_ids_loops_namespaces_and_shared_examples(tmp_path: Path) -> None:
    project(tmp_path, """\
module Billing
  RSpec.describe Tax, "#rate" do
    { "de" => 0.19, "fr" => 0.2 }.each do |country, rate|
      it "is #{(rate * 100).to_i}% in #{country.upcase}" do
      end
    end

    %w[a b].each_with_index do |name, i|
      context "variant #{name}" do
        it("has index #{i + 1}") { }
      end
    end

    it_behaves_like "a rate"
    it { is_expected.to be_positive }
    it { is_expected.to eq(tax_for(country)) }
  end
end
""", "spec/tax_spec.rb")
    (tmp_path / "spec" / "support").mkdir()
    (tmp_path / "spec" / "support" / "shared.rb").write_text(
        'RSpec.shared_examples "a rate" do\n  it "is a number" do\n  end\nend\n')
    index = SpecIndex(SourceIndex(tmp_path))
    got = [(n.native_id(), n.full_text if n.known else None, n.file, n.line) for n in index.examples()]
    assert got == [
        ("./spec/tax_spec.rb[1:1]", "Billing::Tax#rate is 19% in DE", "spec/tax_spec.rb", 4),
        ("./spec/tax_spec.rb[1:2]", "Billing::Tax#rate is 20% in FR", "spec/tax_spec.rb", 4),
        ("./spec/tax_spec.rb[1:3:1]", "Billing::Tax#rate variant a has index 1", "spec/tax_spec.rb", 10),
        ("./spec/tax_spec.rb[1:4:1]", "Billing::Tax#rate variant b has index 2", "spec/tax_spec.rb", 10),
        ("./spec/tax_spec.rb[1:5:1]", "Billing::Tax#rate behaves like a rate is a number", "spec/support/shared.rb", 2),
        # no description: RSpec names it after its expectation...
        ("./spec/tax_spec.rb[1:6]", "Billing::Tax#rate is expected to be positive", "spec/tax_spec.rb", 15),
        # ...which cannot be known when it depends on runtime values
        ("./spec/tax_spec.rb[1:7]", None, "spec/tax_spec.rb", 16),
    ]


@pytest.mark.parametrize(("body", "desc"), [
    ("it { is_expected.to eq 3 }", "is expected to eq 3"),
    ("it { is_expected.not_to include(1, 2, 3) }", "is expected not to include 1, 2, and 3"),
    ("it { should be_empty }", "should be empty"),
    ("it { expect(list).to respond_to(:size) }", "is expected to respond to #size"),
    ("it { expect(list).to respond_to(:size, :first) }", "is expected to respond to [:size, :first]"),
    ("it { expect(x).to be_within(0.1).of(2) }", "is expected to be within 0.1 of 2"),
    ("it { expect { go }.to raise_error(KeyError) }", "is expected to raise KeyError"),
    ("it { expect(x).to be(true) }", "is expected to equal true"),
    ("it { expect(x).to match_array([2, 1]) }", "is expected to contain exactly 2 and 1"),
    ("it { expect(x).to eq(total) }", None),
])
def test_generated_descriptions(body: str, desc: str | None) -> None:
    assert generated_description(body, {}) == desc


def test_spec_index_survives_unreadable_ruby(tmp_path: Path) -> None:
    project(tmp_path, 'RSpec.describe "Odd" do\n  it "has #{[1, {a: }].x(" do\n  end\n  it "ok" do\n  end\nend\n'
                      "<<~EOS\n  it 'not a test' do\nEOS\n", "spec/odd_spec.rb")
    index = SpecIndex(SourceIndex(tmp_path))
    names = [n.full_text for n in index.examples() if n.known]
    assert names == ["Odd ok"]


@pytest.mark.parametrize(("value", "text"), [(1.0, "1.0"), (0.33, "0.33"), (1e20, "1.0e+20"), (1.5e-07, "1.5e-07")])
def test_ruby_float_to_s(value: float, text: str) -> None:
    assert ruby_float(value) == text


# ---------------------------------------------------------------- command line and detection


def test_options_formatters_outputs_and_spec_opts(tmp_path: Path) -> None:
    (tmp_path / ".rspec").write_text("--format documentation\n")
    opts = parse_options("rspec", tmp_path)
    assert opts.stdout_formatters == ["documentation"]
    opts = parse_options("bundle exec rspec -fp -fj -o out/r.json spec/a_spec.rb:3 --order rand", tmp_path)
    assert opts.formatters == [("progress", None), ("json", "out/r.json")]
    assert opts.paths == ["spec/a_spec.rb:3"] and opts.random
    opts = parse_options("SPEC_OPTS='--format json' rspec -f d", tmp_path)
    assert opts.formatters == [("json", None)]


@pytest.mark.parametrize("cmd", [
    "rspec", "bundle exec rspec spec/models", "bin/rspec --format json", "timeout 60 rspec",
    "CI=1 bundle exec rake spec", "ruby -S rspec"])
def test_command_re_matches_rspec_commands(cmd: str) -> None:
    assert any(p.search(cmd) for p in COMMAND_RE)


@pytest.mark.parametrize("cmd", ["pytest -k rspec", "npx jest rspec", "python rspec.py", "echo rspec_done"])
def test_command_re_ignores_other_commands(cmd: str) -> None:
    assert not any(p.search(cmd) for p in COMMAND_RE)


def test_output_re_recognises_rspec_output(tmp_path: Path) -> None:
    head = "..F\n\nFailures:\n\n  1) A b\n     Failure/Error: x\n\n3 examples, 1 failure\n\nFailed examples:\n\nrspec ./spec/a_spec.rb:2 # A b\n"
    assert sum(1 for p in OUTPUT_RE if p.search(head)) >= 3
    report = parse_any(RunOutput(command="make test", exit_code=1, stdout_text=head, cwd=tmp_path))
    assert report.framework == "rspec"


# ---------------------------------------------------------------- bad input


def test_empty_output(tmp_path: Path) -> None:
    report = parse(run_of(tmp_path, "", exit_code=1))
    assert report.tests == [] and report.warnings


def test_garbage_output(tmp_path: Path) -> None:
    junk = "\x00\xff\ufffd" * 500 + "\n  1) \n" + "{\"version\":" + "[" * 1000
    report = parse(run_of(tmp_path, junk, "rspec --format json", exit_code=1))
    assert report.tests == [] and any("JSON" in w or "no RSpec" in w for w in report.warnings)


def test_stdout_file_is_streamed(tmp_path: Path) -> None:
    out = tmp_path / "stdout.txt"
    out.write_text("F\n\nFailures:\n\n  1) Big one\n     Failure/Error: x\n       boom\n"
                   + "     # ./spec/big_spec.rb:1\n" * 2000
                   + "\nFinished in 1 second (files took 1 second to load)\n1 example, 1 failure\n")
    report = parse(RunOutput(command="rspec", exit_code=1, stdout_path=out, cwd=tmp_path))
    assert by_id(report)["Big one"].message == "boom"
