"""Tests that attack a surface omh exposes, one folder per surface.

Each test's name starts with the class of defect it looks for, `test_<category>_…`;
tests/conftest.py marks it `reliability(<category>)` by that name, and
bench/reliability_report.py counts the marked tests per category.
"""

CATEGORIES = (
    "property", "badinput", "race", "crash", "mcp", "secret",
    "dataloss", "escape", "gitstate", "wrong", "hang", "moved",
)
