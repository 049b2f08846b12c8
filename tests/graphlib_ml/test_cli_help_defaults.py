"""Every ``--help`` states each flag's default, and the default it states is the one used.

The oracles are the values the command runs with: argparse's own default for a flag that has
one, and :data:`spatial.counterfactual._OPTIONS` (the library's per-method defaults) for the
``spatial perturb`` flags that default to ``None`` and leave the value to the library.
"""

import argparse
from collections.abc import Iterator

from graphlib_ml.cli import build_parser


def _options(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ("graphlib",)
) -> Iterator[tuple[tuple[str, ...], argparse.Action]]:
    """(command path, action) for every option of every (sub)command, each parser once."""
    seen: set[int] = set()

    def walk(
        p: argparse.ArgumentParser, where: tuple[str, ...]
    ) -> Iterator[tuple[tuple[str, ...], argparse.Action]]:
        dests: set[str] = set()
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    if id(sub) not in seen:  # an alias (intervene / perturb) is one parser
                        seen.add(id(sub))
                        yield from walk(sub, (*where, name))
            elif action.option_strings and action.dest not in dests:
                dests.add(action.dest)  # a second spelling of a dest (--top for --top-k)
                yield where, action

    yield from walk(parser, path)


def _help(action: argparse.Action) -> str:
    text = action.help or ""
    return text % {**vars(action), "default": action.default, "prog": "graphlib"}


def test_every_flag_with_a_value_default_states_that_default() -> None:
    missing = []
    for where, action in _options(build_parser()):
        default = action.default
        if default is None or isinstance(default, bool) or default == argparse.SUPPRESS:
            continue
        shown = ",".join(map(str, default)) if isinstance(default, tuple) else str(default)
        if shown not in _help(action):
            missing.append(f"{' '.join(where)} {action.option_strings[0]}={default!r}")
    assert missing == []


def test_perturb_help_states_the_library_defaults() -> None:
    from spatial.counterfactual import _OPTIONS

    parser = build_parser("spatial")
    actions = {  # `spatial intervene`, alias `spatial perturb`: one parser
        action.option_strings[0]: action
        for where, action in _options(parser)
        if where[1:] == ("spatial", "intervene")
    }
    assert "(default)" in _help(actions["--method"]).split(":")[0]  # mean_field (default):
    for method, options in _OPTIONS.items():
        for name, value in options.items():
            if value is None:
                continue
            text = _help(actions["--" + name.replace("_", "-")])
            assert f"default: {value:g}" in text, (method, name, value, text)
