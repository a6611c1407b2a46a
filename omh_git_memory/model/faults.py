"""Fault injection for the crash-safety tests, and nothing else.

`point(name)` does nothing unless the environment variable OMH_FAULT names that
point. Then, by default, the process kills itself with SIGKILL there — the same as
a `kill -9` or a power cut at that step. With OMH_FAULT_ERRNO also set (a name such
as `ENOSPC` or `EIO`), the point raises that `OSError` instead, as a failed write
would: the tests use it to drive every failure path of a commit (a full disk
after the branch moved, say) without needing a full disk. The test suite uses both
to prove that promote leaves every note in at least one layer and a clean
repository at every step, and that running it again finishes the job.

`OMH_FAULT=<name>:stop` stops the process there instead (SIGSTOP), so a test can
act at exactly that step — rewrite a note, say — and then let it go on with
SIGCONT: a race made deterministic rather than left to timing.
"""

from __future__ import annotations

import errno
import os
import signal
from typing import Final

POINTS: Final = (
    "promote:planned",  # the notes read and checked, nothing written
    "commit:blobs",  # blobs written, no commit yet
    "commit:stage",  # the new index staged beside the lock, no tree yet
    "commit:tree",  # the commit's tree written, no commit object yet
    "commit:object",  # commit object written, branch not moved
    "commit:ref",  # branch moved, working tree not written
    "commit:workdir",  # working tree written, index not updated
    "commit:index",  # index updated (the commit is complete), local copies not removed
    "promote:remove",  # committed, no local copy removed yet
    "promote:local",  # the first local copy removed, the others not
)

# Points of a local `omh memory mv` (journal.py): a kill at each must leave the
# store as it was or, once the next command has read it, wholly renamed.
MV_POINTS: Final = (
    "journal:prepared",  # new files written into the journal, the change not decided
    "journal:decided",  # the plan in place, no file switched
    "journal:switching",  # the renamed note created, the other files not switched
)

# Points that only stop (a kill there is no different from one a step earlier).
STOP_ONLY: Final = (
    "rm:local",  # `omh memory rm` read the local note, has not removed it yet
    "mv:planned",  # `omh memory mv` read the local store, has not locked it yet
    "update:write",  # `omh memory update`/`edit` checked the new text, has not written it
    "mcp:call",  # `omh mcp serve` took a tool call, has not begun it (a request pending)
)

# The point of an index build just after it wrote a checkpoint (recall/checkpoint.py):
# a kill there must leave the next build to analyse only what the checkpoints lack.
BUILD: Final = "build:checkpoint"

# The points inside the commit's transaction, where an error must be undone.
TRANSACTION: Final = ("commit:blobs", "commit:stage", "commit:tree", "commit:object",
                      "commit:ref", "commit:workdir")

# The point inside the finishing of a commit a killed process landed
# (git/recovery.py's finish_interrupted): its index staged, the working tree not yet written.
FINISH: Final = "commit:finish"


def point(name: str) -> None:
    wanted = os.environ.get("OMH_FAULT")
    if wanted == f"{name}:stop":
        os.kill(os.getpid(), signal.SIGSTOP)
        return
    if wanted != name:
        return
    code = os.environ.get("OMH_FAULT_ERRNO")
    if code:
        number = getattr(errno, code, errno.EIO)
        raise OSError(number, os.strerror(number))
    os.kill(os.getpid(), signal.SIGKILL)
