"""``graphlib kg explain``: explain a predicted triple of a trained checkpoint by paths.

``graphlib kg explain CHECKPOINT --triple "head relation tail" [--paths 3 --max-length 3]``
loads the model and the dataset it was trained on (``--dataset`` and ``--on-unknown`` as for
``graphlib kg evaluate``), distils the evaluator (or loads one with ``--evaluator``), runs
KGExplainer, prints the paths with their scores and fidelity figures, and writes the PNG. With
``--rules FILE`` (Horn rules of any body shape, :mod:`graphdata.rules`) it prints the target's
groundings in train and the explanation's precision, recall and F1 against the best-matching
one, on any dataset (a fact named the other way counts where the file's length-1 rules make
the two names imply each other, e.g. ``r(X,Y) <- r(Y,X)``: :mod:`graphdata.rules.scoring`,
"Equivalent triples"); without it, the planted ground truth when the dataset is the synthetic
family KG.

``--triples FILE`` explains many targets with one fitted explainer (one evaluator): FILE holds
one ``head relation tail`` per line (whitespace- or tab-separated labels; blank lines and lines
starting with ``#`` are skipped). Each explanation is printed; ``--workers N`` shares the fitted
explainer among N processes (:func:`kg.explain.parallel.explain_parallel`; results in file
order, equal to the serial ones); ``--json`` writes a JSON list of the explanations; figures are
written only with ``--out FOLDER`` (``<line index>.png``, zero-padded); with ``--rules``, the mean
precision/recall/F1 per rule length over the targets (:func:`graphdata.rules.score_targets`).

Every target's labels (and head != tail) are checked against the training graph before the
evaluator is distilled, the error naming ``--triple`` or the line of ``--triples``; a ``--rules``
relation or constant the graph lacks is a ``graphlib: warning:`` line (such a rule never grounds).

The distilled evaluator is cached next to the checkpoint (issue #18): ``evaluator-<key>.pt`` in
the checkpoint's folder, ``<key>`` the first 16 hex digits of a SHA-256 over the model's
fingerprint (name, configuration and parameter values), the training graph's fingerprint
(vocabularies and triples) and the evaluator config (:func:`evaluator_cache_path`). A later call
with the same model, graph and ``--evaluator-*`` flags loads it (``weights_only=True``) instead
of distilling again; any other flag or checkpoint gives another key, a miss. An unreadable cache
file is distilled again with a warning (it is derived data: refusing it would make the default
path fail over a file the user never asked for) and replaced atomically; an unwritable folder
warns once and the run goes on. ``--no-evaluator-cache`` neither reads nor writes it;
``--evaluator FILE`` bypasses it.

The configuration flags are generated from the config dataclasses
(:func:`graphlib_ml.cli._flags.add_config_flags`): one flag per field of
:class:`~kg.explain.ExplainerConfig` (``--paths`` is ``max_paths``), of
:class:`~kg.explain.EvaluatorConfig` as ``--evaluator-<field>`` and of
:class:`~kg.explain.RetrainConfig` as ``--retrain-<field>``, so a field added to (or removed from)
a config is a flag added (or removed) here with no second edit. Unset flags keep the configs'
defaults; the evaluator's ``hops`` and ``seed`` follow ``--hops`` and ``--seed`` unless given.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import pickle
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphdata.errors import GraphDataError
from graphdata.synthetic import FamilyKG, family_kg
from graphlib_ml.cli._flags import add_config_flags, config_values
from kg.datasets import SYNTHETIC_NAME

if TYPE_CHECKING:
    from collections.abc import Sequence

    import torch

    from graphdata.rules import Rule
    from graphdata.triples import KGDataset
    from graphdata.tripleset import TripleSet
    from kg.base import KGEModel
    from kg.explain import DistilledEvaluator, EvaluatorConfig

__all__ = ["add_explain_subparser", "evaluator_cache_path"]

#: Evaluator fields that follow the explainer's value of the same name unless given (the
#: evaluator's subgraphs must be the explainer's, and one --seed seeds the run).
_FOLLOW_EXPLAINER = ("hops", "max_length", "seed")
#: One-line help of the command (the same line ``graphlib kg --help`` lists).
_EXPLAIN_HELP = "explain a predicted triple by synergistic paths (KGExplainer)"
#: Today's flag names where they differ from the field names.
_ALIASES = {"max_paths": "paths"}
#: Config dests -> fields of each config, filled when the parser is built.
_FLAGS: dict[str, dict[str, str]] = {}


def _parse_triple(text: str) -> tuple[str, str, str]:
    parts = text.split()
    if len(parts) != 3:
        raise GraphDataError(
            f'--triple: expected three space-separated labels "head relation tail", got {text!r}'
        )
    return parts[0], parts[1], parts[2]


def _read_triples(path: str) -> tuple[list[tuple[str, str, str]], list[int]]:
    """The targets of ``--triples FILE`` and their line numbers (module docstring)."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")  # a Windows editor's BOM is dropped
    except (OSError, UnicodeDecodeError) as err:
        raise GraphDataError(
            f"--triples: cannot read {path!r} ({err}); pass a UTF-8 text file with one "
            '"head relation tail" per line'
        ) from None
    triples, numbers = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 3:
            raise GraphDataError(
                f"--triples: line {number} of {path!r}: expected three labels "
                f'"head relation tail" separated by spaces or tabs, got {line.strip()!r}'
            )
        triples.append((parts[0], parts[1], parts[2]))
        numbers.append(number)
    if not triples:
        raise GraphDataError(
            f'--triples: {path!r} holds no triple; write one "head relation tail" per line'
        )
    return triples, numbers


def _check_targets(
    triples: Sequence[tuple[str, str, str]], where: Sequence[str], graph: TripleSet
) -> None:
    """Refuse an unknown label or a self-loop among the targets before any distillation.

    ``where[i]`` names the origin of ``triples[i]`` (``--triple``, or ``--triples: line N of
    FILE``); the explainer would otherwise fail on it only after minutes of distillation, and
    in a batch after explaining the targets before it, naming neither the flag nor the line.
    """
    from graphdata.errors import UnknownLabelError

    vocabs = (graph.entities, graph.relations, graph.entities)
    for triple, origin in zip(triples, where):
        for vocab, label in zip(vocabs, triple):
            if label not in vocab:
                raise UnknownLabelError(vocab.kind, label, vocab.labels, origin)
        if triple[0] == triple[2]:
            raise GraphDataError(
                f"{origin}: expected a target with head != tail, got {' '.join(triple)!r}; a "
                "self-loop has no path between two distinct entities to explain it"
            )


def _check_config(config: Any, graph: TripleSet, evaluator: DistilledEvaluator | None) -> None:
    """Refuse what :meth:`KGExplainer.fit` would refuse naming its config fields, by flag.

    The path length and radius beyond the graph (:func:`kg.explain._teacher.check_depth`), an
    unknown ``--path-relations`` label, and an evaluator (distilled, or ``--evaluator``) whose
    radius or path length is not the explainer's.
    """
    from kg.explain.explainer import _check_evaluator_config, _check_graph_config

    _check_graph_config(config, graph, flags=True)
    if evaluator is not None:
        if evaluator.config.hops != config.hops:
            raise GraphDataError(
                f"--hops: the --evaluator file was distilled on subgraphs of radius "
                f"{evaluator.config.hops}, got --hops {config.hops}; pass --hops "
                f"{evaluator.config.hops}, or drop --evaluator to distil a new one"
            )
    elif config.mode == "evaluator":
        _check_evaluator_config(config, flags=True)


def _check_rule_labels(rules: Sequence[Rule], graph: TripleSet) -> None:
    """Warn (``graphlib: warning:`` lines) about rule labels absent from the training graph.

    Such a rule never grounds, so a typo would read as "no rule grounds the target"; a warning,
    not an error, since one rules file may serve several datasets.
    """
    from graphdata.errors import closest_labels

    for rule in rules:
        atoms = (rule.head, *rule.body)
        relations = {atom.relation for atom in atoms}
        constants = {t.name for a in atoms for t in (a.first, a.second) if not t.is_variable}
        names = [(graph.relations, label) for label in sorted(relations)]
        names += [(graph.entities, label) for label in sorted(constants)]
        for vocab, label in names:
            if label in vocab:
                continue
            close = ", ".join(repr(c) for c in closest_labels(label, vocab.labels, n=3))
            print(
                f"graphlib: warning: --rules: rule {rule} names the {vocab.kind} {label!r}, "
                "which is not in the training graph, so it never grounds there"
                + (f" (closest: {close})" if close else ""),
                file=sys.stderr,
                flush=True,
            )


def _load_evaluator(path: str, device: torch.device) -> DistilledEvaluator:
    """``DistilledEvaluator.load`` with every unreadable-file failure as one GraphDataError."""
    from kg.explain import DistilledEvaluator

    try:
        return DistilledEvaluator.load(path, map_location=device)
    except (GraphDataError, OSError):
        raise
    # A file that is not an evaluator fails inside torch.load or while reading its fields.
    except (
        pickle.UnpicklingError,
        EOFError,
        KeyError,
        IndexError,
        TypeError,
        AttributeError,
        RuntimeError,
        ValueError,
    ) as err:
        raise GraphDataError(
            f"--evaluator: {path!r} is not an evaluator file ({type(err).__name__}: {err}); "
            "pass a file written by `graphlib kg explain --save-evaluator`, or leave out "
            "--evaluator to distil a new one"
        ) from err


def evaluator_cache_path(
    checkpoint: str | Path, model: KGEModel, graph: TripleSet, config: EvaluatorConfig
) -> Path:
    r"""The cache file of the evaluator distilled from ``model`` on ``graph`` with ``config``.

    ``<checkpoint folder>/evaluator-<key>.pt`` with ``<key>`` the first 16 hex digits of

    .. math::
        \operatorname{SHA256}(\text{model fingerprint} \,\|\, \text{graph fingerprint}
        \,\|\, \operatorname{json}(\text{config})),

    the model fingerprint :func:`kg.explain._teacher.model_fingerprint` (name, configuration,
    parameter values), the graph's :func:`kg.explain.evaluator.graph_fingerprint`
    (vocabularies and triples) and the evaluator config as sorted-key JSON: everything the
    distillation depends on, so a changed model, graph or ``--evaluator-*`` flag is a miss.

    Args:
        checkpoint: The checkpoint file.
        model: The model loaded from it.
        graph: The training :class:`~graphdata.tripleset.TripleSet` the evaluator is distilled on.
        config: The :class:`~kg.explain.EvaluatorConfig`.

    Returns:
        The cache path (it may not exist).
    """
    from kg.explain._teacher import model_fingerprint
    from kg.explain.evaluator import graph_fingerprint

    digest = hashlib.sha256()
    digest.update(model_fingerprint(model).encode())
    digest.update(graph_fingerprint(graph).encode())
    digest.update(json.dumps(dataclasses.asdict(config), sort_keys=True, default=str).encode())
    return Path(checkpoint).resolve().parent / f"evaluator-{digest.hexdigest()[:16]}.pt"


def _cached_evaluator(
    path: Path, model: KGEModel, graph: TripleSet, device: torch.device
) -> DistilledEvaluator | None:
    """The cached evaluator at ``path`` if it loads and fits ``model`` and ``graph``, else None.

    A file that does not load or does not fit warns (naming the file) and is distilled again.
    """
    if not path.is_file():
        return None
    try:
        evaluator = _load_evaluator(str(path), device)
        evaluator.check_compatible(model, graph)
    except (GraphDataError, OSError) as err:
        warnings.warn(
            f"evaluator cache: {str(path)!r} is unreadable or belongs to another model "
            f"({err}); distilling the evaluator again and replacing the file (delete it, or pass "
            "--no-evaluator-cache, to stop this)",
            UserWarning,
            stacklevel=2,
        )
        return None
    return evaluator


def _write_cache(evaluator: DistilledEvaluator, path: Path) -> None:
    """Write the evaluator to its cache file; an unwritable folder warns once and goes on."""
    try:
        evaluator.save(path)
    except (GraphDataError, OSError) as err:
        warnings.warn(
            f"evaluator cache: could not write {str(path)!r} ({err}); going on without a cache "
            "(pass --save-evaluator FILE to keep the evaluator elsewhere, or "
            "--no-evaluator-cache to skip this)",
            UserWarning,
            stacklevel=2,
        )
        return
    print(f"evaluator cache: wrote {path}")


def _world(dataset_name: str | None) -> FamilyKG | None:
    """The synthetic family world a dataset name records, or None for other datasets."""
    match = SYNTHETIC_NAME.match(dataset_name or "")
    if match is None:
        return None
    return family_kg(int(match.group(1)), seed=int(match.group(2)))


def _print_ground_truth(
    world: FamilyKG, triple: tuple[str, str, str], predicted: tuple[Any, ...]
) -> None:
    from kg.explain import ground_truth_scores
    from kg.explain.ground_truth import is_symmetric

    try:
        explanations = world.explanations_for(triple)
    except GraphDataError:
        print("ground truth: the triple is not true in the synthetic world")
        return
    if not explanations:
        print("ground truth: a base fact (no planted explanation)")
        return
    print("ground truth (planted rule groundings):")
    for explanation in explanations:
        print(f"  {explanation}")
    if is_symmetric(world, triple[1]):
        print(
            f"  ({triple[1]} is symmetric: a grounding of the reversed triple over the same "
            "people counts as the same proof)"
        )
    scores = ground_truth_scores(predicted, world, triple)
    print(
        f"  precision {scores.precision:.2f}  recall {scores.recall:.2f}  F1 {scores.f1:.2f}  "
        f"best single-rule F1 {scores.best_f1:.2f}  full rule body found: {scores.hit}"
    )


def _config(args: argparse.Namespace) -> Any:
    """The ExplainerConfig the flags describe (unset flags keep the configs' defaults)."""
    from kg.explain import EvaluatorConfig, ExplainerConfig, RetrainConfig

    explainer = config_values(args, _FLAGS["explainer"])
    evaluator = config_values(args, _FLAGS["evaluator"])
    evaluator_fields = {f.name for f in dataclasses.fields(EvaluatorConfig)}
    for name in _FOLLOW_EXPLAINER:
        if name in evaluator_fields and name not in evaluator:
            evaluator[name] = explainer.get(name, getattr(ExplainerConfig, name, None))
    evaluator = {k: v for k, v in evaluator.items() if v is not None}
    return ExplainerConfig(
        **explainer,
        evaluator=EvaluatorConfig(**evaluator),
        retrain=RetrainConfig(**config_values(args, _FLAGS["retrain"])),
    )


def _print_rule_scores(
    rules: Sequence[Rule],
    dataset: KGDataset,
    triple: tuple[str, str, str],
    predicted: Sequence[tuple[str, str, str]],
) -> None:
    """Print the explanation's P/R/F1 against the best-matching grounding of ``--rules``."""
    from graphdata.rules import RuleGraph, explanation_scores, groundings

    graph = RuleGraph(dataset.train)
    score = explanation_scores(predicted, triple, rules, graph)
    if score is None:
        print(f"ground truth (--rules, {len(rules)} rules): no rule grounds the target in train")
        return
    print(
        f"ground truth (--rules, {len(rules)} rules): {score.num_groundings} grounding(s) in "
        f"train, the shortest of length {score.target_length}"
    )
    for rule in rules:
        for body in groundings(rule, triple, graph)[:3]:
            print(f"  {rule}: {', '.join('(' + ', '.join(t) + ')' for t in body)}")
    print(
        f"  best match: {score.rule} (length {score.rule_length}); precision "
        f"{score.precision:.2f} recall {score.recall:.2f} F1 {score.f1:.2f}"
    )


def _explain(args: argparse.Namespace) -> int:
    if not (args.triples and args.out):
        return _explain_in(args)
    from graphlib_ml.cli._folders import remove_new_folders_on_error

    # --out with --triples is a folder, made before the checkpoint is loaded: a refusal after
    # it (a missing checkpoint, an unknown label) leaves no empty folder.
    with remove_new_folders_on_error(args.out):
        return _explain_in(args)


def _explain_in(args: argparse.Namespace) -> int:
    from graphdata.device import resolve_device
    from graphdata.run_folder import check_output_file
    from graphlib_ml.cli._datasets import dropped_triples_as_lines, resolve_world
    from kg.datasets import load_checkpoint_with_dataset
    from kg.explain import KGExplainer
    from kg.explain.local import capped_summary

    if args.triples:
        triples, numbers = _read_triples(args.triples)
        where = [f"--triples: line {n} of {args.triples!r}" for n in numbers]
    else:
        triples, where = [_parse_triple(args.triple)], ["--triple"]
    if args.workers > 1 and not args.triples:
        raise GraphDataError(
            f"--workers: parallel explanation needs several targets, got --workers "
            f"{args.workers} with --triple; pass --triples FILE, or drop --workers"
        )
    rules = None
    if args.rules:
        from graphdata.rules import read_rules

        rules = read_rules(args.rules)  # before any work: a bad file fails at once
    if args.triples:
        figures = _check_output_folder(args.out) if args.out else None
    else:
        check_output_file(args.out or "explanation.png", argument="--out")
    for flag, value in (("--json", args.json), ("--save-evaluator", args.save_evaluator)):
        if value:
            check_output_file(value, argument=flag)
    device = resolve_device(args.device)
    spec = resolve_world(args.dataset)  # a world name: its folder (seed from the spec, else 0)
    with dropped_triples_as_lines():
        model, ckpt, dataset = load_checkpoint_with_dataset(
            args.checkpoint, spec, device, on_unknown=args.on_unknown, header=args.header
        )
    config = _config(args)
    print(f"checkpoint: {args.checkpoint} ({model!r}); dataset: {dataset}; device {device}")
    print("explainer config:")
    for key, value in dataclasses.asdict(config).items():
        print(f"  {key} = {value!r}")
    evaluator = None
    cache = None
    if args.evaluator:
        evaluator = _load_evaluator(args.evaluator, device)
    elif config.mode == "evaluator" and args.no_evaluator_cache:
        print("evaluator cache: off (--no-evaluator-cache)")
    elif config.mode == "evaluator":
        cache = evaluator_cache_path(args.checkpoint, model, dataset.train, config.evaluator)
        evaluator = _cached_evaluator(cache, model, dataset.train, device)
        if evaluator is not None:
            print(f"evaluator cache: loaded {cache} (distillation skipped)")
    _check_targets(triples, where, dataset.train)  # files are read; nothing distilled yet
    _check_config(config, dataset.train, evaluator)
    if rules is not None:
        _check_rule_labels(rules, dataset.train)
    if evaluator is None and config.mode == "evaluator":
        hint = "" if args.save_evaluator or cache else "; --save-evaluator FILE keeps it"
        print(
            f"distilling the evaluator ({config.evaluator.steps} steps; minutes on UMLS-sized "
            f"graphs on a CPU{hint})",
            flush=True,
        )
    explainer = KGExplainer(model, config).fit(
        dataset, evaluator=evaluator, progress=not args.no_progress
    )
    if explainer.evaluator_ is not None and evaluator is None:
        print(f"distilled the evaluator in {explainer.evaluator_.fit_seconds_:.1f} s")
        if cache is not None:
            _write_cache(explainer.evaluator_, cache)
    if explainer.evaluator_ is not None and args.save_evaluator and not args.evaluator:
        print(f"wrote {explainer.evaluator_.save(args.save_evaluator)}")
    if args.triples:
        return _explain_many(explainer, dataset, triples, rules, figures, args)
    (triple,) = triples
    with capped_summary(num_targets=1):  # the cap as one line naming --max-candidates
        explanation = explainer.explain(triple)
    print(explanation.to_text())
    world = _world(dataset.name)
    if world is not None and rules is None:
        _print_ground_truth(world, triple, explanation.triples)
    if rules is not None:
        _print_rule_scores(rules, dataset, triple, explanation.triples)
    out = explanation.plot(Path(args.out or "explanation.png"))
    print(f"wrote {out}")
    if args.json:
        explanation.to_json(args.json)
        print(f"wrote {args.json}")
    return 0


def _check_output_folder(path: str) -> Path:
    """``--out`` with ``--triples``: a folder for the figures (created; not a file)."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise GraphDataError(
            f"--out: with --triples, expected a folder for one figure per target, got the file "
            f"{path!r}; pass a folder path (created if missing)"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise GraphDataError(f"--out: cannot create the folder {path!r} ({err})") from None
    return folder


def _explain_many(
    explainer: Any,
    dataset: KGDataset,
    triples: list[tuple[str, str, str]],
    rules: Sequence[Rule] | None,
    figures: Path | None,
    args: argparse.Namespace,
) -> int:
    """``--triples``: explain every target with one fitted explainer; print, score, write."""
    import time

    from graphdata.atomic import write_text_atomic

    start = time.perf_counter()
    explanations = explainer.explain_all(
        triples, progress=not args.no_progress, workers=args.workers
    )
    seconds = time.perf_counter() - start
    for explanation in explanations:
        print(explanation.to_text())
    print(
        f"explained {len(triples)} targets in {seconds:.1f} s ({seconds / len(triples):.2f} s "
        f"each, {args.workers} worker{'s' if args.workers > 1 else ''})"
    )
    if rules is not None:
        _print_mean_rule_scores(rules, dataset, triples, explanations)
    if figures is not None:
        width = len(str(len(triples) - 1))
        for i, explanation in enumerate(explanations):
            explanation.plot(figures / f"{i:0{width}d}.png")
        print(f"wrote {len(triples)} figures to {figures}")
    if args.json:
        text = json.dumps([e.to_dict() for e in explanations], indent=1, allow_nan=False)
        print(f"wrote {write_text_atomic(args.json, text)}")
    return 0


def _print_mean_rule_scores(
    rules: Sequence[Rule],
    dataset: KGDataset,
    triples: Sequence[tuple[str, str, str]],
    explanations: Sequence[Any],
) -> None:
    """Print the mean P/R/F1 per rule length of many explanations against ``--rules``."""
    from graphdata.rules import score_targets

    table = score_targets(
        {t: e.triples for t, e in zip(triples, explanations)}, rules, dataset.train
    )
    grounded = sum(score is not None for score in table.rows.values())
    print(
        f"ground truth (--rules, {len(rules)} rules): {grounded} of {len(triples)} targets "
        "grounded in train"
    )
    for length, row in sorted(table.by_length.items()):
        print(
            f"  length {length}: {row.count} targets, precision {row.precision:.2f} recall "
            f"{row.recall:.2f} F1 {row.f1:.2f}"
        )


def add_explain_subparser(kg_subparsers: argparse._SubParsersAction) -> None:
    """Register ``explain`` on the subparsers of ``graphlib kg``.

    Args:
        kg_subparsers: The ``graphlib kg`` command's subparsers.

    Examples:
        >>> parser = argparse.ArgumentParser()
        >>> add_explain_subparser(parser.add_subparsers(dest="kg_command"))
        >>> args = parser.parse_args(["explain", "ckpt.pt", "--triple", "a parent b"])
        >>> args.triple, args.max_paths
        ('a parent b', None)
        >>> argv = ["explain", "c.pt", "--triple", "a r b", "--paths", "2"]
        >>> _config(parser.parse_args(argv)).max_paths
        2
    """
    ex = kg_subparsers.add_parser(
        "explain",
        help=_EXPLAIN_HELP,
        description="Distils an evaluator from the checkpoint's model (or loads --evaluator, or "
        "the one cached next to the checkpoint), then grows a path explanation greedily; prints "
        "it and writes a PNG.",
    )
    ex.add_argument("checkpoint", help="a checkpoint.pt written by `graphlib kg train`")
    targets = ex.add_mutually_exclusive_group(required=True)
    targets.add_argument("--triple", help='"head relation tail" labels, space-separated')
    targets.add_argument(
        "--triples",
        help='a file of targets, one "head relation tail" per line, explained with one fitted '
        "explainer",
    )
    from graphdata import cli_types

    ex.add_argument(
        "--workers",
        type=cli_types.integer(1),
        default=1,
        help="with --triples: processes sharing the fitted explainer (default 1)",
    )
    from kg.explain import EvaluatorConfig, ExplainerConfig, RetrainConfig

    _FLAGS["explainer"] = add_config_flags(ex, ExplainerConfig, aliases=_ALIASES)
    _FLAGS["evaluator"] = add_config_flags(
        ex,
        EvaluatorConfig,
        prefix="evaluator-",
        dest_prefix="evaluator_",
        default_notes={
            name: f"--{_ALIASES.get(name, name).replace('_', '-')}" for name in _FOLLOW_EXPLAINER
        },
    )
    _FLAGS["retrain"] = add_config_flags(
        ex, RetrainConfig, prefix="retrain-", dest_prefix="retrain_"
    )
    ex.add_argument("--evaluator", help="reuse a distilled evaluator file")
    ex.add_argument("--save-evaluator", help="write the distilled evaluator to this file")
    ex.add_argument(
        "--no-evaluator-cache",
        action="store_true",
        help="neither load nor write the evaluator cached next to the checkpoint "
        "(evaluator-<hash of model, graph and evaluator flags>.pt)",
    )
    ex.add_argument(
        "--dataset",
        help="folder, registered name, synthetic spec or world (academic, geography, biology, "
        "software, corporate, media, sports, travel, commerce, clinical, legal, energy, "
        "agriculture, maritime, telecom, aviation, publishing, banking, railways, parliament, "
        "construction, ecology, insurance, schools, heritage, wine, transit; NAME:size=N,seed=S) "
        "(default: the one trained on)",
    )
    from graphlib_ml.cli._datasets import add_header_flag, add_on_unknown_flag

    add_on_unknown_flag(ex, checkpoint=True)
    add_header_flag(ex)
    ex.add_argument(
        "--rules",
        help="a rules file (one Horn rule per line, e.g. 'gp(X,Z) <- parent(X,Y), parent(Y,Z)'): "
        "print the explanation's precision/recall/F1 against the best-matching grounding in "
        "train (graphdata.rules)",
    )
    ex.add_argument(
        "--out",
        help="PNG file (default explanation.png); with --triples a folder, one PNG per target "
        "(default: no figures)",
    )
    ex.add_argument("--json", help="also write the explanation to this JSON file")
    ex.add_argument("--device", default="auto", help="auto, cpu or cuda (default auto)")
    ex.add_argument("--no-progress", action="store_true", help="no distillation progress bar")
    ex.set_defaults(func=_explain)
