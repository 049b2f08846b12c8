r"""Relation-path patterns mined from the training graph: which candidate path is a rule body.

A perturbation search scores each candidate path of a target :math:`(h, r, t)` by what it does to
the target's score *in this one local graph*; a correlated shortcut (a relation that links most
pairs the rule links) moves that score as much as the rule body does, and a shorter one wins the
parsimony tie-break (issue #18: one academic-world explanation picked ``knows`` over the shared
paper, F1 0). Whether a path is a *reason* is a property of its **pattern** over the whole
graph, the question rule miners ask (AMIE: Galárraga et al., "AMIE: Association Rule Mining under
Incomplete Evidence in Ontological Knowledge Bases", WWW 2013, doi:10.1145/2488388.2488425):
does :math:`r(x, y)` hold wherever the pattern joins :math:`x` to :math:`y`, and does the
pattern join the pairs where :math:`r` holds?

**Pattern.** A candidate path :math:`h = v_0, v_1, \dots, v_L = t` has the pattern
:math:`\pi = ((r_1, d_1, a_1), \dots, (r_L, d_L, a_L))`: :math:`d_i = +1` (``forward``) when its
:math:`i`-th triple is :math:`(v_{i-1}, r_i, v_i)` and :math:`-1` when it is
:math:`(v_i, r_i, v_{i-1})`; :math:`a_i` is the entity :math:`v_i` when that node is a constant
of the pattern (an *anchor*, such as the language in ``speaks(X, english)``) and :math:`-1`
otherwise. With :math:`A_s` the training graph's 0/1 adjacency of relation :math:`s`
(:math:`A_s^{+1} = A_s`, :math:`A_s^{-1} = A_s^\top`) and :math:`E_a` the diagonal 0/1 matrix
that keeps column :math:`a` only (:math:`E_{-1} = I`),

.. math::
    R_\pi[x, y] = \mathbb{1}\big[(A_{r_1}^{d_1} E_{a_1} \cdots A_{r_L}^{d_L} E_{a_L})[x, y] > 0
    \big]\; \mathbb{1}[x \ne y].

A conjunction of patterns (a body of several paths between :math:`h` and :math:`t`, such as
``borders(X, Y), speaks(X, L), speaks(Y, L)``) joins :math:`R_{\pi_1} \odot R_{\pi_2} \odot
\cdots`.

**Counts.** Over a seeded draw :math:`X_r` of at most ``max_heads`` heads that have an :math:`r`
fact (AMIE's partial-completeness assumption: only their :math:`r` facts are taken as known),
with :math:`T_r[x, y] = \mathbb{1}[r(x, y) \in \mathcal{G}]`,

.. math::
    s_\pi = \sum_{x \in X_r} \sum_y R_\pi[x, y]\, T_r[x, y], \qquad
    b_\pi = \sum_{x \in X_r} \sum_y R_\pi[x, y], \qquad
    n_r = \sum_{x \in X_r} \sum_{y \ne x} T_r[x, y],

the support, the body size and the number of :math:`r` facts (:meth:`PatternBank.counts`).

**Score**: the Dice agreement of the pattern's pairs with the :math:`r` facts,

.. math::
    D_\pi = \frac{2\, s_\pi}{b_\pi + n_r}

(:meth:`PatternBank.agreement`; 0 when :math:`s_\pi = 0`). A rule body joins nearly every pair
:math:`r` holds on and little else, so :math:`D_\pi \approx 1` up to the rule's exceptions and
the facts held out of training; a correlated shortcut joins pairs :math:`r` does not hold on
(:math:`b_\pi > s_\pi`) or misses some that it does (:math:`s_\pi < n_r`), and a rare pattern
such as an anchored one holds on few of the :math:`r` facts (:math:`s_\pi \ll n_r`). Measured
and removed (issue #18, ``benchmarks/bench_explain_worlds.py``, RESULTS.md): AMIE's PCA
confidence :math:`(s + 1) / (b + 2)`, the Wilson lower bound of :math:`s / b`, and the Dice
agreement with the explained model's facts (:math:`T_r` replaced by
:math:`\mathbb{1}[p(x, r, y) \ge 1/2]`, or by the model's top :math:`|T_r[x]|` tails) did not
recover the rule bodies better on every tuning world.

**Explanation** (:func:`pattern_search`). Below :math:`S(\Pi) = D_\Pi`, the agreement of a
conjunction :math:`\Pi` (pairs :math:`R_{\pi_1} \odot R_{\pi_2} \odot \cdots`). The candidate
patterns are every candidate path's pattern and, with ``anchors``, each of its patterns with one
intermediate node held constant. A path of length two or more that uses the target's relation
:math:`r` is no candidate unless ``recursive``: a body that routes through another :math:`r` fact,
:math:`r(x, z) \Leftarrow s(x, y) \land r(y, z)`, is taken only where nothing else explains the
target (the explainer asks for it when the local graph has no other path; the length-1 inverse
:math:`r^{-1}`, a symmetry, is always one, and gives way to a body without :math:`r` where "Heads
with several bodies", "the mirror", says so). Such a body is the first pick only: the last resort
that admits it is spent once it explains the target, so no further path through another :math:`r`
fact is conjoined (or exchanged in after the first position). Those paths are filters of the tail by
its other :math:`r` facts; on the legal world (issue #18, session 27) the search had conjoined two
of them to a recursive pick (a case with the same plaintiff, or invoking the same statute section,
that binds the court), each raising :math:`S` significantly, and the explanations of four targets
had F1 .18-.36 against .40 for the pick alone. The first pattern :math:`\pi_1` is one of largest
score :math:`S` ("Ties" below), or the member of the relation's rule set that replaces it ("Heads
with several bodies"). With the conjunction :math:`\Pi = (\pi_1, \dots, \pi_k)` so far, of counts
:math:`s, b`, and :math:`s', b'` those of :math:`(\Pi, \pi')`, the pairs :math:`\pi'` removes number
:math:`d = b - b'`, of which :math:`d_1 = s - s'` are facts. Removing pairs of which a share
:math:`\rho` are facts raises the agreement iff :math:`\rho < s / (b + n_r) = D_\Pi / 2`, so
:math:`\pi'` is *admissible* when the one-sided binomial test rejects :math:`\rho \ge D_\Pi / 2` at
level :math:`\alpha = 0.05`:

.. math::
    P\big(\mathrm{Bin}(d, D_\Pi / 2) \le d_1\big) < \alpha,

and :math:`S(\Pi, \pi') > S(\Pi)` (a correlated filter that raises the agreement by chance alone
is refused). The admissible :math:`\pi'` of largest :math:`S(\Pi, \pi')` ("Ties") whose path's
triples are not all chosen already is added, up to ``max_paths`` paths; after each addition
one exchange pass replaces each earlier :math:`\pi_i` by the candidate that raises :math:`S` of the
conjunction most, if any does (a first pick that only ties the body is undone once the second
pattern shows which first pattern it completes). Nothing here depends on the local graph's
perturbation scores, so a correlated path is chosen only when it is the better-agreeing pattern
over the whole graph. No candidate pattern (no path, or only paths through other :math:`r`
facts) gives an empty choice.

**Conditions** (:func:`_condition`), after the orientation step. A rule body can hold an atom on a
constant that no path from :math:`h` to :math:`t` walks, at a node of one that does:
``coal_exit(A, P) <= supplies_area(P, A), fuel(P, fuel_coal)``, whose ``fuel`` atom hangs off the
path at the plant. With :math:`C_a = \mathrm{diag}(\mathbb{1}[s(u, c) \in \mathcal{G}])_u` for the
atom :math:`a = s(\cdot, c)` (or :math:`s(c, \cdot)`), conditioning node :math:`i` of
:math:`\pi` gives

.. math::
    R_{\pi, i, a}[x, y] = \mathbb{1}\big[(A_{r_1}^{d_1} E_{a_1} \cdots A_{r_i}^{d_i} E_{a_i} C_a
    A_{r_{i+1}}^{d_{i+1}} \cdots A_{r_L}^{d_L} E_{a_L})[x, y] > 0\big]\; \mathbb{1}[x \ne y]

(:meth:`PatternBank.condition_counts`). The candidates: for every non-empty subset
:math:`\Sigma` of the chosen patterns, every node :math:`i = 1 .. L` (the tail included) of each
member's path, every local triple at the node's entity :math:`v` whose relation is not :math:`r`
and whose other end :math:`c` is on none of :math:`\Sigma`'s paths, the conjunction
:math:`\Sigma` with that member conditioned on :math:`s(\cdot, c)`; only atoms that at least two
entities hold (one holder is an anchor, a candidate already). A condition removes pairs from
:math:`\Sigma`'s, so it is admitted by the test of a further conjunct,
:math:`P(\mathrm{Bin}(d, D_\Sigma / 2) \le d_1) < \alpha`, and must raise :math:`S(\Sigma)`. The
admitted option of largest :math:`S`, then fewest triples (the first in that order), replaces the
explanation when it agrees better than the chosen patterns, or as well with fewer triples (the
comparisons exact in the integer counts): the plant's other coal plant in the same area, a path
``supplies_area, fuel, fuel^-1`` that the search conjoins for want of the atom, joins the same
pairs as the atom on the path ``supplies_area`` with one triple instead of three. The head
(:math:`i = 0`) takes no condition: the counts take every head of :math:`X_r` to have its
:math:`r` facts, and a condition on it removes whole rows of them. One condition at most, from the
target's local graph (the evidence the explanation is drawn from; on FB15k-237 the pruned union of
its kept paths). Measured on the thirteen seen worlds and FB15k-237 (issue #18, session 28,
RESULTS.md, "Conditions on a constant"): energy's ``coal_phaseout`` and biology's
``apoptosis_rule`` gain their atom (9 explanations, F1 up; no other explanation of the worlds
changes); a condition on the head such as clinical's ``inr_clinic`` (``prescribed(P, D),
in_class(D, class_anticoagulant)``, two atoms off the path) is still missed. On 100 FB15k-237
targets 10 explanations gain a condition and the fidelity figures move within their noise; there
the test admits conditions that raise :math:`S` by .006-.012 over thousands of pairs (the country
of a film's release region taking part in an Olympic sport), as it admits such filters. A condition
refines the chosen paths only; a body that is never picked without its atom is "Conditioned
picks"' case.

**Conditioned picks** (:func:`_conditioned_pick`, :func:`_takes_place`), last. A body whose chain
agrees badly without its atom is never chosen, so no condition can refine it: the held-out maritime
world's ``reefer_network``, ``reefer_port(C, P) <= operates(C, V), carries(V, cargo_reefer),
calls_at(V, P)``, whose chain joins the ports of every ship of the carrier (:math:`D = .28`) and
lost to ``ais_reported`` paths (F1 0, session 28). So every other candidate path (none with an
:math:`r` triple, the recursive search aside) is weighed with one condition as in "Conditions", the
atoms drawn from its own nodes (each path of a pattern is a candidate of its own: a pattern's paths
pass different entities), by the same test against the path's pattern alone. The admissible option
of largest :math:`S`, then fewest triples, then first in order, that agrees better than the
explanation takes its place when it agrees *significantly* better: it is a new pick, not a
refinement of the chosen paths, and a tie goes to the search (the test of
:func:`significantly_better` on the two sets of pairs). Where the relation's rule set with the
target's admissible candidates (as "Heads with several bodies" takes them) has two members or more
and the explanation's first pattern is one of them, the test is between the unions, the other
members with the candidate against the other members with the explanation: one body of several
joins its share of the facts only, and a path that joins some facts of every body agrees better
than that body and worse than the set. Session 28's prototype took the candidate whenever it agreed
better, and replaced correct explanations by such paths on six worlds (F1 1 -> 0 at corporate's
``subsidiary_presence``, energy's ``registered_supply``, sports' ``award_country``, legal's
``specialist_court``, commerce's ``brand_market``, software's ``own_alert``); with the test on the
two sets of pairs alone, corporate's, energy's and sports' were still replaced (9 explanations);
with the unions, none (session 29, RESULTS.md, "Conditioned picks"). Measured on the fifteen worlds
(seed 0, telecom kept out): 12 explanations change, none for the worse: maritime's
``reefer_network`` (F1 at length 3 .23 -> .37), biology's ``apoptosis_rule`` (.67 -> .83, the
pathway atom on the shared protein) and agriculture's ``local_sourcing`` (.63 -> .80, the two
``located_in`` atoms with a condition that is no part of the rule); the other twelve worlds'
explanations are unchanged.

Cost. The middle entities of a pattern at a node (:meth:`PatternBank._middles`) are counted once
for all its paths, the atoms at one entity once for the paths through it, and the candidates are
weighed in decreasing order of their bound :math:`2 s / (s + n_r)`, one that cannot beat the best
so far skipped. The picks of one target count at most :data:`PICK_ENDS` entries in all, the
(pair, middle) entries and the (pair, atom) entries of their products with the atoms' holders; the
search ends before the node that would pass it, and the candidates left, of lower bounds, are not
weighed. On the fifteen worlds it ends 102 of 757 searches and changes none of their explanations
(against no budget); at a quarter of it two of maritime's changed. On FB15k-237 it bounds the
hubs' searches (one target took 32 s without it): the mean time per explanation .35-.38 s -> .44
s, the slowest 1.78-1.83 s -> 1.95-1.97 s, all 100 within 2 s at load .3-.95 (at load 1.4, 98-99
until the rule-set admission counted by popcounts, `_Union.added_to_fixed`); 8 of 100
explanations change and their fidelity figures move within noise.

**Ties** (:func:`_pick`). Where the counts over :math:`X_r` cannot tell two candidates apart,
the pairs of the other heads can. Of the candidates for a pick (every pattern for
:math:`\pi_1`, the admissible ones for :math:`\pi'`), let :math:`\pi^*` be the first of largest
:math:`S(\Pi, \cdot)` (:math:`\Pi` empty for :math:`\pi_1`). The candidates *tied* with it
are :math:`\pi^*` and each :math:`\pi'` that it does not agree significantly better than,
:math:`(\Pi, \pi^*)` against :math:`(\Pi, \pi')` in :func:`significantly_better` at level
:math:`\alpha`: the statistic :math:`z \le z_{1 - \alpha}`, or no discordant pair. Of these the
first of largest closed-world agreement, then of largest :math:`S`, is taken:

.. math::
    D^{\mathrm{cw}}_\Pi = \frac{2\, s_\Pi}{b_\Pi + \hat b_{0, \Pi} + n_r}, \qquad
    b_{0, \Pi} = \sum_{x \notin H_r} \sum_y R_\Pi[x, y],

with :math:`H_r` the entities with an :math:`r` fact (:math:`X_r \subseteq H_r`). This is the
Dice agreement with every entity a head: the entities without an :math:`r` fact add body pairs
and no fact. It is the difference between AMIE's standard confidence :math:`s / (b + b_0)`,
which reads a missing fact as false (closed world), and its PCA confidence :math:`s / b`, which
counts only heads with some :math:`r` fact (Galárraga et al. 2013, above). A body that fires
for entities that have no :math:`r` fact at all predicts facts that are nowhere in the graph;
the PCA reading cannot see that, and it is the evidence left when the PCA counts tie. On the
academic world (issue #18, session 19) ``trained_in`` :math:`\Leftarrow` ``supervised``
:math:`^{-1}`, ``affiliated_with, located_in`` and the shortcut ``affiliated_with,
located_in`` join the same 134 pairs of :math:`X_r` (every student is affiliated where the
advisor is); the shortcut also joins every advisor to a country (:math:`b_0 = 266` against
34): :math:`D^{\mathrm{cw}}` .50 against .89; on the four synthetic worlds the tie-break changes
only those 6 targets. As the score itself :math:`D^{\mathrm{cw}}` depends on how :math:`b_0` is
counted: geography's F1 at length 3 is .83 with every entity counted and .69 with the estimate below
("Heads with several bodies"). The sum over :math:`x \notin H_r` is estimated on :math:`Y`, a seeded
draw of ``max_heads`` of the entities in some triple (all of them when there are no more; an entity
in none joins no pair), scaled to the entities without an :math:`r` fact and to the share of the
heads in :math:`X_r`,

.. math::
    \hat b_{0, \Pi} = \frac{|X_r|}{|H_r|}\, \frac{|V \setminus H_r|}{|Y \setminus H_r|}
    \sum_{x \in Y \setminus H_r} \sum_y R_\Pi[x, y],

:math:`V` the entities in some triple; it is exact when neither :math:`X_r` nor :math:`Y` is a
draw. The exchange pass and the orientation step compare :math:`S` alone.

**Orientation.** A chosen step from :math:`u` to :math:`v` along a triple :math:`s(v, u)` is
then turned into :math:`s(u, v)` when that triple is in the local graph too, unless the chosen
orientation agrees significantly better with :math:`r` (:func:`significantly_better`, the
other chosen patterns fixed), so that a body reads from :math:`h` to :math:`t`. The two
orientations of a symmetric relation join the same pairs up to the facts held out of training,
and the greedy choice between them was the noise of those few pairs (issue #18: geography's
``borders(X, Y)`` taken as ``borders(Y, X)`` in 8 of 12 bodies).

**Heads with several bodies** (rule sets). For a head derived by two rules,
:math:`r \Leftarrow \beta_1 \lor \beta_2`, :math:`D_{\beta_1}` counts the facts of :math:`\beta_2`
as missed (:math:`s_{\beta_1}` is :math:`\beta_1`'s share of :math:`n_r`), and a path through a
third relation derived from the same facts joins the facts of both bodies at the same precision,
so it agrees better than either body. On the family world (issue #18, session 18) ``aunt``
:math:`\Leftarrow` ``sister, parent`` (57 % of the ``aunt`` facts, :math:`D = .66`) or ``spouse,
brother, parent`` (39 %, :math:`D = .53`) lost to ``parent, cousin`` (71 %, :math:`D = .75`), all
three at precision :math:`s / b` of .78-.83. One pattern is no disjunction, so the bodies of
:math:`r` are chosen as a set :math:`B = \{\beta_1, \dots, \beta_k\}` of patterns, scored by
the pairs that some member joins (:meth:`PatternBank.union_counts`):

.. math::
    R_B[x, y] = \max_j R_{\beta_j}[x, y], \qquad
    s_B = \sum_{x \in X_r} \sum_y R_B[x, y]\, T_r[x, y], \qquad
    b_B = \sum_{x \in X_r} \sum_y R_B[x, y], \qquad
    D_B = \frac{2\, s_B}{b_B + n_r}.

*The pool* :math:`P_r`: the patterns without anchors of the simple paths of :math:`1 .. \min(L,
3)` steps between the two ends of each of :data:`POOL_FACTS` (20) :math:`r` facts of
:math:`X_r` drawn with the bank's seed, the fact itself left out and no :math:`r` triple on a
path of two or more steps (:meth:`PatternBank.between`: the candidate patterns of an unpruned
local structure of that fact, from the whole graph), each kept when at least
:data:`POOL_SUPPORT` (2) of the drawn facts have it. A target's own candidates are not enough:
a blood aunt has no ``spouse, brother, parent`` path.

*The set* :math:`B_r` (:meth:`PatternBank.rule_set`, once per relation). :math:`B` starts with
the first pattern of :math:`P_r` of largest :math:`D`. With :math:`s, b` the counts of
:math:`B` and :math:`s', b'` those of :math:`B \cup \{\beta'\}`, :math:`\beta'` adds :math:`d =
b' - b` pairs, of which :math:`d_1 = s' - s` are facts. Adding pairs of which a share
:math:`\rho` are facts raises the agreement iff :math:`\rho > s / (b + n_r) = D_B / 2`, so
:math:`\beta'` is *admissible* when the one-sided binomial test rejects :math:`\rho \le D_B / 2`
at level :math:`\alpha` (the mirror image of the test for a conjunction above):

.. math::
    P\big(\mathrm{Bin}(d, D_B / 2) \ge d_1\big) < \alpha,

and :math:`D_{B \cup \{\beta'\}} > D_B`. The admissible :math:`\beta'` of largest
:math:`D_{B \cup \{\beta'\}}` joins :math:`B`; after each addition one exchange pass replaces
each earlier member by the pool pattern that raises :math:`D_B` most, if any does (a first
member that joins the facts of both bodies gives way once the bodies are in). When no pattern
is admissible, each member must pass the same test against the others: with :math:`d, d_1` the
pairs and facts that only :math:`\beta \in B` joins, while some :math:`\beta` has
:math:`P(\mathrm{Bin}(d, D_{B \setminus \beta} / 2) \ge d_1) \ge \alpha` or :math:`D_B \le
D_{B \setminus \beta}`, the one of largest p-value is dropped.

*The target* (:func:`pattern_search`; not for the ``recursive`` search, whose candidates the pool
lacks). When :math:`|B_r| \ge 2`, :math:`\pi_1 \notin B_r` and some member is among the target's
candidate patterns, let :math:`m` be the first of these of largest :math:`D_m`; it replaces
:math:`\pi_1` when :math:`B_r` agrees significantly better than :math:`B_r` with :math:`m` replaced
by :math:`\pi_1` (the test of :func:`significantly_better` on the pairs of the two unions):
:math:`\pi_1` is then no equal member of the set, the bodies join what it joins and significantly
more. The members here are :math:`B_r` and the target's own plain candidate patterns that
:math:`B_r`'s admission test admits against the fixed :math:`B_r` (:func:`_admissible_candidates`):
the pool is a draw, and a body of a small share of the facts can miss it while the target's
candidates show it (session 24, the held-out sports world's ``award_country``: support 1 in the draw
where the pool needs 2; two targets explained by a correlated path, F1 0, are explained by their
planted body; none of the seven other worlds' and none of 100 FB15k-237 explanations changes). The
search goes on from :math:`m` as above (conjunctions, exchange pass, orientation). A head with one
body (:math:`|B_r| = 1`) keeps its pick, and so does a target whose pick is a member. On the family
world (session 21) :math:`B` of ``aunt`` is ``sister, parent``, ``spouse, brother, parent`` and
``spouse``:math:`^{-1}` ``, brother, parent`` (the two readings of the symmetric ``spouse`` each
hold facts whose other triple is held out): they join all 512 ``aunt`` facts of :math:`X_r`,
:math:`D_B = .89`, and ``parent, cousin`` adds no pair; ``cousin``'s two bodies join all 964 facts
(:math:`D_B = .89`) and the shortcut ``uncle`` :math:`^{-1}` ``, parent`` (:math:`D = .82`) adds no
pair. Issue #18's bench (seed 0, library defaults): family F1 at lengths 2 / 3 from .44 / .30 to
1.00 / .86, software at length 2 from .71 to .76; every academic, geography and biology explanation
unchanged. The test changes no world's explanation with this pool (with a pool from the explainer's
pruned local structures it kept geography's ``capital_rule`` at F1 1.00, .83 without it, where the
pick was the other reading of the symmetric ``borders`` and no member); on 100 FB15k-237 targets the
rule sets change 7 explanations, 14 without the test.

*The mirror* (:func:`_member_instead`), in place of the member swap. Where :math:`r` is symmetric,
the mirror :math:`r^{-1}` (the target's own fact read the other way) joins every pair whose reverse
is a fact, so as one pattern it agrees better than each of :math:`r`'s bodies when these are
several: on the held-out publishing world (session 30) ``co_agents(G, H)`` holds when either agency
appointed the other, each reading of ``appointed_coagent`` alone agrees .62-.66, the mirror .84 and
the two readings together .89. The rule set :math:`B_r` then holds the two readings and not the
mirror, but the member swap's union test cannot tell :math:`B_r` (90 of the 90 facts of :math:`X_r`,
112 pairs) from the mirror with the other reading (82 facts, 100 pairs), and all 9 ``co_agents``
explanations were the mirror, F1 0. A pattern through :math:`r` is the last resort, as a recursive
body is: when the pick is :math:`r^{-1}` and no member of :math:`B_r`, the member of :math:`B_r`
(with the target's admissible candidates) without an :math:`r` step among the target's candidates,
the first of largest :math:`D_m`, replaces it, with no test; the symmetry is the reason only where
:math:`B_r` holds it (a relation stored both ways, completed by ``r(X,Y) <- r(Y,X)``: the mirrors of
the family, biology, clinical, commerce, corporate, geography, software, travel, telecom and
aviation worlds' symmetric relations are members). Measured on the eighteen worlds (seed 0):
publishing's 9 ``co_agents`` explanations change (F1 at length 1 .50 -> 1.00), no explanation of the
other seventeen worlds changes, none of 100 FB15k-237 explanations (all within 2 s, slowest 1.71 ->
1.82 s), and none of the held-out banking world's.

*Folding* (:func:`_folded_member`) comes last. When the pick :math:`\pi_1` (or the member that
replaced it) is a member of :math:`B_r` and equals a shorter member :math:`m` that is among the
target's candidates with one of :math:`m`'s steps, a fact of relation :math:`s` read either way,
replaced by a member of :math:`B_s` (:func:`_unfolds`), then :math:`\pi_1` reads a derivation
of that :math:`s` fact while :math:`m` reads the fact itself, which is in the graph since
:math:`m` is a candidate here: :math:`m` replaces :math:`\pi_1` (the shortest such :math:`m`,
ties by larger :math:`D_m`). Where the :math:`s` fact is missing (held out) :math:`m` is no
candidate and :math:`\pi_1` stays; those pairs are why :math:`\pi_1` is a member and has the
larger :math:`D`. On the software world (issue #18, session 24) ``alerted``'s set holds
``maintained_by``:math:`^{-1}` ``, exposed_to`` (``upstream_alert``) and its unfolding
``maintained_by``:math:`^{-1}` ``, depends_on, has_vulnerability`` through ``exposure_rule``,
which has the larger :math:`D`; folding changes the 9 explanations of ``alerted`` targets that
read the unfolding where the ``exposed_to`` fact is present (F1 at length 2 .76 -> 1.00) and no
explanation of the six other worlds.

What is left. The counts still cannot tell a derived relation from a base one where a path through
the derived relation agrees as well as the bodies' union: a shortcut whose relation is held out
nowhere joins every fact of both bodies (:math:`D = 1`, it stays the pick); a body through another
fact of the target relation is never folded into, since the pool has no such member (media's
``band_nationality`` is explained by the unfolding ``member_of, born_in, located_in`` of a member's
``nationality``). The pool is a draw: a body of a small share of the facts can miss it (software's
``own_alert``, 12 % of the ``alerted`` facts, entered it with bank seeds 0 and 3, not with 1, 2 or
4); such a body is a member where a target's candidates show it, but not where the pick is itself
admissible. A head whose bodies share an atom, :math:`r \Leftarrow a \land (b \lor c)`, is explained
by :math:`a` alone: a conjunct of one body drops the other body's facts and lowers :math:`S` (the
held-out clinical world's ``dose_adjusted``, session 25: F1 at length 3 .18). A rule set at the
second position (the union of pool patterns conjoined with :math:`\pi_1`, admitted as the rule set
is) raised it to .34 but added a path to complete bodies elsewhere (geography's ``visa_free``), and
was not kept. A branch of two atoms or more off every path from :math:`h` to :math:`t`, or one on
the head, is no candidate ("Conditions" takes one atom at a node of a path). Two unions can be
equal: ``cousin``'s set reads the sibling step from the second parent (``sister(Z, Y)``) where the
rule reads it from the first (``brother(Y, Z)``), and ``uncle``'s by marriage is reported with
``spouse(Y, X)`` where the rule reads ``spouse(X, Y)`` (the orientation step keeps the reading that
agrees significantly better). Measured before the rule sets and not kept (session 18), each lowering
the F1 of a tuning world: the precision :math:`s / b`; Dice with the facts that another candidate
joins taken as explained; :math:`D^{\mathrm{cw}}` as the score ("Ties": geography .83 -> .69 at
length 3 with :math:`\hat b_0`); dropping a candidate whose cycle with the target agrees with one of
its own relations as well as with :math:`r`, or one through a fact that another candidate derives.

Cost: a pattern's reach is ``max_heads`` sparse rows pushed through :math:`L` sparse products;
counts are cached per ``(relation, patterns)``, so targets of one relation share them, and the walks
of patterns and their prefixes in a bounded cache (:class:`PatternBank`). The matrices are 0/1, so
each sum of an elementwise product is the number of entries the factors share: the counts intersect
the walks' sorted linear keys :math:`x N + y` and count those of :math:`T_r` and of the pairs
:math:`y = x` among them, the same integers as the sums without building a product matrix; an
anchored step computes column :math:`a` of its product alone, the rows whose walks hold an entity
with a step into :math:`a`. On 100 FB15k-237 targets (one thread) the two halved the mean
explanation time (1.17 s to 0.59 s), the explanations unchanged. A rule set is built once per
relation, at its first target: the paths of 20 facts (:meth:`PatternBank.between`, at most 0.2 s on
FB15k-237), the counts of a pool of up to about two thousand patterns and the greedy search, its
admissible candidates tried in decreasing order of a bound on the union's :math:`D` until none can
win; the search keeps its union (:class:`_Union`): the pairs each candidate adds to it (bit
positions, the facts apart, narrowed by each member appended with one look-up each in the union's
bit rows), and the pairs only one member joins, so the exchange pass counts a candidate against one
member's pairs, and skips it where a bound on :math:`D` cannot beat the best so far or the union
with that member (a member is replaced only by a pattern that beats it).

Around FB15k-237's hubs a walk of two or three steps from a thousand heads joins most pairs, and a
sparse product costs as much as the pairs it joins. So a pattern counted alone (a rule set's pool,
a target's candidates for the first pick) is walked as **bit rows** (:meth:`PatternBank._bits`):
one row of :math:`\lceil |X_r| / 64 \rceil` words per entity reached, bit :math:`i` set when
:math:`x_i` reaches it. A step ORs, into each entity, the rows of the entities with a step into it,
:math:`|X_r| / 64` words per triple of the step's relation however many pairs the walk joins (or,
for a walk of few entities such as one through an anchor, only the steps out of those); :math:`b`
and :math:`s` are the set bits, less the pairs :math:`y = x`, and the set bits at the facts. The
walks of the prefixes are shared in a bounded cache. Where a search needs the pairs that a
conjunction and one more pattern both join, it intersects the conjunction's keys once per round and
looks each up in the candidate's bit rows (:meth:`PatternBank._extended_counts`) unless the
candidate's keys are cached, or, where the candidate's rows hold fewer words than the conjunction
has pairs, lays those pairs out once as bit rows and ANDs the candidate's rows with them; the rule
set's union takes a candidate's added pairs from its bit rows less the union's the first time. The
closed-world :math:`\hat b_0` counts the set bits of the rows of :math:`Y` without an :math:`r`
fact, and :func:`_pick` counts it for the tied options in decreasing :math:`S` only while
:math:`S \ge D^{\mathrm{cw}}` can still beat the largest so far. Exact bounds skip work:
:func:`pattern_search`'s addition and exchange passes skip a candidate where
:math:`2 m / (m + n_r)`, :math:`m` the smaller support of the chosen patterns and the candidate,
cannot beat the agreement so far (:math:`s \le m`, :math:`b \ge s`); and the test of
:func:`significantly_better` counts the two sides' intersection only where its statistic, which
does not depend on it, is positive and neither the largest variance (no shared pair) passes it nor
the smallest (as many shared as the smaller side holds) fails it. Each count is the same integer as
before and each bound is monotone in exact integers, so every explanation is the same (tested
against the plain computations and brute force). On the 100 FB15k-237 targets (session 22, one
thread, four alternated A/B pairs, load 0.6-1.7) the mean explanation time went from 0.62-0.67 s to
0.34-0.37 s and the slowest from 4.4-5.0 s to 1.7-2.0 s, 94-95 to all 100 within 2 s (a fifth,
separate run: 0.65 to 0.39 s, 94 to 99 within 2 s, the slowest 2.06 s), no explanation changed, nor
any on six synthetic worlds; the rule sets of the 39 relations of those targets took 6 s instead of
28 s (load 2-3). Of the 1.7-2.0 s left at the three slowest targets, about 1 s is the evaluator's
scoring of the local graph (:mod:`kg.explain.evaluator`), which the pattern strategy runs for the
reported fidelities, and at a relation's first target up to 1.2 s the rule set's greedy search (the
set of 8 members). Session 23 (three alternated A/B pairs, one thread, load 1.9-2.1): the kept
union's bit positions, the floor of the exchange pass, the conjunction's pairs as bit rows, the
closed-world counts skipped in :func:`_pick` and the bit steps that leave out the steps from
outside the walk took the mean from 0.38-0.39 s to 0.31-0.38 s and the slowest from 1.91-1.99 s to
1.46-1.75 s (all 100 within 2 s in each run), no explanation, rule set or synthetic-world
explanation changed; relation 96's rule set took 0.6 s instead of 1.2 s. What is left at the
slowest targets is mostly the evaluator's second.
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import partial
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import torch
from scipy.stats import binom, norm
from torch import Tensor

from graphdata.checks import check_int
from graphdata.errors import GraphDataError
from kg.explain.local import LocalStructure

__all__ = [
    "Atom",
    "Pattern",
    "PatternBank",
    "PatternChoice",
    "path_pattern",
    "pattern_mask",
    "pattern_search",
    "significantly_better",
]

#: A relation-path pattern: ``((relation, forward, anchor), ...)``, one step from h to t;
#: ``anchor`` is the entity the step must end on (a constant of the pattern), or -1 for any.
Pattern = tuple[tuple[int, bool, int], ...]
#: A fact on a constant, ``(relation s, forward, constant c)``: :math:`s(u, c)` when ``forward``,
#: else :math:`s(c, u)`; a condition on the entity :math:`u` at one node of a pattern.
Atom = tuple[int, bool, int]

#: Level of the one-sided binomial test that admits a further pattern (module docstring): the
#: conventional 5 %, not tuned.
ALPHA = 0.05
#: Facts of :math:`r` whose paths make the pool of a rule set (module docstring, "Heads with
#: several bodies"), drawn with the bank's seed. With :data:`POOL_SUPPORT`, a body that joins a
#: share :math:`c` of the facts misses the pool with probability :math:`(1 - c)^{20} + 20 c
#: (1 - c)^{19}`, below :data:`ALPHA` for :math:`c \ge .22`. A bound on the cost, not tuned:
#: on the worlds (issue #18, session 21) 10, 20 and 40 gave the same F1 but for software's
#: ``own_alert`` (12 % of its facts, in the pool from 20 on), 5 lost family's second bodies.
POOL_FACTS = 20
#: Of the drawn facts, how many a pattern must join to enter the pool (AMIE's minimum support,
#: on the draw: the path of one fact alone is not yet a pattern). The worlds' explanations are
#: the same with 1; on 100 FB15k-237 targets it cut the pool by about 40 % and the mean
#: explanation time from 1.16 s to 0.87 s (session 21's prototype, load 1-2).
POOL_SUPPORT = 2
#: Longest pattern in the pool (the paths between a fact's two ends are enumerated to here).
POOL_LENGTH = 3
#: Most stored entries of the walk matrices a :class:`PatternBank` keeps (about 130 MB of
#: float32 values and int32 column indices, and as much again for their int64 linear keys).
CACHE_NONZEROS = 1 << 24
#: Most words of the bit rows of walks a :class:`PatternBank` keeps (64 MB of uint64).
CACHE_WORDS = 1 << 23
#: Most entries that the conditioned picks of one target count, the (pair, middle entity) entries
#: and the (pair, atom) entries of their products with the atoms' holders, over all their
#: patterns and nodes, in decreasing order of the candidates' bounds (module docstring,
#: "Conditioned picks"): the budget of one node's counts in the condition step, for a whole
#: target's picks.
PICK_ENDS = 1 << 22
#: Most (pair, prefix end) entries for which the condition search counts every atom of a node at
#: once (module docstring, "Conditions"; about 100 MB of int64 at the most); beyond it, the pairs
#: of the options that the bounds do not rule out are walked. The same counts either way.
MIDDLE_ENDS = 1 << 22


def path_pattern(local: LocalStructure, path: int, anchor: int | None = None) -> Pattern:
    r"""The pattern :math:`\pi` of candidate path ``path`` of ``local`` (module docstring).

    Args:
        local: The local structure.
        path: Index into ``local.paths``.
        anchor: Which intermediate node (1 .. L - 1, in path order) is a constant of the
            pattern. Default ``None``: none.

    Returns:
        ``((relation id, forward, anchor entity or -1), ...)`` from ``h`` to ``t``.

    Raises:
        GraphDataError: For an ``anchor`` that is not an intermediate node of the path.
    """
    edges, nodes = local.paths[path], local.path_nodes[path]
    if anchor is not None and not 1 <= anchor < len(edges):
        raise GraphDataError(
            f"anchor: expected an intermediate node 1 .. {len(edges) - 1} of path {path} "
            f"(length {len(edges)}), got {anchor!r}; pass None for a pattern without constants"
        )
    heads = local.edge_index[0]
    steps = []
    for i, e in enumerate(edges):
        fixed = int(local.nodes[nodes[i + 1]]) if anchor == i + 1 else -1
        steps.append((int(local.edge_type[e]), int(heads[e]) == nodes[i], fixed))
    return tuple(steps)


@dataclass(frozen=True)
class _Rest:
    """Walks of a pattern's suffix from the entities its prefix reaches (sorted ``starts``).

    As sorted linear keys ``i * N + y`` for the walk from ``starts[i]`` to ``y``.
    """

    starts: np.ndarray
    keys: np.ndarray


class PatternBank:
    r"""Counts :math:`s_\pi, b_\pi, n_r` of relation-path patterns over a graph (module docstring).

    Counts are cached per ``(relation, patterns)``, and the walk matrices of patterns and of
    their prefixes (:math:`A_{r_1}^{d_1} E_{a_1} \cdots` from the rows :math:`X_r`, the pairs
    :math:`y = x` still in) per ``(relation, pattern)`` in a least-recently-used cache of at
    most :data:`CACHE_NONZEROS` stored entries: a search scores every conjunction of the chosen
    patterns with each candidate, so it would otherwise recompute the chosen patterns' walks,
    and patterns that share a prefix its walk, for every candidate (87 % of an explanation's
    time on FB15k-237). Patterns counted alone are walked as bit rows (:meth:`_bits`, module
    docstring, "Cost"), kept in their own least-recently-used cache of at most
    :data:`CACHE_WORDS` words. The pairs :math:`y = x` are left out of :math:`b` by subtraction. The
    closed-world counts (``closed_world=True``) walk from the rows :math:`Y`, shared by every
    relation. The rule sets of the relations (:meth:`rule_set`, module docstring, "Heads with
    several bodies") are cached per relation; their pools enumerate paths over an index of every
    entity's triples, built on first use.

    Args:
        edge_index: ``[2, E]`` heads and tails of the training triples (global ids).
        edge_type: ``[E]`` their relations.
        num_nodes: The number of entities.
        num_relations: The number of relations.
        max_heads: Most heads of :math:`X_r` used per relation. Default 1000.
        seed: Seeds the draw of the heads. Default 0.
    """

    def __init__(
        self,
        edge_index: Tensor,
        edge_type: Tensor,
        num_nodes: int,
        num_relations: int,
        *,
        max_heads: int = 1000,
        seed: int = 0,
    ) -> None:
        if isinstance(max_heads, bool) or not isinstance(max_heads, int) or max_heads < 1:
            raise GraphDataError(
                f"max_heads: expected a positive int (heads sampled per relation), got "
                f"{max_heads!r}; pass e.g. 1000"
            )
        heads = edge_index[0].cpu().numpy()
        tails = edge_index[1].cpu().numpy()
        types = edge_type.cpu().numpy()
        self.num_nodes = num_nodes
        self._seed = seed
        self._triples = (heads, types, tails)
        self._incidence: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._rule_sets: dict[tuple[int, int], tuple[Pattern, ...]] = {}
        # (relation, L) -> (s, b) of the rule set's union, and per pattern the (d_1, d) it adds
        # (the targets' own candidates; the union itself is not kept: its bit rows are large)
        self._set_counts: dict[tuple[int, int], tuple[float, float]] = {}
        self._set_added: dict[tuple[int, int], dict[Pattern, tuple[float, float]]] = {}
        self._adjacency: list[sp.csr_matrix] = []
        self._transpose: list[sp.csr_matrix] = []
        shape = (num_nodes, num_nodes)
        for r in range(num_relations):
            pick = types == r
            ones = np.ones(int(pick.sum()), dtype=np.float32)
            a = sp.csr_matrix((ones, (heads[pick], tails[pick])), shape=shape)
            a.data[:] = 1.0  # duplicates count once
            self._adjacency.append(a)
            self._transpose.append(a.T.tocsr())
        rng = np.random.default_rng(seed)
        self._heads: list[np.ndarray] = []
        for r in range(num_relations):
            x = np.unique(heads[types == r])
            if x.size > max_heads:
                x = np.sort(rng.choice(x, size=max_heads, replace=False))
            self._heads.append(x)
        # Y: the entities in some triple (no pattern reaches anything from the others), or a
        # draw of max_heads of them, drawn after the X_r so that those do not depend on it.
        active = np.unique(np.concatenate([heads, tails]))
        self._num_active = active.size
        if active.size > max_heads:
            active = np.sort(rng.choice(active, size=max_heads, replace=False))
        self._everyone = active
        self._truth: dict[int, sp.csr_matrix] = {}
        self._truth_keys: dict[int, np.ndarray] = {}
        # sorted linear keys of the cached walks, dropped with them: (walk, keys)
        self._linear: dict[tuple[int, Pattern], tuple[sp.csr_matrix, np.ndarray]] = {}
        self._counts: dict[tuple[int, bool, tuple[Pattern, ...]], tuple[float, float]] = {}
        self._matrices: OrderedDict[tuple[int, Pattern], sp.csr_matrix] = OrderedDict()
        self._stored = 0  # entries held by _matrices
        self._bit_rows: OrderedDict[tuple[int, Pattern], tuple[np.ndarray, np.ndarray]] = (
            OrderedDict()
        )
        self._bit_words = 0  # words held by _bit_rows
        self._reached: dict[tuple[int, bool], np.ndarray] = {}  # rows of A^d with an entry
        empty, none = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
        # keys, their relation, rows, columns, facts, pairs y != x and, built on use, the bit
        # rows of the facts and of the other pairs (_extended_counts)
        self._split: tuple[
            np.ndarray, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray | None
        ] = (empty, -1, empty, empty, none, none, None)
        self._num_facts: dict[int, float] = {}

    def _rows(self, heads: int) -> np.ndarray:
        """The heads :math:`X_r` for ``heads = r``; the entities :math:`Y` for -1."""
        return self._everyone if heads < 0 else self._heads[heads]

    def _facts(self, relation: int) -> sp.csr_matrix:
        """``[X, N]`` 0/1 rows of :math:`T_r` over :math:`X_r`, without :math:`y = x`."""
        if relation not in self._truth:
            x = self._heads[relation]
            rows = self._adjacency[relation][x].tocoo()
            keep = x[rows.row] != rows.col  # y != x, as in R_pi
            ones = np.ones(int(keep.sum()), dtype=np.float32)
            self._truth[relation] = sp.csr_matrix(
                (ones, (rows.row[keep], rows.col[keep])), shape=(x.size, self.num_nodes)
            )
        return self._truth[relation]

    def _facts_keys(self, relation: int) -> np.ndarray:
        """Sorted linear keys :func:`_linear` of :meth:`_facts`."""
        if relation not in self._truth_keys:
            self._truth_keys[relation] = _linear(self._facts(relation))
        return self._truth_keys[relation]

    def _loops_keys(self, heads: int) -> np.ndarray:
        """Sorted linear keys :func:`_linear` of the pairs y = x: ``i * N + x_i`` of row ``i``."""
        x = self._rows(heads)
        return np.arange(x.size, dtype=np.int64) * self.num_nodes + x

    def _keys(self, heads: int, pattern: Pattern) -> np.ndarray:
        """Sorted linear keys :func:`_linear` of :meth:`_walk`, cached with the walk."""
        key = (heads, pattern)
        walk = self._walk(heads, pattern)
        cached = self._linear.get(key)
        if cached is not None and cached[0] is walk:
            return cached[1]
        keys = _linear(walk)
        if key in self._matrices:
            self._linear[key] = (walk, keys)
        return keys

    def _walk(self, heads: int, prefix: Pattern) -> sp.csr_matrix:
        """``[X, N]`` 0/1 walks of ``prefix`` from the rows :meth:`_rows` (``y = x`` included).

        ``heads`` is the relation :math:`r` for the rows :math:`X_r`, or -1 for the rows
        :math:`Y` (shared by every relation).
        """
        key = (heads, prefix)
        if key in self._matrices:
            self._matrices.move_to_end(key)
            return self._matrices[key]
        if not prefix:
            return _one_hot(self._rows(heads), self.num_nodes)
        walk = self._walk(heads, prefix[:-1])  # [X, N] walks of the prefix but its last step
        return self._keep(key, self._advance(walk, prefix[-1]))

    def _advance(self, walk: sp.csr_matrix, step: tuple[int, bool, int]) -> sp.csr_matrix:
        """``[X, N]`` 0/1 walks of ``walk`` one ``step`` further (``y = x`` included)."""
        rel, forward, anchor = step
        if anchor >= 0:
            # E_a: column a of walk @ A^d alone. Every stored entry is positive, so (x, a) is
            # non-zero iff row x of the walk holds some u with A^d[u, a] != 0, the entries of
            # row a of the other orientation; no full product, no column slice of it.
            other = self._transpose[rel] if forward else self._adjacency[rel]
            into = np.zeros(self.num_nodes, dtype=bool)  # [N] the u with A^d[u, a] != 0
            into[other.indices[other.indptr[anchor] : other.indptr[anchor + 1]]] = True
            rows = np.repeat(np.arange(walk.shape[0]), np.diff(walk.indptr))  # [nnz]
            hit = np.unique(rows[into[walk.indices]])  # [hits] rows whose walks reach a
            ones = np.ones(hit.size, dtype=np.float32)
            reach = sp.csr_matrix(
                (ones, (hit, np.full(hit.size, anchor))), shape=(walk.shape[0], self.num_nodes)
            )
        else:
            reach = walk @ (self._adjacency[rel] if forward else self._transpose[rel])
        reach.data[:] = 1.0
        return reach

    def holders(self, atom: Atom) -> np.ndarray:
        r"""Sorted entities :math:`u` with the fact ``atom`` (:math:`s(u, c)` or :math:`s(c, u)`).

        Args:
            atom: ``(s, forward, c)``: ``forward`` for :math:`s(u, c)`, else :math:`s(c, u)`.

        Raises:
            GraphDataError: For an atom that is not ``(relation id, bool, entity id)`` of this
                graph.
        """
        return self._holders(_check_atom(atom, len(self._adjacency), self.num_nodes))

    def _holders(self, atom: Atom) -> np.ndarray:
        """:meth:`holders` of a checked ``atom``."""
        rel, forward, constant = atom
        other = self._transpose[rel] if forward else self._adjacency[rel]
        return np.sort(other.indices[other.indptr[constant] : other.indptr[constant + 1]])

    def _conditioned_keys(
        self,
        relation: int,
        pattern: Pattern,
        node: int,
        holders: np.ndarray,
        prefix: sp.csc_matrix | None = None,
    ) -> np.ndarray:
        r"""Sorted linear keys of :math:`R_\pi` with node ``node`` kept to ``holders``.

        The walk :math:`A_{r_1}^{d_1} E_{a_1} \cdots A_{r_i}^{d_i} E_{a_i} C\, A_{r_{i+1}}^{d_{i+1}}
        \cdots` from the rows :math:`X_r`, :math:`C` the diagonal 0/1 matrix of ``holders``
        (module docstring, "Conditions"); ``y = x`` included, as :meth:`_keys`. Computed as the
        prefix's walk restricted to the holders' columns times the walks of the rest of the
        pattern from the holders alone, so its cost follows the holders, not the walk.
        ``prefix``: the prefix's walk :meth:`_walk` of ``pattern[:node]`` as CSC, if at hand.
        """
        if prefix is None:
            prefix = self._walk(relation, pattern[:node]).tocsc()
        part = prefix[:, holders].tocsr()  # [X, H] the walks that reach a holder at the node
        if node == len(pattern):  # the tail: the pairs (x, holder), holders sorted
            part.sort_indices()
            rows = np.repeat(np.arange(part.shape[0], dtype=np.int64), np.diff(part.indptr))
            return rows * self.num_nodes + holders[part.indices]
        walk = part @ self._walks_from(holders, pattern[node:])  # the rest from each holder
        walk.data[:] = 1.0
        return _linear(walk)

    def _middles(
        self, relation: int, pattern: Pattern, node: int, keys: np.ndarray, most: float
    ) -> sp.csr_matrix | None:
        r"""``[K, N]`` 0/1: the entities at ``node`` of the walks of ``pattern`` per pair.

        Row :math:`j` holds the :math:`h` with a walk of ``pattern[:node]`` from :math:`x` to
        :math:`h` and of the rest from :math:`h` to :math:`y`, for the pair :math:`(x, y)` of
        ``keys[j]`` (sorted linear keys of pairs the pattern joins); a condition at ``node``
        keeps the pair iff it holds for one of them. The candidates are expanded from the
        shorter side: the ends of :math:`x`'s prefix walk (:meth:`_walk`), each looked up in the
        walks of the rest from every entity the prefix reaches; or, where the rest is shorter,
        the starts of the rest's walks into :math:`y` (the rest walked backwards from the
        tails), each looked up in :math:`x`'s prefix walk. At the tail, :math:`h = y`.

        Returns:
            The matrix, or None where the candidates would number more than ``most``.
        """
        rows, tails = keys // self.num_nodes, keys % self.num_nodes
        if node == len(pattern):  # the tail: the pair's own (every key is a pair it joins)
            return _one_hot(tails, self.num_nodes)
        if len(pattern) - node < node:  # the rest is shorter: from y backwards
            ends, at = np.unique(tails, return_inverse=True)
            back = _one_hot(ends, self.num_nodes)
            for rel, forward, anchor in reversed(pattern[node:]):
                if anchor >= 0:  # the step ends on the constant
                    keep = np.zeros(self.num_nodes, dtype=bool)
                    keep[anchor] = True
                    back = _keep_columns(back, keep)
                back = back @ (self._transpose[rel] if forward else self._adjacency[rel])
                back.data[:] = 1.0
            sides, pair_rows = back, at
            lookup = self._keys(relation, pattern[:node])  # x * N + h of the prefix's walks
        else:
            walk = self._walk(relation, pattern[:node])
            sides, pair_rows = walk, rows
            lookup = None
        counts = np.diff(sides.indptr)[pair_rows]
        if counts.sum() > most:
            return None
        pair = np.repeat(np.arange(keys.size), counts)  # [E] each pair, once per candidate
        first = np.repeat(sides.indptr[pair_rows] - np.cumsum(counts) + counts, counts)
        middle = sides.indices[first + np.arange(pair.size)]  # [E] the candidates h
        if lookup is not None:
            hit = _contains(lookup, rows[pair] * self.num_nodes + middle)
        else:
            rest = self._rest(relation, pattern, node)
            hit = _contains(
                rest.keys, np.searchsorted(rest.starts, middle) * self.num_nodes + tails[pair]
            )
        ones = np.ones(int(hit.sum()), dtype=np.float32)
        return sp.csr_matrix((ones, (pair[hit], middle[hit])), shape=(keys.size, self.num_nodes))

    def _rest(self, relation: int, pattern: Pattern, node: int) -> _Rest:
        """The walks of ``pattern[node:]`` from every entity that ``pattern[:node]`` reaches."""
        starts = np.unique(self._walk(relation, pattern[:node]).indices)
        return _Rest(starts, _linear(self._walks_from(starts, pattern[node:])))

    def _walks_from(self, starts: np.ndarray, steps: Pattern) -> sp.csr_matrix:
        """``[S, N]`` 0/1 walks of ``steps`` from each entity of ``starts`` (``y = x`` included)."""
        walk = _one_hot(starts, self.num_nodes)
        for step in steps:
            walk = self._advance(walk, step)
        return walk

    def condition_counts(
        self, relation: int, patterns: Sequence[Pattern], which: int, node: int, atom: Atom
    ) -> tuple[float, float]:
        r"""``(s, b)`` of the conjunction ``patterns`` with ``atom`` conditioning one node.

        The pairs of :math:`R_{\pi_1} \odot \cdots`, with :math:`\pi_{\mathrm{which}}`'s
        node ``node`` (1 .. L, the tail last) kept to the entities with the fact ``atom``
        (:meth:`holders`; module docstring, "Conditions"), counted as :meth:`counts` does.

        Args:
            relation: The head relation :math:`r`.
            patterns: The conjunction.
            which: Index into ``patterns`` of the conditioned pattern.
            node: Its node, 1 .. ``len(patterns[which])``.
            atom: ``(s, forward, c)``.
        """
        pattern = patterns[check_int("which", which, 0, len(patterns) - 1)]
        if not 1 <= node <= len(pattern):
            raise GraphDataError(
                f"node: expected a node 1 .. {len(pattern)} of pattern {which}, got {node!r}; "
                "the head (node 0) takes no condition"
            )
        keys = self._conditioned_keys(relation, pattern, node, self.holders(atom))
        others = [p for k, p in enumerate(patterns) if k != which]
        if others:
            keys = _intersect(keys, self._joint_keys(relation, others))
        return self._key_counts(relation, keys)

    def _keep(self, key: tuple[int, Pattern], matrix: sp.csr_matrix) -> sp.csr_matrix:
        """Cache ``matrix`` under ``key``, dropping the least recently used beyond the budget."""
        if matrix.nnz <= CACHE_NONZEROS:
            self._matrices[key] = matrix
            self._stored += matrix.nnz
            while self._stored > CACHE_NONZEROS:
                old, dropped = self._matrices.popitem(last=False)
                self._stored -= dropped.nnz
                self._linear.pop(old, None)
        return matrix

    def counts(
        self, relation: int, patterns: Sequence[Pattern], *, closed_world: bool = False
    ) -> tuple[float, float]:
        r"""``(s, b)`` of the conjunction of ``patterns`` for head relation ``relation``.

        :math:`s = \sum_{x \in X_r} \sum_y (R_{\pi_1} \odot \cdots)[x, y]\, T_r[x, y]` and
        :math:`b = \sum_{x \in X_r} \sum_y (R_{\pi_1} \odot \cdots)[x, y]` (module docstring);
        with ``closed_world``, :math:`(s, b + \hat b_0)`, the body pairs of the entities without
        an :math:`r` fact added (module docstring, "Ties").
        """
        if not patterns:
            raise GraphDataError(
                "patterns: expected at least one pattern, got none; pass [path_pattern(...)]"
            )
        key = (relation, closed_world, tuple(sorted(patterns)))
        if key in self._counts:
            return self._counts[key]
        if closed_world:
            support, body = self.counts(relation, key[2])
            body += self._body_without_facts(relation, key[2])
        else:
            # The product of the walks is R_pi1 . R_pi2 ... with the pairs y = x still in; T_r
            # has none, so they count only in b, and are subtracted there (no filtered copy of
            # every walk).
            # Every matrix here is 0/1, so each sum of a product is the number of entries the
            # factors share: the conjunction is the intersection of the walks' sorted linear
            # keys x * N + y, counted against those of T_r and of the pairs y = x without
            # building a product matrix (scipy builds and checks a matrix for every product).
            joint = self._keys(relation, key[2][0])
            for pattern in key[2][1:]:
                joint = _intersect(joint, self._keys(relation, pattern))
            support, body = self._key_counts(relation, joint)
        self._counts[key] = (support, body)
        return support, body

    def _joint_keys(self, relation: int, patterns: Sequence[Pattern]) -> np.ndarray:
        """Sorted linear keys of the pairs that every pattern of ``patterns`` joins."""
        ordered = sorted(patterns)
        joint = self._keys(relation, ordered[0])
        for pattern in ordered[1:]:
            joint = _intersect(joint, self._keys(relation, pattern))
        return joint

    def _extended_counts(
        self, relation: int, patterns: Sequence[Pattern], keys: np.ndarray, pattern: Pattern
    ) -> tuple[float, float]:
        r""":meth:`counts` of ``[*patterns, pattern]``, given ``keys``, those of ``patterns``.

        A search that tries every candidate with the same chosen patterns intersects their
        pairs once, not once per candidate, and looks them up in the candidate's bit rows
        (:meth:`_bits`) unless its keys are cached: the same integers, cached with them. Which
        of ``keys`` are facts of :math:`T_r` and which pairs :math:`y = x` is found once for
        every candidate too, so that a candidate's counts are those of its hits among them.
        Where the candidate's bit rows hold fewer words than ``keys`` has pairs (on FB15k-237
        a median of about 1,000 words against 11,000 pairs), the pairs are laid out once as
        bit rows of the facts and of the other pairs (:math:`y \ne x`), and the counts are the
        set bits of the candidate's rows ANDed with theirs: the same integers.
        """
        key = (relation, False, tuple(sorted([*patterns, pattern])))
        if key not in self._counts:
            if (relation, pattern) in self._linear:  # the pattern's keys are cached
                joint = _intersect(keys, self._keys(relation, pattern))
                self._counts[key] = self._key_counts(relation, joint)
            else:  # the pairs of keys that the pattern's bit rows join
                at, bits = self._bits(relation, pattern)
                if self._split[0] is not keys or self._split[1] != relation:  # the same keys
                    row, column = np.divmod(keys, self.num_nodes)
                    fact = _contains(self._facts_keys(relation), keys)
                    pair = column != self._heads[relation][row]  # not y = x
                    self._split = (keys, relation, row, column, fact, pair, None)
                _, _, row, column, fact, pair, dense = self._split
                if bits.size < keys.size:  # fewer words of the pattern than pairs of keys
                    if dense is None:  # [2, N, W] bit rows of the facts and other pairs y != x
                        dense = np.zeros((2, self.num_nodes, bits.shape[1]), dtype=np.uint64)
                        shifts = np.left_shift(np.uint64(1), (row % 64).astype(np.uint64))
                        np.bitwise_or.at(dense, (1 - fact, column, row // 64), shifts * pair)
                        self._split = (*self._split[:-1], dense)
                    support = _popcount(bits & dense[0, at])
                    self._counts[key] = (
                        float(support),
                        float(support + _popcount(bits & dense[1, at])),
                    )
                else:
                    hit = _bits_at(at, bits, row, column, self.num_nodes) != 0
                    self._counts[key] = (
                        float(np.count_nonzero(hit & fact)),
                        float(np.count_nonzero(hit & pair)),
                    )
        return self._counts[key]

    def _pool_counts(
        self, relation: int, pool: Sequence[Pattern]
    ) -> dict[Pattern, tuple[float, float]]:
        r""":meth:`counts` of each pattern of ``pool`` alone, from its bit rows (:meth:`_bits`).

        :math:`b` is the number of set bits less those of the pairs :math:`y = x`, :math:`s`
        the number of set bits at the facts of :math:`T_r`: looked up in the pattern's rows, or,
        where the rows hold fewer words than there are pairs and facts to look up, the set bits
        of the rows ANDed with those of the pairs and of the facts. The patterns are walked in
        sorted order, so a prefix is walked once while its patterns follow it. The same integers
        as :meth:`counts` (tested), cached with them.
        """
        rows = self._heads[relation]
        index = np.arange(rows.size)
        facts = self._facts(relation).tocoo()
        row = np.concatenate([index, facts.row])  # [X + n_r] the pairs y = x, then the facts
        column = np.concatenate([rows, facts.col])
        dense: np.ndarray | None = None  # [2, N, W] bit rows of the pairs y = x and the facts
        out: dict[Pattern, tuple[float, float]] = {}
        for pattern in sorted(pool):
            key = (relation, False, (pattern,))
            if key not in self._counts:
                at, bits = self._bits(relation, pattern)
                if bits.size < row.size:  # fewer words than pairs to look up: AND the rows
                    if dense is None:
                        dense = np.zeros((2, self.num_nodes, bits.shape[1]), dtype=np.uint64)
                        shifts = np.left_shift(np.uint64(1), (row % 64).astype(np.uint64))
                        which = (np.arange(row.size) >= rows.size).astype(np.intp)
                        np.bitwise_or.at(dense, (which, column, row // 64), shifts)
                    loops, support = _popcount(bits & dense[0, at]), _popcount(bits & dense[1, at])
                else:  # the pairs y = x and the facts looked up in one pass (one map of at)
                    hit = _bits_at(at, bits, row, column, self.num_nodes)
                    loops, support = int(hit[: rows.size].sum()), int(hit[rows.size :].sum())
                self._counts[key] = (float(support), float(_popcount(bits) - loops))
            out[pattern] = self._counts[key]
        return out

    def _bits(self, relation: int, pattern: Pattern) -> tuple[np.ndarray, np.ndarray]:
        r"""The walk of ``pattern`` from :math:`X_r` as bit rows: ``(at, bits)``.

        ``relation`` is :math:`r` for the rows :math:`X_r`, or -1 for the rows :math:`Y`.

        ``at`` holds ``[V]`` sorted entities, ``bits`` their ``[V, W]`` rows of :math:`W =
        \lceil |X_r| / 64 \rceil` words: bit :math:`i` of the row of :math:`y` is set iff the
        pattern joins :math:`x_i` to :math:`y` (the pairs :math:`y = x` still in; an entity of
        ``at`` may have a row of 0). A step along :math:`A^d` ORs, for each :math:`v`, the rows
        of the :math:`u` with :math:`A^d[u, v] \ne 0`, :math:`W` words per triple of the
        step's relation however many pairs the walk joins, where a sparse product's cost
        grows with the pairs (most pairs around FB15k-237's hubs); an anchored step ORs the
        rows into :math:`a` alone. Cached per ``(relation, pattern)`` in a least-recently-used
        cache of at most :data:`CACHE_WORDS` words.
        """
        key = (relation, pattern)
        if key in self._bit_rows:
            self._bit_rows.move_to_end(key)
            return self._bit_rows[key]
        if not pattern:
            rows = self._rows(relation)  # sorted
            index = np.arange(rows.size)
            bits = np.zeros((rows.size, -(-rows.size // 64)), dtype=np.uint64)  # [X, W]
            bits[index, index // 64] = np.left_shift(np.uint64(1), (index % 64).astype(np.uint64))
            return rows, bits
        at, bits = self._bits(relation, pattern[:-1])
        rel, forward, anchor = pattern[-1]
        # the u with A^d[u, v] != 0 for each v: row v of the other orientation
        into = self._transpose[rel] if forward else self._adjacency[rel]
        if anchor >= 0:
            sources = into.indices[into.indptr[anchor] : into.indptr[anchor + 1]]
            where = np.minimum(np.searchsorted(at, sources), max(at.size - 1, 0))
            where = where[at[where] == sources] if at.size else where[:0]  # [k] rows of u
            row = np.bitwise_or.reduce(bits[where], axis=0, initial=np.uint64(0))  # [W]
            value = (np.array([anchor]), row.reshape(1, -1))
        else:
            out_of = self._adjacency[rel] if forward else self._transpose[rel]  # row u: its v
            degree = out_of.indptr[at + 1] - out_of.indptr[at]  # [V] steps from each u
            if 4 * int(degree.sum()) < into.nnz:  # few steps from the walk: take those alone
                value = _bit_step_from(at, bits, out_of, degree)
            else:  # every v of the relation
                if (rel, forward) not in self._reached:
                    self._reached[rel, forward] = np.flatnonzero(np.diff(into.indptr))
                reached = self._reached[rel, forward]
                value = _bit_step(at, bits, into, reached, self.num_nodes)
        if value[1].size <= CACHE_WORDS:
            self._bit_rows[key] = value
            self._bit_words += value[1].size
            while self._bit_words > CACHE_WORDS:
                self._bit_words -= self._bit_rows.popitem(last=False)[1][1].size
        return value

    def _key_counts(self, relation: int, keys: np.ndarray) -> tuple[float, float]:
        """``(s, b)`` of the pairs with sorted linear keys ``keys`` over the rows :math:`X_r`."""
        if keys.size == 0:
            return 0.0, 0.0
        support = _intersect(keys, self._facts_keys(relation)).size
        body = keys.size - _intersect(keys, self._loops_keys(relation)).size
        return float(support), float(body)

    def _union_keys(self, relation: int, patterns: Sequence[Pattern]) -> np.ndarray:
        """Sorted linear keys of the pairs that some pattern of ``patterns`` joins."""
        keys = self._keys(relation, patterns[0])
        for pattern in patterns[1:]:
            keys = np.union1d(keys, self._keys(relation, pattern))
        return keys

    def union_counts(self, relation: int, patterns: Sequence[Pattern]) -> tuple[float, float]:
        r"""``(s, b)`` of the union (disjunction) of ``patterns`` for head relation ``relation``.

        :math:`s_B = \sum_{x \in X_r} \sum_y R_B[x, y]\, T_r[x, y]` and :math:`b_B = \sum_{x \in
        X_r} \sum_y R_B[x, y]` with :math:`R_B = \max_j R_{\beta_j}` (module docstring, "Heads
        with several bodies").
        """
        if not patterns:
            raise GraphDataError(
                "patterns: expected at least one pattern, got none; pass [path_pattern(...)]"
            )
        return self._key_counts(relation, self._union_keys(relation, patterns))

    def union_agreement(self, relation: int, patterns: Sequence[Pattern]) -> float:
        r"""Dice :math:`D_B = 2 s_B / (b_B + n_r)` of the union of ``patterns`` (0 when s = 0)."""
        return _dice(*self.union_counts(relation, patterns), self.num_facts(relation))

    def between(self, head: int, relation: int, tail: int, max_length: int) -> set[Pattern]:
        r"""The plain patterns of the simple paths from ``head`` to ``tail`` in the whole graph.

        Paths of :math:`1 .. \min(L, 3)` steps (:data:`POOL_LENGTH`), each step forwards or
        backwards, no node twice, the triple ``(head, relation, tail)`` itself left out and no
        triple of ``relation`` on a path of two or more steps: the candidate patterns without
        anchors of :func:`pattern_search` on an unpruned local structure of that triple
        (``through_relation=False``), enumerated from both ends without building one.

        Args:
            head: The head entity.
            relation: The relation :math:`r` whose fact this is.
            tail: The tail entity (``!= head``).
            max_length: The longest path :math:`L`.

        Returns:
            The set of patterns ``((relation, forward, -1), ...)``.
        """
        ptr, node, code = self._around()
        width = 2 * len(self._adjacency)  # codes 2 s (forward) and 2 s + 1 (backward)
        length = min(max_length, POOL_LENGTH)
        found: set[tuple[int, ...]] = set()
        ends_x, steps_x = node[ptr[head] : ptr[head + 1]], code[ptr[head] : ptr[head + 1]]
        ends_y, steps_y = node[ptr[tail] : ptr[tail + 1]], code[ptr[tail] : ptr[tail + 1]] ^ 1
        # steps_y: the step from each neighbour z of the tail into the tail (direction flipped)
        one = steps_x[(ends_x == tail) & (steps_x != 2 * relation)]  # not the fact itself
        found.update((int(c),) for c in np.unique(one))
        if length >= 2:
            keep_x = (ends_x != tail) & (steps_x // 2 != relation)
            keep_y = (ends_y != head) & (steps_y // 2 != relation)
            ends_x, steps_x = ends_x[keep_x], steps_x[keep_x]
            ends_y, steps_y = ends_y[keep_y], steps_y[keep_y]
            left, right = _equal_pairs(ends_x, ends_y)
            for c in np.unique(steps_x[left] * width + steps_y[right]):
                found.add((int(c) // width, int(c) % width))
        if length >= 3 and ends_x.size and ends_y.size:
            middle = np.unique(ends_x)  # z1, one step from the head
            counts = ptr[middle + 1] - ptr[middle]
            owner = np.repeat(middle, counts)  # [m] z1 of each step z1 -> z2
            at = np.repeat(ptr[middle] - np.cumsum(counts) + counts, counts) + np.arange(
                int(counts.sum())
            )
            far, step = node[at], code[at]  # [m] z2 and the step's code
            keep = (step // 2 != relation) & (far != head) & (far != tail) & (far != owner)
            keep &= np.isin(far, ends_y)
            owner, far, step = owner[keep], far[keep], step[keep]
            # (first step, middle step) per z2, then the last step of each z2
            left, right = _equal_pairs(owner, ends_x)
            firsts = np.unique(
                np.stack([far[left], steps_x[right] * width + step[left]], axis=1), axis=0
            )
            left, right = _equal_pairs(firsts[:, 0], ends_y)
            for c in np.unique(firsts[left, 1] * width + steps_y[right]):
                c = int(c)
                found.add((c // (width * width), c // width % width, c % width))
        return {tuple((c // 2, c % 2 == 0, -1) for c in codes) for codes in found}

    def _around(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every entity's incident triples, built once: ``(ptr, other end, code)``.

        Entity ``u``'s triples are entries ``ptr[u] .. ptr[u + 1]``; code ``2 s`` is the step
        from ``u`` along ``s(u, v)`` (forwards) and ``2 s + 1`` along ``s(v, u)`` (backwards).
        """
        if self._incidence is None:
            heads, types, tails = self._triples
            start = np.concatenate([heads, tails]).astype(np.int64)
            end = np.concatenate([tails, heads]).astype(np.int64)
            code = np.concatenate([2 * types, 2 * types + 1]).astype(np.int64)
            keep = start != end
            start, end, code = start[keep], end[keep], code[keep]
            order = np.lexsort((code, end, start))
            ptr = np.zeros(self.num_nodes + 1, dtype=np.int64)
            np.add.at(ptr, start + 1, 1)
            self._incidence = (np.cumsum(ptr), end[order], code[order])
        return self._incidence

    def rule_set(self, relation: int, max_length: int = POOL_LENGTH) -> tuple[Pattern, ...]:
        r"""The rule set :math:`B_r` of ``relation``: bodies whose union agrees best with it.

        Module docstring, "Heads with several bodies": the pool is the patterns
        (:meth:`between`) of at least :data:`POOL_SUPPORT` of :data:`POOL_FACTS` seeded
        :math:`r` facts over :math:`X_r`; the set grows greedily by the admissible pattern of
        largest :math:`D_B`, with an exchange pass after each addition, and then drops each
        member that fails the admission test given the others. Cached per relation.

        Args:
            relation: The head relation :math:`r`.
            max_length: The longest path :math:`L` (the pool stops at :data:`POOL_LENGTH`).

        Returns:
            The members in the order they hold in the set (empty when no drawn fact has a path).
        """
        key = (relation, min(max_length, POOL_LENGTH))
        if key not in self._rule_sets:
            keys = self._facts_keys(relation)
            heads = self._heads[relation]
            drawn = np.random.default_rng(self._seed).permutation(keys.size)[:POOL_FACTS]
            seen: dict[Pattern, int] = {}
            for i in drawn:
                row, tail = divmod(int(keys[i]), self.num_nodes)
                for pattern in sorted(self.between(int(heads[row]), relation, tail, key[1])):
                    seen[pattern] = seen.get(pattern, 0) + 1
            pool = [pattern for pattern, n in seen.items() if n >= POOL_SUPPORT]
            self._rule_sets[key] = _grow_rule_set(self, relation, pool)
        return self._rule_sets[key]

    def _body_without_facts(self, relation: int, patterns: tuple[Pattern, ...]) -> float:
        r""":math:`\hat b_0` of the conjunction of ``patterns`` (module docstring, "Ties")."""
        facts_per_row = np.diff(self._adjacency[relation].indptr)  # [N] r facts of each entity
        without = facts_per_row[self._everyone] == 0  # [Y] the drawn entities without one
        if not without.any():
            return 0.0
        num_heads = int((facts_per_row > 0).sum())  # |H_r|
        # the conjunction's bit rows from Y (_bits), its pairs counted in the rows without:
        # the same integer as the sum of the product of the walks
        at, bits = self._bits(-1, patterns[0])
        if len(patterns) > 1:
            joint = np.zeros((self.num_nodes, bits.shape[1]), dtype=np.uint64)  # [N, W]
            joint[at] = bits
            for pattern in patterns[1:]:
                other = np.zeros_like(joint)
                where, words = self._bits(-1, pattern)
                other[where] = words
                joint &= other
            at, bits = np.arange(self.num_nodes), joint
        rows = np.flatnonzero(without)  # [k] the rows of Y without an r fact
        mask = np.zeros(bits.shape[1], dtype=np.uint64)  # [W] their bits
        shifts = np.left_shift(np.uint64(1), (rows % 64).astype(np.uint64))  # [k]
        np.bitwise_or.at(mask, rows // 64, shifts)
        loops = int(_bits_at(at, bits, rows, self._everyone[rows], self.num_nodes).sum())
        pairs = _popcount(bits & mask) - loops
        share = self._heads[relation].size / num_heads  # |X_r| / |H_r|
        scale = share * (self._num_active - num_heads) / int(without.sum())
        return scale * float(pairs)

    def num_facts(self, relation: int) -> float:
        r""":math:`n_r = \sum_{x \in X_r} \sum_{y \ne x} T_r[x, y]` (module docstring)."""
        if relation not in self._num_facts:
            self._num_facts[relation] = float(self._facts(relation).sum())
        return self._num_facts[relation]

    def agreement(
        self, relation: int, patterns: Sequence[Pattern], *, closed_world: bool = False
    ) -> float:
        r"""Dice :math:`D = 2 s / (b + n_r)` of the conjunction of ``patterns`` (0 when s = 0).

        With ``closed_world``, :math:`D^{\mathrm{cw}} = 2 s / (b + \hat b_0 + n_r)` (module
        docstring, "Ties").
        """
        support, body = self.counts(relation, patterns, closed_world=closed_world)
        return 2.0 * support / (body + self.num_facts(relation)) if support else 0.0


def _check_atom(atom: object, num_relations: int, num_nodes: int) -> Atom:
    """``atom`` as ``(relation, forward, constant)`` of a graph of these sizes, or an error."""
    parts = atom if isinstance(atom, tuple) and len(atom) == 3 else (None, None, None)
    rel, forward, constant = parts

    def index(value: object, size: int) -> bool:
        return (
            isinstance(value, (int, np.integer))
            and not isinstance(value, bool)
            and 0 <= int(value) < size
        )

    if not (isinstance(forward, bool) and index(rel, num_relations) and index(constant, num_nodes)):
        raise GraphDataError(
            f"atom: expected (relation id 0 .. {num_relations - 1}, forward bool, entity id "
            f"0 .. {num_nodes - 1}), got {atom!r}; pass e.g. (2, True, 10) for s_2(u, 10)"
        )
    return int(rel), forward, int(constant)  # type: ignore[arg-type]


def _one_hot(columns: np.ndarray, num_columns: int) -> sp.csr_matrix:
    """``[K, num_columns]`` 0/1: row ``i`` holds column ``columns[i]`` alone."""
    ones = np.ones(columns.size, dtype=np.float32)
    return sp.csr_matrix(
        (ones, (np.arange(columns.size), columns)), shape=(columns.size, num_columns)
    )


def _keep_columns(matrix: sp.csr_matrix, keep: np.ndarray) -> sp.csr_matrix:
    """``matrix`` with the entries outside the columns where ``keep`` ([N] bool) is True dropped."""
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    hit = keep[matrix.indices]
    return sp.csr_matrix((matrix.data[hit], (rows[hit], matrix.indices[hit])), shape=matrix.shape)


def _linear(matrix: sp.csr_matrix) -> np.ndarray:
    """Sorted int64 keys ``row * num_columns + column`` of the stored entries of ``matrix``.

    The walks, facts and pairs ``y = x`` are 0/1 matrices without duplicate entries, so the
    keys are unique; their column indices are sorted in place first (a sparse product leaves
    them in any order), so the keys of consecutive rows are sorted as well.
    """
    if not matrix.has_sorted_indices:
        matrix.sort_indices()
    rows = np.repeat(np.arange(matrix.shape[0], dtype=np.int64), np.diff(matrix.indptr))
    return rows * matrix.shape[1] + matrix.indices


def _bit_step(
    at: np.ndarray, bits: np.ndarray, into: sp.csr_matrix, reached: np.ndarray, num_nodes: int
) -> tuple[np.ndarray, np.ndarray]:
    """The bit rows of a walk one step on: row ``v`` ORs the rows of the ``u`` in ``into[v]``.

    The walk reaches the sorted entities ``at`` with ``[V, W]`` bit rows ``bits``
    (:meth:`PatternBank._pool_counts`); ``into`` is ``[N, N]`` CSR, row ``v`` holding the ``u``
    with a step ``u -> v``, and ``reached`` its rows that hold some ``u``. Returns ``(at, bits)``
    of the next walk: the sorted ``v`` of ``reached`` and their ``[R, W]`` bit rows (some of 0).

    With rows of several words, the steps from an entity that the walk does not reach are left
    out before the rows are gathered where they are a quarter of the steps or more, and so are
    the ``v`` that only such steps reach (their rows would be 0): a step then costs a look-up
    per triple of the relation and :math:`W` words per step from the walk, not :math:`W` per
    triple. The OR of the same nonzero rows: the same bits.
    """
    if reached.size == 0:
        return reached, np.zeros((0, bits.shape[1]), dtype=bits.dtype)
    if bits.shape[1] >= 4:
        member = np.zeros(num_nodes, dtype=bool)
        member[at] = True
        keep = member[into.indices]  # [nnz] the steps from an entity of the walk
        kept = int(np.count_nonzero(keep))
        if 4 * kept <= 3 * into.nnz:
            total = np.concatenate([[0], np.cumsum(keep)])  # [nnz + 1] kept steps before each
            start, stop = total[into.indptr[reached]], total[into.indptr[reached + 1]]
            some = stop > start  # [R] the v with a kept step
            if not some.any():
                return reached[:0], np.zeros((0, bits.shape[1]), dtype=bits.dtype)
            place = np.zeros(num_nodes, dtype=np.intp)  # the row of each entity of at
            place[at] = np.arange(at.size)
            gathered = bits[place[into.indices[keep]]]  # [kept, W] the row of u of each step
            return reached[some], np.bitwise_or.reduceat(gathered, start[some], axis=0)
    dense = np.zeros((num_nodes, bits.shape[1]), dtype=bits.dtype)  # [N, W]
    dense[at] = bits
    gathered = dense[into.indices]  # [nnz, W] the row of u of each step u -> v
    # the rows between two reached v are empty, so each segment is one row's u
    return reached, np.bitwise_or.reduceat(gathered, into.indptr[reached], axis=0)  # [R, W]


def _bit_step_from(
    at: np.ndarray, bits: np.ndarray, out_of: sp.csr_matrix, degree: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_bit_step` from the steps of the walk's entities: ``(at, bits)`` of the next.

    ``out_of`` is ``[N, N]`` CSR, row ``u`` holding the ``v`` with a step ``u -> v``;
    ``degree`` the ``[V]`` steps of each entity of ``at``. Each step ``u -> v`` ORs the row of
    ``u`` into that of ``v``: the cost of the walk's own steps, for a walk of few entities.
    """
    total = int(degree.sum())
    if total == 0:
        return at[:0], bits[:0]
    owner = np.repeat(np.arange(at.size), degree)  # [m] the row of u of each step
    offset = np.arange(total) - np.repeat(np.cumsum(degree) - degree, degree)
    ends = out_of.indices[np.repeat(out_of.indptr[at], degree) + offset]  # [m] v of each step
    order = np.argsort(ends, kind="stable")
    ends, owner = ends[order], owner[order]
    first = np.flatnonzero(np.r_[True, ends[1:] != ends[:-1]])  # [R] each v's first step
    return ends[first], np.bitwise_or.reduceat(bits[owner], first, axis=0)


def _bits_at(
    at: np.ndarray, bits: np.ndarray, row: np.ndarray, column: np.ndarray, num_nodes: int
) -> np.ndarray:
    """``[k]`` 0/1: whether the walk (``at``, ``bits``) joins ``x_row`` to entity ``column``."""
    if at.size == 0 or row.size == 0:
        return np.zeros(row.size, dtype=np.uint64)
    if 8 * row.size < at.size:  # few entries: binary search of the sorted at
        where = np.searchsorted(at, column)  # [k]
        where[where == at.size] = 0
        where[at[where] != column] = at.size
    else:  # many: an [N] map from each entity to its row
        place = np.full(num_nodes, at.size, dtype=np.intp)  # past the end: not reached
        place[at] = np.arange(at.size)
        where = place[column]  # [k]
    flat = np.minimum(where, at.size - 1) * bits.shape[1] + (row >> 6)  # [k] into bits.ravel()
    words = bits.ravel()[flat]  # [k]
    words[where == at.size] = 0  # an entity the walk does not reach
    return np.right_shift(words, (row & 63).astype(np.uint64)) & np.uint64(1)


def _popcount(words: np.ndarray) -> int:
    """The number of set bits of the unsigned integer array ``words``."""
    if hasattr(np, "bitwise_count"):  # numpy >= 2.0
        return int(np.bitwise_count(words).sum(dtype=np.int64))
    table = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)
    return int(table[np.ascontiguousarray(words).view(np.uint8)].sum())


def _intersect(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The keys in both of the sorted unique arrays ``a`` and ``b`` (sorted).

    For two 0/1 matrices this is the set of stored entries of their elementwise product, and
    its size the product's sum. Arrays of similar sizes are merged (a stable sort of the two
    sorted runs is a merge; a key in both is a repeated neighbour), twice as fast there as the
    binary search of each key of the shorter array in the longer one used otherwise.
    """
    if a.size > b.size:
        a, b = b, a
    if a.size == 0:
        return a
    if 8 * a.size >= b.size:
        merged = np.concatenate([a, b])
        merged.sort(kind="stable")
        return merged[1:][merged[1:] == merged[:-1]]
    at = np.searchsorted(b, a)  # [a] where each key would go in b
    at[at == b.size] = 0  # past the end: not in b (b[0] < that key)
    return a[b[at] == a]


def _equal_pairs(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every index pair ``(i, j)`` with ``a[i] == b[j]`` (a join of two unsorted arrays)."""
    order = np.argsort(b, kind="stable")
    ordered = b[order]
    low = np.searchsorted(ordered, a, side="left")
    many = np.searchsorted(ordered, a, side="right") - low  # [a] matches of each a[i]
    left = np.repeat(np.arange(a.size), many)
    offset = np.arange(int(many.sum())) - np.repeat(np.cumsum(many) - many, many)
    return left, order[np.repeat(low, many) + offset]


def _absent(keys: np.ndarray, union: np.ndarray) -> np.ndarray:
    """The keys of the sorted unique ``keys`` that are not in the sorted unique ``union``."""
    if union.size == 0 or keys.size == 0:
        return keys
    at = np.searchsorted(union, keys)
    at[at == union.size] = 0  # past the end: not in union (union[0] < that key)
    return keys[union[at] != keys]


def _dice(support: float, body: float, facts: float) -> float:
    """:math:`2 s / (b + n_r)`, 0 when :math:`s = 0`."""
    return 2.0 * support / (body + facts) if support else 0.0


def _exact_dice(support: float, body: float, facts: float) -> Fraction:
    """:func:`_dice` as an exact fraction of the integer counts (ties compare equal)."""
    return Fraction(2 * int(support), int(body + facts)) if support else Fraction(0)


def _grow_rule_set(bank: PatternBank, relation: int, pool: list[Pattern]) -> tuple[Pattern, ...]:
    r"""The rule set over ``pool`` (module docstring, "Heads with several bodies").

    :math:`\beta_1` is the first pattern of largest :math:`D`; then, while some pattern is
    admissible, the admissible one of largest :math:`D_{B + \beta'}` joins, and one exchange
    pass replaces each earlier member by the pool pattern that raises :math:`D_B` most, if any
    does; last, while some member fails the admission test given the others, the one of largest
    p-value is dropped. The unions are kept by :class:`_Union` (the pairs each candidate adds,
    and those only one member joins), the same counts as :meth:`PatternBank.union_counts`.
    """
    if not pool:
        return ()
    facts = bank.num_facts(relation)
    counted = bank._pool_counts(relation, pool)
    single = {pattern: counted[pattern] for pattern in pool}  # in pool order: ties
    union = _Union(bank, relation, [max(pool, key=lambda pattern: _dice(*single[pattern], facts))])
    while True:
        _, pattern = _best_disjunct(
            single, union.members, union.counts, union.added, facts, admit=True
        )
        if pattern is None:
            break
        union.append(pattern)
        for i in range(len(union.members) - 1):  # one exchange pass over the earlier members
            current = _dice(*union.counts, facts)
            only = union.exclusive(i)[1]
            rest = (union.counts[0] - only[0], union.counts[1] - only[1])
            value, other = _best_disjunct(
                single,
                union.members,
                rest,
                partial(union.added_without, i=i),
                facts,
                admit=False,
                ceiling=partial(union.ceiling_without, i=i, single=single),
                floor=current,
            )
            if other is not None and value > current:
                union.replace(i, other)
    members = list(union.members)
    while len(members) > 1:  # backward elimination with the same test
        union = _Union(bank, relation, members)
        support, body = union.counts
        value = _dice(support, body, facts)
        worst: tuple[float, Pattern] | None = None
        for i, member in enumerate(members):
            only = union.exclusive(i)[1]
            s_rest, b_rest = support - only[0], body - only[1]
            rest_value = _dice(s_rest, b_rest, facts)
            p = 1.0
            if value > rest_value:
                p = _disjunct_p_value(support - s_rest, body - b_rest, rest_value)
            if p >= ALPHA and (worst is None or p > worst[0]):
                worst = (p, member)
        if worst is None:
            break
        members.remove(worst[1])
    return tuple(members)


class _Union:
    r"""The union of the walks of ``members`` while a rule set grows (:func:`_grow_rule_set`).

    Holds the union's counts :math:`(s_B, b_B)`; per candidate pattern, the pairs it adds to the
    union (:math:`\beta \setminus B`, cached and narrowed by each member appended rather than
    searched in the whole union again); per member, the pairs that only it joins. The pairs that
    a candidate adds to the union without member :math:`i` are those it adds to :math:`B` and
    those of it that only member :math:`i` joins, so the exchange pass counts a candidate against
    the few pairs of one member, not against the union of the others. Every count is the same
    integer as :meth:`PatternBank.union_counts` of the pattern lists (tested).

    The pairs a candidate adds are kept as bit positions :math:`y \cdot 64 W + i` (pair
    :math:`(x_i, y)`, :math:`W` words a row) into ``[N, W]`` bit rows (:meth:`PatternBank._bits`),
    split into the facts of :math:`T_r` and the other pairs, without the pairs :math:`y = x`
    (which no count takes): a count is then the sizes of the two, and the narrowing by appended
    members looks each position up in the bit rows of the union (with the pairs :math:`y = x`),
    one word read per pair, where a search of every appended member's sorted keys and a count
    of the rest against the sorted keys of :math:`T_r` and of :math:`y = x` cost a binary
    search or a merge each. The pairs only a member joins keep a flag per pair for the facts.
    """

    def __init__(self, bank: PatternBank, relation: int, members: list[Pattern]) -> None:
        self._bank = bank
        self._relation = relation
        self._facts = bank.num_facts(relation)
        self._width = -(-bank._heads[relation].size // 64)  # W
        self._fact_bits: np.ndarray | None = None  # [N, W] bit rows of T_r, built on use
        self._reset(list(members))

    def _reset(self, members: list[Pattern]) -> None:
        self.members = members
        keys = self._bank._union_keys(self._relation, members)
        self.counts = self._bank._key_counts(self._relation, keys)
        # candidate -> (positions of the facts it adds, of its other pairs, how many of
        # _appended are taken out)
        self._added: dict[Pattern, tuple[np.ndarray, np.ndarray, int]] = {}
        self._appended: list[Pattern] = []
        # member -> (sorted keys only it joins but y = x, their counts, rows, columns, facts)
        self._exclusive: dict[
            int, tuple[np.ndarray, tuple[float, float], np.ndarray, np.ndarray, np.ndarray]
        ] = {}
        self._blocked: np.ndarray | None = None  # [N, W] the union's bit rows and y = x

    def _blocked_bits(self) -> np.ndarray:
        """``[N, W]`` bit rows of the pairs the members join and of the pairs ``y = x``."""
        if self._blocked is None:
            rows = self._bank._heads[self._relation]  # sorted, unique
            index = np.arange(rows.size)
            blocked = np.zeros((self._bank.num_nodes, self._width), dtype=np.uint64)
            blocked[rows, index // 64] = np.left_shift(np.uint64(1), (index % 64).astype(np.uint64))
            for member in self.members:
                at, bits = self._bank._bits(self._relation, member)
                blocked[at] |= bits
            self._blocked = blocked
        return self._blocked

    def _facts_bits(self) -> np.ndarray:
        """``[N, W]`` bit rows of the facts :math:`T_r` (bit :math:`i` of row :math:`y`)."""
        if self._fact_bits is None:
            facts = self._bank._facts(self._relation).tocoo()
            bits = np.zeros((self._bank.num_nodes, self._width), dtype=np.uint64)
            shifts = np.left_shift(np.uint64(1), (facts.row % 64).astype(np.uint64))
            np.bitwise_or.at(bits, (facts.col, facts.row // 64), shifts)
            self._fact_bits = bits
        return self._fact_bits

    def append(self, pattern: Pattern) -> None:
        """Add ``pattern`` as a member."""
        gained = self._added_counts(pattern)  # the pairs it adds, but y = x: what it gains
        self.counts = (self.counts[0] + gained[0], self.counts[1] + gained[1])
        self.members = [*self.members, pattern]
        self._appended.append(pattern)
        self._exclusive = {}
        if self._blocked is not None:
            at, bits = self._bank._bits(self._relation, pattern)
            self._blocked[at] |= bits

    def replace(self, i: int, pattern: Pattern) -> None:
        """Make ``pattern`` member ``i`` in place of the one there."""
        members = list(self.members)
        members[i] = pattern
        self._reset(members)

    def added(self, pattern: Pattern) -> tuple[float, float]:
        r"""``(d_1, d)``: the facts and the pairs (``y != x``) that ``pattern`` adds."""
        return self._added_counts(pattern)

    def added_to_fixed(self, pattern: Pattern) -> tuple[float, float]:
        """:meth:`added` for a union that no member joins later, by popcounts.

        The set bits of ``pattern``'s bit rows outside the union's, the pairs themselves not kept
        (no appended member will narrow them): the same two integers.
        """
        reached, bits = self._bank._bits(self._relation, pattern)
        free = bits & ~self._blocked_bits()[reached]
        return float(_popcount(free & self._facts_bits()[reached])), float(_popcount(free))

    def _added_counts(self, pattern: Pattern) -> tuple[float, float]:
        cached = self._added.get(pattern)
        blocked = self._blocked_bits()
        if cached is None:
            span = 64 * self._width
            if (self._relation, pattern) in self._bank._linear:  # the pattern's keys are cached
                row, column = np.divmod(
                    self._bank._keys(self._relation, pattern), self._bank.num_nodes
                )
                at = column * span + row
                at = at[_bit_test(blocked, at) == 0]
            else:  # from the bit rows: no sparse product, no sort of the walk
                reached, bits = self._bank._bits(self._relation, pattern)
                at = _bit_positions(reached, bits & ~blocked[reached], span)
            fact = _bit_test(self._facts_bits(), at) != 0
            true, other = at[fact], at[~fact]
        else:
            true, other, done = cached
            if done < len(self._appended):
                true = true[_bit_test(blocked, true) == 0]
                other = other[_bit_test(blocked, other) == 0]
        self._added[pattern] = (true, other, len(self._appended))
        return float(true.size), float(true.size + other.size)

    def exclusive(self, i: int) -> tuple[np.ndarray, tuple[float, float]]:
        """The sorted keys that only member ``i`` joins (but ``y = x``), and their ``(s, b)``."""
        return self._only(i)[:2]

    def _only(
        self, i: int
    ) -> tuple[np.ndarray, tuple[float, float], np.ndarray, np.ndarray, np.ndarray]:
        if i not in self._exclusive:
            bank = self._bank
            keys = bank._keys(self._relation, self.members[i])
            for j, member in enumerate(self.members):
                if j != i and keys.size:
                    keys = _absent(keys, bank._keys(self._relation, member))
            row, column = np.divmod(keys, bank.num_nodes)
            keep = column != bank._heads[self._relation][row]  # not y = x
            keys, row, column = keys[keep], row[keep], column[keep]
            fact = _bit_test(self._facts_bits(), column * (64 * self._width) + row) != 0
            counts = (float(np.count_nonzero(fact)), float(keys.size))
            self._exclusive[i] = (keys, counts, row, column, fact)
        return self._exclusive[i]

    def ceiling_without(
        self, pattern: Pattern, i: int, single: dict[Pattern, tuple[float, float]]
    ) -> float:
        r"""A bound on :math:`D` of the union of ``pattern`` and the members but member ``i``.

        ``single[pattern]`` is the pattern's :math:`(s_\beta, b_\beta)`. Of what the pattern
        adds, the pairs outside the union are known (:meth:`added`); inside it, it can add at
        most the facts that only member ``i`` joins and no more than its own facts outside the
        union leave, and a fact raises :math:`D < 1` most when it comes without other pairs.
        """
        outside = self._added_counts(pattern)
        only = self._only(i)[1]
        inside = min(only[0], single[pattern][0] - outside[0])
        return _dice(
            self.counts[0] - only[0] + outside[0] + inside,
            self.counts[1] - only[1] + outside[1] + inside,
            self._facts,
        )

    def added_without(self, pattern: Pattern, i: int) -> tuple[float, float]:
        """``(d_1, d)`` that ``pattern`` adds to the union of the members but member ``i``."""
        outside = self._added_counts(pattern)
        only, _, row, column, fact = self._only(i)
        if only.size == 0:
            return outside
        if (self._relation, pattern) in self._bank._linear:  # the pattern's keys are cached
            both = _contains(self._bank._keys(self._relation, pattern), only)
        else:  # the keys of only that the pattern's bit rows join
            at, bits = self._bank._bits(self._relation, pattern)
            both = _bits_at(at, bits, row, column, self._bank.num_nodes) != 0
        return (
            outside[0] + float(np.count_nonzero(both & fact)),
            outside[1] + float(np.count_nonzero(both)),
        )


def _bit_positions(at: np.ndarray, bits: np.ndarray, span: int) -> np.ndarray:
    r"""Positions :math:`y \cdot` ``span`` :math:`+ i` of the set bits of (``at``, ``bits``).

    ``span`` is 64 times the words of a row, so that a position indexes the bits of ``[N, W]``
    bit rows laid out row by row (:func:`_bit_test`); sorted, as ``at`` is.
    """
    flat = np.flatnonzero(bits)  # [k] the words with a set bit, row by row
    if flat.size == 0:
        return np.zeros(0, dtype=np.int64)
    row, word = np.divmod(flat, bits.shape[1])
    octets = bits.ravel()[flat].astype("<u8").view(np.uint8).reshape(-1, 8)  # [k, 8]
    which, bit = np.nonzero(np.unpackbits(octets, axis=1, bitorder="little"))  # [m]
    return at[row[which]].astype(np.int64) * span + word[which].astype(np.int64) * 64 + bit


def _bit_test(dense: np.ndarray, positions: np.ndarray) -> np.ndarray:
    """``[k]`` 0/1: the bits at ``positions`` (:func:`_bit_positions`) of ``[N, W]`` bit rows."""
    words = dense.ravel()[positions >> 6]
    return np.right_shift(words, (positions & 63).astype(np.uint64)) & np.uint64(1)


def _contains(keys: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``[k]`` bool: whether each of ``queries`` is in the sorted unique ``keys``."""
    if keys.size == 0:
        return np.zeros(queries.size, dtype=bool)
    at = np.searchsorted(keys, queries)
    at[at == keys.size] = 0  # past the end: not in keys (keys[0] < that query)
    return keys[at] == queries


def _best_disjunct(
    single: dict[Pattern, tuple[float, float]],
    members: list[Pattern],
    union: tuple[float, float],
    added: Callable[[Pattern], tuple[float, float]],
    facts: float,
    *,
    admit: bool,
    ceiling: Callable[[Pattern], float] | None = None,
    floor: float = 0.0,
) -> tuple[float, Pattern | None]:
    r"""The pattern of ``single`` not in ``members`` whose union with a union agrees best.

    ``union`` is ``(s, b)`` of the union; ``added(pattern)`` is ``(d_1, d)``, the facts and
    pairs the pattern adds to it; ``facts`` is :math:`n_r`. With ``admit``, only a pattern that
    passes the admission test (module docstring, "Heads with several bodies"). Returns ``(D,
    pattern)``, or ``(D of union, None)`` when none raises :math:`D`. A pattern of
    :math:`(s_\beta, b_\beta)` adds :math:`d_1 \le s_\beta` facts and at least :math:`d_1`
    pairs, and the union holds at least its :math:`b_\beta` pairs, so :math:`D \le 2 (s +
    s_\beta) / (\max(b + s_\beta, b_\beta) + n_r)`; the patterns are tried in decreasing bound
    until it cannot beat the best so far.

    ``floor``: only a pattern of :math:`D` above it is wanted (the exchange pass replaces a
    member only by one that beats the union with it), so the search starts from the larger of
    it and the union's :math:`D`: it returns ``(max(D of union, floor), None)`` when no pattern
    is above both, and otherwise the same pattern and :math:`D` as without it. The patterns are
    tried in the same order, and the one returned is the first of largest :math:`D` in that
    order however high the best so far starts (a pattern of that :math:`D` is above every
    smaller best, so no bound skips it), so a floor only skips the patterns that could not be
    returned with a larger :math:`D` than it (tested against ``floor = 0``).
    """
    support, body = union
    value = _dice(support, body, facts)
    best: tuple[float, Pattern | None] = (max(value, floor), None)
    bounds = sorted(
        (
            (-2 * (support + s) / (max(body + s, b) + facts), k, pattern)
            for k, (pattern, (s, b)) in enumerate(single.items())
            if pattern not in members
        ),
    )
    for negative, _, pattern in bounds:
        if -negative <= best[0]:
            break
        if ceiling is not None and ceiling(pattern) <= best[0]:
            continue  # cannot beat the best so far
        added_true, added_pairs = added(pattern)
        joint = _dice(support + added_true, body + added_pairs, facts)
        if joint > best[0] and (
            not admit or _disjunct_p_value(added_true, added_pairs, value) < ALPHA
        ):
            best = (joint, pattern)
    return best


def _disjunct_p_value(added_true: float, added: float, dice: float) -> float:
    r"""The admission test's p-value :math:`P(\mathrm{Bin}(d, D / 2) \ge d_1)` (1 when d = 0).

    ``added_true`` is :math:`d_1`, the facts among the :math:`d` = ``added`` pairs a pattern adds
    to a union of agreement :math:`D` = ``dice`` (module docstring, "Heads with several
    bodies").
    """
    return float(binom.sf(added_true - 1, added, dice / 2)) if added > 0 else 1.0


@dataclass(frozen=True)
class PatternChoice:
    """The outcome of :func:`pattern_search`.

    Attributes:
        chosen: Indices of the chosen candidate paths, in the order they were added.
        scores: The score :math:`S` of the conjunction of the chosen patterns after each
            addition (the last one after the exchange pass and the orientation step).
        num_patterns: How many distinct candidate patterns were scored.
        conditions: Positions in the local graph's triples of the condition atoms, facts on a
            constant at a node of a chosen path (module docstring, "Conditions"). Default ``()``.
    """

    chosen: tuple[int, ...]
    scores: tuple[float, ...]
    num_patterns: int
    conditions: tuple[int, ...] = ()


def pattern_search(
    local: LocalStructure,
    bank: PatternBank,
    *,
    max_paths: int,
    anchors: bool = True,
    recursive: bool = False,
) -> PatternChoice:
    """Choose the explanation paths by their mined patterns' scores (module docstring).

    Args:
        local: The target's local structure and candidate paths.
        bank: The graph's :class:`PatternBank`.
        max_paths: The most paths (distinct patterns) in the explanation.
        anchors: Also score each path's patterns with one intermediate node held constant.
            Default True.
        recursive: Also take paths of two or more steps through another fact of the target
            relation as candidates (bodies that recurse on :math:`r`). Default False.

    Returns:
        The :class:`PatternChoice` (empty when there is no candidate path), with a condition atom
        where one agrees better than the chosen paths (module docstring, "Conditions"; then
        ``chosen`` may keep only some of them, and ``scores`` ends with :math:`S` of the result),
        or one other candidate path and its condition where they agree significantly better
        ("Conditioned picks"; ``scores`` ends with their :math:`S`).

    Raises:
        GraphDataError: For a ``max_paths`` below 1.
    """
    if isinstance(max_paths, bool) or not isinstance(max_paths, int) or max_paths < 1:
        raise GraphDataError(f"max_paths: expected a positive int, got {max_paths!r}")
    if not local.paths:
        return PatternChoice((), (), 0)
    relation = local.target[1]
    first: dict[Pattern, int] = {}
    routes: dict[tuple[tuple[int, ...], tuple[tuple[int, bool], ...]], int] = {}
    plains: list[tuple[Pattern, int]] = []  # every candidate path's plain pattern
    for p, edges in enumerate(local.paths):  # candidates are ordered shortest first
        if (
            not recursive
            and len(edges) > 1
            and any(int(local.edge_type[e]) == relation for e in edges)
        ):
            continue  # a body that recurses on r: only when asked for
        plain = path_pattern(local, p)
        plains.append((plain, p))
        routes.setdefault(_route(local.path_nodes[p], plain), p)  # for the orientation step
        first.setdefault(plain, p)
        for anchor in range(1, len(edges)) if anchors else ():
            first.setdefault(path_pattern(local, p, anchor), p)
    distinct = list(first)
    if not distinct:
        return PatternChoice((), (), 0)
    bank._pool_counts(relation, distinct)  # each candidate's counts, by bit rows
    top, pi = _pick(bank, relation, [], [(bank.agreement(relation, [pi]), pi) for pi in distinct])
    member = None if recursive else _member_instead(local, bank, relation, first, pi)
    if member is not None:  # "Heads with several bodies"
        top, pi = bank.agreement(relation, [member]), member
    folded = None if recursive else _folded_member(local, bank, relation, first, pi)
    if folded is not None:  # "Heads with several bodies", folding
        top, pi = bank.agreement(relation, [folded]), folded
    chosen_patterns = [pi]
    chosen, scores = [first[pi]], [top]
    while len(chosen) < max_paths:
        used = set(local.edge_mask(chosen).nonzero().flatten().tolist())
        support, body = bank.counts(relation, chosen_patterns)
        rate = support / (body + bank.num_facts(relation))  # D / 2
        options = []
        keys: np.ndarray | None = None
        for pi in distinct:
            if pi in chosen_patterns or set(local.paths[first[pi]]) <= used:
                continue
            if _through(pi, relation):
                continue  # recursion is the first pick's last resort, never a filter
            # S of the conjunction is at most 2 m / (m + n_r), m the smaller support (as in
            # the exchange pass below): a candidate that cannot beat S so far is no option
            most = min(support, bank.counts(relation, [pi])[0])
            if _dice(most, most, bank.num_facts(relation)) <= scores[-1]:
                continue
            if keys is None:  # the chosen patterns' pairs, once per addition
                keys = bank._joint_keys(relation, chosen_patterns)
            joint = [*chosen_patterns, pi]
            s_joint, b_joint = bank._extended_counts(relation, chosen_patterns, keys, pi)
            dropped, dropped_true = body - b_joint, support - s_joint
            if dropped > 0 and binom.cdf(dropped_true, dropped, rate) < ALPHA:
                value = bank.agreement(relation, joint)
                if value > scores[-1]:
                    options.append((value, pi))
        if not options:
            break
        top, pi = _pick(bank, relation, chosen_patterns, options)
        chosen_patterns.append(pi)
        chosen.append(first[pi])
        scores.append(top)
        for i in range(len(chosen_patterns) - 1):  # one exchange pass over the earlier ones
            rest = chosen_patterns[:i] + chosen_patterns[i + 1 :]
            # the first of largest S above the current one; the conjunction joins at most
            # the facts of either part, so S <= 2 m / (m + n_r) with m the smaller support,
            # and a candidate whose bound cannot beat the best so far is not counted
            within = bank.counts(relation, rest)[0]
            better: tuple[float, Pattern | None] = (scores[-1], None)
            keys = None
            for other in distinct:
                if other in chosen_patterns or (i > 0 and _through(other, relation)):
                    continue
                most = min(within, bank.counts(relation, [other])[0])
                if _dice(most, most, bank.num_facts(relation)) <= better[0]:
                    continue
                if keys is None:
                    keys = bank._joint_keys(relation, rest)
                value = _dice(
                    *bank._extended_counts(relation, rest, keys, other), bank.num_facts(relation)
                )
                if value > better[0]:
                    better = (value, other)
            if better[1] is not None:
                chosen_patterns[i], chosen[i], scores[-1] = better[1], first[better[1]], better[0]
    _orient(local, bank, relation, routes, chosen_patterns, chosen)
    scores[-1] = bank.agreement(relation, chosen_patterns)
    atoms = _LocalAtoms(local, bank, relation)
    placed = _condition(local, bank, relation, chosen_patterns, chosen, atoms)
    kept = range(len(chosen)) if placed is None else placed.kept
    conditions = () if placed is None else (placed.edge,)
    if placed is not None:
        scores.append(float(placed.value))
    choice = PatternChoice(tuple(chosen[k] for k in kept), tuple(scores), len(distinct), conditions)
    if recursive:
        return choice
    # "Conditioned picks": a candidate path with a condition in the explanation's place
    bare = [
        (pi, p) for pi, p in plains if p not in chosen and all(rel != relation for rel, _, _ in pi)
    ]
    width = len({e for k in kept for e in local.paths[chosen[k]]}) + len(conditions)
    agreed = (
        placed.value
        if placed is not None
        else _exact_dice(*bank.counts(relation, chosen_patterns), bank.num_facts(relation))
    )
    found = _conditioned_pick(local, bank, relation, bare, atoms, agreed, width)
    if found is None:
        return choice
    path, pick = found
    keys = _placed_keys(bank, relation, [path_pattern(local, path)], pick)
    explanation = _placed_keys(bank, relation, chosen_patterns, placed)
    if not _takes_place(local, bank, relation, first, chosen_patterns[kept[0]], keys, explanation):
        return choice
    return PatternChoice((path,), (*scores, float(pick.value)), len(distinct), (pick.edge,))


class _LocalAtoms:
    """The candidate atoms at the local graph's nodes, for :func:`_condition`."""

    def __init__(self, local: LocalStructure, bank: PatternBank, relation: int) -> None:
        self._bank, self._relation = bank, relation
        self._nodes = local.nodes.tolist()
        self._heads, self._tails = local.edge_index.tolist()
        self._types = local.edge_type.tolist()
        self._at: dict[int, list[int]] = {}  # local node -> the local triples at it
        for e, (u, v) in enumerate(zip(self._heads, self._tails)):
            self._at.setdefault(u, []).append(e)
            self._at.setdefault(v, []).append(e)
        self._holders: dict[Atom, np.ndarray] = {}
        self._reached: dict[Pattern, tuple[np.ndarray, int]] = {}  # prefix -> entities, count

    def entity(self, node: int) -> int:
        """The global id of local node ``node``."""
        return self._nodes[node]

    def at(self, node: int, prefix: Pattern) -> list[tuple[np.ndarray, list[tuple[int, int]]]]:
        """The atoms at local node ``node``, grouped by the holders that ``prefix`` reaches.

        Each local triple at the node whose relation is not :math:`r` gives the atom on its
        other end (one holder: an anchor, a candidate already, so none). Only the holders that
        some walk of ``prefix`` from :math:`X_r` reaches matter: atoms with the same such holders
        join the same pairs and are one group (sorted holders, then ``(local triple, local
        other end)`` per atom in order); an atom held by all or none of them changes nothing or
        drops every pair, and is left out.
        """
        if prefix not in self._reached:
            reached = np.zeros(self._bank.num_nodes, dtype=bool)
            reached[self._bank._walk(self._relation, prefix).indices] = True
            self._reached[prefix] = (reached, int(reached.sum()))
        reached, count = self._reached[prefix]
        groups: dict[bytes, tuple[np.ndarray, list[tuple[int, int]]]] = {}
        tried: set[Atom] = set()
        for e in self._at.get(node, ()):
            forward = self._heads[e] == node
            other = self._tails[e] if forward else self._heads[e]
            atom = (self._types[e], forward, self._nodes[other])
            if self._types[e] == self._relation or atom in tried:
                continue
            tried.add(atom)
            if atom not in self._holders:
                self._holders[atom] = self._bank._holders(atom)
            if self._holders[atom].size < 2:
                continue
            here = self._holders[atom][reached[self._holders[atom]]]
            if 0 < here.size < count:
                groups.setdefault(here.tobytes(), (here, []))[1].append((e, other))
        return list(groups.values())


class _Middles(NamedTuple):
    """A pattern's middle entities at a node (:meth:`PatternBank._middles`), as cached.

    Of every pair where they number at most :data:`MIDDLE_ENDS` (``exact``), else of the facts
    alone; ``pairs`` the keys of those pairs, ``is_fact`` which are facts, ``rows`` the pair of
    each stored entry.
    """

    middle: sp.csr_matrix
    exact: bool
    pairs: np.ndarray
    is_fact: np.ndarray
    rows: np.ndarray

    @classmethod
    def of(
        cls, bank: PatternBank, relation: int, pattern: Pattern, node: int, pairs: np.ndarray
    ) -> _Middles:
        """The middles of ``pattern`` at ``node``: of every pair of ``pairs`` if they fit."""
        middle = bank._middles(relation, pattern, node, pairs, MIDDLE_ENDS)
        if middle is not None:
            return cls.exact_of(bank, relation, middle, pairs)
        pairs = _intersect(pairs, bank._facts_keys(relation))  # the facts alone
        middle = bank._middles(relation, pattern, node, pairs, math.inf)
        assert middle is not None
        rows = np.repeat(np.arange(pairs.size), np.diff(middle.indptr))
        return cls(middle, False, pairs, np.ones(pairs.size, dtype=bool), rows)

    @classmethod
    def exact_of(
        cls, bank: PatternBank, relation: int, middle: sp.csr_matrix, pairs: np.ndarray
    ) -> _Middles:
        """The middles ``middle`` of every pair of ``pairs``."""
        rows = np.repeat(np.arange(pairs.size), np.diff(middle.indptr))
        return cls(middle, True, pairs, _contains(bank._facts_keys(relation), pairs), rows)


class _NodeCounts:
    r""":math:`s'` and :math:`b'` of conditions at one node of one pattern, for every atom.

    The module docstring, "Conditions", and :func:`_condition`'s "Cost": from the pairs' middle
    entities where they number at most :data:`MIDDLE_ENDS` (:attr:`exact`), else :math:`s'`
    from the facts' and a lower bound on :math:`b'`, with :meth:`walked` for the exact counts.
    ``pairs``: the sorted keys of the pairs ``y != x`` the pattern joins; ``vertex``: the target's
    own entity at the node, which holds every atom there; ``holders``: each option's holders
    (sorted); ``middles``: a cache of the pattern's middle entities at the node (they depend on
    neither the vertex nor the atoms), shared by the paths of one search.
    """

    def __init__(
        self,
        bank: PatternBank,
        relation: int,
        pattern: Pattern,
        pairs: np.ndarray,
        node: int,
        vertex: int,
        holders: list[np.ndarray],
        middles: dict[tuple[Pattern, int], _Middles] | None = None,
    ) -> None:
        self._bank, self._relation, self._pattern, self._node = bank, relation, pattern, node
        self._vertex = vertex
        known = None if middles is None else middles.get((pattern, node))
        if known is None:
            known = _Middles.of(bank, relation, pattern, node, pairs)
            if middles is not None:
                middles[pattern, node] = known
        middle, self.exact, pairs, self._is_fact, _ = known
        self._pairs = pairs
        self._alone: tuple[np.ndarray, np.ndarray] | None = None  # options() of the pattern alone
        self._via_v = np.zeros(pairs.size, dtype=bool)  # [K] the pairs whose walks pass v
        self._via_v[known.rows[middle.indices == vertex]] = True
        sets = [here[here != vertex] for here in holders]
        sizes = np.array([here.size for here in sets])
        indicator = sp.csc_matrix(
            (
                np.ones(int(sizes.sum()), dtype=np.float32),
                (np.concatenate(sets), np.repeat(np.arange(len(sets)), sizes)),
            ),
            shape=(bank.num_nodes, len(sets)),
        )
        passes = middle[~self._via_v] @ indicator  # [K', A] kept through another holder
        passes.data[:] = 1.0
        self._passes_t = passes.T  # [A, K'] (a CSC view: no copy)
        if not self.exact:
            # b' >= the pairs of the rows whose every prefix walk ends on a holder (v with them)
            walk = bank._walk(relation, pattern[:node])  # [X, N] the prefix's walks
            inside = (walk @ indicator).tocoo()
            inside.data += (walk[:, [vertex]] @ np.ones((1, len(sets))))[inside.row, inside.col]
            full = inside.data == np.diff(walk.indptr)[inside.row]
            self._whole = sp.csr_matrix(
                (np.ones(int(full.sum())), (inside.col[full], inside.row[full])),
                shape=(len(sets), walk.shape[0]),
            )
            # and b' >= the pairs through v itself
            self._prefix = walk.tocsc()
            self._through_v = bank._conditioned_keys(
                relation, pattern, node, np.array([vertex]), self._prefix
            )

    def options(self, subset: _Subset, others: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """``[A]`` :math:`s'` and :math:`b'` (exact) or a lower bound on :math:`b'`.

        ``others``: the keys of the subset's other patterns' pairs (None: the pattern alone).
        """
        alone = subset.pairs is self._pairs and others is None  # every pair counted
        if alone and self._alone is not None:
            return self._alone
        in_subset = (
            np.ones(self._pairs.size, dtype=bool) if alone else _contains(subset.pairs, self._pairs)
        )
        facts = in_subset & self._is_fact
        s1s = int((facts & self._via_v).sum()) + self._passes_t @ facts[~self._via_v].astype(
            np.float64
        )
        if self.exact:
            b1s = int((in_subset & self._via_v).sum()) + self._passes_t @ in_subset[
                ~self._via_v
            ].astype(np.float64)
        else:
            through = self._through_v if others is None else _intersect(self._through_v, others)
            at_v = _absent(through, self._bank._loops_keys(self._relation)).size
            per_row = subset.per_row(self._bank.num_nodes).astype(np.float64)
            b1s = np.maximum(np.maximum(s1s, self._whole @ per_row), at_v)
        if alone:
            self._alone = (s1s, b1s)
        return s1s, b1s

    def walked(self, holders: np.ndarray, others: np.ndarray | None) -> tuple[float, float]:
        """:math:`(s', b')` of one option by its walk (:meth:`PatternBank._conditioned_keys`)."""
        keys = self._bank._conditioned_keys(
            self._relation, self._pattern, self._node, holders, self._prefix
        )
        return self._bank._key_counts(
            self._relation, keys if others is None else _intersect(keys, others)
        )


@dataclass
class _Subset:
    """A conjunction whose conditions :func:`_condition` or :func:`_conditioned_pick` weighs.

    A subset of the chosen patterns, or one candidate pattern.
    """

    support: float  # s
    body: float  # b
    dice: Fraction  # S, exactly
    rate: float  # D / 2, the test's rate
    nodes: set[int]  # the local nodes on its paths
    triples: int  # its paths' triples and the atom's
    pairs: np.ndarray  # sorted keys of the pairs y != x it joins
    rows: int  # |X_r|
    position: int  # its place in the order of the options (ties go to the first)
    _per_row: np.ndarray | None = None

    def per_row(self, num_nodes: int) -> np.ndarray:
        """``[X]`` its pairs per row of :math:`X_r`."""
        if self._per_row is None:
            self._per_row = np.bincount(self.pairs // num_nodes, minlength=self.rows)
        return self._per_row


@dataclass
class _Placed:
    """Where a condition sits, and :math:`S` (``value``) of the conditioned conjunction.

    Pattern ``member``'s node ``node`` is kept to ``holders`` by the local triple ``edge``, on
    the subset ``kept`` (positions) of the patterns weighed.
    """

    kept: tuple[int, ...]
    member: int
    node: int
    edge: int
    holders: np.ndarray
    value: Fraction


class _Best:
    r"""The best condition so far: largest :math:`S`, then fewest triples, then first in order.

    It starts at :math:`S` and the triples of the explanation it must beat (no order: an option
    that ties it exactly does not).
    """

    def __init__(self, value: Fraction, triples: int) -> None:
        self.key = (value, -triples)
        self.order: tuple[int, ...] | None = None
        self.placed: _Placed | None = None

    def beats(self, value: Fraction, triples: int, order: tuple[int, ...]) -> bool:
        key = (value, -triples)
        return key > self.key or (key == self.key and self.order is not None and order < self.order)

    def weigh(
        self,
        counts: _NodeCounts,
        groups: list[tuple[np.ndarray, list[tuple[int, int]]]],
        sub: _Subset,
        others: np.ndarray | None,
        facts: float,
        place: tuple[tuple[int, ...], int, int],
    ) -> None:
        r"""Weigh the atoms ``groups`` at one node of one pattern of ``sub`` (``counts``).

        An option is admissible when it raises :math:`S(\Sigma)` and the pairs it removes pass
        the conjunction test, :math:`P(\mathrm{Bin}(b - b', D_\Sigma / 2) \le s - s') <
        \alpha`; the best admissible one is kept. ``others``: the keys of the subset's other
        patterns' pairs (None: the pattern alone); ``place``: ``(kept, member, node)``.
        """
        s, b, own, rate, triples = sub.support, sub.body, sub.dice, sub.rate, sub.triples
        s1s, b1s = counts.options(sub, others)  # [A] s' and b' (or b' >=)
        # S (or a bound on it) must beat S(subset) and the best so far: a float filter with a
        # margin, then the exact comparisons
        rough = 2 * s1s / (b1s + facts)
        floor = max(float(own), float(self.key[0])) * (1 - 1e-9)
        for a in np.flatnonzero(rough >= floor):
            here, members = groups[a]
            first = next((e for e, other in members if other not in sub.nodes), None)
            if first is None:
                continue
            s1, b1 = float(s1s[a]), float(b1s[a])
            value = _exact_dice(s1, b1, facts)
            order = (sub.position, place[1], place[2], first)
            # the test's p-value falls with the pairs removed, at most b - b1
            if (
                value <= own
                or not self.beats(value, triples, order)
                or binom.cdf(s - s1, b - b1, rate) >= ALPHA
            ):
                continue
            if not counts.exact:
                s1, b1 = counts.walked(here, others)
                value = _exact_dice(s1, b1, facts)
                if value <= own or not self.beats(value, triples, order):
                    continue
                if binom.cdf(s - s1, b - b1, rate) >= ALPHA:
                    continue
            self.key, self.order = (value, -triples), order
            self.placed = _Placed(*place, first, here, value)


def _subset(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    patterns: list[Pattern],
    paths: list[int],
    position: int,
) -> _Subset:
    """The :class:`_Subset` of the conjunction of ``patterns`` (of local ``paths``)."""
    s, b = bank.counts(relation, patterns)
    facts = bank.num_facts(relation)
    return _Subset(
        support=s,
        body=b,
        dice=_exact_dice(s, b, facts),
        rate=s / (b + facts),
        nodes={v for p in paths for v in local.path_nodes[p]},
        triples=len({e for p in paths for e in local.paths[p]}) + 1,
        pairs=_absent(bank._joint_keys(relation, patterns), bank._loops_keys(relation)),
        rows=bank._rows(relation).size,
        position=position,
    )


def _condition(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    patterns: list[Pattern],
    chosen: list[int],
    atoms: _LocalAtoms,
) -> _Placed | None:
    r"""The condition atom that refines the chosen paths, if any (module docstring).

    "Conditions": over every non-empty subset :math:`\Sigma` of the chosen patterns (in
    order), every node :math:`i \ge 1` of each member's path, and every local triple at that
    node's entity :math:`v` whose relation is not :math:`r` and whose other end :math:`c` is on
    none of :math:`\Sigma`'s paths and is the constant of at least two entities' facts
    (:meth:`PatternBank.holders`; one is an anchor), the option :math:`(\Sigma, \text{atom})`
    is admissible when the pairs it removes from :math:`\Sigma`'s pass the conjunction test and
    it raises :math:`S(\Sigma)`. The option of largest :math:`S`, then fewest triples, then
    first in that order, replaces the explanation when it agrees better than the chosen
    patterns, or as well with fewer triples.

    Cost (the same choice as counting every option, tested against that). A condition keeps a
    pair iff one of the entities its walks pass at the node holds the atom
    (:meth:`PatternBank._middles`), so all the atoms at a node are counted at once: one sparse
    product of the pairs' middle entities with the atoms' holders, then one product per subset
    for :math:`s'` and :math:`b'`. Only the holders that the prefix's walks reach matter, so
    atoms with the same such holders are one option (the first in order), and an atom held by
    all or none of them is none; :math:`v` holds every atom at it, so the pairs through
    :math:`v` are counted once for all. Where the pairs' middle entities would exceed
    :data:`MIDDLE_ENDS` (FB15k-237's hubs), the middles of the facts alone give :math:`s'`
    exactly, :math:`b'` is bounded below by the pairs through :math:`v` and those of the rows of
    :math:`X_r` whose every prefix walk ends on a holder, and only an option whose bounds can
    still beat :math:`S(\Sigma)`, the best so far and the test (whose p-value falls with the
    pairs removed, at most :math:`b - b'`) is walked (:meth:`PatternBank._conditioned_keys`). A
    subset whose :math:`2 s / (s + n_r)` cannot reach the best is skipped.

    Returns:
        Where the condition sits (its ``kept``: the positions in ``chosen`` kept), or None for
        no change.
    """
    facts = bank.num_facts(relation)
    support, body = bank.counts(relation, patterns)
    width = len({e for p in chosen for e in local.paths[p]})
    # the chosen patterns themselves: an option must beat them, not tie
    best = _Best(_exact_dice(support, body, facts), width)
    subsets = [
        kept
        for size in range(1, len(chosen) + 1)
        for kept in itertools.combinations(range(len(chosen)), size)
    ]
    state: dict[tuple[int, ...], _Subset] = {}
    for kept in subsets:
        s, _ = bank.counts(relation, [patterns[k] for k in kept])
        triples = len({e for k in kept for e in local.paths[chosen[k]]}) + 1
        if not s or (_exact_dice(s, s, facts), -triples) < best.key:
            continue  # no condition raises s; S <= 2 s / (s + n_r) cannot reach the best
        state[kept] = _subset(
            local,
            bank,
            relation,
            [patterns[k] for k in kept],
            [chosen[k] for k in kept],
            len(state),
        )
    for k in range(len(chosen)):
        mine = [kept for kept in subsets if k in kept and kept in state]
        if not mine:
            continue
        others = {
            kept: bank._joint_keys(relation, [patterns[q] for q in kept if q != k])
            for kept in mine
            if len(kept) > 1
        }
        path_nodes = local.path_nodes[chosen[k]]
        pairs = _absent(bank._keys(relation, patterns[k]), bank._loops_keys(relation))  # y != x
        for node in range(1, len(path_nodes)):
            groups = atoms.at(path_nodes[node], patterns[k][:node])
            if not groups:
                continue
            vertex = atoms.entity(path_nodes[node])
            holders = [here for here, _ in groups]
            counts = _NodeCounts(bank, relation, patterns[k], pairs, node, vertex, holders)
            for kept in mine:
                best.weigh(counts, groups, state[kept], others.get(kept), facts, (kept, k, node))
    return best.placed


def _conditioned_pick(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    candidates: list[tuple[Pattern, int]],
    atoms: _LocalAtoms,
    value: Fraction,
    triples: int,
) -> tuple[int, _Placed] | None:
    r"""The best conditioned candidate path that agrees better than the explanation, if any.

    Module docstring, "Conditioned picks": over the ``candidates`` (plain pattern and local path,
    in order; a condition is drawn from the path's own nodes, so every path of a pattern is
    one), every node :math:`i \ge 1` and every atom there as in
    :func:`_condition` (the same test against the pattern alone), the admissible option of
    largest :math:`S`, then fewest triples, then first in order, that beats ``value`` with
    ``triples`` (:math:`S` and the triples of the explanation). A candidate whose
    :math:`2 s / (s + n_r)` cannot beat the best so far is not counted.

    Returns:
        The candidate's local path and its condition, placed on ``[its pattern]``; or None.
    """
    facts = bank.num_facts(relation)
    best = _Best(value, triples)
    subsets: dict[Pattern, _Subset] = {}
    middles: dict[tuple[Pattern, int], _Middles] = {}
    # the paths of a pattern through one entity at a node share its atoms and their counts
    counted: dict[tuple[Pattern, int, int], tuple[list, _NodeCounts | None]] = {}
    spent = 0  # the middle entries counted so far, of PICK_ENDS

    def found() -> tuple[int, _Placed] | None:
        """The best option's candidate path (its order starts with the position) and place."""
        if best.placed is None or best.order is None:
            return None
        return candidates[best.order[0]][1], best.placed

    # the candidates by decreasing bound 2 s / (s + n_r) on S, so that a good option found early
    # rules out the rest; the choice is the same in any order (ties go to the first position)
    bounds = [
        _exact_dice(s, s, facts) for s, _ in (bank.counts(relation, [p]) for p, _ in candidates)
    ]
    for position in sorted(range(len(candidates)), key=lambda i: (-bounds[i], i)):
        pattern, path = candidates[position]
        if not bounds[position] or (bounds[position], -(len(pattern) + 1)) < best.key:
            continue
        if pattern not in subsets:
            subsets[pattern] = _subset(local, bank, relation, [pattern], [path], position)
        path_nodes = local.path_nodes[path]
        sub = replace(subsets[pattern], nodes=set(path_nodes), position=position)
        for node in range(1, len(path_nodes)):
            key = (pattern, node, path_nodes[node])
            if key not in counted:
                groups = atoms.at(path_nodes[node], pattern[:node])
                counts = None
                if groups:
                    if (pattern, node) not in middles:
                        middle = bank._middles(
                            relation, pattern, node, sub.pairs, PICK_ENDS - spent
                        )
                        if middle is None:
                            return found()  # the budget is spent (module docstring)
                        spent += middle.nnz
                        middles[pattern, node] = _Middles.exact_of(
                            bank, relation, middle, sub.pairs
                        )
                    holders = [here for here, _ in groups]
                    # the (pair, atom) entries of the product of the middles with the holders
                    held = np.bincount(np.concatenate(holders), minlength=bank.num_nodes)
                    spent += int(held[middles[pattern, node].middle.indices].sum())
                    if spent > PICK_ENDS:
                        return found()
                    vertex = atoms.entity(path_nodes[node])
                    counts = _NodeCounts(
                        bank, relation, pattern, sub.pairs, node, vertex, holders, middles
                    )
                counted[key] = (groups, counts)
            groups, counts = counted[key]
            if counts is not None:
                best.weigh(counts, groups, sub, None, facts, ((0,), 0, node))
    return found()


def _placed_keys(
    bank: PatternBank, relation: int, patterns: list[Pattern], placed: _Placed | None
) -> np.ndarray:
    """Sorted keys of the pairs ``y != x`` of ``patterns``' conjunction, or of ``placed``'s.

    With ``placed``: the conjunction of the patterns at ``placed.kept``, pattern
    ``placed.member`` conditioned as it says.
    """
    if placed is None:
        keys = bank._joint_keys(relation, patterns)
    else:
        keys = bank._conditioned_keys(
            relation, patterns[placed.member], placed.node, placed.holders
        )
        rest = [patterns[k] for k in placed.kept if k != placed.member]
        if rest:
            keys = _intersect(keys, bank._joint_keys(relation, rest))
    return _absent(keys, bank._loops_keys(relation))


def _takes_place(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    candidates: dict[Pattern, int],
    pick: Pattern,
    keys: np.ndarray,
    explanation: np.ndarray,
) -> bool:
    r"""Whether the conditioned candidate of pairs ``keys`` replaces the explanation's.

    Module docstring, "Conditioned picks": with :math:`B` the relation's rule set and the
    target's admissible candidates (as :func:`_member_instead` takes them), when :math:`B` has
    two members or more and the explanation's first pattern ``pick`` is one of them, the union
    of the other members with ``keys`` must agree significantly better than their union with
    ``explanation`` (the pairs of the explanation); else ``keys`` than ``explanation``
    (:func:`significantly_better`'s test).
    """
    members = _members(local, bank, relation, candidates, pick)
    if len(members) >= 2 and pick in members:
        rest = bank._union_keys(relation, [m for m in members if m != pick])
        keys, explanation = np.union1d(rest, keys), np.union1d(rest, explanation)
    return _keys_significantly_better(bank, relation, keys, explanation)


def _through(pattern: Pattern, relation: int) -> bool:
    """Whether ``pattern`` routes through another fact of ``relation`` (two steps or more)."""
    return len(pattern) > 1 and any(step[0] == relation for step in pattern)


def _pick(
    bank: PatternBank,
    relation: int,
    chosen: list[Pattern],
    options: list[tuple[float, Pattern]],
) -> tuple[float, Pattern]:
    r"""The pick among ``options``: largest :math:`S`, ties by :math:`D^{\mathrm{cw}}` ("Ties").

    ``options`` holds ``(S of chosen + pattern, pattern)`` in candidate order. With
    :math:`\pi^*` the first of largest :math:`S`, the tied options are :math:`\pi^*` and each
    :math:`\pi'` that :math:`\pi^*` is not significantly better than
    (:func:`significantly_better`, ``chosen`` held fixed); of these, the first of largest
    closed-world agreement :math:`D^{\mathrm{cw}}`, then of largest :math:`S`, is returned.

    :math:`S` is the agreement :math:`2 s / (b + n_r)` and :math:`D^{\mathrm{cw}} = 2 s / (b +
    \hat b_0 + n_r)` with :math:`\hat b_0 \ge 0`, so :math:`D^{\mathrm{cw}} \le S` (in floating
    point too: a sum and a quotient of the same numbers rounded monotonically). The tied
    options are tried in decreasing :math:`S` and, once an option's :math:`S` is below the
    largest :math:`D^{\mathrm{cw}}` so far, neither it nor any after it can win, so their
    closed-world counts are skipped; the winner is the same (the first of largest
    :math:`(D^{\mathrm{cw}}, S)` in ``options`` order; tested against the plain maximum).
    """
    top, best = max(options, key=lambda o: o[0])  # the first of the largest
    tied = [
        (value, pi)
        for value, pi in options
        if pi == best or not significantly_better(bank, relation, [*chosen, best], [*chosen, pi])
    ]
    if len(tied) == 1:
        return top, best
    winner: tuple[tuple[float, float, int], tuple[float, Pattern]] | None = None
    for k in sorted(range(len(tied)), key=lambda k: (-tied[k][0], k)):
        value, pi = tied[k]
        if winner is not None and value < winner[0][0]:
            break  # D_cw <= S < the largest D_cw so far, here and after
        key = (bank.agreement(relation, [*chosen, pi], closed_world=True), value, -k)
        if winner is None or key > winner[0]:
            winner = (key, tied[k])
    assert winner is not None
    return winner[1]


def _member_instead(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    candidates: dict[Pattern, int],
    pick: Pattern,
) -> Pattern | None:
    r"""The member of the rule set that replaces the first pick, or None.

    Module docstring, "Heads with several bodies". With :math:`B_r` the rule set
    (:meth:`PatternBank.rule_set`) with the target's admissible candidates (:func:`_members`)
    and :math:`\pi_1` = ``pick`` no member of :math:`B_r`, :math:`m` is the first of largest
    :math:`D_m` of the members among the target's ``candidates``.

    * The swap: when :math:`B_r` has two members or more and :math:`\pi_1` is none of them,
      :math:`m` replaces :math:`\pi_1` when :math:`B_r` agrees significantly better than
      :math:`B_r` with :math:`m` replaced by :math:`\pi_1` (:func:`significantly_better` on the
      unions).
    * The mirror: when :math:`\pi_1` is :math:`r^{-1}`, :math:`m` (of the members without an
      :math:`r` step) replaces it with no test.
    """
    if pick in bank.rule_set(relation, local.max_length):
        return None
    members = _members(local, bank, relation, candidates, pick)
    mirror = pick == ((relation, False, -1),)
    if not mirror and (len(members) < 2 or pick in members):
        return None
    joined = [
        m
        for m in members
        if m in candidates and not (mirror and any(step[0] == relation for step in m))
    ]
    if not joined:
        return None
    member = max(joined, key=lambda m: bank.agreement(relation, [m]))
    if mirror:  # a path through r is the last resort (module docstring, "the mirror")
        return member
    swapped = [pick if m == member else m for m in members]
    return member if _union_significantly_better(bank, relation, members, swapped) else None


def _members(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    candidates: dict[Pattern, int],
    pick: Pattern,
) -> tuple[Pattern, ...]:
    """The rule set, and the target's admissible ``candidates`` where ``pick`` is no member.

    Module docstring, "Heads with several bodies": :meth:`PatternBank.rule_set` with
    :func:`_admissible_candidates` appended.
    """
    members = bank.rule_set(relation, local.max_length)
    if pick in members:
        return members
    return members + _admissible_candidates(bank, relation, members, candidates, local.max_length)


def _admissible_candidates(
    bank: PatternBank,
    relation: int,
    members: tuple[Pattern, ...],
    candidates: dict[Pattern, int],
    max_length: int,
) -> tuple[Pattern, ...]:
    r"""The target's plain candidate patterns that the rule set's admission test admits.

    Module docstring, "Heads with several bodies": with :math:`s, b` the counts of the union of
    :math:`B_r` (``members``, fixed) and :math:`d_1, d` the facts and pairs a candidate adds,
    it is admissible when :math:`P(\mathrm{Bin}(d, D_B / 2) \ge d_1) < \alpha` and
    :math:`D_{B \cup \{\beta'\}} > D_B`. The union's counts and what each pattern adds are
    kept per relation on the bank, so the targets of a relation share them (the union's bit rows,
    :class:`_Union`, are built for a target only when one of its candidates is new, and not
    kept); a candidate that joins fewer facts than the test can ever admit is not counted.
    """
    if not members:
        return ()
    key = (relation, min(max_length, POOL_LENGTH))
    if key not in bank._set_counts:
        bank._set_counts[key] = bank.union_counts(relation, list(members))
    known = bank._set_added.setdefault(key, {})
    union: _Union | None = None
    facts = bank.num_facts(relation)
    s, b = bank._set_counts[key]
    dice = _dice(s, b, facts)
    # the p-value of d_1 = d facts is (D_B / 2)^d (D_B <= 1): fewer facts are never admitted;
    # at D_B = 0 one fact is enough
    least = math.log(ALPHA) / math.log(dice / 2) if dice > 0 else 1.0
    admitted = []
    for pattern in candidates:
        if pattern in members or any(anchor >= 0 for _, _, anchor in pattern):
            continue
        if bank.counts(relation, [pattern])[0] < least:  # d_1 <= s of the pattern alone
            continue
        if pattern not in known:
            if union is None:
                union = _Union(bank, relation, list(members))
            known[pattern] = union.added_to_fixed(pattern)
        d1, d = known[pattern]
        if _disjunct_p_value(d1, d, dice) < ALPHA and _dice(s + d1, b + d, facts) > dice:
            admitted.append(pattern)
    return tuple(admitted)


def _folded_member(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    candidates: dict[Pattern, int],
    pick: Pattern,
) -> Pattern | None:
    r"""The shorter member of the rule set that the pick unfolds, or None (*folding*).

    Module docstring, "Heads with several bodies". With :math:`B_r` the rule set
    (:meth:`PatternBank.rule_set`) and :math:`\pi_1` = ``pick`` a member, the members
    :math:`m` among the target's ``candidates`` shorter than :math:`\pi_1` are tried shortest
    first, ties by larger :math:`D_m`; the first that :math:`\pi_1` unfolds (:func:`_unfolds`)
    is returned.
    """
    members = bank.rule_set(relation, local.max_length)
    if len(members) < 2 or pick not in members:
        return None
    shorter = sorted(
        (m for m in members if len(m) < len(pick) and m in candidates),
        key=lambda m: (len(m), -bank.agreement(relation, [m])),
    )
    for member in shorter:
        if _unfolds(bank, pick, member, local.max_length):
            return member
    return None


def _unfolds(bank: PatternBank, longer: Pattern, shorter: Pattern, max_length: int) -> bool:
    r"""Whether ``longer`` is ``shorter`` with one step replaced by a member of that step's set.

    For a step :math:`k` of ``shorter`` (a plain step of relation :math:`s`), ``longer`` must
    equal ``shorter`` before :math:`k` and after it, and its steps in between, read from the
    step's start to its end, must be a member of :math:`B_s` (:meth:`PatternBank.rule_set` at
    ``max_length``) read along :math:`s` (reversed, every step turned, for a step that reads
    :math:`s` backwards). Only the step relations whose prefix and suffix match get their set
    computed.
    """
    extra = len(longer) - len(shorter)
    if extra < 1:
        return False
    for k, (step, forward, anchor) in enumerate(shorter):
        if anchor >= 0 or longer[:k] != shorter[:k] or longer[k + extra + 1 :] != shorter[k + 1 :]:
            continue
        body = longer[k : k + extra + 1]
        along = body if forward else tuple((r, not f, a) for r, f, a in reversed(body))
        if along in bank.rule_set(step, max_length):
            return True
    return False


def _route(
    nodes: tuple[int, ...], pattern: Pattern
) -> tuple[tuple[int, ...], tuple[tuple[int, bool], ...]]:
    """A path's nodes and its steps' ``(relation, forward)``: which triples it walks."""
    return nodes, tuple((r, f) for r, f, _ in pattern)


def _orient(
    local: LocalStructure,
    bank: PatternBank,
    relation: int,
    routes: dict[tuple[tuple[int, ...], tuple[tuple[int, bool], ...]], int],
    patterns: list[Pattern],
    chosen: list[int],
) -> None:
    r"""Turn each chosen step taken against its triple's direction forward where it may.

    A step from :math:`u` to :math:`v` along :math:`s(v, u)` becomes :math:`s(u, v)` when that
    triple is also in the local graph (a candidate path with the same nodes and the step flipped
    exists) and the chosen orientation does not agree significantly better
    (:func:`significantly_better`, the other chosen patterns held fixed): the path then reads
    from :math:`h` to :math:`t` as a rule body is written. It matters for symmetric relations,
    whose two orientations carry the same evidence up to the facts held out of training.
    ``routes`` maps :func:`_route` of every candidate path to it; ``patterns`` and ``chosen``
    are updated in place.
    """
    for k, (pattern, path) in enumerate(zip(patterns, chosen)):
        for step, (rel, forward, anchor) in enumerate(pattern):
            if forward:
                continue
            flipped = (*pattern[:step], (rel, True, anchor), *pattern[step + 1 :])
            other = routes.get(_route(local.path_nodes[path], flipped))
            rest = patterns[:k] + patterns[k + 1 :]
            if other is None or significantly_better(
                bank, relation, [*rest, pattern], [*rest, flipped]
            ):
                continue
            pattern, path = flipped, other
            patterns[k], chosen[k] = pattern, path


def significantly_better(
    bank: PatternBank, relation: int, better: Sequence[Pattern], than: Sequence[Pattern]
) -> bool:
    r"""Whether the patterns ``better`` agree with ``relation`` significantly more than ``than``.

    With :math:`D` the agreement of ``than``, switching to ``better`` raises it iff
    :math:`(2 - D)(f_1 - f_0) - D (o_1 - o_0) > 0` (from :math:`D' > D \iff 2 s' > D (b' + n_r)`),
    where :math:`f_1, o_1` count the facts and the other pairs that only ``better`` joins and
    :math:`f_0, o_0` those that only ``than`` joins. Under the null hypothesis that the two are
    equally good, each of these discordant pairs is as likely on either side (McNemar's
    argument), so the statistic is a sum of independent :math:`\pm w` terms, :math:`w = 2 - D`
    for a fact and :math:`D` for another pair, of variance :math:`(2 - D)^2 (f_0 + f_1) + D^2
    (o_0 + o_1)`; the test is one-sided at level :data:`ALPHA` with the normal approximation.

    Args:
        bank: The graph's :class:`PatternBank`.
        relation: The head relation :math:`r`.
        better: A conjunction of patterns (at least one).
        than: Another conjunction of patterns (at least one).

    Returns:
        True when the statistic exceeds the upper :data:`ALPHA` quantile of the standard normal
        (then :math:`D(\text{better}) > D(\text{than})`); False when no pair is discordant.
    """
    return _discordance_test(
        bank.counts(relation, better),
        bank.counts(relation, than),
        lambda: _both_counts(bank, relation, better, than),
        bank.num_facts(relation),
    )


def _both_counts(
    bank: PatternBank, relation: int, better: Sequence[Pattern], than: Sequence[Pattern]
) -> tuple[float, float]:
    """:meth:`PatternBank.counts` of ``[*better, *than]``: the pairs both conjunctions join.

    Where ``than`` adds one pattern to ``better`` (a pick's options share the chosen
    patterns), the pairs of ``better`` are looked up in that pattern's walk
    (:meth:`PatternBank._extended_counts`): the same integers.
    """
    extra = [pattern for pattern in than if pattern not in better]
    if len(extra) != 1:
        return bank.counts(relation, [*better, *than])
    return bank._extended_counts(relation, better, bank._joint_keys(relation, better), extra[0])


def _union_significantly_better(
    bank: PatternBank, relation: int, better: Sequence[Pattern], than: Sequence[Pattern]
) -> bool:
    """:func:`significantly_better` for the unions of ``better`` and of ``than``."""
    return _keys_significantly_better(
        bank, relation, bank._union_keys(relation, better), bank._union_keys(relation, than)
    )


def _keys_significantly_better(
    bank: PatternBank, relation: int, better: np.ndarray, than: np.ndarray
) -> bool:
    """:func:`significantly_better` for two sets of pairs, by their sorted linear keys."""
    return _discordance_test(
        bank._key_counts(relation, better),
        bank._key_counts(relation, than),
        lambda: bank._key_counts(relation, _intersect(better, than)),
        bank.num_facts(relation),
    )


def _discordance_test(
    better: tuple[float, float],
    than: tuple[float, float],
    both: Callable[[], tuple[float, float]],
    facts: float,
) -> bool:
    r"""The test of :func:`significantly_better` from ``(s, b)`` of two pair sets.

    ``better`` and ``than`` are ``(s, b)``, ``both()`` gives that of their intersection;
    ``facts`` is :math:`n_r`. The statistic does not depend on the intersection
    (:math:`f_1 - f_0 = s_1 - s_0`, and so for the other pairs), and the variance is largest
    when the two share no pair and smallest when they share as many facts and as many other
    pairs as the smaller of the two holds, so the intersection is counted only where these
    do not decide the test: a statistic :math:`\le 0` fails it, one that passes with the
    largest variance passes with any, and one that fails with the smallest fails with any.
    The counts are integers (exact in floats) and each rounding is monotone, so the skipped
    cases give the same answer as the full test (tested).
    """
    d = _dice(*than, facts)
    statistic, most = _discordance(better, than, (0.0, 0.0), d)
    if statistic <= 0:
        return False
    threshold = norm.isf(ALPHA)
    if statistic / math.sqrt(most) > threshold:
        return True
    facts_shared = min(better[0], than[0])
    shared = (facts_shared, facts_shared + min(better[1] - better[0], than[1] - than[0]))
    least = _discordance(better, than, shared, d)[1]
    if least > 0 and statistic / math.sqrt(least) <= threshold:
        return False
    statistic, variance = _discordance(better, than, both(), d)
    if variance <= 0:
        return False
    return bool(statistic / math.sqrt(variance) > threshold)


def _discordance(
    better: tuple[float, float], than: tuple[float, float], both: tuple[float, float], d: float
) -> tuple[float, float]:
    """The statistic and variance of :func:`significantly_better` (``d``: D of ``than``)."""
    f1, f0 = better[0] - both[0], than[0] - both[0]
    o1, o0 = better[1] - both[1] - f1, than[1] - both[1] - f0
    variance = (2 - d) ** 2 * (f0 + f1) + d**2 * (o0 + o1)
    return (2 - d) * (f1 - f0) - d * (o1 - o0), variance


def pattern_mask(local: LocalStructure, choice: PatternChoice) -> Tensor:
    """The edge mask ``[m]`` of the chosen paths (all False when none is chosen)."""
    mask = (
        local.edge_mask(choice.chosen)
        if choice.chosen
        else torch.zeros(local.num_edges, dtype=torch.bool, device=local.edge_type.device)
    )
    mask[list(choice.conditions)] = True
    return mask
