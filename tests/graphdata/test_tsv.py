from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphdata._tsv import (
    _ASCII_SPACE,
    _OTHER_SPACE,
    format_labeled_triples,
    parse_labeled_triples,
    read_labeled_triples,
    write_labeled_triples,
)
from graphdata.errors import GraphDataError, TSVFormatError


def _valid_label(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return (
        bool(text)
        and text == text.strip()
        and not any(c in text for c in "\t\n\r")
        and (not text.startswith("\ufeff"))
    )


labels = st.text(min_size=1, max_size=8).filter(_valid_label)
triples = st.lists(st.tuples(labels, labels, labels), max_size=20, unique=True)


@given(triples)
def test_format_then_parse_round_trips(rows):
    text = format_labeled_triples(rows)
    assert parse_labeled_triples(text.encode("utf-8")) == rows
    assert parse_labeled_triples(text) == rows


def test_write_then_read_round_trips(tmp_path):
    rows = [("köln", "près de", "bonn"), ("a", "r", "b"), ("b", "r", "a")]
    path = tmp_path / "t.tsv"
    write_labeled_triples(path, rows)
    assert path.read_bytes() == "köln\tprès de\tbonn\na\tr\tb\nb\tr\ta\n".encode()
    assert read_labeled_triples(path) == rows
    assert [p.name for p in tmp_path.iterdir()] == ["t.tsv"]  # no temporary file left


def test_bom_crlf_and_missing_final_newline_are_accepted_silently():
    data = b"\xef\xbb\xbfa\tr\tb\r\nb\tr\tc\r\nc\tr\ta"
    assert parse_labeled_triples(data) == [("a", "r", "b"), ("b", "r", "c"), ("c", "r", "a")]
    assert parse_labeled_triples(b"") == []


@pytest.mark.parametrize(
    ("data", "line", "match"),
    [
        (b"a\tr\tb\nb\tr\n", 2, r"expected 3 tab-separated fields .*got 2 field"),
        (b"a\tr\tb\tc\n", 1, r"got 4 field"),
        (b"a r b\n", 1, r"got 1 field.*separated by spaces"),
        (b"a\tr\tb\n\tr\tc\n", 2, r"expected a non-empty head label"),
        (b"a\t\tb\n", 1, r"expected a non-empty relation label"),
        (b"a\tr\t\n", 1, r"expected a non-empty tail label"),
        (b"a\tr\tb \n", 1, r"tail label without surrounding whitespace, got 'b '.*strip=True"),
        (b"a\t\xc2\xa0r\tb\n", 1, r"relation label without surrounding whitespace"),
        (b"a\tr\tb\n\nb\tr\tc\n", 2, r"got a blank line.*skip_blank=True"),
        (b"a\tr\tb\n   \n", 2, r"got a blank line"),
        (b"a\tr\tb\nb\tr\tc\na\tr\tb\n", 3, r"got \('a', 'r', 'b'\) again \(first on line 1\)"),
        (b"a\tr\tb\nb\tr\t\xff\n", 2, r"expected UTF-8 text, got the invalid byte 0xff"),
        (b"a\tr\tb\rb\tr\tc\n", 1, r"lone carriage return"),
    ],
)
def test_malformed_lines_name_file_line_expected_and_got(tmp_path, data, line, match):
    path = tmp_path / "bad.tsv"
    path.write_bytes(data)
    with pytest.raises(TSVFormatError, match=match) as info:
        read_labeled_triples(path)
    assert info.value.path == str(path) and info.value.line == line
    assert str(info.value).startswith(f"{path}:{line}: ")


def test_strip_option_strips_every_field():
    data = "a \t r\tb\n\u3000c\tr\td\xa0\n"
    assert parse_labeled_triples(data, strip=True) == [("a", "r", "b"), ("c", "r", "d")]
    with pytest.raises(TSVFormatError, match="non-empty relation"):
        parse_labeled_triples("a\t  \tb\n", strip=True)


def test_skip_blank_keeps_true_line_numbers():
    data = "a\tr\tb\n\n  \nb\tr\tc\na\tr\tb\n"
    with pytest.raises(TSVFormatError, match=r"^<string>:5: .*first on line 1"):
        parse_labeled_triples(data, skip_blank=True)
    assert parse_labeled_triples(data, skip_blank=True, duplicates="keep") == [
        ("a", "r", "b"),
        ("b", "r", "c"),
        ("a", "r", "b"),
    ]


def test_duplicates_drop_keeps_first_occurrence_and_keep_keeps_all():
    data = "b\tr\tc\na\tr\tb\nb\tr\tc\n"
    assert parse_labeled_triples(data, duplicates="drop") == [("b", "r", "c"), ("a", "r", "b")]
    assert len(parse_labeled_triples(data, duplicates="keep")) == 3


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"duplicates": "ignore"}, r"duplicates: expected one of \('raise', 'drop', 'keep'\)"),
        ({"strip": "yes"}, r"strip: expected True or False, got 'yes'"),
        ({"skip_blank": 1}, r"skip_blank: expected True or False"),
    ],
)
def test_invalid_options_are_rejected(kwargs, match):
    with pytest.raises(GraphDataError, match=match):
        parse_labeled_triples("a\tr\tb\n", **kwargs)


def test_whitespace_tables_match_str_isspace():
    every = {chr(i) for i in range(0x110000) if chr(i).isspace()}
    assert set(_ASCII_SPACE) | set(_OTHER_SPACE) | {"\t", "\n", "\r"} == every
    assert set(_ASCII_SPACE) == {c for c in every if c.isascii()} - {"\t", "\n", "\r"}


def _reference_parse(text: str) -> list[tuple[str, str, str]] | None:
    """Naive line-by-line parser (the format's definition); None where the file is invalid."""
    if not text:
        return []
    body = text[:-1] if text.endswith("\n") else text
    rows = []
    for line in body.split("\n"):
        fields = line.split("\t")
        if len(fields) != 3 or any(not f or f != f.strip() for f in fields):
            return None
        rows.append(tuple(fields))
    return rows


@given(st.text(alphabet=["a", "b", " ", "\t", "\n", "\xa0", "\x0b", "\u2003"], max_size=40))
def test_fast_path_agrees_with_line_by_line_definition(text):
    expected = _reference_parse(text)
    try:
        got = parse_labeled_triples(text, duplicates="keep")
    except TSVFormatError:
        got = None
    assert got == expected


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.binary(max_size=200),
        st.text(max_size=100).map(lambda s: s.encode("utf-8", "surrogatepass")),
        st.lists(st.sampled_from([b"a", b"\t", b"\n", b"\r", b" ", b"\xef\xbb\xbf", b"\xff"])).map(
            b"".join
        ),
    ),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["raise", "drop", "keep"]),
)
def test_garbage_gives_triples_or_documented_errors_only(data, strip, skip_blank, duplicates):
    try:
        rows = parse_labeled_triples(
            data, strip=strip, skip_blank=skip_blank, duplicates=duplicates
        )
    except (TSVFormatError, GraphDataError):
        return
    for row in rows:
        assert len(row) == 3 and all(isinstance(x, str) and x and x == x.strip() for x in row)


@pytest.mark.parametrize(
    ("rows", "match"),
    [
        ([("a", "r\tx", "b")], r"triples\[0\]: the label 'r\\tx' contains a tab"),
        ([("a", "r", "b"), ("a", "r", "b\n")], r"triples\[1\]: .*contains a tab, newline"),
        ([("a", " r", "b")], r"has whitespace at either end"),
        ([("a", "", "b")], r"is empty"),
        ([("\ufeffa", "r", "b")], r"byte-order mark"),
        ([("a", "\ud800", "b")], r"not encodable as UTF-8"),
        ([("a", 5, "b")], r"triples\[0\]: expected str labels, got 5"),
        ([("a", "r")], r"triples\[0\]: expected 3 labels"),
    ],
)
def test_writer_rejects_labels_that_would_not_read_back(tmp_path, rows, match):
    path = tmp_path / "out.tsv"
    path.write_text("old\tfile\there\n")
    with pytest.raises(GraphDataError, match=match):
        write_labeled_triples(path, rows)
    assert path.read_text() == "old\tfile\there\n"  # untouched
    assert os.listdir(tmp_path) == ["out.tsv"]


def test_write_replaces_existing_file_and_keeps_its_mode(tmp_path):
    path = tmp_path / "out.tsv"
    path.write_text("x\ty\tz\n")
    path.chmod(0o640)
    write_labeled_triples(path, [("a", "r", "b")])
    assert path.read_text() == "a\tr\tb\n"
    assert path.stat().st_mode & 0o777 == 0o640


def test_a_string_is_not_taken_for_a_triple_of_its_characters(tmp_path):
    # ["abc"] was written as the line "a\tb\tc".
    with pytest.raises(GraphDataError, match=r"triples\[0\]: expected 3 labels"):
        write_labeled_triples(tmp_path / "t.tsv", ["abc"])
    assert not (tmp_path / "t.tsv").exists()
