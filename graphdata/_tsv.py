r"""Reader and writer of the labelled triple format ``head<TAB>relation<TAB>tail``.

The format of PyKEEN's ``TriplesFactory.from_path`` and LibKGE's raw files: UTF-8 text, one triple
per line, three tab-separated labels, no header (one is detected, see below). What the reader
does with each irregularity:

* **UTF-8 byte-order mark, CRLF line endings**: handled silently; they are encoding artefacts
  (some FB15k-237 copies have CRLF endings) and carry no meaning. A byte-order mark at the start
  of any line (two files with marks joined by ``cat``) is removed like a leading one; a label
  that still starts with U+FEFF (a doubled mark, one after a tab) is a
  :class:`~graphdata.errors.TSVFormatError` naming ``file:line``.
* **Missing final newline**: accepted.
* **Invalid UTF-8, a lone carriage return, a wrong number of fields, an empty field**: always a
  :class:`~graphdata.errors.TSVFormatError` naming ``file:line``.
* **Whitespace around a field** (``"a \tb\tc"``): an error by default, since a label with a stray
  space is a different label; ``strip=True`` strips every field instead.
* **Blank (empty or whitespace-only) lines**: an error by default; ``skip_blank=True`` skips them.
* **Duplicate triples**: an error by default naming both lines; ``duplicates="drop"`` keeps the
  first occurrence, ``duplicates="keep"`` keeps every copy.
* **A header row**: ``header=None`` (default) drops the first line when it *is* a header by this
  rule: it has three tab-separated fields and, compared case-insensitively, the first is one of
  ``head, h, subject, s, source``, the second one of ``relation, r, rel, predicate, p`` and the
  third one of ``tail, t, object, o, target`` (:data:`HEADER_NAMES`; PyKEEN writes
  ``head<TAB>relation<TAB>tail``). ``header=True`` always drops the first line, ``header=False``
  never does. Line numbers in errors stay those of the file.
* **gzip compression**: a file that starts with the gzip magic bytes ``1f 8b`` is decompressed
  whatever its name (:func:`read_text_file`); the writers compress when the name ends in ``.gz``.

Clean files take a fast path: a few substring searches over the whole text rule out any empty
field, padded field or blank line, and the only per-line Python work is ``str.split``. The slower
line-by-line pass runs only to diagnose a problem or to apply ``strip``/``skip_blank``.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from graphdata.atomic import atomic_path
from graphdata.errors import GraphDataError, TSVFormatError
from graphdata.typing import LabeledTriple

__all__ = [
    "HEADER_NAMES",
    "is_header_row",
    "read_file_bytes",
    "read_text_file",
    "write_text_file",
    "parse_labeled_triples",
    "read_labeled_triples",
    "format_labeled_triples",
    "write_labeled_triples",
]

_FIELDS = ("head", "relation", "tail")
#: The names a header row may give each column (compared lower-cased): head, relation, tail.
HEADER_NAMES: tuple[frozenset[str], frozenset[str], frozenset[str]] = (
    frozenset({"head", "h", "subject", "s", "source"}),
    frozenset({"relation", "r", "rel", "predicate", "p"}),
    frozenset({"tail", "t", "object", "o", "target"}),
)
#: The first two bytes of every gzip stream (RFC 1952, section 2.3.1).
_GZIP_MAGIC = b"\x1f\x8b"
_EXPECTED = "3 tab-separated fields head<TAB>relation<TAB>tail"
_DUPLICATES = ("raise", "drop", "keep")
# The characters for which str.isspace() holds, besides "\t", "\n" and "\r" (handled apart):
# ASCII ones first, then the non-ASCII ones, checked only when the text is not pure ASCII.
_ASCII_SPACE = " \x0b\x0c\x1c\x1d\x1e\x1f"
_OTHER_SPACE = (
    "\x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
)


def _show(line: str, limit: int = 80) -> str:
    """Return ``repr(line)``, shortened to about ``limit`` characters."""
    text = repr(line)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_header_row(fields: Sequence[str]) -> bool:
    """Whether ``fields`` name the columns head, relation and tail (see :data:`HEADER_NAMES`).

    Args:
        fields: The fields of a line.

    Returns:
        ``True`` for three fields that each, lower-cased, are one of the names of their column.

    Examples:
        >>> is_header_row(["Head", "relation", "TAIL"]), is_header_row(["s", "p", "o"])
        (True, True)
        >>> is_header_row(["alice", "parent", "bob"])
        False
    """
    return len(fields) == 3 and all(
        field.strip().lower() in names for field, names in zip(fields, HEADER_NAMES)
    )


def read_file_bytes(path: str | os.PathLike[str]) -> bytes:
    """Return the bytes of ``path``, decompressed when they start with the gzip magic bytes.

    Compression is told by content, not by name (RFC 1952 magic ``1f 8b``), so ``train.txt``
    holding gzip data and ``train.txt.gz`` holding plain text both read correctly. No UTF-8 text
    starts with ``0x8b`` after ``0x1f``: ``0x8b`` is never the first byte of a character.

    Args:
        path: The file.

    Returns:
        The (decompressed) content.

    Raises:
        FileNotFoundError: If ``path`` does not exist.
        GraphDataError: If the gzip stream is corrupt or truncated.
    """
    path = Path(path)
    data = path.read_bytes()
    if not data.startswith(_GZIP_MAGIC):
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as err:
        raise GraphDataError(
            f"{path}: expected a complete gzip stream (the file starts with the gzip magic bytes "
            f"1f 8b), got a corrupt or truncated one ({err}); download or compress it again"
        ) from None


def read_text_file(path: str | os.PathLike[str]) -> str:
    """Return the UTF-8 text of ``path`` (gzip-decompressed as :func:`read_file_bytes` says).

    A byte-order mark and CRLF line endings are removed as in :func:`parse_labeled_triples`.

    Args:
        path: The file.

    Returns:
        The text.

    Raises:
        FileNotFoundError: If ``path`` does not exist.
        TSVFormatError: On invalid UTF-8 or a lone carriage return, naming ``path:line``.
    """
    return _decode(read_file_bytes(path), str(path))


def write_text_file(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` as UTF-8 to ``path`` atomically, gzip-compressed if the name ends in ``.gz``.

    The gzip header records no time stamp (``mtime=0``), so equal text gives equal bytes.

    Args:
        path: The destination file; its folder must exist.
        text: The content.
    """
    path = Path(path)
    data = text.encode("utf-8")
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    # atomic_path keeps an existing file's mode and gives a new one 0o666 minus the umask.
    with atomic_path(path, suffix=".tmp") as temp, open(temp, "wb") as stream:
        stream.write(data)


def _drop_header(text: str, header: bool | None) -> tuple[str, int]:
    """Remove the header line as ``header`` says; return the rest and the lines removed."""
    if header is not None and not isinstance(header, bool):
        raise GraphDataError(
            f"header: expected True, False or None (detect), got {header!r} (--header on the "
            "command line)"
        )
    if header is False or not text:
        return text, 0
    first, _, rest = text.partition("\n")
    if header is True or is_header_row(first.split("\t")):
        return rest, 1
    return text, 0


def _check_options(strip: bool, skip_blank: bool, duplicates: str) -> None:
    if not isinstance(strip, bool):
        raise GraphDataError(f"strip: expected True or False, got {strip!r}")
    if not isinstance(skip_blank, bool):
        raise GraphDataError(f"skip_blank: expected True or False, got {skip_blank!r}")
    if duplicates not in _DUPLICATES:
        raise GraphDataError(f"duplicates: expected one of {_DUPLICATES}, got {duplicates!r}")


def _decode(data: bytes | str, source: str) -> str:
    if isinstance(data, str):
        text = data
    else:
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as err:
            line = data.count(b"\n", 0, err.start) + 1
            raise TSVFormatError(
                source,
                line,
                f"expected UTF-8 text, got the invalid byte {data[err.start]:#04x} ({err.reason}); "
                "re-encode the file as UTF-8",
            ) from None
    if "\ufeff" in text:
        text = _strip_byte_order_marks(text, source)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        where = text.find("\r")
        if where >= 0:
            line = text.count("\n", 0, where) + 1
            raise TSVFormatError(
                source,
                line,
                "expected lines ending in \\n or \\r\\n, got a lone carriage return \\r "
                f"in {_show(text.split(chr(10))[line - 1])}; convert the line endings",
            )
    return text


def _strip_byte_order_marks(text: str, source: str) -> str:
    """Remove a byte-order mark at the start of the text and at the start of every line.

    A mark at a line start is what ``cat a.tsv b.tsv`` leaves when both files begin with one:
    kept, it would make ``\ufeffalice`` a second entity that prints like ``alice``. A field that
    still starts with U+FEFF after that (a second mark, or one after a tab) is refused, as the
    writer refuses such labels.
    """
    if text.startswith("\ufeff"):
        text = text[1:]  # byte-order mark: an encoding artefact
    text = text.replace("\n\ufeff", "\n")  # the marks of files joined with cat
    starts = [0] if text.startswith("\ufeff") else []
    starts += [text.find(mark) + 1 for mark in ("\n\ufeff", "\t\ufeff") if mark in text]
    if starts:
        where = min(starts)
        line = text.count("\n", 0, where) + 1
        raise TSVFormatError(
            source,
            line,
            "expected labels that do not start with U+FEFF (a byte-order mark, invisible when "
            f"printed), got one in {_show(text.split(chr(10))[line - 1])}; remove the stray "
            "byte-order mark from the file",
        )
    return text


def _looks_clean(text: str) -> bool:
    """Whether no field is empty or padded with whitespace and no line is blank.

    ``text`` has its final newline removed. This runs a few C-speed substring searches over the
    whole text (a compiled regular expression was 4x slower), so clean files never pay for
    per-field checks in Python; ``False`` sends the text to the line-by-line pass.
    """
    if text.startswith(("\t", "\n")) or text.endswith(("\t", "\n")):
        return False
    if "\t\t" in text or "\n\n" in text or "\t\n" in text or "\n\t" in text:
        return False
    spaces = [c for c in _ASCII_SPACE if c in text]
    if not text.isascii():
        spaces += [c for c in _OTHER_SPACE if c in text]
    for c in spaces:
        if text.startswith(c) or text.endswith(c):
            return False
        if c + "\t" in text or "\t" + c in text or c + "\n" in text or "\n" + c in text:
            return False
    return True


def _diagnose(
    lines: list[str], source: str, *, strip: bool, skip_blank: bool, start: int = 1
) -> tuple[list[LabeledTriple], list[int]]:
    """Line-by-line pass: apply ``strip``/``skip_blank`` and raise at the first bad line.

    ``start`` is the file's line number of ``lines[0]`` (2 after a header line).
    """
    triples: list[LabeledTriple] = []
    numbers: list[int] = []
    for number, line in enumerate(lines, start=start):
        if not line.strip():
            if skip_blank:
                continue
            raise TSVFormatError(
                source,
                number,
                f"expected {_EXPECTED}, got a blank line {_show(line)}; remove it or pass "
                "skip_blank=True",
            )
        fields = line.split("\t")
        if len(fields) != 3:
            hint = " (fields separated by spaces? the format needs tabs)" if " " in line else ""
            raise TSVFormatError(
                source,
                number,
                f"expected {_EXPECTED}, got {len(fields)} field(s) in {_show(line)}{hint}",
            )
        if strip:
            fields = [field.strip() for field in fields]
        for name, field in zip(_FIELDS, fields):
            if not field:
                raise TSVFormatError(
                    source, number, f"expected a non-empty {name} label, got {_show(line)}"
                )
            if field != field.strip():
                raise TSVFormatError(
                    source,
                    number,
                    f"expected a {name} label without surrounding whitespace, got {field!r} in "
                    f"{_show(line)}; fix the file or pass strip=True",
                )
        triples.append((fields[0], fields[1], fields[2]))
        numbers.append(number)
    return triples, numbers


def parse_labeled_triples(
    data: bytes | str,
    *,
    source: str = "<string>",
    strip: bool = False,
    skip_blank: bool = False,
    duplicates: Literal["raise", "drop", "keep"] = "raise",
    header: bool | None = None,
) -> list[LabeledTriple]:
    r"""Parse labelled triples from the bytes or text of a TSV file.

    Args:
        data: The file content, UTF-8 bytes (gzip-compressed or not) or already decoded text.
        source: The name used in error messages as ``source:line``. Default ``"<string>"``.
        strip: Strip whitespace around every field instead of rejecting it. Default ``False``.
        skip_blank: Skip blank (empty or whitespace-only) lines instead of rejecting them.
            Default ``False``.
        duplicates: ``"raise"`` (default) rejects a repeated triple, ``"drop"`` keeps its first
            occurrence, ``"keep"`` keeps every copy.
        header: ``None`` (default) drops a first line that is a header row by the rule of
            :func:`is_header_row`; ``True`` always drops the first line; ``False`` never.

    Returns:
        The triples in file order, as ``(head, relation, tail)`` label tuples.

    Raises:
        TSVFormatError: On a malformed line (see the module docstring), naming ``source:line``.
        GraphDataError: On an invalid option value.

    Examples:
        >>> parse_labeled_triples(b"\xef\xbb\xbfa\tparent\tb\r\nb\tparent\tc\r\n")
        [('a', 'parent', 'b'), ('b', 'parent', 'c')]
        >>> parse_labeled_triples("a\tparent\tb\na\tparent\tb\n", duplicates="drop")
        [('a', 'parent', 'b')]
        >>> parse_labeled_triples("Subject\tPredicate\tObject\na\tparent\tb\n")
        [('a', 'parent', 'b')]
    """
    _check_options(strip, skip_blank, duplicates)
    if isinstance(data, bytes | bytearray | memoryview) and bytes(data[:2]) == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as err:
            raise GraphDataError(
                f"{source}: expected a complete gzip stream, got a corrupt or truncated one "
                f"({err}); compress the data again"
            ) from None
    text, skipped = _drop_header(_decode(data, source), header)
    if not text:
        return []
    if text.endswith("\n"):
        text = text[:-1]
    lines = text.split("\n")
    # Tuples of strings, not lists: the garbage collector stops tracking them, which makes this
    # line 6x faster on 300k lines than a list of lists.
    rows = [tuple(line.split("\t")) for line in lines]
    numbers: list[int] = []  # line numbers when lines were skipped; empty means row i is line i+1
    if strip or skip_blank or not _looks_clean(text) or any(len(row) != 3 for row in rows):
        triples, numbers = _diagnose(
            lines, source, strip=strip, skip_blank=skip_blank, start=1 + skipped
        )
    else:
        triples = rows  # type: ignore[assignment]
    if duplicates != "keep" and len(set(triples)) != len(triples):
        if duplicates == "drop":
            return list(dict.fromkeys(triples))
        first: dict[LabeledTriple, int] = {}
        for position, triple in enumerate(triples):
            number = numbers[position] if numbers else position + 1 + skipped
            if triple in first:
                raise TSVFormatError(
                    source,
                    number,
                    f"expected each triple once, got {triple!r} again (first on line "
                    f"{first[triple]}); pass duplicates='drop' to keep the first occurrence or "
                    "duplicates='keep' to keep every copy",
                )
            first[triple] = number
    return triples


def read_labeled_triples(
    path: str | os.PathLike[str],
    *,
    strip: bool = False,
    skip_blank: bool = False,
    duplicates: Literal["raise", "drop", "keep"] = "raise",
    header: bool | None = None,
) -> list[LabeledTriple]:
    """Read a labelled triple TSV file (``head<TAB>relation<TAB>tail``, UTF-8, gzip or not).

    Args:
        path: The file to read; gzip data is decompressed whatever the name.
        strip: Strip whitespace around fields instead of rejecting it. Default ``False``.
        skip_blank: Skip blank lines instead of rejecting them. Default ``False``.
        duplicates: ``"raise"`` (default), ``"drop"`` or ``"keep"`` repeated triples.
        header: ``None`` (default) detects a header row (:func:`is_header_row`), ``True``
            drops the first line, ``False`` keeps it.

    Returns:
        The triples in file order.

    Raises:
        FileNotFoundError: If ``path`` does not exist.
        TSVFormatError: On a malformed line, naming ``path:line``.
    """
    path = Path(path)
    return parse_labeled_triples(
        read_file_bytes(path),
        source=str(path),
        strip=strip,
        skip_blank=skip_blank,
        duplicates=duplicates,
        header=header,
    )


def _check_label(label: object, position: int) -> None:
    if not isinstance(label, str):
        raise GraphDataError(f"triples[{position}]: expected str labels, got {label!r}")
    problem = ""
    if not label:
        problem = "is empty"
    elif "\t" in label or "\n" in label or "\r" in label:
        problem = "contains a tab, newline or carriage return"
    elif label != label.strip():
        problem = "has whitespace at either end"
    elif label.startswith("\ufeff"):
        problem = "starts with U+FEFF, which reads back as a byte-order mark"
    else:
        try:
            label.encode("utf-8")
        except UnicodeEncodeError:
            problem = "is not encodable as UTF-8 (a lone surrogate)"
    if problem:
        raise GraphDataError(
            f"triples[{position}]: the label {label!r} {problem}, so it cannot be written to "
            "and read back from a TSV file; rename it"
        )


def format_labeled_triples(triples: Iterable[Sequence[str]]) -> str:
    r"""Return the TSV text of labelled triples: one ``head\trelation\ttail\n`` line each.

    Every distinct label is checked once, so that reading the text back with default options
    returns exactly ``triples``.

    Args:
        triples: ``(head, relation, tail)`` label triples.

    Returns:
        The text, ending in a newline unless there are no triples.

    Raises:
        GraphDataError: If a triple does not have 3 labels, or a label is not a non-empty string
            free of tabs, newlines, surrounding whitespace and a leading U+FEFF.

    Examples:
        >>> format_labeled_triples([("a", "parent", "b")])
        'a\tparent\tb\n'
    """
    # A str is a sequence too: "abc" would become the triple ("a", "b", "c"); keep it whole.
    rows = [(triple,) if isinstance(triple, str) else tuple(triple) for triple in triples]
    seen: set[object] = set()
    for position, row in enumerate(rows):
        if len(row) != 3:
            raise GraphDataError(
                f"triples[{position}]: expected 3 labels (head, relation, tail), got {row!r}"
            )
        for label in row:
            if label not in seen:
                _check_label(label, position)
                seen.add(label)
    return "".join(f"{h}\t{r}\t{t}\n" for h, r, t in rows)


def write_labeled_triples(path: str | os.PathLike[str], triples: Iterable[Sequence[str]]) -> None:
    """Write labelled triples to a TSV file atomically (temporary file, then ``os.replace``).

    The file is gzip-compressed when its name ends in ``.gz``. A symbolic link, FIFO or device
    at ``path`` is handled as :func:`graphdata.atomic.atomic_path` says: written through, never
    replaced.

    Args:
        path: The destination file; its folder is created if missing.
        triples: ``(head, relation, tail)`` label triples.

    Raises:
        GraphDataError: On a label that would not read back unchanged (see
            :func:`format_labeled_triples`); nothing is written then.
    """
    write_text_file(path, format_labeled_triples(triples))
