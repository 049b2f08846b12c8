"""The ``graphlib`` console command: ``demo``, ``data`` and one subcommand per part.

The parser is built from a visible dict, :data:`COMMANDS`: subcommand -> (module of this
package, one-line help). Each module (``graphlib_ml/cli/kg.py``, ``graphon.py``, ``spatial.py``,
``data.py``, ``demo.py``) has ``add_subparser(subparsers)``, and each command sets
``func(args) -> int``. :func:`main` imports and builds only the module of the subcommand it was
given, so ``graphlib --help`` imports no torch, PyG, AnnData or matplotlib; the other
subcommands appear with their one-line help only. The parts (``kg``, ``graphon``, ``spatial``,
``graphdata``) import nothing from here and build no parser.

:func:`main` is the one place where failures meet the user. Every expected failure ends as one
line on stderr, ``graphlib: error: <what>, <where> (<how to fix>)``, and an exit code that says
which kind it was (:func:`describe_failure` builds both):

* ``2`` (:data:`EXIT_USAGE`): bad input. argparse's own errors, every
  :class:`~graphdata.errors.GraphDataError`, a missing AnnData key (``KeyError``), a file that
  is not what it claims to be (not UTF-8, not a torch file).
* ``1`` (:data:`EXIT_RUNTIME`): the run failed. Any :class:`OSError` (permission denied, no
  such file, is a directory, not a directory, no space left on device, read-only file system,
  an unreadable ``.h5ad``), a full disk reported by torch as ``unexpected pos``, divergence
  (:class:`kg.training.TrainingDivergedError`), out of memory, a missing optional package, and
  any unexpected exception (a bug): that one line names its type and says to run again with
  ``--debug``.
* ``130`` (:data:`EXIT_INTERRUPTED`): Ctrl-C / SIGINT; for ``kg train`` the line says that
  ``--resume`` continues from the last checkpoint.
* ``141`` (:data:`EXIT_BROKEN_PIPE`): stdout was closed by its reader (``graphlib ... | head``);
  nothing is printed, as with any Unix tool killed by SIGPIPE.

``graphlib --debug ...`` (or ``GRAPHLIB_DEBUG=1`` in the environment) lets the exception
propagate, so the full traceback is shown.

Examples:
    >>> parser = build_parser()
    >>> parser.parse_args(["demo", "--out", "report"]).out
    'report'
    >>> code, line = describe_failure(PermissionError(13, "Permission denied", "/data/a.txt"))
    >>> code, line[:50]
    (1, 'graphlib: error: permission denied, /data/a.txt (c')
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from graphdata._version import __version__
from graphdata.errors import GraphDataError

__all__ = [
    "COMMANDS",
    "EXIT_BROKEN_PIPE",
    "EXIT_INTERRUPTED",
    "EXIT_RUNTIME",
    "EXIT_USAGE",
    "build_parser",
    "describe_failure",
    "main",
]

#: Exit code of a run that failed (I/O, divergence, memory, a bug).
EXIT_RUNTIME = 1
#: Exit code of bad input: a usage error, a bad value, a file that is not what it should be.
EXIT_USAGE = 2
#: Exit code after Ctrl-C / SIGINT (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130
#: Exit code when the reader of stdout went away (128 + SIGPIPE, as a shell reports it).
EXIT_BROKEN_PIPE = 141

#: Environment variable that turns ``--debug`` on for every run (``1``, ``true``, ``yes``, ``on``).
DEBUG_ENV = "GRAPHLIB_DEBUG"

#: Subcommands: name -> (module of this package with its ``add_subparser``, one-line help).
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("demo", "run all parts on embedded defaults and write a report"),
    "data": ("data", "inspect and generate datasets"),
    "kg": ("kg", "knowledge-graph embeddings: train, evaluate, explain"),
    "graphon": ("graphon", "graphons: sampling and densities"),
    "spatial": ("spatial", "Celcomen on spatial transcriptomics"),
}
#: The subcommands of the library's parts (the others are the application's own).
PARTS = ("kg", "graphon", "spatial")

#: Argument dests that name input files, in the order they are named in a message.
_INPUT_ARGS = ("path", "input", "checkpoint", "evaluator", "dataset")
#: Argument dests that name outputs, in the order they are named in a message.
_OUTPUT_ARGS = ("out", "json", "save_evaluator")

#: errno -> how to fix it; the "what" is the system's own text (``os.strerror``).
_OS_FIXES = {
    errno.ENOENT: "check the path; pass an existing file or folder",
    errno.EACCES: "check the permissions of the path, or use one this user can read and write",
    errno.EPERM: "check the permissions of the path, or use one this user can read and write",
    errno.EISDIR: "a folder is there; pass a file path",
    errno.ENOTDIR: "a part of the path is a file, not a folder; fix the path",
    errno.EEXIST: "something is already there; remove it or pass another path",
    errno.ENOSPC: "free some space, or write to another disk",
    errno.EDQUOT: "free some space within your quota, or write to another disk",
    errno.EROFS: "write to a folder on a writable file system",
    errno.ENAMETOOLONG: "pass a shorter path",
    errno.ELOOP: "a symlink in the path points back at itself; fix the link",
    errno.EMFILE: "too many open files; raise the limit (ulimit -n) or run fewer jobs",
    errno.EIO: "the device failed to read or write; check the disk",
}
#: OSError subclass -> its errno, for errors raised with a message but no errno.
_SUBCLASS_ERRNOS = {
    FileNotFoundError: errno.ENOENT,
    PermissionError: errno.EACCES,
    IsADirectoryError: errno.EISDIR,
    NotADirectoryError: errno.ENOTDIR,
    FileExistsError: errno.EEXIST,
    BrokenPipeError: errno.EPIPE,
}
#: kg.training.TrainingDivergedError's keyword spellings -> the ``kg train`` flags.
_DIVERGED_FLAGS = {
    "learning rate lr=": "learning rate --lr ",
    "(e.g. lr=": "(e.g. --lr ",
    "set grad_clip": "set --grad-clip",
    "or grad_clip)": "or --grad-clip)",
    "without resume": "without --resume",
}
#: errnos of a failed write, whose message names the outputs when the error names no file.
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EIO}


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one ``graphlib: error:`` line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        """Print ``message`` as one line with the command and a ``--help`` hint; exit 2.

        Args:
            message: argparse's message, e.g. ``argument --epochs: invalid int value: 'x'``.
        """
        self.exit(
            EXIT_USAGE,
            f"graphlib: error: {_one_line(message)}, in `{self.prog}` (see `{self.prog} --help`)\n",
        )


def build_parser(
    command: str | None = None, subcommand: str | None = None
) -> argparse.ArgumentParser:
    """Build the ``graphlib`` argument parser.

    Args:
        command: Build only this subcommand's parser in full (the others are listed with their
            one-line help and build nothing; ``""`` builds none, for ``graphlib --help``);
            ``None`` builds every subcommand.
        subcommand: With ``command="kg"``, the ``kg`` command to build in full: ``kg explain``'s
            parser imports the explainer's configs, which ``kg train`` does not need. ``None``
            builds every ``kg`` command.

    Returns:
        The parser; ``parse_args`` yields a namespace whose ``func`` runs the command.
    """
    parser = _Parser(
        prog="graphlib",
        description="Graph learning on knowledge graphs, graphons and spatial transcriptomics.",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help=f"show the full traceback of a failure (also: {DEBUG_ENV}=1)",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"graphlib {__version__} (graphlib-ml)",
        help="print the installed graphlib-ml version and exit",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (module, help_text) in COMMANDS.items():
        if command is None or command == name:
            part = importlib.import_module(f"{__name__}.{module}")
            if name == "kg":
                part.add_subparser(sub, only=subcommand)
            else:
                part.add_subparser(sub)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def _subcommand(argv: Sequence[str]) -> tuple[str, str | None]:
    """The subcommand named in ``argv`` and the word after it (``("kg", "train")``).

    The subcommand is the first word that is not an option; ``""`` when there is none or it is
    not one of :data:`COMMANDS` (argparse then reports it).
    """
    words = [token for token in argv if not token.startswith("-")]
    command = words[0] if words and words[0] in COMMANDS else ""
    return command, (words[1] if command and len(words) > 1 else None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``graphlib`` command; every expected failure ends as one line and an exit code.

    The codes are :data:`EXIT_USAGE` (2), :data:`EXIT_RUNTIME` (1), :data:`EXIT_INTERRUPTED`
    (130) and :data:`EXIT_BROKEN_PIPE` (141); :func:`describe_failure` maps an exception to its
    code and line. A :class:`UserWarning` of the library is one ``graphlib: warning:`` line on
    stderr. With ``--debug`` (or ``GRAPHLIB_DEBUG=1``) the exception propagates instead, and
    warnings keep Python's format with their source line.

    Args:
        argv: The arguments without the program name; ``None`` reads ``sys.argv``.

    Returns:
        The exit code.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    debug = _debug_requested(argv)
    args: argparse.Namespace | None = None
    try:
        try:
            args = build_parser(*_subcommand(argv)).parse_args(argv)
        except SystemExit as done:  # --help, or a usage error already printed by _Parser
            sys.stdout.flush()
            return _exit_code(done)
        debug = debug or bool(args.debug)
        if debug:
            code = int(args.func(args) or 0)
        else:  # the library's warnings as "graphlib: warning:" lines, for every command
            from graphlib_ml.cli._datasets import user_warnings_as_lines

            with user_warnings_as_lines():
                code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows up here, inside the handler, not at exit
        return code
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (Exception, KeyboardInterrupt) as err:
        if debug:
            raise
        code, line = describe_failure(err, args)
        _flush_quietly()
        print(line, file=sys.stderr, flush=True)
        return code


def describe_failure(err: BaseException, args: argparse.Namespace | None = None) -> tuple[int, str]:
    """Map an exception to its exit code and one ``graphlib: error: ...`` line.

    The line is ``graphlib: error: <what>, <where> (<how to fix>)``. ``what`` comes from the
    exception (an :class:`OSError`'s ``strerror``, a
    :class:`~graphdata.errors.GraphDataError`'s message, which already names the argument and the
    fix); ``where`` is the exception's own path (``OSError.filename``) or, when it names none,
    the command and the files it was given in ``args``.

    Args:
        err: The exception that ended the command.
        args: The parsed command line, used to name the command and its files; None when the
            failure came before parsing finished.

    Returns:
        ``(exit code, line)``: 2 for bad input, 1 for a failed run (I/O, divergence, memory, a
        bug), 130 for an interruption.

    Examples:
        >>> describe_failure(GraphDataError("--margin: expected a number > 0, got nan"))[0]
        2
        >>> code, line = describe_failure(OSError(errno.ENOSPC, "No space left on device"))
        >>> code, "no space left on device" in line
        (1, True)
    """
    where = _where(args)
    if isinstance(err, KeyboardInterrupt):
        return EXIT_INTERRUPTED, _interrupted_line(args)
    if isinstance(err, GraphDataError):
        return EXIT_USAGE, f"graphlib: error: {_one_line(str(err))}"
    if isinstance(err, KeyError):  # a missing AnnData key: the message names key and slot
        text = err.args[0] if len(err.args) == 1 and isinstance(err.args[0], str) else str(err)
        return EXIT_USAGE, f"graphlib: error: {_one_line(text)}"
    if isinstance(err, UnicodeDecodeError):
        return EXIT_USAGE, _line(
            f"a file is not UTF-8 text ({err.reason} at byte {err.start})",
            where,
            "pass a UTF-8 text file, or convert it with iconv",
        )
    if isinstance(err, pickle.UnpicklingError):
        return EXIT_USAGE, _line(
            f"a file could not be read as a weights-only torch file ({_first_line(err)})",
            where,
            "pass a file written by graphlib; this one is damaged or is not one",
        )
    if isinstance(err, OSError):
        return EXIT_RUNTIME, _os_error_line(err, args)
    if _is_a(err, "kg.training", "TrainingDivergedError"):
        from graphlib_ml.cli._flags import spell_flags

        return EXIT_RUNTIME, _line(
            f"training diverged: {spell_flags(_first_line(err), _DIVERGED_FLAGS)}",
            where,
            "lower --lr, set --grad-clip, or add a regularizer",
        )
    if (
        isinstance(err, MemoryError)
        or _is_a(err, "torch", "OutOfMemoryError")
        or (isinstance(err, RuntimeError) and "can't allocate memory" in str(err))  # torch, CPU
    ):
        detail = f" ({_first_line(err)})" if str(err) else ""
        return EXIT_RUNTIME, _line(
            f"out of memory{detail}",
            where,
            "lower --batch-size, --sizes or the model or graphon size, or use a machine with more "
            "memory",
        )
    if isinstance(err, ImportError):
        notes = " ".join(getattr(err, "__notes__", []))
        return EXIT_RUNTIME, _line(
            f"a package is missing: {_first_line(err)}",
            where,
            notes or f"install it: pip install {err.name or 'the package named above'}",
        )
    if isinstance(err, RuntimeError) and _torch_write_failure(err):
        # torch's zip writer reports a short write (a full disk) as "unexpected pos N vs M"
        # and never says "no space left on device"; the outputs are what it was writing.
        return EXIT_RUNTIME, _line(
            f"writing a torch file failed (torch: {_first_line(err)}); the disk is probably full",
            _outputs_where(args) or where,
            "free some space, or write to another disk",
        )
    if isinstance(err, RuntimeError) and _torch_read_failure(err):
        return EXIT_USAGE, _line(
            f"a file could not be read as a torch file (torch: {_first_line(err)})",
            where,
            "pass a file written by graphlib; this one is truncated, damaged or is not one",
        )
    return EXIT_RUNTIME, _line(
        f"unexpected {type(err).__name__}: {_first_line(err)}",
        where,
        "run again with --debug for the traceback, and please report it",
    )


def _is_a(err: BaseException, module: str, name: str) -> bool:
    """``isinstance(err, module.name)``, without importing ``module`` when nothing loaded it.

    An exception of a type from a module that was never imported cannot exist, so the handler
    does not pay torch's import time to classify an error of a command that never used torch.
    """
    loaded = sys.modules.get(module)
    kind = getattr(loaded, name, None) if loaded is not None else None
    return isinstance(kind, type) and isinstance(err, kind)


def _line(what: str, where: str, fix: str) -> str:
    """``graphlib: error: <what>, <where> (<fix>)`` on one line (``where`` may be empty)."""
    place = f", {where}" if where else ""
    return f"graphlib: error: {_one_line(what)}{place} ({_one_line(fix)})"


def _one_line(text: str) -> str:
    """``text`` with its line breaks (and runs of spaces) folded into single spaces."""
    return " ".join(text.split())


def _first_line(err: BaseException, limit: int = 300) -> str:
    """The first non-empty line of ``err``'s message, at most ``limit`` characters."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    text = lines[0] if lines else "(no message)"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _command(args: argparse.Namespace | None) -> str:
    """``graphlib kg train``: the subcommand path recorded in ``args``."""
    if args is None or getattr(args, "command", None) is None:
        return "graphlib"
    words = [args.command]
    words += [v for k, v in vars(args).items() if k.endswith("_command") and isinstance(v, str)]
    return " ".join(["graphlib", *words])


def _named_paths(args: argparse.Namespace | None, dests: Sequence[str]) -> list[str]:
    """The values of ``dests`` set in ``args`` (synthetic dataset specs left out)."""
    if args is None:
        return []
    paths = []
    for dest in dests:
        value = getattr(args, dest, None)
        if isinstance(value, str) and value and not value.startswith("synthetic"):
            paths.append(value)
    return paths


def _where(args: argparse.Namespace | None) -> str:
    """``in `graphlib spatial fit` on in.h5ad``: the command and the input files it was given."""
    if args is None:
        return ""
    inputs = _named_paths(args, _INPUT_ARGS)
    return f"in `{_command(args)}`" + (f" on {', '.join(inputs)}" if inputs else "")


def _outputs_where(args: argparse.Namespace | None) -> str:
    """``writing kg-run`` (the outputs given in ``args``), or ``''`` when there are none."""
    outputs = _named_paths(args, _OUTPUT_ARGS)
    return f"writing {', '.join(outputs)}" if outputs else ""


def _os_error_line(err: OSError, args: argparse.Namespace | None) -> str:
    """One line for an OSError, its path named from ``filename`` or else from ``args``."""
    code = err.errno if err.errno is not None else _SUBCLASS_ERRNOS.get(type(err))
    text = str(err)
    if code is None and "no space left on device" in text.lower():
        code = errno.ENOSPC  # h5py and other C libraries put the errno into the message only
    if err.strerror and code is not None and err.strerror.startswith("Unable to"):
        what = f"{os.strerror(code).lower()} ({_first_line(err)})"  # h5py's wording
    elif err.strerror:
        what = err.strerror[:1].lower() + err.strerror[1:]
    elif text:
        what = _first_line(err)  # a message of its own, e.g. "path: expected a folder ..."
    elif code is not None:
        what = os.strerror(code).lower()
    else:
        what = f"{type(err).__name__} (no message)"
    if code == errno.ENOSPC:
        what = what if "no space left on device" in what else f"no space left on device ({what})"
    if err.filename is not None:
        where = os.fsdecode(err.filename)
        if err.filename2 is not None:
            where += f" -> {os.fsdecode(err.filename2)}"
        if where in what:  # a writer's own sentence that names the path already
            where = f"in `{_command(args)}`" if args is not None else ""
        else:
            where += f", in `{_command(args)}`" if args is not None else ""
    elif code in _WRITE_ERRNOS:
        where = _outputs_where(args) or _where(args)
    else:
        where = _where(args)
    if code in _OS_FIXES:
        fix = _OS_FIXES[code]
    elif _raised_in(err, "h5py"):
        fix = (
            "the file is not a readable HDF5 .h5ad (not HDF5, truncated or still being written); "
            "pass a .h5ad written by anndata"
        )
    else:
        fix = "check the path and the disk, then run again"
    return _line(what, where, fix)


def _raised_in(err: BaseException, package: str) -> bool:
    """Whether a frame of ``err``'s traceback lies in ``package`` (e.g. ``"h5py"``)."""
    tb = err.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename.replace(os.sep, "/")
        if f"/{package}/" in filename or filename.startswith(f"{package}/"):
            return True
        tb = tb.tb_next
    return False


def _torch_write_failure(err: RuntimeError) -> bool:
    """Whether ``err`` is torch's zip writer failing a write (a full disk, usually)."""
    text = str(err)
    return (
        "unexpected pos" in text
        or ("PytorchStreamWriter" in text and "failed" in text)
        or "file write failed" in text
    )


def _torch_read_failure(err: RuntimeError) -> bool:
    """Whether ``err`` is torch's zip reader refusing a file (truncated or not a torch file)."""
    text = str(err)
    return "PytorchStreamReader failed" in text or "failed finding central directory" in text


def _interrupted_line(args: argparse.Namespace | None) -> str:
    """The line after Ctrl-C; for ``kg train`` it says how ``--resume`` continues."""
    command = _command(args)
    if command == "graphlib kg train" and args is not None:
        checkpoint = Path(args.out) / "checkpoint.pt"
        if checkpoint.is_file():
            fix = (
                f"run the same command with --resume to continue from the last checkpoint, "
                f"{checkpoint}"
            )
        else:
            fix = "no checkpoint was written yet; run the same command again to start over"
        return _line("interrupted", f"in `{command}` --out {args.out}", fix)
    return _line("interrupted", f"in `{command}`", "run the command again to redo its work")


def _debug_requested(argv: Sequence[str]) -> bool:
    """``GRAPHLIB_DEBUG`` is set to a true value, or ``--debug`` precedes the subcommand."""
    if os.environ.get(DEBUG_ENV, "").strip().lower() in {"1", "true", "yes", "on"}:
        return True
    for token in argv:
        if token == "--debug":
            return True
        if not token.startswith("-"):
            return False  # the subcommand: later tokens belong to it
    return False


def _exit_code(done: SystemExit) -> int:
    """The integer exit code a ``SystemExit`` carries (``None`` is 0, a message is 2)."""
    if done.code is None:
        return 0
    if isinstance(done.code, int):
        return done.code
    print(done.code, file=sys.stderr)
    return EXIT_USAGE


def _flush_quietly() -> None:
    """Flush stdout before the error line; a closed pipe there is not worth a second error."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        _silence_stdout()


def _silence_stdout() -> None:
    """Point stdout's file descriptor at /dev/null, so Python's exit flush cannot fail again.

    The Python documentation's recipe for a closed pipe (``signal`` module, "Note on
    SIGPIPE"); a stdout without a file descriptor (a test's capture) is left alone.
    """
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


if __name__ == "__main__":
    sys.exit(main())
