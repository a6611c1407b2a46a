"""config_edit.py on its own: the JSON tree that knows where each value's text is, the
splices that change only what omh changes, and the TOML helpers. The CLI round trips
are in tests/attacks/setup/test_writers.py; these pin the edges one by one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from omh_git_memory.agent.config_edit import (
    BOM,
    MAX_DEPTH,
    JsonEditor,
    Number,
    fresh_json,
    json_value,
    line_end,
    parse_json,
    render,
    toml_append,
    toml_edit,
    toml_unappend,
)
from omh_git_memory.model.errors import ConfigError


def editor(text: str) -> JsonEditor:
    doc = parse_json(text, "f.json")
    assert doc is not None
    return JsonEditor(doc)


def refusal(text: str) -> str:
    with pytest.raises(ConfigError) as err:
        parse_json(text, "f.json")
    return str(err.value)


# -- the parser ------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", " \t\r\n", BOM, BOM + "\n"],
                         ids=["empty", "blank", "bom", "bom and a line feed"])
def test_an_empty_file_is_no_document(text: str) -> None:
    assert parse_json(text, "f.json") is None
    assert json_value(text, "f.json") == {}


def test_every_kind_of_value_is_read() -> None:
    text = '\t{"s": "a\\"b\\\\", "n": -0.5e+3, "t": true, "f": false, "z": null,\r\n "a": [1, []]}'
    assert json_value(text, "f.json") == {
        "s": 'a"b\\', "n": Number("-0.5e+3"), "t": True, "f": False, "z": None,
        "a": [Number("1"), []]}
    assert str(Number("1e400")) == "1e400"


def test_a_key_written_twice_reads_as_the_last() -> None:
    doc = parse_json('{"a": 1, "b": 2, "a": 3}', "f.json")
    assert doc is not None
    assert doc.root.members("a") == [0, 2]
    assert doc.root.value() == {"a": Number("3"), "b": Number("2")}


@pytest.mark.parametrize("text,message", [
    ('{"a": 1} x', "extra data after the value at line 1 column 10"),
    ('{\n  "a" 1}', "expected ':' at line 2 column 7"),
    ('{"a": }', "expected a value at line 1 column 7"),
    ('{"a":', "expected a value at line 1 column 6"),
    ('\n{"a" 1}', "expected ':' at line 2 column 6"),
    ('{"a": 1 "b": 2}', "expected ',' or '}' at line 1 column 9"),
    ('{"a": [1 2]}', "expected ',' or ']' at line 1 column 10"),
    ("{a: 1}", "expected a key in double quotes at line 1 column 2"),
    ('{"a": "b', "unterminated string at line 1 column 7"),
    ('{"a": "b\\', "unterminated string at line 1 column 7"),
    ('{"a": "b\nc"}', "control character in a string at line 1 column 9"),
    ('{"a": "\\x"}', "bad escape in a string at line 1 column 7"),
    ('{"a": 01}', "expected ',' or '}' at line 1 column 8"),
    ('{"a": -}', "expected a value at line 1 column 7"),
    ("{", "expected a key in double quotes at line 1 column 2"),
], ids=["extra", "colon", "value", "at the end", "second line", "comma", "item comma",
        "key", "unterminated", "unterminated escape", "control", "escape", "leading zero",
        "minus", "open"])
def test_a_file_that_is_not_json_is_refused_saying_where(text: str, message: str) -> None:
    assert refusal(text) == (f"f.json is not valid JSON ({message}); fix it, then run "
                             "this again")


def test_values_may_follow_a_colon_or_a_comma_with_no_space() -> None:
    assert json_value('{"a":1,"b":[2,3],"c":"d"}', "f.json") == {
        "a": Number("1"), "b": [Number("2"), Number("3")], "c": "d"}


def test_a_string_may_end_right_after_an_escaped_quote() -> None:
    assert json_value('{"a": "\\""}', "f.json") == {"a": '"'}
    assert json_value('{"a": " "}', "f.json") == {"a": " "}  # a space is no control


@pytest.mark.parametrize("text", ["[]", '"a"', "1", "null"],
                         ids=["array", "string", "number", "null"])
def test_a_top_level_other_than_an_object_is_refused(text: str) -> None:
    assert refusal(text) == "f.json does not hold a JSON object; fix it, then run this again"


def test_nesting_to_the_limit_is_read_and_one_deeper_refused() -> None:
    """docs/mcp.md: nesting deeper than 200 levels is refused. The object is level 0,
    so 200 arrays in it reach level 200."""
    assert MAX_DEPTH == 200
    assert parse_json('{"d": ' + "[" * 200 + "]" * 200 + "}", "f.json") is not None
    assert refusal('{"d": ' + "[" * 201 + "]" * 201 + "}") == (
        "f.json is not valid JSON (nested deeper than 200 levels at line 1 column 207); "
        "fix it, then run this again")


def test_a_byte_order_mark_is_kept_and_not_counted() -> None:
    doc = parse_json(BOM + '{"a": 1}', "f.json")
    assert doc is not None and doc.bom and doc.text == '{"a": 1}'
    assert doc.rendered == BOM + '{"a": 1}'
    assert "line 1 column 2" in refusal(BOM + "{a}")


# -- edits -----------------------------------------------------------------------------


def test_a_member_added_to_an_empty_object_gets_lines_of_its_own() -> None:
    edit = editor('{"x": {}}')
    edit.set_member(("x",), "k", 1)
    assert edit.text() == '{"x": {\n  "k": 1\n}}'
    edit = editor('{"x": []}')
    edit.append(("x",), "v")
    assert edit.text() == '{"x": [\n  "v"\n]}'


def test_a_member_follows_the_last_on_its_own_line_or_on_the_same_line() -> None:
    edit = editor('{\n    "a": 1\n}')
    edit.set_member((), "b", {"c": [2]})
    assert edit.text() == ('{\n    "a": 1,\n    "b": {\n        "c": [\n            2\n'
                           '        ]\n    }\n}')
    edit = editor('{"a": 1}')
    edit.set_member((), "b", "\ud83d")
    assert edit.text() == '{"a": 1, "b": "\\ud83d"}'


def test_a_member_follows_the_last_of_several() -> None:
    edit = editor('{"a": 1, "b": "x"}')
    edit.set_member((), "é", "ü")
    assert edit.text() == '{"a": 1, "b": "x", "é": "ü"}'
    edit = editor('{\n  "a": 1,\n  "b": [1, 2]\n}')
    edit.append(("b",), 3)
    edit.set_member((), "c", "é")
    assert edit.text() == '{\n  "a": 1,\n  "b": [1, 2, 3],\n  "c": "é"\n}'


def test_an_empty_object_on_the_second_line_is_opened_at_that_lines_indentation() -> None:
    edit = editor('\n  {"x": {}}')
    edit.set_member(("x",), "k", 1)
    assert edit.text() == '\n  {"x": {\n    "k": 1\n  }}'


def test_the_files_indentation_step_and_line_ends_are_followed() -> None:
    edit = editor('{\r\n\t"a": 1\r\n}')
    assert edit.step == "\t" and edit.newline == "\r\n"
    edit.set_member((), "b", [1])
    assert edit.text() == '{\r\n\t"a": 1,\r\n\t"b": [\r\n\t\t1\r\n\t]\r\n}'
    assert editor('{"a": 1}').step == "  "  # no member on a line of its own
    assert editor('{\n"a": 1\n}').step == "  "  # a member no deeper than its brace
    assert editor('  {\n    "a": 1\n  }').step == "  "  # deeper by two
    assert editor('{\n "a": 1\n}').step == " "
    assert editor("{}").step == "  "


def test_a_value_that_reads_the_same_is_not_rewritten() -> None:
    edit = editor('{"a": "\\u0061", "b": [1]}')
    edit.set_member((), "a", "a")
    assert edit.text() == '{"a": "\\u0061", "b": [1]}'
    edit.set_member((), "a", "b")
    assert edit.text() == '{"a": "b", "b": [1]}'


def test_set_member_changes_the_last_of_a_key_written_twice() -> None:
    edit = editor('{"a": 1, "a": 2}')
    edit.set_member((), "a", 3)
    assert edit.text() == '{"a": 1, "a": 3}'


def test_a_key_written_twice_is_refused_where_omh_must_change_it() -> None:
    edit = editor('{"s": {"k": 1, "k": 2}, "o": 1}')
    assert edit.member(("s",), "o", "s.o") is None
    assert edit.member((), "o", "o") is not None
    with pytest.raises(ConfigError) as err:
        edit.member(("s",), "k", "s.k")
    assert str(err.value) == "f.json: `s.k` is written 2 times; keep one, then run this again"


def test_find_walks_keys_and_indexes() -> None:
    edit = editor('{"a": [{"b": 1}, {"b": 2}]}')
    node = edit.find(("a", 1, "b"))
    assert (node.kind, node.text) == ("number", "2")


def test_replace_splices_the_value_at_its_place() -> None:
    edit = editor('{\n  "a": {"b": 1},\n  "c": 2\n}')
    edit.replace(("a",), {"d": 3})
    assert edit.text() == '{\n  "a": {\n    "d": 3\n  },\n  "c": 2\n}'


@pytest.mark.parametrize("index,left", [
    (0, '{"b": 2, "c": 3}'),
    (1, '{"a": 1, "c": 3}'),
    (2, '{"a": 1, "b": 2}'),
], ids=["first", "middle", "last"])
def test_delete_takes_a_member_and_its_comma(index: int, left: str) -> None:
    edit = editor('{"a": 1, "b": 2, "c": 3}')
    edit.delete((), index)
    assert edit.text() == left


def test_delete_of_the_only_member_or_item_leaves_an_empty_container() -> None:
    edit = editor('{"a": {"b": 1}, "c": [\n  2\n]}')
    edit.delete(("a",), 0)
    edit.delete(("c",), 0)
    assert edit.text() == '{"a": {}, "c": []}'
    edit = editor('{"c": [1, 2]}')
    edit.delete(("c",), 0)
    assert edit.text() == '{"c": [2]}'


def test_edits_keep_a_byte_order_mark() -> None:
    edit = editor(BOM + '{"a": 1}')
    edit.set_member((), "b", 2)
    assert edit.text() == BOM + '{"a": 1, "b": 2}'


def test_render_indents_after_each_line_and_escapes_a_lone_surrogate() -> None:
    assert render({"a": [1]}, "  ", "\t", "\r\n") == '{\r\n  \t"a": [\r\n  \t\t1\r\n  \t]\r\n  }'
    assert render("\udc00é") == '"\\udc00é"'
    assert fresh_json({"a": 1}) == '{\n  "a": 1\n}\n'


# -- TOML ------------------------------------------------------------------------------


@pytest.mark.parametrize("text,end", [
    ("a\r\nb\r\n", "\r\n"), ("a\r\nb\n", "\n"), ("", "\n"), ("a", "\n"),
], ids=["crlf", "mixed", "empty", "one line"])
def test_line_end_is_crlf_only_when_every_line_ends_so(text: str, end: str) -> None:
    assert line_end(text) == end


BLOCK = '[t]\nk = "v"\n'


@pytest.mark.parametrize("text,appended", [
    ("a = 1\n", 'a = 1\n\n[t]\nk = "v"\n'),
    ("a = 1", 'a = 1\n\n[t]\nk = "v"'),
    ("a = 1\r\n", 'a = 1\r\n\r\n[t]\r\nk = "v"\r\n'),
    ("a = 1\r\nb = 2", 'a = 1\r\nb = 2\r\n\r\n[t]\r\nk = "v"'),
], ids=["lf", "no final line feed", "crlf", "crlf without a final one"])
def test_toml_append_and_unappend_are_exact_inverses(text: str, appended: str) -> None:
    assert toml_append(text, BLOCK) == appended
    assert toml_unappend(appended, BLOCK) == text


@pytest.mark.parametrize("text", [
    '\n[t]\nk = "v"\n',  # nothing but the blank line before it: no file to give back
    BOM + '\n[t]\nk = "v"\n',  # only a byte-order mark before it
    'a = 1\n[t]\nk = "v"\n',  # no blank line before it: not as omh appended it
    'a = 1\n\n[t]\nk = "w"\n',  # another value
    'a = 1\n\n\n[t]\nk = "v"',  # no final newline, yet the text before ends in one
], ids=["nothing before", "a bom before", "no blank line", "another value",
        "one line feed too many"])
def test_toml_unappend_refuses_a_file_that_does_not_end_as_omh_left_it(text: str) -> None:
    assert toml_unappend(text, BLOCK) is None


def test_toml_edit_keeps_a_byte_order_mark_and_crlf() -> None:
    def change(document: Any, tomlkit: Any) -> None:
        document["b"] = 2

    assert toml_edit(BOM + "a = 1\r\n", "c.toml", change) == BOM + "a = 1\r\nb = 2\r\n"
    assert toml_edit("a = 1\n", "c.toml", change) == "a = 1\nb = 2\n"


def _table_in_an_inline_table(document: Any, tomlkit: Any) -> None:
    document["s"]["omh"] = tomlkit.table()  # ValueError


def _a_key_added_twice(document: Any, tomlkit: Any) -> None:
    document.add("s", 1)  # KeyAlreadyPresent: a TOMLKitError only


def _a_number_read_as_a_table(document: Any, tomlkit: Any) -> None:
    document["n"]["omh"]  # TypeError: an Integer is not subscriptable


def _a_key_missing_from_a_plain_mapping(document: Any, tomlkit: Any) -> None:
    document["n"] = {"a": 1}["omh"]  # KeyError


@pytest.mark.parametrize("change", [_table_in_an_inline_table, _a_key_added_twice,
                                    _a_number_read_as_a_table,
                                    _a_key_missing_from_a_plain_mapping])
def test_toml_edit_refuses_what_tomlkit_cannot_do_in_one_line(
    change: Callable[[Any, Any], None]
) -> None:
    text = 's = { other = { command = "x" } }\nn = 1\n'
    with pytest.raises(ConfigError) as err:
        toml_edit(text, "c.toml", change)
    assert str(err.value).startswith("c.toml: omh could not edit it in this form (")
    assert str(err.value).endswith("); make the change by hand")


def test_toml_edit_refuses_a_file_tomlkit_cannot_parse() -> None:
    with pytest.raises(ConfigError) as err:
        toml_edit("a = \n", "c.toml", lambda d, t: None)
    assert str(err.value).startswith("c.toml: omh could not edit it in this form (")
