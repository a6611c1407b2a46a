"""The local layer's index (recall/local_index.py): recall answers from it exactly as
from the notes read and parsed without it; a file whose identity is unchanged is
not opened, a changed one is read again (also one rewritten in place to the same
size and modification time, and one changed within a coarse timestamp's tick); a
removed note is gone; an index file that is torn, altered, of another version, a
symlink or writable by others is rebuilt, never believed; it lives in the store,
never in the checkout or git; two builders at once leave a whole index."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from omh_git_memory.actions.workspace import Workspace, open_workspace
from omh_git_memory.recall import local_index
from omh_git_memory.recall.answer import Answer
from omh_git_memory.recall.cache_files import read_checked, write_checked
from omh_git_memory.recall.document import MAX_INDEXED
from omh_git_memory.recall.floor import recall
from omh_git_memory.recall.local_index import LocalIndex
from omh_git_memory.recall.shape import code_digest
from omh_git_memory.stores.store import INDEX_FILE
from tests.helpers import ROOT, commit_files, git, local_store, note_text, omh_in_process

WORDS = (
    "deploy", "rollback", "lever", "socket", "timeout", "mount", "credential", "cache",
    "index", "token", "build", "retry", "queue", "worker", "shard", "lock", "journal",
    "commit", "branch", "merge", "rebase", "signal", "pipe", "buffer", "parser", "config",
    "schema", "migration", "replica", "leader", "follower", "quorum", "snapshot",
    "compaction", "tombstone", "bloom", "filter", "latency", "throughput", "backoff",
    "jitter", "circuit", "breaker", "sidecar", "ingress", "egress", "certificate",
    "rotation", "secret", "vault", "kernel", "cgroup", "namespace", "overlay", "volume",
    "inode", "fsync", "rename", "atomic", "checksum", "digest",
)


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _note(rng: random.Random, i: int, keys: list[str]) -> tuple[str, str]:
    """One local note of varied shape: its key and text."""
    folder = rng.choice(["", "", "surprise/", "deep/er/"])
    key = f"{folder}{rng.choice(WORDS)}-{rng.choice(WORDS)}-{i}"
    links = rng.sample(keys, min(len(keys), rng.randint(0, 3)))
    if rng.random() < 0.2:
        links.append(f"missing-{i}")  # a link that names no note
    related = "".join(f"- [[{k}]]\n" for k in links)
    fields = {"recorded": f"2026-{1 + i % 12:02d}-{1 + i % 27:02d}", "source": "cli"}
    if rng.random() < 0.2:
        fields["invalidated_by"] = "base:2026-01"
    if rng.random() < 0.2:
        fields["cites"] = f"src/{rng.choice(WORDS)}.py@{i:04x}"
    title = _words(rng, rng.randint(2, 7))
    if rng.random() < 0.5:
        head = "".join(f"{k}: {v}\n" for k, v in {"key": key, "type": "surprise", **fields}.items())
        body = (f"## Expected\n{_words(rng, 12)}\n\n## Observed\n{_words(rng, 20)}\n\n"
                f"## Evidence\n{_words(rng, 8)}\n\n## Answers\n\n- {_words(rng, 5)}?\n")
    else:
        head = "".join(f"{k}: {v}\n" for k, v in {"key": key, "type": "topic", **fields}.items())
        body = "\n\n".join(_words(rng, rng.randint(5, 80)) for _ in range(rng.randint(1, 4)))
        body += "\n"
    if related:
        body += f"\n## Related\n\n{related}"
    return key, f"---\n{head}---\n\n# {title.capitalize()}\n\n{body}"


def _fill(store: Path, n: int, seed: int = 5) -> list[str]:
    """`n` varied notes in `store`, plus what recall must not take for one: a note
    that does not parse, bytes that are not UTF-8, a symlink, a file not `.md`."""
    rng = random.Random(seed)
    keys: list[str] = []
    for i in range(n):
        key, text = _note(rng, i, keys)
        keys.append(key)
        _write(store, f"{key}.md", text)
    _write(store, "broken.md", "---\nkey: broken\n---\n\n# no type, no source\n")
    (store / "latin1.md").write_bytes(b"---\nkey: latin\n---\n\n# caf\xe9\n")
    (store / "elsewhere.md").symlink_to(store / f"{keys[0]}.md")
    _write(store, "notes.txt", "deploy rollback, not a note\n")
    # Two files claiming one key: both are found (lint says which to keep).
    _write(store, "again.md", note_text(keys[1].rsplit("/", 1)[-1], body="deploy again\n"))
    return keys


def _write(store: Path, relpath: str, text: str) -> Path:
    path = store / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


QUESTIONS = [*(" ".join(random.Random(q).sample(WORDS, 3)) for q in range(40)),
             "deploy", "why does the rollback lever stick?", "fix(deploy): socket timeout",
             "okapiword", "zebraword", "again", "nothing matches xyzzy"]


def _answers(ws: Workspace, indexed: bool) -> tuple[list[Any], list[Answer]]:
    """The searcher's documents and its answers to QUESTIONS: through the local
    index, or from the notes read and parsed without it (as `omh memory` reads them)."""
    searcher = ws.searcher() if indexed else ws.searcher(local=ws.local_entries())
    return searcher.docs, [recall(searcher, q) for q in QUESTIONS]


def _same_both_ways(ws: Workspace) -> None:
    docs, answers = _answers(ws, indexed=True)
    plain_docs, plain = _answers(ws, indexed=False)
    assert docs == plain_docs
    assert answers == plain  # keys, layers, dates, titles, scores, neighbours, left out
    assert any(a.results for a in answers)


@pytest.fixture
def store(repo_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The local store of `repo_dir` (named by OMH_LOCAL_STORE), empty, with a few
    team notes committed, one of them at a key a local note holds too."""
    path = tmp_path / "store"
    path.mkdir(mode=0o700)
    monkeypatch.setenv("OMH_LOCAL_STORE", str(path))
    monkeypatch.chdir(repo_dir)
    commit_files(repo_dir, {
        ".omh/notes/deploy.md": note_text("deploy", body="How we deploy, and roll back.\n"),
        ".omh/notes/socket.md": note_text("socket", body="The socket timeout is 30 s.\n"),
    }, "team notes")
    return path


def _later(monkeypatch: pytest.MonkeyPatch, seconds: float = 10.0) -> None:
    """Recall's reads happen `seconds` from now: every file written so far is settled
    (its times older than RACY)."""
    real = time.time_ns
    monkeypatch.setattr(local_index, "_now", lambda: real() + int(seconds * 1e9))


def _big(marker_before: str, marker_after: str) -> str:
    """A topic note over MAX_INDEXED characters, one word before the cut, one after."""
    filler = "filler words here " * (MAX_INDEXED // 18 + 200)
    return note_text("big", body=f"{marker_before}\n\n{filler}\n\n{marker_after}\n")


def test_the_index_answers_as_the_notes_read_without_it(store: Path, repo_dir: Path) -> None:
    keys = _fill(store, 300)
    _write(store, "big.md", _big("okapiword", "zebraword"))
    _same_both_ways(open_workspace(repo_dir))  # built from nothing
    _same_both_ways(open_workspace(repo_dir))  # read back from the index file
    rng = random.Random(9)
    for i, key in enumerate(rng.sample(keys, 20)):  # changed, some to another key
        _write(store, f"{key}.md", _note(rng, 1000 + i, keys)[1])
    for key in rng.sample(keys, 10):
        (store / f"{key}.md").unlink(missing_ok=True)
    for i in range(15):
        _write(store, f"new/{i}.md", _note(rng, 2000 + i, keys)[1])
    ws = open_workspace(repo_dir)
    _same_both_ways(ws)  # patched
    for n, path in enumerate(sorted(store.rglob("*.md"))):  # three in four gone
        if n % 4:
            path.unlink()
    for i in range(40):
        _write(store, f"later/{i}.md", _note(rng, 3000 + i, keys)[1])
    _same_both_ways(ws)  # compacted, in the same workspace (a server)
    assert ws.index is not None and None not in ws.index._paths  # renumbered
    _same_both_ways(open_workspace(repo_dir))


def test_a_moved_store_answers_with_its_new_paths(store: Path, repo_dir: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A store moved elsewhere (a mount, `omh adopt`) keeps its files' identities: the
    index is trusted, and each note's location is under the store's new folder."""
    _fill(store, 30)
    _later(monkeypatch)
    _same_both_ways(open_workspace(repo_dir))
    moved = store.parent / "moved"
    store.rename(moved)
    monkeypatch.setenv("OMH_LOCAL_STORE", str(moved))
    ws = open_workspace(repo_dir)
    _same_both_ways(ws)
    assert ws.index is not None and (ws.index.read, ws.index.parsed) == (0, 0)
    assert all(d.location.startswith(f"{moved}/") for d in ws.searcher().docs
               if d is not None and d.layer == "local")


def test_a_large_note_is_found_by_its_first_64_kib_only(store: Path, repo_dir: Path) -> None:
    _write(store, "big.md", _big("okapiword", "zebraword"))
    searcher = open_workspace(repo_dir).searcher()
    assert [h.doc.key for h in recall(searcher, "okapiword").results] == ["big"]
    assert recall(searcher, "zebraword").results == ()


def test_an_unchanged_note_is_neither_opened_nor_parsed(store: Path, repo_dir: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(store, 50)
    before = _answers(open_workspace(repo_dir), indexed=True)
    _later(monkeypatch)
    open_workspace(repo_dir).searcher()  # the times are settled now: trusted from here on

    def broken(text: str) -> None:
        raise AssertionError("a note was parsed")

    monkeypatch.setattr("omh_git_memory.stores.reading.parse", broken)
    ws = open_workspace(repo_dir)
    assert _answers(ws, indexed=True) == before
    assert ws.index is not None and (ws.index.read, ws.index.parsed) == (0, 0)


def test_recall_on_the_command_line_answers_with_the_parser_broken(
        store: Path, repo_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI, in process: a second recall reads the local notes from the index."""
    _fill(store, 30)
    first = omh_in_process(repo_dir, "memory", "recall", "deploy rollback", "--json")
    assert first.code == 0, first.err
    assert any(r["layer"] == "local" for r in first.json()["results"])

    def broken(text: str) -> None:
        raise AssertionError("a note was parsed")

    monkeypatch.setattr("omh_git_memory.stores.reading.parse", broken)
    again = omh_in_process(repo_dir, "memory", "recall", "deploy rollback", "--json")
    assert again.code == 0, again.err
    assert again.json() == first.json()


def test_a_note_changed_just_now_is_read_again_until_it_settles(
        store: Path, repo_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file whose times are within RACY of the read is not trusted by its identity:
    a change within the same timestamp tick could leave it looking the same."""
    _write(store, "lever.md", note_text("lever", body="the lever sticks\n"))
    ws = open_workspace(repo_dir)
    assert ws.index is not None
    ws.searcher()
    ws.searcher()
    assert (ws.index.read, ws.index.parsed) == (2, 1)  # read (hashed) again, parsed once
    _later(monkeypatch)
    ws.searcher()  # read once more, now trusted
    ws.searcher()
    assert (ws.index.read, ws.index.parsed) == (3, 1)


def _rewrite_in_place(path: Path, old: str, new: str) -> None:
    """Replace `old` by `new` (same length) in the file itself, keeping its inode,
    size and modification time: only its change time moves."""
    assert len(old) == len(new)
    info = path.stat()
    data = path.read_bytes().replace(old.encode(), new.encode())
    with path.open("r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        info.st_ino, info.st_size, info.st_mtime_ns)


def test_a_rewrite_to_the_same_size_and_mtime_is_seen(store: Path, repo_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(store, "lever.md", note_text("lever", body="the lever sticks\n"))
    _later(monkeypatch)
    ws = open_workspace(repo_dir)
    assert [h.doc.key for h in recall(ws.searcher(), "sticks").results] == ["lever"]
    _rewrite_in_place(path, "sticks", "slides")
    for searcher in (ws.searcher(), open_workspace(repo_dir).searcher()):
        assert recall(searcher, "sticks").results == ()
        assert [h.doc.key for h in recall(searcher, "slides").results] == ["lever"]


def test_a_change_within_a_coarse_timestamp_tick_is_seen(
        store: Path, repo_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a file system whose times move in whole seconds (or a clock tick), a file
    rewritten in place to the same size within that tick keeps its whole identity.
    It was changed within RACY of the read that indexed it, so it is read again."""
    from omh_git_memory.stores.store import LocalStore

    tick = time.time_ns() - 500_000_000  # half a second ago: both writes in this tick

    def coarse(info: os.stat_result) -> Any:
        return SimpleNamespace(st_mode=info.st_mode, st_dev=info.st_dev, st_ino=info.st_ino,
                               st_size=info.st_size, st_mtime_ns=tick, st_ctime_ns=tick)

    files, file_bytes = LocalStore.files, LocalStore.file_bytes
    monkeypatch.setattr(LocalStore, "files",
                        lambda self: [(r, coarse(i)) for r, i in files(self)])
    monkeypatch.setattr(LocalStore, "file_bytes", lambda self, relpath: (
        read if isinstance(read := file_bytes(self, relpath), str) else (read[0], coarse(read[1]))))
    path = _write(store, "lever.md", note_text("lever", body="the lever sticks\n"))
    ws = open_workspace(repo_dir)
    assert [h.doc.key for h in recall(ws.searcher(), "sticks").results] == ["lever"]
    _rewrite_in_place(path, "sticks", "slides")
    searcher = open_workspace(repo_dir).searcher()
    assert [h.doc.key for h in recall(searcher, "slides").results] == ["lever"]


def test_a_removed_note_is_gone(store: Path, repo_dir: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    _write(store, "lever.md", note_text("lever", body="the lever sticks\n"))
    _write(store, "pipe.md", note_text("pipe", body="the pipe sticks\n"))
    _write(store, "fifo.md", note_text("fifo", body="the fifo sticks\n"))
    _later(monkeypatch)
    ws = open_workspace(repo_dir)
    assert sorted(h.doc.key for h in recall(ws.searcher(), "sticks").results) == [
        "fifo", "lever", "pipe"]
    (store / "lever.md").unlink()
    (store / "pipe.md").unlink()
    (store / "pipe.md").symlink_to(store / "fifo.md")  # a symlink is no note
    (store / "fifo.md").unlink()
    os.mkfifo(store / "fifo.md")  # nor is a FIFO (never opened)
    for searcher in (ws.searcher(), open_workspace(repo_dir).searcher()):
        assert recall(searcher, "sticks").results == ()
        assert [d.key for d in searcher.docs if d is not None and d.layer == "local"] == []


def _index_payload(store: Path) -> tuple[Any, ...]:
    import marshal

    raw = read_checked(store / INDEX_FILE)
    assert raw is not None
    loaded = marshal.loads(raw)
    assert isinstance(loaded, tuple)
    return loaded


def _torn(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:-100])


def _flipped(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))


def _other_version(path: Path) -> None:
    import marshal

    loaded = _index_payload(path.parent)
    write_checked(path, marshal.dumps((loaded[0] + 1, *loaded[1:])), mode=0o600)


def _other_code(path: Path) -> None:
    import marshal

    loaded = _index_payload(path.parent)
    write_checked(path, marshal.dumps((loaded[0], "other code", *loaded[2:])), mode=0o600)


def _rows_of_another_shape(path: Path) -> None:
    import marshal

    loaded = list(_index_payload(path.parent))
    documents = loaded.index(next(c for c in loaded if type(c) is list and c and
                                  type(c[0]) is tuple and len(c[0]) > 5))
    loaded[documents] = [doc[:-1] if doc else doc for doc in loaded[documents]]
    write_checked(path, marshal.dumps(tuple(loaded)), mode=0o600)


def _not_marshal(path: Path) -> None:
    write_checked(path, b"\xff not marshal", mode=0o600)


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _reshaped(path: Path, at: int, value: Any) -> None:
    """The index with its field `at` replaced by `value`, checked and private: a file
    whose digest holds but whose shape is not an index's."""
    import marshal

    loaded = list(_index_payload(path.parent))
    loaded[at] = value
    write_checked(path, marshal.dumps(tuple(loaded)), mode=0o600)


def _table_not_a_dict(path: Path) -> None:
    _reshaped(path, 8, list(_index_payload(path.parent)[8].items()))


def _blob_not_bytes(path: Path) -> None:
    _reshaped(path, 9, _index_payload(path.parent)[9].decode("latin-1"))


def _a_column_short(path: Path) -> None:
    _reshaped(path, 4, _index_payload(path.parent)[4][:-1])  # one identity fewer


def _checked_but_cut(path: Path) -> None:
    """Marshal data cut short, in a file whose digest holds (so marshal hits its end)."""
    import marshal

    write_checked(path, marshal.dumps(tuple(_index_payload(path.parent)))[:-50], mode=0o600)


def _rows_of_numbers(path: Path) -> None:
    _reshaped(path, 6, [1] * len(_index_payload(path.parent)[6]))

@pytest.mark.parametrize("damage", [_torn, _flipped, _other_version, _other_code,
                                    _rows_of_another_shape, _not_marshal, _empty,
                                    _table_not_a_dict, _blob_not_bytes, _a_column_short,
                                    _checked_but_cut, _rows_of_numbers])
def test_a_damaged_or_foreign_index_is_rebuilt(store: Path, repo_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              damage: Any) -> None:
    _fill(store, 40)
    _later(monkeypatch)
    before = _answers(open_workspace(repo_dir), indexed=True)
    damage(store / INDEX_FILE)
    ws = open_workspace(repo_dir)
    assert _answers(ws, indexed=True) == before
    assert ws.index is not None and ws.index.parsed == 43  # every note, parsed again
    assert _index_payload(store)[:2] == (local_index.VERSION, code_digest())  # replaced
    again = open_workspace(repo_dir)
    assert _answers(again, indexed=True) == before
    assert again.index is not None and (again.index.read, again.index.parsed) == (0, 0)


def test_a_symlink_at_the_index_is_never_followed(store: Path, repo_dir: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    _fill(store, 20)
    _later(monkeypatch)
    before = _answers(open_workspace(repo_dir), indexed=True)
    elsewhere = tmp_path / "elsewhere-index"
    elsewhere.write_bytes((store / INDEX_FILE).read_bytes())  # a whole, valid index
    elsewhere.chmod(0o600)
    kept = elsewhere.read_bytes()
    (store / INDEX_FILE).unlink()
    (store / INDEX_FILE).symlink_to(elsewhere)
    ws = open_workspace(repo_dir)
    assert _answers(ws, indexed=True) == before
    assert ws.index is not None and ws.index.parsed == 23  # not believed: built again
    assert not (store / INDEX_FILE).is_symlink() and (store / INDEX_FILE).is_file()
    assert elsewhere.read_bytes() == kept  # never written through


def test_an_index_others_could_write_is_not_believed(store: Path, repo_dir: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _fill(store, 20)
    _later(monkeypatch)
    before = _answers(open_workspace(repo_dir), indexed=True)
    (store / INDEX_FILE).chmod(0o664)
    ws = open_workspace(repo_dir)
    assert _answers(ws, indexed=True) == before
    assert ws.index is not None and ws.index.parsed == 23
    assert (store / INDEX_FILE).stat().st_mode & 0o777 == 0o600  # replaced by a private one


def test_the_index_lives_in_the_store_and_never_reaches_git(repo_dir: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """The default store (under OMH_HOME): the index is a private file at its root,
    and nothing of a local note is written into the checkout or the git directory
    by recall."""
    monkeypatch.chdir(repo_dir)
    run = omh_in_process(repo_dir, "memory", "remember", "--expected", "e", "--observed",
                         "The quokkaword lever sticks.", "--evidence", "v", "--answers",
                         "why does it stick?", "--json")
    assert run.code == 0, run.err
    for path in repo_dir.rglob("*"):  # what remember wrote itself is not ours to judge
        if path.is_file() and not path.is_symlink():
            os.utime(path)
    before = {p: p.stat().st_mtime_ns for p in repo_dir.rglob("*") if p.is_file()}
    for args in (("recall", "quokkaword", "--json"), ("--json",)):  # and the listing
        run = omh_in_process(repo_dir, "memory", *args)
        assert run.code == 0, run.err
    index = local_store(repo_dir) / INDEX_FILE
    assert index.is_file() and index.stat().st_mode & 0o777 == 0o600
    assert not index.is_relative_to(repo_dir)
    assert b"quokkaword" in index.read_bytes()
    after = {p: p.stat().st_mtime_ns for p in repo_dir.rglob("*") if p.is_file()}
    changed = [p for p in after if before.get(p) != after[p]]
    assert not [p for p in changed if b"quokkaword" in p.read_bytes()], changed
    assert git(repo_dir, "status", "--porcelain", "--untracked-files=all") == ""


def test_two_indexes_of_one_store_written_in_turn_leave_a_whole_one(
        store: Path, repo_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two processes (two index objects) each bring the index up to date and save it
    over the other's: the file is always one of them whole, and either is right."""
    _fill(store, 40)
    _later(monkeypatch)
    ws = open_workspace(repo_dir)
    first = LocalIndex(ws.local, ws.notes)
    second = LocalIndex(ws.local, ws.notes)
    first.layer()
    first.read = first.parsed = 0
    _write(store, "one.md", note_text("one", body="deploy the first\n"))
    second.layer()  # reads the first's file, adds `one`
    (store / "one.md").unlink()
    _write(store, "two.md", note_text("two", body="deploy the second\n"))
    first.layer()  # its own rows in memory are not the file's any more: reads it again
    assert first.read == 1 and first.parsed == 1  # `two` only
    _same_both_ways(open_workspace(repo_dir))
    assert not list(store.glob(".tmp-*"))


def test_two_processes_building_at_once_leave_a_whole_index(store: Path,
                                                            repo_dir: Path) -> None:
    _fill(store, 200)
    script = ("import json, sys; from pathlib import Path\n"
              "from omh_git_memory.actions.workspace import open_workspace\n"
              "from omh_git_memory.recall.floor import recall\n"
              "a = recall(open_workspace(Path.cwd()).searcher(), sys.argv[1])\n"
              "print(json.dumps([[h.doc.layer, h.doc.key, h.score] for h in a.results]))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", script, "deploy rollback"], cwd=repo_dir,
                              env=env, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    said = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert said[0] == said[1] == said[2] and said[0]
    _index_payload(store)  # whole, and checked
    assert not list(store.glob(".tmp-*"))
    _same_both_ways(open_workspace(repo_dir))


def test_the_server_reads_the_store_again_while_a_file_is_unsettled(
        store: Path, repo_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The MCP server keeps its searcher while the store's signature is the same, but
    not while a file is within RACY of the read: a same-size change in that tick
    would keep the signature."""
    from omh_git_memory.agent.tools import _State

    _write(store, "lever.md", note_text("lever", body="the lever sticks\n"))
    ws = open_workspace(repo_dir)
    ws.snapshot()  # the team index on disk, as a server finds it after a first recall
    state = _State(ws)
    assert state.start()
    first = state.searcher()
    assert state.searcher() is not first  # unsettled: read again
    _later(monkeypatch)
    settled = state.searcher()
    assert state.searcher() is settled
    _write(store, "pipe.md", note_text("pipe", body="the pipe sticks\n"))
    assert state.searcher() is not settled  # the signature changed


def test_a_note_is_parsed_only_when_an_answer_quotes_it(store: Path, repo_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The MCP recall quotes its best results: those local notes are read and parsed
    then, one by one, and no other."""
    from omh_git_memory.actions.ask import Question, ask
    from omh_git_memory.model.note import parse

    _fill(store, 60)
    _write(store, "lever.md", note_text("lever", body="the rollback lever sticks\n"))
    _later(monkeypatch)
    ws = open_workspace(repo_dir)
    ws.searcher()  # indexed: every note parsed once
    searcher = open_workspace(repo_dir).searcher()
    answered = ask(ws, Question("rollback lever sticks"), searcher=searcher, excerpts=2)
    quoted = [h.doc for h in answered.answer.results[:2] if h.doc.layer == "local"]
    assert quoted and answered.answer.results[0].doc.key == "lever"
    assert searcher.local_notes.read == len(quoted)  # one file each, nothing else
    for doc in quoted:
        assert answered.notes[(doc.layer, doc.key)] == parse(Path(doc.location).read_text())


def _spy_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The index files `local_index` reads from now on, one entry a read."""
    reads: list[Path] = []

    def spied(path: Path) -> bytes | None:
        reads.append(path)
        return read_checked(path)

    monkeypatch.setattr(local_index, "read_checked", spied)
    return reads


def test_a_settled_store_is_answered_from_memory_and_the_index_left_as_it_is(
        store: Path, repo_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing changed: the server's next question neither reads the index file again
    nor writes it (the same file, by inode, and its bytes)."""
    _fill(store, 20)
    _later(monkeypatch)
    open_workspace(repo_dir).searcher()  # indexed, every identity trusted
    index = store / INDEX_FILE
    before = (index.stat().st_ino, index.read_bytes())
    reads = _spy_reads(monkeypatch)
    ws = open_workspace(repo_dir)
    first = _answers(ws, indexed=True)
    assert reads == [index]  # read once, by the new workspace
    assert _answers(ws, indexed=True) == first
    assert reads == [index]  # and not again
    assert ws.index is not None and (ws.index.read, ws.index.parsed) == (0, 0)
    assert (index.stat().st_ino, index.read_bytes()) == before


def test_an_index_another_process_wrote_meanwhile_is_read_from_its_file(
        store: Path, repo_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What another process indexed is taken from its file, not read again here."""
    _fill(store, 20)
    _later(monkeypatch)
    ws = open_workspace(repo_dir)
    ws.searcher()  # the index file, which each of the two below starts from
    first, second = LocalIndex(ws.local, ws.notes), LocalIndex(ws.local, ws.notes)
    first.layer()
    _write(store, "two.md", note_text("two", body="the quokkaword lever\n"))
    second.layer()  # indexes `two` and saves the index
    first.read = first.parsed = 0
    layer = first.layer()
    assert (first.read, first.parsed) == (0, 0)
    assert "two" in [d.key for d in layer.docs]


@pytest.mark.parametrize(("before_edge", "read_again"), [(0, 0), (1, 1)])
def test_a_file_is_trusted_once_its_times_are_racy_old(
        store: Path, repo_dir: Path, monkeypatch: pytest.MonkeyPatch,
        before_edge: int, read_again: int) -> None:
    """RACY to the nanosecond, 2 s as docs/recall.md says: a file whose last change
    is exactly 2 s before the read is trusted by its identity; one nanosecond later
    it is read again. (No cache of parsed notes: parsing is the index's own.)"""
    path = _write(store, "lever.md", note_text("lever", body="the lever sticks\n"))
    info = path.stat()
    edge = max(info.st_mtime_ns, info.st_ctime_ns) + 2_000_000_000 - before_edge
    monkeypatch.setattr(local_index, "_now", lambda: edge)
    index = LocalIndex(open_workspace(repo_dir).local)
    index.layer()
    index.layer()
    assert (index.read, index.parsed) == (1 + read_again, 1)


@pytest.mark.parametrize(("below", "parsed"), [(0, 1), (1, 0)])
def test_the_cache_of_parsed_notes_is_asked_only_when_parsing_costs_more(
        store: Path, repo_dir: Path, below: int, parsed: int) -> None:
    """The bytes to parse times 20 (parsing costs some 20 times what loading the
    cache does per byte) against the cache file's size: at exactly its size the
    note is parsed; one byte less of cache, it is taken from the cache."""
    from omh_git_memory.model.layers import Layer
    from omh_git_memory.recall.local_notes import notes_cache

    data = note_text("lever", body="the lever sticks\n").encode()
    (store / "lever.md").write_bytes(data)
    cache = notes_cache(store)
    cache.read(Layer.LOCAL, "lever.md", f"{store}/lever.md", data)
    cache.save()
    cache = notes_cache(store)
    size = len(data) * 20 - below
    cache.size = lambda: size  # type: ignore[method-assign]
    index = LocalIndex(open_workspace(repo_dir).local, cache)
    assert [d.key for d in index.layer().docs] == ["lever"]
    assert index.parsed == parsed


def test_a_note_of_exactly_the_largest_size_is_indexed(store: Path, repo_dir: Path) -> None:
    from omh_git_memory.model.note import MAX_NOTE_BYTES

    text = note_text("big", body="okapiword\n\n")
    text += "x" * (MAX_NOTE_BYTES - len(text.encode()) - 1) + "\n"
    _write(store, "big.md", text)
    assert (store / "big.md").stat().st_size == MAX_NOTE_BYTES
    searcher = open_workspace(repo_dir).searcher()
    assert [h.doc.key for h in recall(searcher, "okapiword").results] == ["big"]


def test_a_note_that_cannot_be_read_any_more_leaves_the_answers_alone(
        store: Path, repo_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file indexed before that cannot be read now (no permission, as for any
    account but root; here `file_bytes` says so) is out of the index; the files after
    it in the walk stay in it."""
    from omh_git_memory.stores.store import LocalStore

    for name in ("a", "b", "c"):
        _write(store, f"{name}.md", note_text(name, body="the lever sticks\n"))
    ws = open_workspace(repo_dir)
    assert sorted(h.doc.key for h in recall(ws.searcher(), "sticks").results) == ["a", "b", "c"]
    _later(monkeypatch)
    (store / "a.md").write_text(note_text("a", body="the lever slides\n"))  # read again
    file_bytes = LocalStore.file_bytes
    monkeypatch.setattr(LocalStore, "file_bytes", lambda self, relpath: (
        "cannot be read: Permission denied" if relpath == "a.md" else file_bytes(self, relpath)))
    for searcher in (ws.searcher(), open_workspace(repo_dir).searcher()):
        assert sorted(h.doc.key for h in recall(searcher, "sticks").results) == ["b", "c"]


def test_the_index_is_renumbered_once_more_than_half_is_gone(
        store: Path, repo_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Half of the slots gone are kept (renumbering rewrites every word's postings);
    one more, and the live ones are renumbered."""
    for i in range(10):
        _write(store, f"n{i}.md", note_text(f"n{i}", body=f"the lever sticks {i}\n"))
    _later(monkeypatch)
    ws = open_workspace(repo_dir)
    index = LocalIndex(ws.local)
    index.layer()
    for i in range(5):
        (store / f"n{i}.md").unlink()
    index.layer()
    assert index._paths.count(None) == 5  # exactly half: kept
    (store / "n5.md").unlink()
    layer = index.layer()
    assert index._paths == ["n6.md", "n7.md", "n8.md", "n9.md"]
    assert [d.key for d in layer.docs] == ["n6", "n7", "n8", "n9"]
    searcher = open_workspace(repo_dir).searcher()
    assert sorted(h.doc.key for h in recall(searcher, "sticks").results) == [
        "n6", "n7", "n8", "n9"]


def test_a_folder_at_the_index_s_name_leaves_recall_working(store: Path, repo_dir: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """The index cannot be written (a folder with a file in it holds its name): recall
    answers from the notes, read again each time."""
    _fill(store, 20)
    _later(monkeypatch)
    before = _answers(open_workspace(repo_dir), indexed=True)
    (store / INDEX_FILE).unlink()
    (store / INDEX_FILE).mkdir()
    (store / INDEX_FILE / "kept").write_text("someone's\n")
    ws = open_workspace(repo_dir)
    assert _answers(ws, indexed=True) == before
    assert (store / INDEX_FILE / "kept").read_text() == "someone's\n"


def _aged(path: Path, seconds: float) -> Path:
    os.utime(path, (time.time() - seconds,) * 2, follow_symlinks=False)
    return path


def test_a_crashed_writer_s_temporary_index_is_removed_once_stale(
        store: Path, repo_dir: Path, tmp_path: Path) -> None:
    """Saving the index removes `.tmp-…-.omh-index` files older than STALE_TEMP (by
    their own time: a symlink's, never its target's); a fresh one may be another
    writer's, and files of other names are not the index's."""
    from omh_git_memory.recall.cache_files import STALE_TEMP

    old = STALE_TEMP + 60
    target = tmp_path / "target"
    target.write_text("elsewhere\n")
    stale = store / f".tmp-1-aaaa-{INDEX_FILE}"
    stale.write_text("torn")
    _aged(stale, old)
    fresh = store / f".tmp-2-bbbb-{INDEX_FILE}"
    fresh.write_text("being written")
    link = store / f".tmp-3-cccc-{INDEX_FILE}"
    link.symlink_to(target)
    _aged(link, old)
    others = [store / ".tmp-4-dddd-other", store / f".old-{INDEX_FILE}"]
    for other in others:
        other.write_text("not the index's\n")
        _aged(other, old)
    _write(store, "lever.md", note_text("lever", body="the lever sticks\n"))
    open_workspace(repo_dir).searcher()  # indexes `lever`, saves the index
    assert not os.path.lexists(stale)
    assert not os.path.lexists(link) and target.read_text() == "elsewhere\n"
    assert fresh.read_text() == "being written"
    assert all(other.exists() for other in others)


def test_a_temporary_index_exactly_stale_temp_old_is_kept(store: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    from omh_git_memory.recall.cache_files import STALE_TEMP
    from omh_git_memory.stores.store import LocalStore

    then = 1_700_000_000
    temp = store / f".tmp-1-aaaa-{INDEX_FILE}"
    temp.write_text("torn")
    os.utime(temp, (then, then))
    clock = SimpleNamespace(time=lambda: float(then + STALE_TEMP))
    monkeypatch.setattr(local_index, "time", clock)
    local_index._remove_stale_temporaries(LocalStore(store))
    assert temp.exists()
    monkeypatch.setattr(clock, "time", lambda: float(then + STALE_TEMP + 1))
    local_index._remove_stale_temporaries(LocalStore(store))
    assert not temp.exists()
