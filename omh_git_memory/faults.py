"""Fault injection for the crash-safety tests, and nothing else.

`point(name)` does nothing unless the environment variable OMH_FAULT names that
point. Then, by default, the process kills itself with SIGKILL there — the same as
a `kill -9` or a power cut at that step. With OMH_FAULT_ERRNO also set (a name such
as `ENOSPC` or `EIO`), the point raises that `OSError` instead, as a failed write
would: the tests use it to drive every failure path of a commit (a full disk
after the branch moved, say) without needing a full disk. The test suite uses both
to prove that promote leaves every note in at least one layer and a clean
repository at every step, and that running it again finishes the job.
"""

from __future__ import annotations

import errno
import os
import signal
from typing import Final

POINTS: Final = (
    "commit:blobs",  # blobs written, no commit yet
    "commit:object",  # commit object written, branch not moved
    "commit:ref",  # branch moved, working tree not written
    "commit:workdir",  # working tree written, index not updated
    "commit:index",  # index updated (the commit is complete), local copies not removed
    "promote:local",  # the first local copy removed, the others not
)

# The points inside the commit's transaction, where an error must be undone.
TRANSACTION: Final = ("commit:blobs", "commit:object", "commit:ref", "commit:workdir")


def point(name: str) -> None:
    if os.environ.get("OMH_FAULT") != name:
        return
    code = os.environ.get("OMH_FAULT_ERRNO")
    if code:
        number = getattr(errno, code, errno.EIO)
        raise OSError(number, os.strerror(number))
    os.kill(os.getpid(), signal.SIGKILL)
