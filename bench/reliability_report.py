"""Counts of the adversarial suite per category: cases tried and passed.

    python bench/reliability_report.py

Runs every test marked `reliability` (the attacks in tests/attacks/, marked by the
category their name starts with, `test_<category>_…`, see tests/conftest.py) under
pytest with a JUnit report and tallies them by their marker's category. Property
tests count the examples hypothesis generates: a module's `EXAMPLES` settings give
`max_examples` for its property tests (or its `SETTINGS`).
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.attacks import CATEGORIES  # noqa: E402  (the checkout first on the path)


def _examples(module: str) -> int:
    """How many examples each property test of `module` generates."""
    found = importlib.import_module(module)
    settings = getattr(found, "EXAMPLES", None) or getattr(found, "SETTINGS", None)
    return int(getattr(settings, "max_examples", 1))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-m", "reliability", f"--junitxml={report}", "tests"], cwd=ROOT,
                       check=False, capture_output=True)
        cases = ET.parse(report).getroot().iter("testcase")
        tried: Counter[str] = Counter()
        passed: Counter[str] = Counter()
        for case in cases:
            category = next((p.get("value", "other") for p in case.iter("property")
                             if p.get("name") == "reliability"), "other")
            if category == "other" and any(child.tag == "skipped" for child in case):
                # A module skipped whole (the mutation tool's tests without their
                # extra) is reported before its tests are marked: not an attack.
                continue
            weight = _examples(case.get("classname", "")) if category == "property" else 1
            tried[category] += weight
            if not any(child.tag in ("failure", "error", "skipped") for child in case):
                passed[category] += weight
    print("| category | cases tried | passed |")
    print("|---|---:|---:|")
    for category in (*CATEGORIES, "other"):
        if tried[category]:
            print(f"| {category} | {tried[category]} | {passed[category]} |")


if __name__ == "__main__":
    main()
