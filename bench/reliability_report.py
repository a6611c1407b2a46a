"""Counts of the adversarial suite per category: cases tried and passed.

    python bench/reliability_report.py

Runs every tests/test_reliability*.py under pytest with a JUnit report and tallies
the tests by the category their name starts with (`test_<category>_…`). Property
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

CATEGORIES = (
    "property", "badinput", "race", "crash", "mcp", "secret",
    "dataloss", "escape", "gitstate", "wrong", "hang", "moved",
)


def _examples(module: str) -> int:
    """How many examples each property test of `module` generates."""
    found = importlib.import_module(module)
    settings = getattr(found, "EXAMPLES", None) or getattr(found, "SETTINGS", None)
    return int(getattr(settings, "max_examples", 1))


def main() -> None:
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_reliability*.py"))
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        f"--junitxml={report}", *files], cwd=ROOT,
                       check=False, capture_output=True)
        cases = ET.parse(report).getroot().iter("testcase")
        tried: Counter[str] = Counter()
        passed: Counter[str] = Counter()
        for case in cases:
            name = case.get("name", "")
            category = next((c for c in CATEGORIES if name.startswith(f"test_{c}_")), "other")
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
