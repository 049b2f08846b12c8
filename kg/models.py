"""The model table: a visible name -> class dict, and tuned defaults per model.

:data:`MODELS` is the only place a model name is resolved (CLI flags, checkpoints:
``MODELS[name](**config)``). :data:`DEFAULTS` holds, per model, the hyperparameters a newcomer
gets without flags; they were checked on UMLS against PyKEEN 1.11.1 run on the same CPU (the
numbers at :data:`DEFAULTS`) and are a starting point for other graphs, not a tuned result for
them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kg.base import KGEModel
from kg.complex import ComplEx
from kg.conve import ConvE
from kg.distmult import DistMult
from kg.rescal import RESCAL
from kg.rotate import RotatE
from kg.transe import TransE
from kg.tucker import TuckER

__all__ = ["MODELS", "DEFAULTS", "DEFAULT_MODEL", "ModelDefaults"]

#: Visible name -> model class (the name is also each class's ``name`` attribute).
MODELS: dict[str, type[KGEModel]] = {
    "transe": TransE,
    "distmult": DistMult,
    "complex": ComplEx,
    "rotate": RotatE,
    "tucker": TuckER,
    "rescal": RESCAL,
    "conve": ConvE,
}


@dataclass(frozen=True)
class ModelDefaults:
    """Default model and training hyperparameters of one model.

    Regimes and losses are those of :data:`kg.config.REGIMES` and :mod:`kg.losses`.
    """

    #: Embedding size passed as ``dim`` (complex coordinates for ComplEx and RotatE).
    dim: int
    #: Further constructor keyword arguments (margins, norms, dropout rates).
    model_kwargs: dict[str, Any] = field(default_factory=dict)
    #: Training regime: "slcwa" (k negatives per positive), "kvsall" or "1vsall" (1-N).
    regime: str = "1vsall"
    #: Loss: "margin", "softplus", "bce" or "nssa" (sLCWA); "bce" (KvsAll); "cross_entropy"
    #: (1vsAll).
    loss: str = "cross_entropy"
    #: Train on (h, r, t) and (t, r + R, h) and rank heads as tails of the inverse relation.
    reciprocal: bool = True
    #: Optimiser: "adam", "adagrad" or "sgd".
    optimizer: str = "adam"
    #: Learning rate.
    lr: float = 1e-3
    #: Positive triples (or 1-N queries) per batch.
    batch_size: int = 256
    #: Maximum number of epochs (early stopping on validation MRR may end sooner).
    epochs: int = 200
    #: Negatives per positive (sLCWA only).
    num_negatives: int = 32
    #: Negative sampler: "uniform" or "bernoulli" (sLCWA only).
    sampler: str = "uniform"
    #: One corrupted side per positive, shared by its negatives (sLCWA only).
    side_per_positive: bool = False
    #: Margin of the loss: hinge margin, or the NSSA gamma for scores without one (TransE).
    margin: float = 0.0
    #: Self-adversarial temperature alpha (NSSA only).
    adversarial_temperature: float = 1.0
    #: Label smoothing epsilon (BCE and cross-entropy).
    label_smoothing: float = 0.0
    #: Regulariser: None, "n3" or "l2" (see :meth:`kg.base.KGEModel.regularization`).
    regularizer: str | None = None
    #: Weight lambda of the regulariser.
    regularizer_weight: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The defaults as a plain dict (JSON-ready)."""
        return asdict(self)


#: The single default model: ``kg tune``'s, and the first candidate of the race that
#: ``graphlib kg train`` runs without ``--model`` (:data:`kg.selection.RACE_MODELS`, which adds
#: DistMult for KGs where symmetric relations dominate). ComplEx (1vsAll, reciprocal, N3).
#: benchmarks/bench_kg_defaults.py's rule on Nations, UMLS and FB15k-237 picked DistMult (worst
#: regret .028 vs ComplEx .063), but on the held-out Kinships DistMult scored test MRR .657 vs
#: ComplEx .860 (best of the seven; RotatE .751): its symmetric score cannot rank the tails of
#: asymmetric relations. ComplEx is best on UMLS (.944) and Kinships, ties DistMult on FB15k-237
#: after one epoch (.285 vs .287), weaker on Nations (.755 vs .835). Chosen after seeing
#: Kinships, so Kinships is no longer a blind check of it. (These numbers are for ComplEx's
#: former dim-128 Adam defaults; its defaults below are now the FB15k-237 recipe.)
DEFAULT_MODEL = "complex"

#: Model name -> defaults. TransE and RotatE use sLCWA with self-adversarial negatives (the
#: RotatE paper's recipe); the bilinear and neural models use 1vsAll cross-entropy with
#: reciprocal relations (Lacroix et al. 2018; Ruffinelli et al., ICLR 2020). Dimensions are sized
#: for a laptop CPU (TuckER's cost grows as d_e^2 d_r, ConvE's with its projection layer).
#: Filtered test MRR on UMLS (both sides, realistic ties, seed 0, <= 100 epochs, early stopping;
#: one run each; PyKEEN 1.11.1 on the same CPU, 128 real dimensions, <= 200 epochs: TransE .696,
#: RotatE .831, DistMult .612, ComplEx .654 with xavier_normal): TransE .696 (one corrupted side
#: per positive; .706 with a side per negative, but 3-seed Nations .428 vs .416 and UMLS at 20
#: epochs .689 vs .676 favour it), DistMult .909 (50 epochs), ComplEx .938, RotatE .843,
#: TuckER .902, RESCAL .890, ConvE .930. Alternatives
#: tried: TransE p=2 .555; RotatE lr 1e-2 .844; TuckER lr 1e-3 .883; RESCAL d=128 .890 (8x
#: slower); Nations: ComplEx .771, DistMult .807.
DEFAULTS: dict[str, ModelDefaults] = {
    "transe": ModelDefaults(
        dim=128,
        model_kwargs={"p": 1},
        regime="slcwa",
        loss="nssa",
        reciprocal=False,
        lr=5e-3,
        margin=TransE.nssa_margin,  # NSSA gamma 9: TransE's score has none of its own
        side_per_positive=True,  # Nations MRR .426 vs .405 with a side per negative (3 seeds)
    ),
    "distmult": ModelDefaults(dim=256, lr=5e-3, regularizer="n3", regularizer_weight=1e-2),
    # The FB15k-237 CPU recipe of session 15 (test MRR .337 against .307 for the former
    # defaults, dim 128 / Adam 5e-3 / batch 256 / N3 1e-2, in 60 min on one thread), checked on
    # KGs it was not chosen on: Nations and UMLS (3 seeds), the academic, geography and biology
    # worlds (3 seeds) and the family KG (1 seed); benchmarks/RESULTS.md, issue 17, session 16.
    "complex": ModelDefaults(
        dim=256,
        optimizer="adagrad",
        lr=0.1,
        batch_size=1000,
        regularizer="n3",
        regularizer_weight=5e-2,
    ),
    "rotate": ModelDefaults(
        dim=128,
        model_kwargs={"margin": 9.0},  # gamma inside the score (reference code)
        regime="slcwa",
        loss="nssa",
        reciprocal=False,
        lr=5e-3,
    ),
    "tucker": ModelDefaults(
        dim=64,
        model_kwargs={
            "relation_dim": 64,
            "input_dropout": 0.3,
            "hidden_dropout1": 0.4,
            "hidden_dropout2": 0.5,
        },
        lr=5e-3,
        label_smoothing=0.1,
    ),
    "rescal": ModelDefaults(dim=64, lr=1e-3, regularizer="n3", regularizer_weight=1e-2),
    "conve": ModelDefaults(
        dim=100,
        model_kwargs={"embedding_height": 10},
        lr=1e-3,
        label_smoothing=0.1,
    ),
}
