r"""
kg.explain: path-based explanations
===================================

:mod:`kg.explain` implements KGExplainer (Ma et al., "Towards Synergistic Path-based
Explanations for Knowledge Graph Completion: Exploration and Evaluation", ICLR 2025,
arXiv:2404.03893): a prediction :math:`(h, r, t)` of an embedding model is explained by a few
relation paths from :math:`h` to :math:`t`. The paper chooses them by greedy search on a
relational GNN that is distilled from the model (``strategy="paths"``); by default
(``strategy="patterns"``, used here) the paths are those whose relation pattern agrees best with
the target relation over the training graph, with at most one fact on a constant at a node of a
path (a condition, such as the fuel of a plant that a path reaches), and the distilled GNN scores
their fidelity to the model. On the synthetic family KG the planted Horn rules are the ground
truth, so an explanation can be scored against them. API: :doc:`/api/kg.explain`.
"""

# %%
# A model to explain
# ------------------
# A small DistMult (Yang et al., ICLR 2015, arXiv:1412.6575) trained with 1vsAll on the family
# world.
import warnings

from graphdata import family_kg
from graphdata.synthetic import BASE_RELATIONS
from kg import Trainer, TrainingConfig, build_model

world = family_kg(100, seed=0)
dataset = world.dataset
config = TrainingConfig(
    regime="1vsall", epochs=30, lr=5e-3, reciprocal=True, eval_every=0, progress=False, seed=0
)
model = build_model("distmult", dataset, config, dim=32)
trainer = Trainer(model, config).fit(dataset)
print(f"filtered test MRR {trainer.evaluate(dataset).mrr:.3f}")

# %%
# Distil the evaluator, explain a prediction
# ------------------------------------------
# :meth:`kg.explain.KGExplainer.fit` distils the evaluator (150 steps here; the
# default is 1,200). :meth:`~kg.explain.KGExplainer.explain` returns a
# :class:`~kg.explain.PathExplanation`: its paths, the triples they use and their scores.
from kg.explain import EvaluatorConfig, ExplainerConfig, KGExplainer, ground_truth_scores

# Paths over the base relations only (parent, spouse, ...), the setting of the benchmark's
# ground-truth goals: derived shortcuts such as ``uncle`` are left out of the search.
explainer_config = ExplainerConfig(
    evaluator=EvaluatorConfig(steps=150, num_train_triples=400),
    max_candidates=80,
    path_relations=tuple(BASE_RELATIONS),
    seed=0,
)
explainer = KGExplainer(model.eval(), explainer_config).fit(dataset)

target = next(t for t in dataset.test.to_labeled_triples() if t[1] == "grandparent")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # a candidate cap reached is reported, not an error here
    explanation = explainer.explain(target)
for path in explanation.paths:
    print(" , ".join(f"{h} -{r}-> {t}" for h, r, t in path.triples), f"(gain {path.gain:.2f})")
print(f"fidelity+ {explanation.fid_plus:.3f}, sparsity {explanation.sparsity:.3f}")

# %%
# Against the planted rules
# -------------------------
# The family world knows why ``target`` holds: the groundings of the rule
# ``grandparent(X, Z) <- parent(X, Y), parent(Y, Z)``. :func:`kg.explain.ground_truth_scores`
# compares the explanation's triples with them (precision, recall, F1 over triples).
print("ground truth:", world.explanations_for(target)[0])
scores = ground_truth_scores(explanation.triples, world, target)
print(f"precision {scores.precision:.2f}, recall {scores.recall:.2f}, F1 {scores.f1:.2f}")
