"""Experiment tracking: one small protocol, three sinks (JSON lines, TensorBoard, MLflow).

A :class:`Tracker` receives the parameters of a run once (:meth:`Tracker.log_params`) and a dict
of scalar metrics per step (:meth:`Tracker.log_metrics`), and is closed at the end. The same
protocol serves every fit loop: :meth:`kg.training.Trainer.fit` logs the loss and validation
metrics per epoch, :meth:`spatial.celcomen.Celcomen.fit` its loss per epoch, and
:func:`kg.tune.tune` one step per trial. It lives in the shared layer so that ``kg`` and
``spatial`` use it without importing each other.

* :class:`JsonlTracker`: one JSON object per step, ``{"<step_key>": step, **metrics}``, appended
  to a file, with the parameters in a JSON file next to it. With ``step_key="epoch"`` its lines
  are byte for byte those of ``TrainingConfig.log_path`` (``json.dumps`` of the same dict).
* :class:`TensorBoardTracker`: :class:`torch.utils.tensorboard.SummaryWriter` event files (one
  scalar per metric, the parameters as a text summary); needs the ``tensorboard`` package, the
  ``tensorboard`` extra.
* :class:`MlflowTracker`: an MLflow run through :class:`mlflow.tracking.MlflowClient` (no
  global active run); by default a local SQLite store ``mlflow.db`` in the run folder, since
  MLflow 3 refuses the plain ``./mlruns`` file store unless ``MLFLOW_ALLOW_FILE_STORE=true``
  (a ``file:`` URI still works where that is set, and on MLflow 2). Needs the ``mlflow`` extra.

**Resuming.** A killed run may have logged steps past its last checkpoint; the resumed run
logs them again. With ``purge=True`` (the default) the first step a JSON-lines or TensorBoard
tracker logs removes what an earlier run logged in the same place from that step on (the
JSON-lines file is rewritten atomically; TensorBoard gets ``SummaryWriter(purge_step=step)``),
so a resumed run reads as an uninterrupted one and a fresh run starting at step 1 replaces the
old log. An MLflow tracker starts a new run each time (MLflow keeps every value logged).

The optional packages are imported only when their tracker is built; a missing one raises
:class:`ImportError` whose note says which extra to install (``pip install
'graphlib-ml[tensorboard]'``), which ``graphlib`` prints as one line.
"""

from __future__ import annotations

import abc
import importlib
import json
import math
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType, TracebackType
from typing import Any, Protocol, runtime_checkable

from graphdata.atomic import write_text_atomic
from graphdata.errors import GraphDataError

__all__ = [
    "TRACKERS",
    "Tracker",
    "JsonlTracker",
    "TensorBoardTracker",
    "MlflowTracker",
    "make_tracker",
]

#: Tracker names (``--tracker``): JSON lines (no extra), TensorBoard and MLflow (extras).
TRACKERS = ("jsonl", "tensorboard", "mlflow")
#: Tracker name -> (module imported lazily, extra of graphlib-ml that installs it).
_EXTRAS = {"tensorboard": ("tensorboard", "tensorboard"), "mlflow": ("mlflow", "mlflow")}


@runtime_checkable
class Tracker(Protocol):
    """What a fit loop logs to: parameters once, scalar metrics per step, then ``close``."""

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Record the run's parameters (a flat dict of JSON-ready values)."""

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        """Record scalar ``metrics`` at ``step`` (an epoch, a trial number)."""

    def close(self) -> None:
        """Flush and release the sink; further calls are not allowed."""


class _Closing(abc.ABC):
    """``with tracker: ...`` closes the tracker at the end."""

    @abc.abstractmethod
    def close(self) -> None:
        """Flush and release the sink (each tracker says how)."""

    def __enter__(self) -> _Closing:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _require(name: str) -> ModuleType:
    """Import the optional package of tracker ``name``, or say which extra installs it."""
    module, extra = _EXTRAS[name]
    try:
        return importlib.import_module(module)
    except ImportError as err:
        missing = ImportError(
            f"the {name!r} tracker needs the {module!r} package, which is not installed ({err})",
            name=module,
        )
        _add_note(missing, f"install the extra: pip install 'graphlib-ml[{extra}]'")
        raise missing from err


def _add_note(err: BaseException, note: str) -> None:
    """``err.add_note(note)``; on Python 3.10 the ``__notes__`` list it would set."""
    if sys.version_info >= (3, 11):
        err.add_note(note)
    else:
        err.__notes__ = [*getattr(err, "__notes__", []), note]  # type: ignore[attr-defined]


def _check_step(step: Any) -> int:
    if isinstance(step, bool) or not isinstance(step, int) or step < 0:
        raise GraphDataError(f"step: expected an int >= 0, got {step!r}; pass the epoch or trial")
    return step


def _check_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    """Refuse a metric that is not a real number (NaN and inf are numbers and pass)."""
    out: dict[str, float] = {}
    for key, value in metrics.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise GraphDataError(
                f"metrics[{key!r}]: expected a real number, got {value!r}; log strings and "
                "other values with log_params"
            )
        out[str(key)] = value
    return out


class JsonlTracker(_Closing):
    r"""Append one JSON object per step to ``path``: ``{step_key: step, **metrics}``.

    The line is ``json.dumps`` of that dict plus ``"\n"``, the format of
    ``TrainingConfig.log_path``: with ``step_key="epoch"`` and the trainer's metrics the file
    is byte-identical to ``metrics.jsonl``. Parameters are written atomically, as indented
    JSON, to ``params_path``.

    Args:
        path: The JSON-lines file (created with its folder; appended to).
        step_key: The key holding the step. Default ``"step"``.
        params_path: Where :meth:`log_params` writes; default ``path`` with the suffix
            ``.params.json`` (``metrics.jsonl`` -> ``metrics.params.json``).
        purge: With True (default), the first :meth:`log_metrics` call removes the lines of
            ``path`` whose step is at or past its step (a resumed or restarted run replaces
            what an earlier one logged there); False only appends.

    Examples:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> with JsonlTracker(f"{folder}/m.jsonl", step_key="epoch") as tracker:
        ...     tracker.log_metrics({"loss": 0.5}, step=1)
        >>> open(f"{folder}/m.jsonl").read()
        '{"epoch": 1, "loss": 0.5}\n'
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        step_key: str = "step",
        params_path: str | os.PathLike[str] | None = None,
        purge: bool = True,
    ) -> None:
        self.path = Path(path)
        self.step_key = step_key
        self.params_path = (
            Path(params_path)
            if params_path is not None
            else self.path.with_name(self.path.stem + ".params.json")
        )
        self._purge = purge
        self._closed = False

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Write ``params`` to :attr:`params_path` (atomically, replacing an older file)."""
        self._check_open()
        self.params_path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.params_path, json.dumps(dict(params), indent=1, default=str))

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        """Append ``{step_key: step, **metrics}`` as one line."""
        self._check_open()
        record = {self.step_key: _check_step(step), **_check_metrics(metrics)}
        if self._purge:
            self._purge = False
            self._drop_from(step)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a") as handle:
            handle.write(json.dumps(record) + "\n")

    def close(self) -> None:
        """Nothing stays open between writes; later calls raise."""
        self._closed = True

    def _drop_from(self, step: int) -> None:
        """Rewrite the file without its lines at ``step`` or later (atomic; kept if none)."""
        if not self.path.is_file():
            return
        lines = self.path.read_text().splitlines(keepends=True)
        kept = [line for line in lines if _step_of(line, self.step_key) < step]
        if len(kept) != len(lines):
            write_text_atomic(self.path, "".join(kept))

    def _check_open(self) -> None:
        if self._closed:
            raise GraphDataError(f"tracker: {self.path} was closed; make a new JsonlTracker")


def _step_of(line: str, key: str) -> float:
    """The step of one JSON line (``inf`` for a line that has none, so purging drops it)."""
    try:
        value = json.loads(line).get(key)
    except (ValueError, AttributeError):
        return math.inf
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else math.inf


class TensorBoardTracker(_Closing):
    """Write TensorBoard event files in ``log_dir``: one scalar per metric and step.

    Uses :class:`torch.utils.tensorboard.SummaryWriter` (it needs the ``tensorboard``
    package: ``pip install 'graphlib-ml[tensorboard]'``). Parameters become one text summary,
    a Markdown table, tag ``"params"``. Event values are float32, as TensorBoard stores them.

    Args:
        log_dir: The folder of the event files (created).
        purge: With True (default) the writer is opened at the first step logged with
            ``purge_step=step``, so events an earlier run wrote at that step or later are
            hidden (TensorBoard's own handling of a restarted run).

    Raises:
        ImportError: Without the ``tensorboard`` package (the note names the extra).
    """

    def __init__(self, log_dir: str | os.PathLike[str], *, purge: bool = True) -> None:
        _require("tensorboard")
        from torch.utils.tensorboard import SummaryWriter

        self.log_dir = Path(log_dir)
        self._writer_cls = SummaryWriter
        self._writer: Any = None
        self._purge = purge
        self._params: dict[str, Any] | None = None
        self._closed = False

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Record ``params`` as a text summary (written with the first step, or at close)."""
        self._check_open()
        self._params = dict(params)

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        """Add one scalar per metric at ``step``."""
        self._check_open()
        values = _check_metrics(metrics)
        writer = self._open(_check_step(step))
        for key, value in values.items():
            writer.add_scalar(key, value, global_step=step)

    def close(self) -> None:
        """Flush the event file and close the writer."""
        if self._closed:
            return
        if self._writer is None and self._params is not None:
            self._open(0)
        if self._writer is not None:
            self._writer.close()
        self._closed = True

    def _open(self, step: int) -> Any:
        if self._writer is None:
            purge_step = step if self._purge else None
            self._writer = self._writer_cls(str(self.log_dir), purge_step=purge_step)
            if self._params is not None:
                self._writer.add_text("params", _markdown_table(self._params), global_step=step)
        return self._writer

    def _check_open(self) -> None:
        if self._closed:
            raise GraphDataError(f"tracker: {self.log_dir} was closed; make a new tracker")


def _markdown_table(params: Mapping[str, Any]) -> str:
    rows = [f"| {key} | {value!r} |" for key, value in params.items()]
    return "\n".join(["| parameter | value |", "|---|---|", *rows])


class MlflowTracker(_Closing):
    """Log one MLflow run: parameters with ``log_batch``, metrics with their step.

    Everything goes through an explicit :class:`mlflow.tracking.MlflowClient` on
    ``tracking_uri``, never MLflow's global active run, so two trackers never mix. The
    experiment is created when missing (with ``artifact_location``); the run ends
    ``FINISHED`` at :meth:`close` (``FAILED`` when closed by ``with`` after an exception).
    MLflow stores parameters as strings (``repr`` of a non-string value) and keeps every value
    logged at a step.

    Args:
        tracking_uri: An MLflow tracking URI, e.g. ``"sqlite:////abs/run/mlflow.db"`` (what
            :func:`make_tracker` uses), ``"file:/abs/mlruns"`` or a server's ``http://`` URL.
        experiment: The experiment name. Default ``"graphlib"``.
        run_name: The run's name; None lets MLflow pick one.
        artifact_location: Artifact root of a newly created experiment (a ``file:`` URI); None
            leaves MLflow's default.

    Raises:
        ImportError: Without the ``mlflow`` package (the note names the extra).
    """

    def __init__(
        self,
        tracking_uri: str,
        *,
        experiment: str = "graphlib",
        run_name: str | None = None,
        artifact_location: str | None = None,
    ) -> None:
        _require("mlflow")
        # Through importlib: mypy then needs no mlflow stubs where the extra is not installed.
        self._entities: Any = importlib.import_module("mlflow.entities")
        client_module: Any = importlib.import_module("mlflow.tracking")
        self.tracking_uri = tracking_uri
        self.client: Any = client_module.MlflowClient(tracking_uri=tracking_uri)
        found = self.client.get_experiment_by_name(experiment)
        experiment_id = (
            found.experiment_id
            if found is not None
            else self.client.create_experiment(experiment, artifact_location=artifact_location)
        )
        #: The MLflow run id (read it back with ``MlflowClient(tracking_uri).get_run``).
        self.run_id: str = self.client.create_run(experiment_id, run_name=run_name).info.run_id
        self._closed = False

    def log_params(self, params: Mapping[str, Any]) -> None:
        """Log ``params`` (values as strings: the string itself, else its ``repr``)."""
        self._check_open()
        entries = [
            self._entities.Param(str(k), v if isinstance(v, str) else repr(v))
            for k, v in params.items()
        ]
        self.client.log_batch(self.run_id, params=entries)

    def log_metrics(self, metrics: Mapping[str, float], step: int) -> None:
        """Log each metric at ``step`` (one ``log_batch`` call, one timestamp)."""
        self._check_open()
        values = _check_metrics(metrics)
        now = int(time.time() * 1000)
        entries = [
            self._entities.Metric(k, float(v), now, _check_step(step)) for k, v in values.items()
        ]
        self.client.log_batch(self.run_id, metrics=entries)

    def close(self, status: str = "FINISHED") -> None:
        """End the run with ``status`` (``"FINISHED"``, or ``"FAILED"``, ``"KILLED"``)."""
        if not self._closed:
            self.client.set_terminated(self.run_id, status=status)
            self._closed = True

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close("FINISHED" if kind is None else "FAILED")

    def _check_open(self) -> None:
        if self._closed:
            raise GraphDataError(f"tracker: MLflow run {self.run_id} was closed; make a new one")


def make_tracker(
    name: str,
    folder: str | os.PathLike[str],
    *,
    tracking_uri: str | None = None,
    experiment: str = "graphlib",
    run_name: str | None = None,
    step_key: str = "step",
) -> JsonlTracker | TensorBoardTracker | MlflowTracker:
    """The tracker ``name`` writing into run folder ``folder`` (what ``--tracker`` builds).

    * ``"jsonl"``: ``folder/metrics.jsonl`` and ``folder/params.json``;
    * ``"tensorboard"``: event files in ``folder/tensorboard/``
      (``tensorboard --logdir folder/tensorboard``);
    * ``"mlflow"``: ``tracking_uri``, default the SQLite store ``folder/mlflow.db`` with
      artifacts in ``folder/mlartifacts`` (``mlflow ui --backend-store-uri
      sqlite:///folder/mlflow.db``).

    Args:
        name: One of :data:`TRACKERS`.
        folder: The run folder (created when missing).
        tracking_uri: MLflow only: another tracking URI (a server, a ``file:`` store).
        experiment: MLflow only: the experiment name. Default ``"graphlib"``.
        run_name: MLflow only: the run name.
        step_key: JSON lines only: the key holding the step (``"epoch"`` for epochs).

    Returns:
        The tracker; close it (or use ``with``) when the run ends.

    Raises:
        GraphDataError: On an unknown name, or ``tracking_uri`` with another tracker.
        ImportError: When the tracker's optional package is missing (the note names the extra).

    Examples:
        >>> import tempfile
        >>> tracker = make_tracker("jsonl", tempfile.mkdtemp())
        >>> type(tracker).__name__, tracker.path.name, tracker.params_path.name
        ('JsonlTracker', 'metrics.jsonl', 'params.json')
    """
    if name not in TRACKERS:
        raise GraphDataError(f"tracker: expected one of {TRACKERS}, got {name!r}")
    if tracking_uri is not None and name != "mlflow":
        raise GraphDataError(
            f"tracking_uri: only the 'mlflow' tracker has one, got it with tracker {name!r}; "
            "drop --tracking-uri or pass --tracker mlflow"
        )
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    if name == "jsonl":
        return JsonlTracker(
            root / "metrics.jsonl", step_key=step_key, params_path=root / "params.json"
        )
    if name == "tensorboard":
        return TensorBoardTracker(root / "tensorboard")
    uri = tracking_uri or f"sqlite:///{(root / 'mlflow.db').resolve()}"
    return MlflowTracker(
        uri,
        experiment=experiment,
        run_name=run_name,
        artifact_location=(root / "mlartifacts").resolve().as_uri() if not tracking_uri else None,
    )
