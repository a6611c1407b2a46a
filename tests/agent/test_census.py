"""The census counts notes by what they are about, in a bounded sentence."""

from __future__ import annotations

import random

from omh_git_memory.agent.census import MAX_GROUPS, own_prefixes, take_census
from omh_git_memory.model.keys import DEFAULT_TEMPLATES
from omh_git_memory.recall.document import Doc


def _doc(key: str, kind: str = "surprise", title: str = "", links: tuple[str, ...] = (),
         layer: str = "local", source: str = "local") -> Doc:
    return Doc(layer, key, kind, 1, title or key, links, source, 5, f"{key}.md")


def _agent_store() -> list[Doc]:
    docs = [_doc(t, "topic", layer="team", source=f"n:{t}") for t in
            ("credentials", "sandbox", "code-graph")]
    for topic, n in (("credentials", 8), ("sandbox", 7), ("code-graph", 5)):
        docs += [_doc(f"surprise/{topic}-{i}", links=(topic,)) for i in range(n)]
    docs += [_doc(f"surprise/odd-{i}", title=f"Quirk{i} number{i}") for i in range(8)]
    return docs


def test_agent_notes_count_under_the_topic_they_link_to() -> None:
    census = take_census(_agent_store(), own_prefixes(DEFAULT_TEMPLATES))
    assert census.sentence() == ("31 notes (3 team, 28 local): 9 credentials, 8 sandbox, "
                                 "6 code graph, 8 other")


def test_a_topic_two_notes_do_not_share_names_no_group() -> None:
    docs = [_doc("lonely", "topic", source="n:x", layer="team"),
            _doc("surprise/a", title="Alpha beta"), _doc("surprise/b", title="Gamma delta")]
    assert take_census(docs).groups == [("other", 3)]


def test_the_first_folder_after_the_types_own_prefix() -> None:
    docs = [_doc("surprise/deploy/a"), _doc("surprise/deploy/b"), _doc("ops/c", "topic"),
            _doc("gotcha/x", title="One"), _doc("gotcha/net/y", title="Two")]
    census = take_census(docs, own_prefixes({**DEFAULT_TEMPLATES,
                                              "surprise": "gotcha/{{slug}}"}))
    # deploy/ is not the surprise template's prefix here, so surprise/deploy/... is `surprise`
    assert dict(census.groups) == {"surprise": 2, "ops": 1, "net": 1, "other": 1}
    default = take_census(docs)
    assert dict(default.groups)["deploy"] == 2


def test_title_words_name_groups_when_keys_and_links_say_nothing() -> None:
    titles = ["The proxy drops the CONNECT header", "A proxy answer is cut short",
              "Proxies time out after 30 s", "The windows build needs cmake",
              "On Windows the socket is not reused", "Windows paths use backslashes",
              "Timeouts are counted twice", "Nothing else here"]
    docs = [_doc(f"n{i}", "topic", title=t, layer="team", source=f"n:{i}")
            for i, t in enumerate(titles)]
    groups = dict(take_census(docs).groups)
    assert groups["proxy"] == 3 and groups["windows"] == 3  # the most frequent spelling
    assert sum(groups.values()) == len(docs)


def test_stubs_count_as_their_folder_or_docs_and_the_repository_topic_names_nothing() -> None:
    docs = [_doc("docs/a", "stub", layer="team", source="s:1:docs/a.md"),
            _doc("readme", "stub", layer="team", source="s:2:README.md"),
            _doc("myrepo", "topic", title="myrepo", links=("docs/a", "readme"), layer="team",
                 source="t:1"),
            _doc("n1", "topic", title="Myrepo builds slowly", source="n:3", layer="team"),
            _doc("n2", "topic", title="Myrepo tests are flaky", source="n:4", layer="team")]
    groups = dict(take_census(docs).groups)
    assert groups == {"docs": 2, "other": 3}  # not "2 myrepo": every note is about it


def test_bounded_stable_and_a_folder_called_other_is_counted_with_the_rest() -> None:
    docs = [_doc(f"g{g}/n{i}") for g in range(30) for i in range(g + 1)]
    docs += [_doc("other/x"), _doc("other/y")]
    first = take_census(docs)
    assert len(first.groups) == MAX_GROUPS + 1 and first.groups[-1][0] == "other"
    assert sum(n for _, n in first.groups) == first.total == len(docs)
    assert [name for name, _ in first.groups].count("other") == 1
    shuffled = docs[:]
    random.Random(3).shuffle(shuffled)
    assert take_census(shuffled).sentence() == first.sentence()


def test_problems_are_not_counted() -> None:
    bad = Doc("team", "x", "unreadable", 0, "", (), "n:x", 0, "x.md", "no frontmatter")
    assert take_census([bad, None, _doc("a/b")]).sentence() == "1 note (1 local): 1 a"
