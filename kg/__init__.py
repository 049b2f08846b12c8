"""kg: knowledge-graph embedding models, training and filtered rank-based evaluation.

The public names are imported on first use (PEP 562, :mod:`graphdata._lazy`): ``import kg``
loads neither torch nor PyG, and ``kg.TransE`` imports :mod:`kg.transe` the first time it is
read. The command line and the demo section live in the application layer
(:mod:`graphlib_ml.cli.kg`, :mod:`graphlib_ml.demo.kg`); nothing here imports them.
"""

from typing import TYPE_CHECKING

from graphdata._lazy import lazy_exports
from graphdata._version import __version__ as __version__

if TYPE_CHECKING:
    from kg.base import KGEModel
    from kg.checkpoint import (
        check_compatible,
        dataset_fingerprint,
        load_checkpoint,
        save_checkpoint,
    )
    from kg.complex import ComplEx
    from kg.conve import ConvE
    from kg.distmult import DistMult
    from kg.distributed import evaluate_sharded
    from kg.evaluation import NonFiniteScoreError, RankMetrics, evaluate
    from kg.losses import (
        bce_loss,
        kvsall_bce_loss,
        margin_ranking_loss,
        nssa_loss,
        one_vs_all_loss,
        softplus_loss,
    )
    from kg.models import DEFAULTS, MODELS, ModelDefaults
    from kg.prediction import Predictions, load_model, predict, predict_tails
    from kg.rescal import RESCAL
    from kg.rotate import RotatE
    from kg.sampling import (
        bernoulli_head_probability,
        bernoulli_negatives,
        false_negative_mask,
        uniform_negatives,
    )
    from kg.training import (
        OPTIMIZERS,
        Trainer,
        TrainingConfig,
        TrainingDivergedError,
        build_model,
        train,
    )
    from kg.transe import TransE
    from kg.tucker import TuckER

__all__ = [
    # models
    "KGEModel",
    "TransE",
    "DistMult",
    "ComplEx",
    "RotatE",
    "TuckER",
    "RESCAL",
    "ConvE",
    "MODELS",
    "DEFAULTS",
    "ModelDefaults",
    # evaluation
    "evaluate",
    "RankMetrics",
    "NonFiniteScoreError",
    "evaluate_sharded",
    # training
    "Trainer",
    "TrainingConfig",
    "TrainingDivergedError",
    "OPTIMIZERS",
    "build_model",
    "train",
    # losses
    "margin_ranking_loss",
    "softplus_loss",
    "bce_loss",
    "nssa_loss",
    "kvsall_bce_loss",
    "one_vs_all_loss",
    # negative sampling
    "bernoulli_head_probability",
    "uniform_negatives",
    "bernoulli_negatives",
    "false_negative_mask",
    # checkpoints and prediction
    "save_checkpoint",
    "load_checkpoint",
    "check_compatible",
    "dataset_fingerprint",
    "load_model",
    "predict",
    "predict_tails",
    "Predictions",
]

#: Submodule -> the public names it defines, imported on first use (PEP 562; graphdata._lazy).
_EXPORTS: dict[str, tuple[str, ...]] = {
    "kg.base": ("KGEModel",),
    "kg.checkpoint": (
        "check_compatible",
        "dataset_fingerprint",
        "load_checkpoint",
        "save_checkpoint",
    ),
    "kg.complex": ("ComplEx",),
    "kg.conve": ("ConvE",),
    "kg.distmult": ("DistMult",),
    "kg.distributed": ("evaluate_sharded",),
    "kg.evaluation": ("RankMetrics", "evaluate", "NonFiniteScoreError"),
    "kg.losses": (
        "bce_loss",
        "kvsall_bce_loss",
        "margin_ranking_loss",
        "nssa_loss",
        "one_vs_all_loss",
        "softplus_loss",
    ),
    "kg.models": ("DEFAULTS", "MODELS", "ModelDefaults"),
    "kg.prediction": ("Predictions", "load_model", "predict", "predict_tails"),
    "kg.rescal": ("RESCAL",),
    "kg.rotate": ("RotatE",),
    "kg.sampling": (
        "bernoulli_head_probability",
        "bernoulli_negatives",
        "false_negative_mask",
        "uniform_negatives",
    ),
    "kg.training": (
        "OPTIMIZERS",
        "Trainer",
        "TrainingConfig",
        "TrainingDivergedError",
        "build_model",
        "train",
    ),
    "kg.transe": ("TransE",),
    "kg.tucker": ("TuckER",),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
