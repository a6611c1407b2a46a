"""Recall against real repositories: ranking rules, the tree, the cache, stubs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from omh_git_memory.actions.workspace import open_workspace
from omh_git_memory.model.note import parse
from omh_git_memory.recall.answer import Answer, Hit
from omh_git_memory.recall.build import snapshot_for
from omh_git_memory.recall.cache_files import index_dir
from omh_git_memory.recall.document import Doc, analyse
from omh_git_memory.recall.floor import FLOOR, MIN_SHARE, recall
from omh_git_memory.recall.render import render_tree
from omh_git_memory.recall.tokens import words
from tests.helpers import git, make_repo, note_text, omh


def _commit_notes(repo: Path, notes: dict[str, str], message: str = "notes") -> None:
    for key, text in notes.items():
        path = repo / ".omh/notes" / f"{key}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def _keys(repo: Path, question: str, *also: str) -> list[str]:
    answer = recall(open_workspace(repo).searcher(), question, also)
    return [h.doc.key for h in answer.results]


def _topic(key: str, body: str, recorded: str = "2026-11-01") -> str:
    return note_text(key, body=body, recorded=recorded)


def test_whole_words_stemmed(repo_dir: Path) -> None:
    _commit_notes(repo_dir, {
        "mounts": _topic("mounts", "Mounting the token file fails.\n"),
        "other": _topic("other", "Remounting is something else; amount too.\n"),
    })
    assert _keys(repo_dir, "mounted") == ["mounts"]


def test_rarer_words_count_more_without_a_stopword_list(repo_dir: Path) -> None:
    _commit_notes(repo_dir, {
        "a": _topic("a", "the the the the socket\n"),
        "b": _topic("b", "the the the the the ebusy\n"),
        "c": _topic("c", "the the the the the nothing\n"),
    })
    assert _keys(repo_dir, "the ebusy")[0] == "b"


def test_a_word_in_the_key_counts_double(repo_dir: Path) -> None:
    text = note_text("proxy-timeouts").replace("# proxy-timeouts", "# Proxy timeouts")
    terms = analyse(parse(text + "\nNothing else.\n"))
    assert terms["proxi"] == 2 and terms["timeout"] == 2 and terms["noth"] == 1
    _commit_notes(repo_dir, {
        "proxy-timeouts": note_text("proxy-timeouts").replace("# proxy-timeouts", "# Waits"),
        "waits": _topic("waits", "A note about proxy settings.\n"),
    })
    assert _keys(repo_dir, "proxy") == ["proxy-timeouts", "waits"]


def test_ties_break_on_recency_then_inbound_links(repo_dir: Path) -> None:
    _commit_notes(repo_dir, {
        "old": _topic("old", "same words here\n", "2026-01-01"),
        "new": _topic("new", "same words here\n", "2026-06-01"),
        "linked": _topic("linked", "same words here\n", "2026-01-01"),
        "hub": _topic("hub", "Related: [[linked]]\n", "2026-01-01"),
    })
    assert _keys(repo_dir, "same words") == ["new", "linked", "old"]


def test_at_most_eight_notes_and_a_count_of_the_rest(repo_dir: Path) -> None:
    _commit_notes(repo_dir, {f"n{i}": _topic(f"n{i}", "common socket words\n")
                             for i in range(11)})
    answer = recall(open_workspace(repo_dir).searcher(), "socket")
    assert len(answer.results) == 8 and answer.left_out == 3
    assert render_tree(answer).splitlines()[-1].startswith("3 more notes matched well enough")


def test_also_phrased_as_keeps_each_notes_best_score(repo_dir: Path) -> None:
    _commit_notes(repo_dir, {
        "ebusy": _topic("ebusy", "Mounting a token file returns EBUSY.\n"),
        "volume": _topic("volume", "Credentials live on a named volume.\n"),
    })
    assert _keys(repo_dir, "credential volume") == ["volume"]
    assert _keys(repo_dir, "credential volume", "ebusy mount") == ["ebusy", "volume"]
    # a second phrasing never lowers a note found by the first
    first = recall(open_workspace(repo_dir).searcher(), "credential volume").results[0].score
    both = recall(open_workspace(repo_dir).searcher(), "credential volume", ["x"]).results[0]
    assert both.score == first
    # the best score, not a sum: the same words twice score as once
    again = recall(open_workspace(repo_dir).searcher(), "credential volume",
                   ["volume credential"]).results[0]
    assert again.score == first


def test_neighbours_are_one_hop_both_ways(repo_dir: Path) -> None:
    _commit_notes(repo_dir, {
        "why": _topic("why", "Background. Related: [[what]]\n"),
        "what": _topic("what", "The ebusy error.\n"),
        "far": _topic("far", "Two hops away. [[why]]\n"),
    })
    hit = recall(open_workspace(repo_dir).searcher(), "ebusy").results[0]
    assert hit.doc.key == "what"
    assert [n.key for n in hit.neighbours] == ["why"]


def test_a_new_local_note_is_found_at_once(repo_dir: Path) -> None:
    assert _keys(repo_dir, "ebusy") == []
    run = omh(repo_dir, "memory", "remember", "--expected", "x", "--observed",
              "Mounting returns EBUSY.", "--evidence", "e", "--answers", "why?")
    assert run.code == 0
    assert _keys(repo_dir, "ebusy") == ["surprise/mounting-returns-ebusy"]


def test_both_layers_are_retrieved_for_one_key(repo_dir: Path) -> None:
    _commit_notes(repo_dir, {"deploy": _topic("deploy", "Deploy with care.\n")})
    store = Path(omh(repo_dir, "memory", "--json").json()["local_store"])
    store.mkdir(parents=True, exist_ok=True)
    (store / "deploy.md").write_text(_topic("deploy", "My own deploy gotcha.\n"))
    answer = recall(open_workspace(repo_dir).searcher(), "deploy")
    assert sorted(h.doc.layer for h in answer.results) == ["local", "team"]


def _doc(key: str, layer: str, recorded: int) -> Doc:
    return Doc(layer, key, "topic", recorded, key, (), "x", 1, key)


def test_every_line_of_the_tree_carries_layer_and_date() -> None:
    # Invariant: every answer shows its layer and date.
    a, b, c = _doc("a", "team", 739000), _doc("b/deeper", "local", 739100), _doc("c", "team", 0)
    answer = Answer((Hit(a, 1.0, (b, c), 0), Hit(b, 0.5, (), 0)), left_out=0)
    lines = render_tree(answer).splitlines()
    assert len(lines) == 4
    for line in lines:
        assert re.search(r"^(├─ |└─ )?\S+ +(team|local) · (\d{4}-\d{2}-\d{2}|undated)  ",
                         line), line


def test_json_recall_has_the_documented_shape(repo_dir: Path) -> None:
    _commit_notes(repo_dir, {"a": _topic("a", "ebusy [[b]]\n"), "b": _topic("b", "x\n")})
    out = omh(repo_dir, "memory", "recall", "ebusy", "--json").json()
    assert set(out) == {"results", "left_out", "unknown_names"}
    assert out["left_out"] == 0 and out["unknown_names"] == []
    (result,) = [r for r in out["results"] if r["key"] == "a"]
    assert set(result) == {"key", "layer", "recorded", "title", "path", "score", "stale",
                           "section", "changed", "citations", "neighbours", "more_neighbours"}
    assert result["section"] is None  # a written note, not a document's stub
    assert result["citations"] == []  # its text names no file of the repository
    (neighbour,) = result["neighbours"]
    assert neighbour.pop("changed")["commit"] == result["changed"]["commit"]  # one commit
    assert neighbour == {"key": "b", "layer": "team", "recorded": "2026-11-01",
                         "title": "b", "path": ".omh/notes/b.md", "stale": None}


def test_the_index_is_cached_per_commit_under_the_common_git_dir(
    repo_dir: Path, tmp_path: Path
) -> None:
    _commit_notes(repo_dir, {"a": _topic("a", "ebusy\n")})
    ws = open_workspace(repo_dir)
    snap = snapshot_for(ws.repo, ws.config())
    assert (index_dir(ws.repo) / f"{snap.commit}.idx").is_file()
    assert index_dir(ws.repo).is_relative_to(repo_dir / ".git")
    git(repo_dir, "worktree", "add", "-q", str(tmp_path / "wt"))
    wt = open_workspace(tmp_path / "wt")
    assert index_dir(wt.repo) == index_dir(ws.repo)
    assert git(repo_dir, "status", "--porcelain") == ""


def test_one_changed_note_reuses_every_other_analysis(repo_dir: Path) -> None:
    _commit_notes(repo_dir, {f"n{i}": _topic(f"n{i}", f"zz{chr(97 + i)} text\n")
                             for i in range(20)})
    ws = open_workspace(repo_dir)
    first = snapshot_for(ws.repo, ws.config())
    _commit_notes(repo_dir, {"n3": _topic("n3", "replaced with ebusy\n")}, "edit one")
    second = snapshot_for(ws.repo, ws.config())
    assert second.analysed == 1
    assert second.reused == first.reused + first.analysed - 1
    assert _keys(repo_dir, "ebusy") == ["n3"]
    assert _keys(repo_dir, "zzd") == []  # n3's old text is gone from the index
    assert _keys(repo_dir, "zze") == ["n4"]


def test_no_stale_index_after_a_commit(repo_dir: Path) -> None:
    _commit_notes(repo_dir, {"a": _topic("a", "sockets\n")})
    assert _keys(repo_dir, "sockets") == ["a"]
    git(repo_dir, "rm", "-q", ".omh/notes/a.md")
    git(repo_dir, "commit", "-qm", "remove")
    assert _keys(repo_dir, "sockets") == []


def test_a_full_rebuild_equals_the_incremental_one(repo_dir: Path) -> None:
    _commit_notes(repo_dir, {f"n{i}": _topic(f"n{i}", f"alpha word{i}\n") for i in range(6)})
    ws = open_workspace(repo_dir)
    snapshot_for(ws.repo, ws.config())
    _commit_notes(repo_dir, {"n1": _topic("n1", "beta\n"), "n9": _topic("n9", "alpha\n")})
    git(repo_dir, "rm", "-q", ".omh/notes/n2.md")
    git(repo_dir, "commit", "-qm", "more")
    incremental = recall(ws.searcher(), "alpha beta word1 word2")
    snapshot_for(ws.repo, ws.config(), rebuild=True)
    full = recall(ws.searcher(), "alpha beta word1 word2")
    assert [(h.doc.key, round(h.score, 9)) for h in incremental.results] == [
        (h.doc.key, round(h.score, 9)) for h in full.results]


@pytest.fixture
def docs_repo(tmp_path: Path) -> Path:
    path = tmp_path / "docsrepo"
    make_repo(path, {
        "README.md": "# Tinyhttp\n\n## Building\n\nmake\n",
        "docs/Deploy Notes.md": (
            "# Deploying\n\n## Staging\n\n## Rolling back\n\n```\n## code\n```\n"
        ),
        "NOTES.md": "just text, no headings\n",
        "vendor/lib/README.md": "# Vendored\n",
        "src/app.py": "print('hi')\n",
    })
    return path


def test_stubs_and_the_repo_topic_are_derived_team_notes(docs_repo: Path) -> None:
    notes = {n["key"]: n for n in omh(docs_repo, "memory", "--json").json()["notes"]}
    assert {k: (n["layer"], n["type"]) for k, n in notes.items()} == {
        "readme": ("team", "stub"), "docs/deploy-notes": ("team", "stub"),
        "notes": ("team", "stub"), "vendor/lib/readme": ("team", "stub"),
        "repo": ("team", "topic"),  # no committed [repo] name
    }
    assert not (docs_repo / ".omh").exists()  # never written as files
    shown = omh(docs_repo, "memory", "show", "docs/deploy-notes").out
    assert "## Answers\n\n- Staging\n- Rolling back\n" in shown
    assert "source: docs/Deploy Notes.md" in shown
    assert "- the whole of `NOTES.md`" in omh(docs_repo, "memory", "show", "notes").out
    topic = omh(docs_repo, "memory", "show", "repo").out
    assert "- [[docs/deploy-notes]]" in topic and "(from `README.md`)" in topic
    assert "(from `src/app.py`)" in topic


def test_recall_finds_stubs_with_date_and_layer(docs_repo: Path) -> None:
    out = omh(docs_repo, "memory", "recall", "how do I roll back?").out
    first = out.splitlines()[0]
    assert first.startswith("docs/deploy-notes ") and re.search(r"team · \d{4}-\d{2}-\d{2} ",
                                                                 first)


def test_stubs_can_be_excluded_in_memory_toml(docs_repo: Path) -> None:
    (docs_repo / ".omh").mkdir()
    (docs_repo / ".omh/memory.toml").write_text('[stubs]\nexclude = ["vendor/**"]\n')
    git(docs_repo, "add", "-A")
    git(docs_repo, "commit", "-qm", "exclude vendor")
    keys = {n["key"] for n in omh(docs_repo, "memory", "--json").json()["notes"]}
    assert "vendor/lib/readme" not in keys and "readme" in keys


def test_team_notes_may_link_to_stubs(docs_repo: Path) -> None:
    _commit_notes(docs_repo, {"how-to-ship": _topic("how-to-ship", "See [[docs/deploy-notes]].\n")})
    run = omh(docs_repo, "memory", "lint", "--ref", "HEAD", "--json").json()
    assert run["counts"]["DanglingLink"] == 0 and not run["failed"]


def test_reindex_reports_what_it_did(docs_repo: Path) -> None:
    out = omh(docs_repo, "memory", "reindex", "--json").json()
    assert out["documents"] == 5 and out["analysed"] == 5  # four stubs and the topic
    again = omh(docs_repo, "memory", "reindex", "--full", "--json").json()
    assert again["documents"] == 5


def test_the_first_build_reports_progress_and_a_rebuild_does_not_repeat_it(
    docs_repo: Path,
) -> None:
    ws = open_workspace(docs_repo)
    calls: list[tuple[int, int]] = []
    snapshot_for(ws.repo, ws.config(), progress=lambda done, total: calls.append((done, total)))
    assert calls[-1] == (4, 4) and [d for d, _ in calls] == [1, 2, 3, 4]
    calls.clear()
    snapshot_for(ws.repo, ws.config(), progress=lambda done, total: calls.append((done, total)))
    assert calls == []  # cached: nothing analysed


def test_pruned_ranking_equals_scoring_every_document(tmp_path: Path) -> None:
    import random

    rng = random.Random(5)
    vocab = [f"w{chr(97 + i)}{chr(97 + j)}" for i in range(6) for j in range(6)]
    notes = {}
    for i in range(120):
        body = " ".join(rng.choices(vocab, weights=range(len(vocab), 0, -1), k=rng.randint(3, 40)))
        notes[f"n{i}"] = _topic(f"n{i}", body + "\n", f"2026-0{1 + i % 9}-01")
    repo = tmp_path / "r"
    make_repo(repo)
    _commit_notes(repo, notes)
    searcher = open_workspace(repo).searcher()
    inbound = searcher.inbound()
    for _ in range(40):
        question = " ".join(rng.choices(vocab, k=rng.randint(1, 6)))
        got = recall(searcher, question)
        terms = searcher.terms(question)
        full = {s: sum(searcher.contribution(t, s) for t in terms)
                for s, d in enumerate(searcher.docs) if d is not None}

        def order(s: int, full: dict[int, float] = full) -> tuple[float, int, int, str]:
            d = searcher.docs[s]
            assert d is not None
            return (-full[s], -d.recorded, -len(inbound.get(s, ())), d.key)

        top = max(full.values(), default=0.0)
        total = searcher.question_weight(question)
        expected = sorted((s for s in full if full[s] > 0 and full[s] >= FLOOR * top
                           and searcher.share(terms, s, total) >= MIN_SHARE), key=order)
        assert [h.doc.key for h in got.results] == [
            searcher.docs[s].key for s in expected[:8]]  # type: ignore[union-attr]
        assert got.left_out == max(0, len(expected) - 8)  # only what passed the floor


def test_rm_of_a_derived_stub_says_how_to_exclude_it(docs_repo: Path) -> None:
    run = omh(docs_repo, "memory", "rm", "docs/deploy-notes")
    assert run.code == 1 and "[stubs] exclude" in run.err


class _FixedSimilarity:
    """A stand-in for the embedding model: fixed similarities per key."""

    def __init__(self, searcher, by_key: dict[str, float]) -> None:  # type: ignore[no-untyped-def]
        self.values = [by_key.get(d.key, 0.0) if d else float("-inf") for d in searcher.docs]

    def similarities(self, phrasings):  # type: ignore[no-untyped-def]
        return self.values


def test_fusion_treats_a_lexical_zero_as_no_evidence(repo_dir: Path) -> None:
    _commit_notes(repo_dir, {
        "weak-match": _topic("weak-match", "sockets\n", "2026-06-01"),
        "no-shared-word": _topic("no-shared-word", "unrelated words\n", "2026-01-01"),
    })
    searcher = open_workspace(repo_dir).searcher()
    semantic = _FixedSimilarity(searcher, {"weak-match": 0.1, "no-shared-word": 0.9})
    shipped = recall(searcher, "sockets", semantic=semantic)
    assert [h.doc.key for h in shipped.results][:2] == ["no-shared-word", "weak-match"]
    averaged = recall(searcher, "sockets", semantic=semantic, zero_is_evidence=True)
    assert [h.doc.key for h in averaged.results][:2] == ["weak-match", "no-shared-word"]


# --- an answer an agent can act on ---------------------------------------------------


def test_weak_matches_fall_under_the_floor_and_are_not_counted(repo_dir: Path) -> None:
    notes = {"ebusy": _topic("ebusy", "Mounting the token file returns EBUSY.\n")}
    notes.update({f"m{i}": _topic(f"m{i}", f"A mount of volume {i}, unrelated.\n")
                  for i in range(11)})
    _commit_notes(repo_dir, notes)
    answer = recall(open_workspace(repo_dir).searcher(), "ebusy when I mount the token")
    assert [h.doc.key for h in answer.results] == ["ebusy"]
    assert answer.left_out == 0  # the eleven weak matches are dropped, not "left out"
    assert "more" not in render_tree(answer)


def test_no_note_matched_means_no_content_word_matched(repo_dir: Path) -> None:
    _commit_notes(repo_dir, {f"n{i}": _topic(f"n{i}", "What is it, and why does it fail?\n")
                             for i in range(3)})
    answer = recall(open_workspace(repo_dir).searcher(), "what is it?")
    assert answer.results == () and answer.left_out == 0
    assert render_tree(answer).startswith("no note matched")
    assert sorted(_keys(repo_dir, "why does it fail")) == ["n0", "n1", "n2"]


def test_the_left_out_count_counts_only_notes_over_the_floor(repo_dir: Path) -> None:
    strong = {f"s{i}": _topic(f"s{i}", "socket ebusy socket ebusy\n") for i in range(10)}
    weak = {f"w{i}": _topic(f"w{i}", "socket and more words about other things here\n")
            for i in range(30)}
    _commit_notes(repo_dir, {**strong, **weak})
    answer = recall(open_workspace(repo_dir).searcher(), "socket ebusy")
    assert {h.doc.key for h in answer.results} <= set(strong)
    assert len(answer.results) == 8 and answer.left_out == 2


def test_neighbours_best_match_first_and_a_hub_named_once(repo_dir: Path) -> None:
    notes = {f"r{i}": _topic(f"r{i}", f"ebusy result {i} [[plain{i}]] [[socket{i}]]\n")
             for i in range(4)}
    notes.update({f"plain{i}": _topic(f"plain{i}", "Nothing in common.\n") for i in range(4)})
    notes.update({f"socket{i}": _topic(f"socket{i}", "About the socket.\n") for i in range(4)})
    _commit_notes(repo_dir, notes)
    hits = recall(open_workspace(repo_dir).searcher(), "ebusy socket").results
    first = next(h for h in hits if h.doc.key == "r0")
    assert [n.key for n in first.neighbours] == ["socket0", "plain0"]
    # a note linking to most of the store is a hub: named under one result only
    notes["index"] = _topic("index", " ".join(f"[[{k}]]" for k in notes) + "\n")
    _commit_notes(repo_dir, notes)
    answer = recall(open_workspace(repo_dir).searcher(), "ebusy")
    named = [n.key for h in answer.results for n in h.neighbours]
    assert named.count("index") == 1


def test_the_whole_answer_names_at_most_the_line_budget(repo_dir: Path) -> None:
    notes = {}
    for i in range(8):
        notes[f"r{i}"] = _topic(f"r{i}", "ebusy " + " ".join(f"[[n{i}-{j}]]" for j in range(8))
                                + "\n")
        notes.update({f"n{i}-{j}": _topic(f"n{i}-{j}", "linked\n") for j in range(8)})
    _commit_notes(repo_dir, notes)
    answer = recall(open_workspace(repo_dir).searcher(), "ebusy")
    assert len(answer.results) == 8
    named = sum(1 + len(h.neighbours) for h in answer.results)
    assert named == 24  # LINE_BUDGET: 8 results and 16 neighbours, two each
    assert all(len(h.neighbours) == 2 and h.more_neighbours == 6 for h in answer.results)
    lines = render_tree(answer).splitlines()
    assert sum("team ·" in line for line in lines) == 24


def test_a_stub_is_indexed_as_its_document_not_omhs_sentence(docs_repo: Path) -> None:
    snap = snapshot_for(open_workspace(docs_repo).repo, open_workspace(docs_repo).config())
    for term in ("restat", "point"):  # "Repo document. Read …; … points at it …"
        assert term not in snap.postings, term
    # "repo" only where it is a name: the topic's (no committed [repo] name), no stub's
    found = snap.postings.get("repo")
    assert found is not None and [snap.docs[s].kind for s in found[0]] == ["topic"]  # type: ignore[union-attr]
    for word in ("Staging", "Deploying", "docs"):  # a heading, the title, the path
        assert words(word)[0] in snap.postings, word
    assert _keys(docs_repo, "does it restate what it points at") == []
    # the document's own text is indexed too
    (docs_repo / "docs/Deploy Notes.md").write_text(
        "# Deploying\n\n## Staging\n\nPush the tarball with rsync.\n")
    git(docs_repo, "commit", "-qam", "text")
    assert _keys(docs_repo, "rsync tarball") == ["docs/deploy-notes"]


def test_every_result_line_says_its_title_and_where_to_read_it(docs_repo: Path) -> None:
    _commit_notes(docs_repo, {"rollback": _topic("rollback", "Roll back with care.\n")})
    out = omh(docs_repo, "memory", "recall", "how do I roll back?").out
    by_key = {line.split()[0]: line for line in out.splitlines() if "team ·" in line}
    # each line ends with who last changed the note (tests/recall/test_build_provenance.py)
    assert by_key["docs/deploy-notes"].split(" · by ")[0].endswith(
        "Deploying — docs/Deploy Notes.md § Rolling back, lines 5–9")
    assert by_key["rollback"].split(" · by ")[0].endswith("rollback — .omh/notes/rollback.md")
    data = omh(docs_repo, "memory", "recall", "how do I roll back?", "--json").json()
    paths = {r["key"]: (r["title"], r["path"]) for r in data["results"]}
    assert paths["docs/deploy-notes"] == ("Deploying", "docs/Deploy Notes.md")
    assert paths["rollback"] == ("rollback", ".omh/notes/rollback.md")


def test_a_function_word_weighs_less_than_what_the_question_is_about(repo_dir: Path) -> None:
    # In a small store few notes say `I` or `how`, so those words are rare; at full
    # weight a note of phrasing (`how I ...`) outranked the one about the subject.
    _commit_notes(repo_dir, {
        "suite": _topic("suite", "The tests run under pytest; make check runs the tests.\n"),
        "diary": _topic("diary", "I run my editor; how to set it up.\n"),
        "build": _topic("build", "The build uses make.\n"),
        "ci": _topic("ci", "The pipeline runs on push.\n"),
    })
    assert _keys(repo_dir, "how do I run the tests")[0] == "suite"
