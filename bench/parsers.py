"""Parser throughput and peak memory on generated large outputs.

Each case writes a realistic output of N tests (default 100k) to a temp dir,
then measures, each in a fresh subprocess so peak RSS is its own:
  * Greenloop's parser on it (through ``parsers.parse``),
  * the bare limit on the same file: a plain ``json.loads`` per line (JSON
    streams), ``ElementTree.iterparse`` (XML), or a bare line loop with one
    regex (console text),
  * junitparser on the XML cases, for comparison with a popular library.

Usage: python bench/parsers.py [--tests N] [--only NAME] [--log-mb MB] — prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FAIL_EVERY = 10  # one test in ten fails, with a traceback


def gen_pytest_console(path: Path, n: int) -> tuple[str, str]:
    with open(path, "w") as f:
        f.write("============================= test session starts ==============================\n")
        f.write(f"platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.7.0\nrootdir: /p\ncollected {n} items\n\n")
        for i in range(n):
            status = "FAILED" if i % FAIL_EVERY == 0 else "PASSED"
            f.write(f"tests/test_m{i // 1000}.py::test_case_{i} {status} [{i * 100 // n:3d}%]\n")
        f.write("\n=================================== FAILURES ===================================\n")
        for i in range(0, n, FAIL_EVERY):
            f.write(f"_________________________________ test_case_{i} _________________________________\n\n")
            f.write(f"    def test_case_{i}():\n>       assert compute({i}) == {i + 1}\nE       assert {i} == {i + 1}\n\n")
            f.write(f"tests/test_m{i // 1000}.py:{i % 1000 + 1}: AssertionError\n")
        f.write("=========================== short test summary info ============================\n")
        for i in range(0, n, FAIL_EVERY):
            f.write(f"FAILED tests/test_m{i // 1000}.py::test_case_{i} - assert {i} == {i + 1}\n")
        nf = len(range(0, n, FAIL_EVERY))
        f.write(f"================= {nf} failed, {n - nf} passed in 99.00s ==================\n")
    return "python -m pytest -v", "pytest"


def gen_go_json(path: Path, n: int) -> tuple[str, str]:
    with open(path, "w") as f:
        for i in range(n):
            pkg = f"example.com/big/p{i // 1000}"
            name = f"TestCase{i}"
            ok = i % FAIL_EVERY != 0
            ev = lambda action, **kw: f.write(json.dumps({"Time": "2026-01-01T00:00:00Z", "Action": action, "Package": pkg, "Test": name, **kw}) + "\n")  # noqa: E731
            ev("run")
            ev("output", Output=f"=== RUN   {name}\n")
            if not ok:
                ev("output", Output=f"    x_test.go:{i % 500 + 3}: got {i}, want {i + 1}\n")
            ev("output", Output=f"--- {'PASS' if ok else 'FAIL'}: {name} (0.00s)\n")
            ev("pass" if ok else "fail", Elapsed=0)
            if i % 1000 == 999:
                f.write(json.dumps({"Action": "fail", "Package": pkg, "Elapsed": 0.1}) + "\n")
    return "go test -json ./...", "go"


def _junit_xml(path: Path, n: int, classname: str) -> None:
    with open(path, "w") as f:
        nf = len(range(0, n, FAIL_EVERY))
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        f.write(f'<testsuite name="big" tests="{n}" failures="{nf}" errors="0" skipped="0" time="9.0">\n')
        for i in range(n):
            f.write(f'  <testcase name="testCase{i}" classname="{classname}{i // 1000}" time="0.001"')
            if i % FAIL_EVERY:
                f.write("/>\n")
            else:
                f.write(f'>\n    <failure message="expected: &lt;{i + 1}&gt; but was: &lt;{i}&gt;" type="AssertionError">'
                        f"AssertionError: expected {i + 1} but was {i}\n\tat {classname}.testCase{i}(X.java:{i % 500})\n"
                        "</failure>\n  </testcase>\n")
        f.write("</testsuite>\n")


def gen_junit_pytest(path: Path, n: int) -> tuple[str, str]:
    xml = path.with_suffix(".xml")
    _junit_xml(xml, n, "tests.test_m")
    path.write_text("")
    return f"python -m pytest --junitxml={xml}", "pytest"


def gen_surefire(path: Path, n: int) -> tuple[str, str]:
    reports = path.parent / "target" / "surefire-reports"
    reports.mkdir(parents=True, exist_ok=True)
    _junit_xml(reports / "TEST-com.example.BigTest.xml", n, "com.example.BigTest")
    path.write_text("[INFO] Scanning for projects...\n[INFO] BUILD FAILURE\n")
    return "mvn -B test", "maven-surefire"


def gen_cargo(path: Path, n: int) -> tuple[str, str]:
    with open(path, "w") as f:
        f.write("     Running unittests src/lib.rs (target/debug/deps/big-0123456789abcdef)\n\n")
        f.write(f"running {n} tests\n")
        fails = []
        for i in range(n):
            ok = i % FAIL_EVERY != 0
            f.write(f"test tests::case_{i} ... {'ok' if ok else 'FAILED'}\n")
            if not ok:
                fails.append(i)
        f.write("\nfailures:\n\n")
        for i in fails:
            f.write(f"---- tests::case_{i} stdout ----\n\nthread 'tests::case_{i}' panicked at src/lib.rs:{i % 500 + 1}:9:\n"
                    f"assertion `left == right` failed\n  left: {i}\n right: {i + 1}\n\n")
        f.write("\nfailures:\n" + "".join(f"    tests::case_{i}\n" for i in fails))
        f.write(f"\ntest result: FAILED. {n - len(fails)} passed; {len(fails)} failed; 0 ignored; 0 measured; 0 filtered out; finished in 9.00s\n\n")
        f.write("error: test failed, to rerun pass `--lib`\n")
    return "cargo test", "cargo-test"


def gen_noise_log(path: Path, megabytes: int) -> tuple[str, str]:
    """A build log of ``megabytes`` MB with no test results at all (the exit-code-only fallback),
    half of it one endless line: memory must not follow the size."""
    chunk = ("[build] compiling module with a long line of noise " * 20 + "\n") * 1000
    with open(path, "w") as f:
        f.write("x" * (megabytes * 500_000))
        f.write("\n")
        for _ in range(megabytes * 500_000 // len(chunk)):
            f.write(chunk)
    return "./ci/run-everything.sh", "generic"


CASES = {
    "pytest console": (gen_pytest_console, "lines"),
    "go -json": (gen_go_json, "json"),
    "JUnit XML (pytest)": (gen_junit_pytest, "xml"),
    "JUnit XML (Surefire)": (gen_surefire, "xml"),
    "cargo console": (gen_cargo, "lines"),
}

MEASURE = textwrap.dedent(
    """
    import json, re, resource, sys, time
    from pathlib import Path
    kind, stdout, command, framework, xml = sys.argv[1:6]
    def rss():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if kind == "greenloop":
        from greenloop.parsers import RunOutput, parse
    elif kind == "junitparser":
        import junitparser
    from xml.etree.ElementTree import iterparse
    base = rss()
    t = time.perf_counter()
    if kind == "greenloop":
        report = parse(RunOutput(command=command, exit_code=1, stdout_path=Path(stdout), cwd=Path(stdout).parent,
                                 project_root=Path(stdout).parent), framework)
        count = len(report.tests)
    elif kind == "bare-json":
        count = 0
        with open(stdout) as f:
            for line in f:
                json.loads(line); count += 1
    elif kind == "bare-xml":
        count = 0
        for _, el in iterparse(xml):
            if el.tag == "testcase":
                count += 1
                el.clear()
    elif kind == "bare-lines":
        rx = re.compile(r"^(\\S+) (PASSED|FAILED|ok|FAILED)")
        count = 0
        with open(stdout, errors="replace") as f:
            for line in f:
                count += rx.match(line) is not None
    elif kind == "junitparser":
        doc = junitparser.JUnitXml.fromfile(xml)
        suites = [doc] if isinstance(doc, junitparser.TestSuite) else list(doc)
        # Touch each case's result and message, as a parser must.
        count = sum(1 for suite in suites for case in suite if [r.message for r in case.result] is not None)
    print(json.dumps({"seconds": time.perf_counter() - t, "peak_mb": rss() - base, "count": count}))
    """
)


def measure(kind: str, stdout: Path, command: str, framework: str, xml: Path | None) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, kind, str(stdout), command, framework, str(xml or "")],
        cwd=REPO, capture_output=True, text=True, check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", type=int, default=100_000)
    ap.add_argument("--only")
    ap.add_argument("--log-mb", type=int, default=1000, help="size of the no-results log case (0: skip it)")
    args = ap.parse_args()
    rows = []
    cases = dict(CASES)
    if args.log_mb:
        cases[f"{args.log_mb} MB log, no results"] = (lambda p, _n: gen_noise_log(p, args.log_mb), "lines")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (gen, bare) in cases.items():
            if args.only and args.only not in name:
                continue
            d = Path(tmp, re.sub(r"\W+", "_", name))
            d.mkdir()
            stdout = d / "stdout.txt"
            command, framework = gen(stdout, args.tests)
            xml = next(iter(sorted(d.rglob("*.xml"))), None)
            size_mb = (xml.stat().st_size if xml else stdout.stat().st_size) / 1e6
            ours = measure("greenloop", stdout, command, framework, xml)
            base = measure(f"bare-{bare}", stdout, command, framework, xml)
            row = [name, f"{size_mb:.0f}", str(ours["count"]), f"{size_mb / ours['seconds']:.1f}",
                   f"{ours['peak_mb']:.0f}", f"{size_mb / base['seconds']:.1f}", f"{base['peak_mb']:.0f}",
                   f"{ours['seconds'] / base['seconds']:.2f}x"]
            if bare == "xml":
                jp = measure("junitparser", stdout, command, framework, xml)
                row.append(f"{size_mb / jp['seconds']:.1f} MB/s, {jp['peak_mb']:.0f} MB")
            else:
                row.append("-")
            rows.append(row)
            print(" | ".join(row), file=sys.stderr)
    print(f"Generated outputs with {args.tests} tests each, 10% failing.\n")
    print("| output | MB | tests parsed | Greenloop MB/s | Greenloop peak MB | bare MB/s | bare peak MB | time vs bare | junitparser |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
