r"""
kg: knowledge-graph embeddings
==============================

:mod:`kg` trains knowledge-graph embedding models (TransE, DistMult, ComplEx, RotatE, TuckER,
RESCAL, ConvE) with sLCWA, KvsAll or 1vsAll and evaluates them with filtered rank-based
metrics as PyKEEN defines them: both sides, filtered with train + valid + test, realistic ranks
(ties count half), plus the adjusted metrics of Hoyt et al. (arXiv:2203.07544). API:
:doc:`/api/kg`.

Here a ComplEx (Trouillon et al., ICML 2016, arXiv:1606.06357) is trained for a few epochs on
the synthetic family KG and evaluated.
"""

# %%
# Train
# -----
# :meth:`kg.TrainingConfig.from_defaults` starts from the model's tuned defaults (1vsAll
# cross-entropy with reciprocal relations and N3 for ComplEx, Lacroix et al., ICML 2018);
# keyword arguments override them. :class:`kg.Trainer` follows scikit-learn: ``fit`` returns
# the trainer, and what it learned ends in ``_``.
from graphdata import family_kg
from kg import Trainer, TrainingConfig, build_model

dataset = family_kg(120, seed=0).dataset
config = TrainingConfig.from_defaults("complex", epochs=15, progress=False, seed=0)
print(config.regime, config.loss, "reciprocal:", config.reciprocal)
model = build_model("complex", dataset, config, dim=32)
print(model)
trainer = Trainer(model, config).fit(dataset)

# %%
# Evaluate
# --------
# :func:`kg.evaluate` scores every entity as tail and as head of each test triple and ranks
# the true one among the candidates that are not known triples. An adjusted metric is None
# where it is undefined (every query has at most k candidates).
metrics = trainer.evaluate(dataset)
print({k: v if v is None else round(v, 3) for k, v in metrics.summary().items()})

# %%
# A random scorer has an expected rank of about half the candidates; the adjusted mean rank
# index (AMRI) is 0 for it and 1 for a perfect model, whatever the graph's size.
print(f"MRR {metrics.mrr:.3f}, Hits@10 {metrics.hits_at(10):.3f}, AMRI {metrics.amri:.3f}")

# %%
# Checkpoints
# -----------
# A checkpoint is a plain dict of tensors and JSON-like values, written atomically with a
# tensor checksum and read back with ``torch.load(weights_only=True)``: loading never unpickles
# code.
import tempfile
from pathlib import Path

import torch

from kg.checkpoint import load_checkpoint, save_checkpoint

with tempfile.TemporaryDirectory() as folder:
    path = save_checkpoint(Path(folder) / "model.pt", {"model_state": model.state_dict()})
    state = load_checkpoint(path)["model_state"]
print(
    "weights identical after the round trip:",
    all(torch.equal(state[key], value) for key, value in model.state_dict().items()),
)
