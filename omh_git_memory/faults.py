"""Fault injection for the crash-safety tests, and nothing else.

`point(name)` does nothing unless the environment variable OMH_FAULT names that
point, in which case the process kills itself with SIGKILL there — the same as a
`kill -9` or a power cut at that step. The test suite uses it to prove that
promote leaves every note in at least one layer and a clean repository at every
step, and that running it again finishes the job.
"""

from __future__ import annotations

import os
import signal
from typing import Final

POINTS: Final = (
    "commit:blobs",  # blobs written, no commit yet
    "commit:object",  # commit object written, branch not moved
    "commit:ref",  # branch moved, index not updated
    "commit:index",  # index updated, working tree not written
    "commit:workdir",  # working tree written, local copies not removed
    "promote:local",  # the first local copy removed, the others not
)


def point(name: str) -> None:
    if os.environ.get("OMH_FAULT") == name:
        os.kill(os.getpid(), signal.SIGKILL)
