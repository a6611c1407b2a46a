"""Counts of the adversarial suite per category: cases tried and passed.

    python bench/reliability_report.py

Runs tests/test_reliability.py under pytest with a JUnit report and tallies the
tests by the category their name starts with. Property tests count the examples
hypothesis generates (each test runs `max_examples` of them).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.test_reliability import EXAMPLES  # noqa: E402

CATEGORIES = ("property", "badinput", "race", "crash", "mcp", "secret")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        f"--junitxml={report}", "tests/test_reliability.py"], cwd=ROOT,
                       check=False, capture_output=True)
        cases = ET.parse(report).getroot().iter("testcase")
        tried: Counter[str] = Counter()
        passed: Counter[str] = Counter()
        for case in cases:
            name = case.get("name", "")
            category = next((c for c in CATEGORIES if name.startswith(f"test_{c}_")), "other")
            weight = EXAMPLES.max_examples if category == "property" else 1
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
