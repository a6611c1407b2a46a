"""The doctor's probe: start the server the way a harness would, initialize, list
its tools and ask recall one question, through the SDK's own client."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from omh_git_memory.agent.sdk import client_sees


@dataclass(frozen=True)
class Probe:
    """What a client saw when it started the server the way a harness would."""

    tools: dict[str, str]  # name -> description
    server_name: str
    recall_text: str
    log: str = ""  # what the server wrote on stderr
    listed_after: float = 0.0  # seconds from the start to tools/list answered
    answered_after: float = 0.0  # ... and to recall's answer


class ProbeFailed(Exception):
    """The server did not answer; `log` is what it wrote on stderr meanwhile."""

    def __init__(self, reason: str, log: str) -> None:
        super().__init__(reason)
        self.log = log


def _first_cause(err: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups: an SDK task group
    wraps what went wrong in "unhandled errors in a TaskGroup"."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    return err


def probe(command: str, args: list[str], cwd: Path, env: dict[str, str],
          timeout: float = 60.0) -> Probe:
    """Start `command args` in `cwd`, initialize, list tools and ask one question.
    Raises ProbeFailed with the first real cause and the server's stderr."""
    import tempfile

    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            tools, name, text, timings = asyncio.run(asyncio.wait_for(
                client_sees(command, args, cwd, env, errlog), timeout))
        except Exception as err:
            cause = _first_cause(err)
            errlog.seek(0)
            raise ProbeFailed(str(cause) or type(cause).__name__, errlog.read()) from err
        errlog.seek(0)
        return Probe(tools, name, text, log=errlog.read(), listed_after=timings[0],
                     answered_after=timings[-1])
