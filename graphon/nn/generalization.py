r"""Trained size generalisation: learn a signal-weighted triangle density at n = 50, test larger.

Levin, Díaz, Ma, Villar, "On Transferring Transferability: Towards a Theory for Size
Generalization", NeurIPS 2025 (yuxinma98/transferring_transferability ``src/.../GNN/``): node
regression of

.. math::
    y_i = \frac{1}{n^2} \sum_{j,k} A_{ij} A_{jk} A_{ki}\, x_i x_j x_k

on "full_random" graphs (:math:`A_{ij} = A_{ji} \sim U[0,1]` i.i.d., diagonal included,
:math:`x_i \sim U[0,1]`), trained at :math:`n = 50` and tested at larger :math:`n`; the median
test MSE over training seeds per size. A size-transferable model's error falls with :math:`n`
(the target concentrates), a non-transferable one's (the normalised 2-IGN) grows.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

from graphdata.dense import DenseGraphBatch
from graphdata.errors import GraphDataError, UnknownLabelError
from graphon._validation import check_int, check_real
from graphon.nn._regression import (
    NodeRegressor,
    Standardized,
    batched_mse,
    check_schedule,
    cosine_lr,
    node_mse,
    subset,
)
from graphon.nn.models import IGN, IWN, MODELS, MPNN

__all__ = [
    "SizeGeneralizationConfig",
    "SizeGeneralizationResult",
    "signal_triangle_density",
    "full_random_graphs",
    "build_regressor",
    "train_regressor",
    "evaluate_mse",
    "size_generalization",
    "LR_MAX",
]

#: The largest ``lr`` a config takes: AdamW's first step (about ``lr`` per weight) overflows a
#: float32 weight above it, which torch reports as a bare RuntimeError.
LR_MAX = 1e37


@dataclass(frozen=True)
class SizeGeneralizationConfig:
    """Configuration of :func:`size_generalization`; defaults follow Levin et al. where stated."""

    train_size: int = 50  # n of the training graphs (Levin et al.: 50)
    train_graphs: int = 5000  # graphs drawn at train_size, validation split included
    val_fraction: float = 0.2  # share of train_graphs held out for model selection (Levin: 0.2)
    test_sizes: tuple[int, ...] = (50, 100, 200, 500, 1000, 2000)  # test n (Levin: no 100)
    test_graphs: int = 1000  # test graphs per size (Levin et al.: 1,000)
    test_nodes: int = 0  # at least this many test nodes per size: more graphs at small n
    models: tuple[str, ...] = ("iwn", "ign", "mpnn")  # keys of graphon.nn.models.MODELS
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)  # trials; the table reports the median over them
    best_of: int = 1  # runs per trial, the lowest validation loss is tested (Levin et al.: 5)
    epochs: int = 500  # Levin et al.: at most 500
    batch_size: int = 128  # Levin et al.: 128
    lr: float = 1e-3  # AdamW learning rate (Levin et al.)
    lr_schedule: str = "constant"  # "constant" (Levin et al.), "cosine" (to lr/100) or "plateau"
    lr_patience: int = 10  # plateau: epochs without validation gain before lr /= 2 (Levin: 10)
    patience: int | None = None  # stop after this many epochs without validation gain; None: off
    weight_decay: float = 0.1  # AdamW weight decay (Levin et al.)
    standardize_target: bool = False  # fit (y - mean) / std of the training targets (not Levin)
    hidden_channels: int = 16  # width of every model
    num_layers: int = 3  # equivariant layers incl. the node readout (MPNN: convolutions)
    mlp_hidden: int | None = 32  # node-wise MLP head after the readout (products of features)
    activation: str = "relu"  # Levin et al. use ReLU
    eval_entries: int = 2**23  # graphs per evaluation pass: max(1, eval_entries // n^2)
    dtype: torch.dtype = torch.float32

    def __post_init__(self) -> None:
        """Validate every numeric field at construction (argument, expected, got, fix)."""
        _check_config(self)


def _check_sizes(name: str, values: object, minimum: int) -> None:
    if (
        not isinstance(values, (tuple, list))
        or not values
        or any(isinstance(v, bool) or not isinstance(v, int) or v < minimum for v in values)
    ):
        raise GraphDataError(
            f"{name}: expected a non-empty tuple of ints >= {minimum}, got {values!r}; pass e.g. "
            f"{name.split('.')[-1]}=({max(minimum, 1)},)"
        )


def _check_config(config: SizeGeneralizationConfig) -> None:
    check_int("config.train_size", config.train_size, 1)
    check_int("config.train_graphs", config.train_graphs, 1)
    check_real(
        "config.val_fraction",
        config.val_fraction,
        low=0.0,
        high=1.0,
        high_open=True,
        fix="pass a fraction in [0, 1), e.g. 0.2",
    )
    _check_sizes("config.test_sizes", config.test_sizes, 1)
    check_int("config.test_graphs", config.test_graphs, 1)
    check_int("config.test_nodes", config.test_nodes, 0)
    _check_sizes("config.seeds", config.seeds, 0)
    check_int("config.best_of", config.best_of, 1)
    check_int("config.epochs", config.epochs, 1)
    check_int("config.batch_size", config.batch_size, 1)
    check_real(
        "config.lr",
        config.lr,
        low=0.0,
        low_open=True,
        high=LR_MAX,  # AdamW's float32 step overflowed past it: torch's bare RuntimeError
        fix="pass a positive learning rate, e.g. 1e-3",
    )
    check_schedule(config.lr_schedule)
    check_int("config.lr_patience", config.lr_patience, 0)
    if config.patience is not None:
        check_int("config.patience", config.patience, 1)
    check_real(
        "config.weight_decay",
        config.weight_decay,
        low=0.0,
        fix="pass a weight decay >= 0, e.g. 0.1",
    )
    if not isinstance(config.standardize_target, bool):
        raise GraphDataError(
            f"config.standardize_target: expected True or False, got {config.standardize_target!r}"
        )
    check_int("config.hidden_channels", config.hidden_channels, 1)
    check_int("config.num_layers", config.num_layers, 1)
    if config.mlp_hidden is not None:
        check_int("config.mlp_hidden", config.mlp_hidden, 1)
    check_int("config.eval_entries", config.eval_entries, 1)
    if not isinstance(config.dtype, torch.dtype) or not config.dtype.is_floating_point:
        raise GraphDataError(
            f"config.dtype: expected a floating torch dtype, got {config.dtype!r}; pass "
            "torch.float32 or torch.float64"
        )


@dataclass
class SizeGeneralizationResult:
    """Test MSE per model, seed and size.

    Attributes:
        config: The configuration.
        mse: Model key -> ``[len(seeds), len(test_sizes)]`` mean squared errors per node.
        train_seconds: Model key -> total training wall time over seeds.
        final_loss: Model key -> last-epoch training loss per seed.
        val_loss: Model key -> validation MSE of the tested run per seed (None without a
            validation split).
    """

    config: SizeGeneralizationConfig
    mse: dict[str, Tensor] = field(default_factory=dict)
    train_seconds: dict[str, float] = field(default_factory=dict)
    final_loss: dict[str, list[float]] = field(default_factory=dict)
    val_loss: dict[str, list[float | None]] = field(default_factory=dict)

    def median(self) -> dict[str, Tensor]:
        """Median test MSE over seeds per model, ``[len(test_sizes)]``.

        NumPy's convention (as Levin et al.'s ``np.median``): the mean of the two middle values
        for an even number of seeds (``torch.median`` would return the lower one).
        """
        return {name: torch.quantile(mse, 0.5, dim=0) for name, mse in self.mse.items()}

    def table(self) -> str:
        """Markdown: median test MSE per model (rows) and test size (columns)."""
        sizes = self.config.test_sizes
        head = "| model | " + " | ".join(f"n={n}" for n in sizes) + " | train s |"
        lines = [head, "|---" * (len(sizes) + 2) + "|"]
        for name, med in self.median().items():
            cells = " | ".join(f"{float(v):.3g}" for v in med)
            lines.append(f"| {name} | {cells} | {self.train_seconds[name]:.0f} |")
        return "\n".join(lines)


def signal_triangle_density(adj: Tensor, x: Tensor, mask: Tensor | None = None) -> Tensor:
    r"""Node-rooted signal-weighted triangle densities (Levin et al.'s target).

    .. math::
        y_i = \frac{x_i}{n^2} \sum_{j,k} A_{ij} A_{jk} A_{ki}\, x_j x_k
            = \frac{x_i}{n^2} \sum_j M_{ij} (M A)_{ji}, \qquad M_{ij} = A_{ij} x_j,

    one :math:`O(n^3)` matrix product; :math:`n` is each graph's node count.

    Args:
        adj: Adjacency ``[B, N, N]`` (padding zero).
        x: One signal channel ``[B, N]`` or ``[B, N, 1]``.
        mask: Real nodes ``[B, N]``; default all.

    Returns:
        ``[B, N]``, zero on padding.

    Examples:
        >>> signal_triangle_density(torch.ones(1, 3, 3), torch.ones(1, 3)).tolist()
        [[1.0, 1.0, 1.0]]
    """
    x = x.squeeze(-1) if x.dim() == 3 else x
    if adj.dim() != 3 or x.shape != adj.shape[:2]:
        raise GraphDataError(
            f"adj, x: expected [B, N, N] and [B, N], got {tuple(adj.shape)} and {tuple(x.shape)}"
        )
    m = adj * x.unsqueeze(1)  # [B, N, N]: A_ij x_j
    closed = (m * (m @ adj).mT).sum(-1)  # [B, N]: sum_j M_ij (MA)_ji
    if mask is None:
        return x * closed / adj.size(-1) ** 2
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool or mask.shape != adj.shape[:2]:
        got = (tuple(mask.shape), mask.dtype) if isinstance(mask, Tensor) else type(mask)
        raise GraphDataError(
            f"mask: expected a bool tensor [B, N] = {list(adj.shape[:2])} (True = real node), "
            f"got {got}; pass the batch's mask or None"
        )
    if not bool(mask.any(-1).all()):
        empty = torch.nonzero(~mask.any(-1)).flatten()[:5].tolist()
        raise GraphDataError(
            f"mask: graphs {empty} have no real node (an all-False row), so their densities are "
            "0/0; drop those graphs from the batch"
        )
    n = mask.sum(-1).to(adj.dtype)  # [B]
    return x * closed / (n**2).unsqueeze(-1)


def full_random_graphs(
    n: int, num_graphs: int, *, generator: torch.Generator, dtype: torch.dtype = torch.float32
) -> tuple[DenseGraphBatch, Tensor]:
    r"""Levin et al.'s "full_random" graphs and their triangle targets.

    .. math::
        A_{ij} = A_{ji} \sim U[0, 1]\ (i \le j), \qquad x_i \sim U[0, 1], \qquad
        y_i = \frac{1}{n^2} \sum_{j,k} A_{ij} A_{jk} A_{ki}\, x_i x_j x_k.

    Args:
        n: Nodes per graph.
        num_graphs: Graphs.
        generator: Generator (its device is used).
        dtype: Floating dtype. Default ``torch.float32``.

    Returns:
        The batch (``x`` ``[G, n, 1]``) and the targets ``[G, n]``.
    """
    check_int("n", n, 1)
    check_int("num_graphs", num_graphs, 1)
    dev = generator.device
    upper = torch.rand(num_graphs, n, n, generator=generator, device=dev, dtype=dtype).triu()
    adj = upper + upper.triu(1).mT  # [G, n, n], symmetric with a random diagonal
    x = torch.rand(num_graphs, n, 1, generator=generator, device=dev, dtype=dtype)
    mask = torch.ones(num_graphs, n, dtype=torch.bool, device=dev)
    return DenseGraphBatch(adj, x, mask), signal_triangle_density(adj, x)


def _check_trained(
    model: nn.Module, loss: float, epoch: int, config: SizeGeneralizationConfig
) -> None:
    """Raise if the epoch's loss or any parameter or buffer is NaN or inf (the fit diverged)."""
    bad = [name for name, t in model.state_dict().items() if not bool(torch.isfinite(t).all())]
    if math.isfinite(loss) and not bad:
        return
    raise GraphDataError(
        f"config.lr: training diverged at epoch {epoch + 1} (loss {loss:.4g}, non-finite "
        f"tensors {bad[:3]}); lower lr (now {config.lr:g}) or raise weight_decay"
    )


def build_regressor(name: str, config: SizeGeneralizationConfig) -> NodeRegressor:
    """A node-regression model: IWN, normalised IGN (diagonal signal) or MPNN with root term.

    Args:
        name: ``"iwn"``, ``"ign"`` or ``"mpnn"``.
        config: Width, depth, head and activation.

    Returns:
        The model, ``forward(batch) -> [B, N, 1]``.
    """
    common: dict[str, Any] = dict(  # keyword arguments of all three constructors
        num_layers=config.num_layers,
        activation=config.activation,
        task="node",
        mlp_hidden=config.mlp_hidden,
    )
    builders: dict[str, Callable[[], NodeRegressor]] = {
        "iwn": lambda: IWN(1, config.hidden_channels, 1, **common),
        "ign": lambda: IGN(1, config.hidden_channels, 1, normalize=True, **common),
        # Levin et al.'s "simple GNN" keeps the root term: y_i needs x_i itself.
        "mpnn": lambda: MPNN(1, config.hidden_channels, 1, root_weight=True, **common),
    }
    if name not in builders:
        raise UnknownLabelError("model", name, builders, argument="models")
    return builders[name]()


def train_regressor(
    model: nn.Module,
    batch: DenseGraphBatch,
    y: Tensor,
    config: SizeGeneralizationConfig,
    *,
    generator: torch.Generator,
    log: Callable[[int, float], None] | None = None,
    val: tuple[DenseGraphBatch, Tensor] | None = None,
) -> list[float]:
    r"""Fit ``model`` by AdamW on the node mean squared error.

    .. math::
        \mathcal{L} = \frac{1}{\sum_b n_b} \sum_{b} \sum_{i \le n_b} (\hat y_{bi} - y_{bi})^2,

    minibatches of ``config.batch_size`` graphs in a fresh order every epoch, learning rate
    ``config.lr`` held (``"constant"``), cosine-decayed per epoch to ``lr / 100``
    (``"cosine"``) or halved after ``config.lr_patience`` epochs without a lower validation
    loss (``"plateau"``). With ``val``, the parameters of the epoch with the lowest validation
    MSE are restored at the end (Levin et al.'s best checkpoint), and training stops after
    ``config.patience`` epochs without improvement when that is set.

    Args:
        model: A node-task model on the batch's device.
        batch: Training graphs.
        y: Targets ``[G, N]``.
        config: Epochs, batch size, learning rate and its schedule, weight decay, patience.
        generator: Shuffles the minibatches (on the batch's device).
        log: Called as ``log(epoch, mean_loss)`` after every epoch. Default None.
        val: Validation graphs and targets for model selection. Default None (the last epoch
            is kept; ``"plateau"`` then watches the training loss).

    Returns:
        The mean training loss per epoch.
    """
    schedule = check_schedule(config.lr_schedule)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    plateau = None
    if schedule == "plateau":
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(
            opt, factor=0.5, patience=config.lr_patience
        )
    history: list[float] = []
    best, best_state, since = math.inf, None, 0
    for epoch in range(config.epochs):
        if schedule == "cosine":
            for group in opt.param_groups:
                group["lr"] = cosine_lr(config.lr, epoch, config.epochs)
        model.train()
        order = torch.randperm(len(batch), generator=generator, device=generator.device)
        total, count = 0.0, 0
        for start in range(0, len(batch), config.batch_size):
            idx = order[start : start + config.batch_size].to(batch.device)
            sub = subset(batch, idx)
            loss = node_mse(model(sub), y[idx], sub.mask)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
            count += len(idx)
        history.append(total / count)
        _check_trained(model, history[-1], epoch, config)
        if log is not None:
            log(len(history), history[-1])
        watched = history[-1] if val is None else batched_mse(model, *val, config.batch_size)
        if not math.isfinite(watched):
            raise GraphDataError(
                f"config.lr: the validation MSE became {watched} at epoch {epoch + 1} (the weights "
                f"overflow on the validation graphs); lower lr (now {config.lr:g})"
            )
        if plateau is not None:
            plateau.step(watched)
        if val is None:
            continue
        if watched < best:
            best, since = watched, 0
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
        else:
            since += 1
            if config.patience is not None and since >= config.patience:
                break
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return history


@torch.no_grad()
def evaluate_mse(
    model: nn.Module,
    n: int,
    num_graphs: int,
    config: SizeGeneralizationConfig,
    *,
    generator: torch.Generator,
) -> float:
    """Node MSE of ``model`` on ``num_graphs`` fresh full_random graphs of ``n`` nodes.

    Graphs are drawn (and scored) in chunks of ``max(1, config.eval_entries // n**2)``.

    Returns:
        The mean squared error per node, summed in float64 (a float32 square of an error past
        about 1.8e19 would overflow to infinity).

    Raises:
        GraphDataError: Where the model predicts NaN or infinity at this size (it diverged), or
            the mean is not finite: a non-finite MSE is never a result.
    """
    model.eval()
    chunk = max(1, config.eval_entries // (n * n))
    total, count = 0.0, 0
    for start in range(0, num_graphs, chunk):
        size = min(chunk, num_graphs - start)
        batch, y = full_random_graphs(n, size, generator=generator, dtype=config.dtype)
        pred = model(batch).squeeze(-1)
        if not bool(torch.isfinite(pred).all()):
            raise GraphDataError(
                f"model: its predictions on {n}-node graphs hold NaN or infinity (it diverged "
                "or overflows at this size); lower lr or the test sizes"
            )
        total += float(((pred.double() - y.double()) ** 2).sum())
        count += pred.numel()
    if not math.isfinite(total / count):
        raise GraphDataError(
            f"model: its mean squared error on {n}-node graphs overflows float64 (predictions "
            "past 1e154); it diverged: lower lr"
        )
    return total / count


def size_generalization(
    config: SizeGeneralizationConfig = SizeGeneralizationConfig(),
    *,
    seed: int = 0,
    device: torch.device | str = "cpu",
    log: Callable[[str], None] | None = None,
) -> SizeGeneralizationResult:
    r"""Train each model at ``train_size`` for every seed, test at every size; median MSE.

    .. math::
        \mathrm{MSE}_n = \frac{1}{G\,n} \sum_{g=1}^{G} \sum_{i=1}^{n}
        \big(\hat y_i(G_g) - y_i(G_g)\big)^2, \qquad
        \text{reported: } \operatorname{median}_{\text{seeds}} \mathrm{MSE}_n.

    The training graphs are drawn once from ``seed``, the last ``val_fraction`` of them held
    out for validation; each test set (``max(test_graphs, ceil(test_nodes / n))`` graphs) once
    per size, shared by all models and trials. Trial ``s`` trains ``best_of`` runs (seeds
    ``(s * best_of + r) mod 2**64``: initialisation and shuffling), each restored to its best
    validation epoch, and tests the one with the lowest validation MSE (Levin et al.: the
    best of 5 per trial). With ``standardize_target`` each network fits the training targets
    standardised by their mean and standard deviation
    (:math:`\hat y = \mu + \sigma g`); errors are always reported in the original units.

    Args:
        config: The configuration. Default: Levin et al.'s full setting (hours on a CPU).
        seed: Seeds the data sets (size ``n``'s test set: ``(seed + 7919 n) mod 2**64``), an
            int in ``[0, 2**64 - 1]``. Default ``0``.
        device: Where to train. Default ``"cpu"``.
        log: Called with one progress line per run (e.g. ``print``). Default silent.

    Returns:
        A :class:`SizeGeneralizationResult`.
    """
    for name in config.models:
        if name not in MODELS:
            raise UnknownLabelError("model", name, MODELS, argument="config.models")
    if not config.seeds or not config.test_sizes:
        raise GraphDataError("config.seeds, config.test_sizes: expected non-empty tuples")
    check_schedule(config.lr_schedule)
    if not 0.0 <= config.val_fraction < 1.0 or config.best_of < 1:
        raise GraphDataError(
            f"config.val_fraction, config.best_of: expected a fraction in [0, 1) and a positive "
            f"int, got {config.val_fraction!r} and {config.best_of!r}"
        )
    device = torch.device(device)
    data_gen = torch.Generator(device=device).manual_seed(seed)
    graphs, targets = full_random_graphs(
        config.train_size, config.train_graphs, generator=data_gen, dtype=config.dtype
    )
    # The graphs are i.i.d., so the last val_fraction of them is a random validation split.
    n_val = int(round(config.val_fraction * config.train_graphs))
    n_train = config.train_graphs - n_val
    train_idx = torch.arange(n_train, device=device)
    train, y = subset(graphs, train_idx), targets[:n_train]
    val = None
    if n_val:
        val_idx = torch.arange(n_train, config.train_graphs, device=device)
        val = (subset(graphs, val_idx), targets[n_train:])
    result = SizeGeneralizationResult(config)
    for name in config.models:
        rows, losses, val_losses, seconds = [], [], [], 0.0
        for trial in config.seeds:
            chosen, chosen_val, chosen_history = None, math.inf, []
            for run in range(config.best_of):
                # Levin et al.: trial * 5 + i; modulo 2**64, torch's seed range.
                run_seed = (trial * config.best_of + run) % 2**64
                gen = torch.Generator(device=device).manual_seed(run_seed)
                with torch.random.fork_rng(devices=[]):  # redrawn from gen: leave the caller's RNG
                    regressor = build_regressor(name, config)
                model: NodeRegressor | Standardized = regressor
                if config.standardize_target:
                    model = Standardized(regressor, float(y.mean()), float(y.std()))
                model = model.to(device=device, dtype=config.dtype)
                model.reset_parameters(generator=gen)
                start = time.perf_counter()
                history = train_regressor(model, train, y, config, generator=gen, val=val)
                seconds += time.perf_counter() - start
                score = math.nan if val is None else batched_mse(model, *val, config.batch_size)
                if chosen is None or score < chosen_val:
                    chosen, chosen_val, chosen_history = model, score, history
            assert chosen is not None  # best_of >= 1 runs, checked above
            row = []
            for n in config.test_sizes:
                test_gen = torch.Generator(device=device).manual_seed((seed + 7919 * n) % 2**64)
                num_test = max(config.test_graphs, -(-config.test_nodes // n))  # ceil
                row.append(evaluate_mse(chosen, n, num_test, config, generator=test_gen))
            rows.append(row)
            losses.append(chosen_history[-1])
            val_losses.append(None if val is None else chosen_val)
            if log is not None:
                cells = ", ".join(f"n={n}: {v:.2e}" for n, v in zip(config.test_sizes, row))
                vtext = "" if val is None else f", val {chosen_val:.2e}"
                last = chosen_history[-1]
                log(f"{name} seed {trial}: train loss {last:.2e}{vtext}; test {cells}")
        result.mse[name] = torch.tensor(rows, dtype=torch.float64)
        result.final_loss[name] = losses
        result.val_loss[name] = val_losses
        result.train_seconds[name] = seconds
    return result
