r"""A viticulture and wine-trade world: estates, appellations, vintages, grapes, the trade.

Written in session 38 by a helper as a **held-out** world for the explainer, without reading
:mod:`kg.explain`, the explainer benchmarks or their results, and never run with an explainer or
trained on while it was written: designed from viticulture and the fine-wine trade (estates and
cooperatives located in the appellations of seventeen regions in eight producing countries, their
owners, resident winemakers and consulting oenologists, organic, biodynamic and sustainable
certifications; the cuvées an estate makes, its grand vin, a second wine, a white or a wine of a
neighbouring appellation, each bottled in the vintages 2010-2021 as a blend of the grapes its
appellation allows, some naming their principal grape on a varietal label; the regional vintages
of a vintage chart and the frost, hail, heatwaves, harvest rain and drought that marked them; the
négociants of La Place de Bordeaux, the importers that are an estate's agents in ten markets, the
merchants that list a wine, the critics that score it 90 points or more), not from how any
explainer decides. The rules (:data:`WINE_RULES`, length = body atoms):

* ``portfolio_inverse: produces(E,W) <- made_by(W,E)``, length 1, an **inverse pair** (recorded
  in :attr:`~graphdata.worlds.World.inverse_pairs`; 600 wines of 102 producers at seed 0) with no
  exception or noise: the producer's list of its wines and the producer named on each label;
* ``varietal_label: blend_of(W,G) <- labelled_variety(W,G)``, length 1: a wine that names a grape
  on its label is made of it (EU and US labelling law: at least 85 % and 75 %); the 171 varietal
  labels at seed 0 are mostly New World, Alsatian and German wines, and the labelled grape is not
  recorded as a ``blend_of`` fact otherwise (168 derived ``blend_of`` facts beside 725 base ones);
* ``owner_stablemates: stablemate(E,F) <- owned_by(E,O), owned_by(F,O), E != F``, length 2, the
  estates of one owner (a luxury group, an insurer, a family with two châteaux): a **symmetric**
  head (:attr:`~graphdata.worlds.World.symmetric`, 200 facts at seed 0 from the 20 owners of two
  to ten estates; the 58 owners of a single estate link nothing; no exception or noise) from a
  **star** on the owner with an **inequality between the two head variables**;
* ``grape_colour: colour_of(W,C) <- blend_of(W,G), berry_colour(G,C)``, length 2, a chain from a
  wine through its grapes into the two colour hubs (a still wine of red-skinned grapes is red,
  one of white-skinned grapes white; a cuvée is of one colour), whose first atom is the **derived**
  blend: 120 of the 575 ``colour_of`` facts at seed 0 are grounded only through a varietal label;
* ``en_primeur: offered_by(W,N) <- made_by(W,E), sells_through(E,N)``, length 2, a chain: the
  négociants of La Place de Bordeaux that offer a wine, those its estate allocates to (833 facts
  at seed 0 from 139 allocations of 38 estates, 20 of them in Bordeaux);
* ``organic_wine: certified(W,cert_organic) <- made_by(W,E), certified(E,cert_organic)``, length
  2, a chain **anchored on the constant** ``cert_organic`` in the body and **the head** (EU
  organic wine: organic grapes and organic winemaking; 129 wines at seed 0 of the 31 certified
  producers; a biodynamic producer, certified by Demeter or Biodyvin, is organic too, and a
  sustainable certification such as HVE or Napa Green makes no organic wine);
* ``import_market: available_in(W,K) <- made_by(W,E), agent_for(I,E), located_in(I,K)``,
  length 3, a chain from a wine through its producer and the producer's agent into the market
  hubs (976 facts at seed 0 from 166 agencies of 83 exporting producers);
* ``estate_bottling: estate_bottled(W,E) <- made_by(W,E), located_in(E,A),
  from_appellation(W,A)``, length 3, a **triangle** (wine, producer, appellation) whose first atom
  is parallel to the head: a wine bottled by a producer located in the appellation on its label
  (the US "estate bottled" and the French "mis en bouteille au château" rules; a cooperative's
  bottlings of its members' grapes count); the 78 wines at seed 0 of another appellation than
  their producer's (a second wine as regional Bordeaux, a Burgundy domaine's village wine of a
  neighbouring commune) are not;
* ``frost_loss: short_crop(E,V) <- produces(E,W), of_vintage(W,V), marked_by(V,weather_frost)``,
  length 3, a chain through the **derived** inverse into the regional vintages that spring frost
  marked, **anchored on the constant** ``weather_frost`` (30 of the 157 vintages at seed 0, 97
  wines; 66 ``short_crop`` facts);
* a **correlated shortcut** (:attr:`~graphdata.worlds.World.shortcuts`), in no body:
  ``retail_listed`` (the markets whose merchants list a wine: .6 of those it is imported into,
  its home country with probability .5, a market by weight through parallel imports or auction
  resales with .12) links .59 of the ``available_in`` pairs, and .58 of its training pairs are
  ``available_in`` pairs (seed 0);
* rules of length 1 (two), 2 (four) and 3 (three); 1-1 (``winemaker_at``), 1-N (``produces``),
  N-1 (``berry_colour``, ``blend_of``, ``certified``, ``colour_of``, ``estate_bottled``,
  ``from_appellation``, ``labelled_variety``, ``located_in``, ``made_by``, ``marked_by``,
  ``of_vintage``, ``owned_by``) and N-N (``agent_for``, ``available_in``, ``offered_by``,
  ``rated_by``, ``retail_listed``, ``sells_through``, ``short_crop``, ``stablemate``) relations
  (by count at seed 0);
* **exceptions**: 3 % of ``varietal_label``'s heads (a mislabelled wine, as in the 2010 scandal
  of Languedoc merlot and syrah sold as pinot noir), 5 % of ``grape_colour``'s (a rosé or blanc
  de noirs pressed from red grapes, an orange wine macerated on white grapes' skins), 8 % of
  ``en_primeur``'s (a wine its château sells direct to private clients rather than through La
  Place), 10 % of ``organic_wine``'s (a vintage still in conversion, or a cuvée of bought-in
  grapes), 6 % of ``import_market``'s (a cuvée allocated to the home market only), 8 % of
  ``estate_bottling``'s (a négoce cuvée of bought-in grapes from the estate's own appellation)
  and 15 % of ``frost_loss``'s (an estate that saved its buds with wind machines, candles or
  sprinklers, or whose vines lie above the frost pocket) are withheld; a withheld ``blend_of``
  fact also leaves out the colour only it grounds, and a wine with a withheld colour has none.
  **Noise**: 3 % of the ``offered_by`` (a négociant's offer of a wine bought back from a private
  cellar, outside its allocation), 3 % of the ``available_in`` (stock diverted from another
  market, or counterfeit bottles seized there) and 5 % of the ``short_crop`` facts (a short crop
  reported for a vintage of which the estate bottled no wine, or misfiled under another region's
  frost vintage) have no grounding.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`):
1,228 entities (600 wines, 157 regional vintages, 120 estates, 115 winemakers, 78 owners, 38
appellations, 24 importers, 22 grapes, 17 regions, 14 countries, 10 consultants, 10 négociants,
8 critics, 5 cooperatives, 5 weather events, 3 certifications, 2 colours), 22 relations; 9,072
train, 396 valid and 398 test triples; the valid+test targets per rule of their shortest
grounding are ``import_market`` 191, ``en_primeur`` 161, ``portfolio_inverse`` 120,
``grape_colour`` 107, ``estate_bottling`` 94, ``owner_stablemates`` 40, ``varietal_label`` 34,
``organic_wine`` 26, ``frost_loss`` 11 (length 1: 154, 2: 334, 3: 296), and 10 noise facts; .06
of the targets have more than one grounding; 242 exceptions (81 ``available_in``, 52
``offered_by``, 48 ``estate_bottled``, 26 ``certified``, 23 ``colour_of``, 12 ``short_crop``, 3
``blend_of``). **Hubs**: ``colour_red`` has 310 distinct training neighbours, ``country_uk`` 251,
``critic_wine_advocate`` 213, ``grape_cabernet_sauvignon`` 144, ``cert_organic`` 134, the busiest
négociant 118, the busiest appellation 94, the busiest estate 53, ``region_bordeaux`` 32 and
``weather_frost`` 30 (a wine a median of 10); the 2-hop enclosing subgraphs of the 200 sampled
test targets hold a median of 864.5 training triples (p90 1,719.4; at seeds 1-3, 40 targets
each, medians 947.5, 1,248.0 and 799.0, p90 2,001.1, 2,212.2 and 2,026.6). Sizes were adjusted
while the world was written, never from an explainer's results: the frost probabilities so that
``frost_loss`` has at least 8 held-out targets at seed 0, and the reach of La Place and of the
critics (négociants and critics link a wine to many others) so that the enclosing subgraphs
reach a median of 800-1,500 training triples; two relations (classifications and auction
sales) were left out to keep 22 relations.

**Base facts** (:func:`wine_world`), with :math:`N` = ``size`` wines: each region of
``_REGIONS`` is ``located_in`` its country, each appellation of ``_APPELLATIONS`` in its region,
and each grape of ``_GRAPES`` has its ``berry_colour``. :math:`\max(30, \lfloor N/5 \rfloor)`
estates are each ``located_in`` an appellation (not a regional one) of a region by weight, of
log-normal prestige (their quality is its rank in :math:`(0, 1)`);
:math:`\max(3, \lfloor N/120 \rfloor)` cooperatives are ``located_in`` the regional appellation
of a region by weight (where it has one). An estate makes a grand vin of its appellation; one of
the top half of quality a second wine (probability .5) of the same colour, of its appellation or
(.5) the regional one; a white with probability .25 where its appellation or the regional one
allows whites, and a wine of another appellation of its region with .15; a cooperative 3 +
Poisson(1) cuvées of its region's appellations. A cuvée is white with its appellation's share,
a blend of the principal grape of its colour and each other allowed grape with probability .6,
and names its principal grape on the label with its appellation's probability. Each of the
:math:`N` wines is of a cuvée drawn by weight (the producer's prestige; 1.5 for a cooperative's;
.6 and .4 times it for a second wine and the others) in a vintage of 2010-2021 it has not had
yet: ``made_by`` its producer, ``of_vintage`` its regional vintage, ``from_appellation`` its
cuvée's, with the ``labelled_variety`` of a labelled cuvée's principal grape, and a ``blend_of``
the principal grape of an unlabelled cuvée and each other grape of its cuvée with probability
.85. A regional vintage is ``located_in`` its region and ``marked_by`` each weather event with
the region's probability (frost: the larger of it and that of ``_FROST_YEARS``: 2016, 2017 and
2021). An estate is ``owned_by`` one of :math:`\max(4, \lfloor E/12 \rfloor)` groups with
probability .35 (by log-normal size, three times as likely one that owns an estate in its
region), else a family (with probability .12 one that already owns an estate of its region).
Each producer has a resident winemaker (``winemaker_at``; a group's technical director shared
with a stablemate with probability .3), and :math:`\max(6, \lfloor N/60 \rfloor)` consultants of
log-normal reach with two home regions (four times as likely) are ``winemaker_at`` an estate
with probability .15 + .45 quality. A producer is ``certified`` organic with its region's
probability (.18 outside Burgundy, the Rhône, the Loire and Alsace), then biodynamic with .4,
else sustainable with .25. :math:`\max(6, \lfloor N/60 \rfloor)` négociants of log-normal size
are ``located_in`` Bordeaux; a Bordeaux estate of the top 75 % of quality ``sells_through`` 2 +
Poisson(2.5) of them by size, an estate of the top 40 % elsewhere 1 + Poisson(1.5) with
probability .6. :math:`\max(8, \lfloor N/25 \rfloor)` importers are ``located_in`` the markets
of ``_COUNTRIES`` (one in each first, the others by weight); an estate exports with probability
.5 + .35 quality (a cooperative .4) to 1 + Poisson(.4 + 1.2 quality) markets other than its own
country, where one importer by log-normal size is its ``agent_for`` it. A wine is
``retail_listed`` as the shortcut says. A wine is ``rated_by`` each critic of ``_CRITICS`` (90
points or more) with the critic's probability for its region times .15 + .85 quality (a
cooperative's .3), half that for a wine other than a grand vin; a critic is ``located_in`` its
country.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`WINE_RULES`.
"""

from __future__ import annotations

import numpy as np

from graphdata.typing import LabeledTriple
from graphdata.worlds.base import (
    World,
    build_world,
    check_world_arguments,
    entity_labels,
    weighted_pick,
)

__all__ = ["WINE_RULES", "wine_world"]

#: The planted rules: a producer's wines (an inverse pair), the grape a varietal label names,
#: the stablemates of one owner (symmetric, a star with an inequality), a wine's colour from its
#: grapes' skins (through the derived blend), the négociants of La Place that offer a château's
#: wines, organic wines (a constant in the head and the body), the markets a wine is imported
#: into, estate bottling (a triangle) and the short crops of frost vintages (a constant, through
#: the derived inverse).
WINE_RULES = """\
portfolio_inverse: produces(E,W) <- made_by(W,E)
varietal_label: blend_of(W,G) <- labelled_variety(W,G)
owner_stablemates: stablemate(E,F) <- owned_by(E,O), owned_by(F,O), E != F
grape_colour: colour_of(W,C) <- blend_of(W,G), berry_colour(G,C)
en_primeur: offered_by(W,N) <- made_by(W,E), sells_through(E,N)
organic_wine: certified(W,cert_organic) <- made_by(W,E), certified(E,cert_organic)
import_market: available_in(W,K) <- made_by(W,E), agent_for(I,E), located_in(I,K)
estate_bottling: estate_bottled(W,E) <- made_by(W,E), located_in(E,A), from_appellation(W,A)
frost_loss: short_crop(E,V) <- produces(E,W), of_vintage(W,V), marked_by(V,weather_frost)
"""

#: The countries (entity ``country_<name>``) and their weight among the importers' markets (0:
#: no fine-wine importer of the world is based there).
_COUNTRIES = (
    ("france", 0.03),
    ("italy", 0.02),
    ("spain", 0.0),
    ("portugal", 0.0),
    ("germany", 0.08),
    ("usa", 0.22),
    ("australia", 0.0),
    ("argentina", 0.0),
    ("uk", 0.24),
    ("china", 0.10),
    ("japan", 0.10),
    ("switzerland", 0.08),
    ("belgium", 0.06),
    ("canada", 0.07),
)
#: The wine regions (entity ``region_<name>``): country, weight among the estates, and the
#: probabilities that a vintage of the region is marked by each of ``_WEATHER``.
_REGIONS = (
    ("bordeaux", "france", 0.22, (0.20, 0.08, 0.12, 0.15, 0.06)),
    ("burgundy", "france", 0.14, (0.35, 0.18, 0.12, 0.15, 0.04)),
    ("rhone", "france", 0.07, (0.15, 0.06, 0.20, 0.08, 0.12)),
    ("loire", "france", 0.04, (0.35, 0.08, 0.08, 0.15, 0.04)),
    ("alsace", "france", 0.03, (0.20, 0.06, 0.10, 0.12, 0.04)),
    ("piedmont", "italy", 0.05, (0.15, 0.12, 0.15, 0.10, 0.08)),
    ("tuscany", "italy", 0.06, (0.12, 0.06, 0.18, 0.10, 0.12)),
    ("rioja", "spain", 0.04, (0.20, 0.08, 0.15, 0.08, 0.12)),
    ("ribera", "spain", 0.03, (0.30, 0.06, 0.15, 0.05, 0.15)),
    ("douro", "portugal", 0.03, (0.05, 0.08, 0.25, 0.06, 0.20)),
    ("mosel", "germany", 0.03, (0.18, 0.08, 0.08, 0.18, 0.04)),
    ("rheingau", "germany", 0.02, (0.15, 0.08, 0.08, 0.15, 0.04)),
    ("napa", "usa", 0.08, (0.06, 0.02, 0.20, 0.04, 0.18)),
    ("sonoma", "usa", 0.03, (0.06, 0.02, 0.15, 0.06, 0.15)),
    ("oregon", "usa", 0.03, (0.08, 0.04, 0.12, 0.12, 0.08)),
    ("barossa", "australia", 0.03, (0.06, 0.05, 0.25, 0.04, 0.20)),
    ("mendoza", "argentina", 0.03, (0.18, 0.20, 0.12, 0.04, 0.10)),
)
#: The weather a vintage is marked by (entity ``weather_<name>``).
_WEATHER = ("frost", "hail", "heatwave", "harvest_rain", "drought")
#: The vintages.
_YEARS = tuple(range(2010, 2022))
#: Frost years: region mapped to the probability of spring frost that year (2016: Burgundy and
#: the Loire; 2017: Bordeaux, Spain and much of Europe; 2021: France).
_FROST_YEARS = {
    2016: {"burgundy": 0.9, "loire": 0.8, "alsace": 0.3},
    2017: {"bordeaux": 0.9, "loire": 0.6, "burgundy": 0.4, "alsace": 0.6, "rioja": 0.7}
    | {"ribera": 0.8, "piedmont": 0.4, "tuscany": 0.4, "rheingau": 0.5, "mosel": 0.5},
    2021: {"burgundy": 0.95, "loire": 0.9, "rhone": 0.7, "bordeaux": 0.6, "alsace": 0.5},
}
#: The grape varieties (entity ``grape_<name>``) by berry colour (entity ``colour_<name>``).
_GRAPES = {
    "red": (
        "cabernet_sauvignon merlot cabernet_franc petit_verdot pinot_noir syrah grenache "
        "mourvedre nebbiolo sangiovese tempranillo touriga_nacional malbec"
    ).split(),
    "white": (
        "chardonnay sauvignon_blanc semillon chenin_blanc riesling gewurztraminer viognier "
        "roussanne marsanne"
    ).split(),
}
_LEFT_BANK = "cabernet_sauvignon merlot cabernet_franc petit_verdot"
_RIGHT_BANK = "merlot cabernet_franc cabernet_sauvignon"
#: The appellations (entity ``aoc_<name>``): region, weight among the region's estates (0: a
#: generic regional appellation, where no estate is located), the red and the white grapes it
#: allows (the principal first), the share of its wines that are white, and the probability
#: that a wine of it names its principal grape on the label.
_APPELLATIONS = (
    ("pauillac", "bordeaux", 1.0, _LEFT_BANK, "", 0.0, 0.0),
    ("margaux", "bordeaux", 1.0, _LEFT_BANK, "", 0.0, 0.0),
    ("saint_julien", "bordeaux", 0.6, _LEFT_BANK, "", 0.0, 0.0),
    ("saint_estephe", "bordeaux", 0.6, _LEFT_BANK, "", 0.0, 0.0),
    ("pessac_leognan", "bordeaux", 0.7, _LEFT_BANK, "sauvignon_blanc semillon", 0.25, 0.0),
    ("saint_emilion", "bordeaux", 1.2, _RIGHT_BANK, "", 0.0, 0.0),
    ("pomerol", "bordeaux", 0.6, _RIGHT_BANK, "", 0.0, 0.0),
    ("sauternes", "bordeaux", 0.5, "", "semillon sauvignon_blanc", 1.0, 0.0),
    ("bordeaux", "bordeaux", 0.0, _RIGHT_BANK, "sauvignon_blanc semillon", 0.2, 0.05),
    ("chablis", "burgundy", 0.6, "", "chardonnay", 1.0, 0.0),
    ("gevrey_chambertin", "burgundy", 1.0, "pinot_noir", "", 0.0, 0.0),
    ("vosne_romanee", "burgundy", 0.8, "pinot_noir", "", 0.0, 0.0),
    ("meursault", "burgundy", 0.8, "pinot_noir", "chardonnay", 0.9, 0.0),
    ("puligny_montrachet", "burgundy", 0.6, "pinot_noir", "chardonnay", 0.95, 0.0),
    ("bourgogne", "burgundy", 0.0, "pinot_noir", "chardonnay", 0.4, 0.5),
    ("cote_rotie", "rhone", 0.6, "syrah", "", 0.0, 0.0),
    ("hermitage", "rhone", 0.5, "syrah", "marsanne roussanne", 0.2, 0.0),
    ("chateauneuf_du_pape", "rhone", 1.0, "grenache syrah mourvedre", "roussanne", 0.08, 0.0),
    ("cotes_du_rhone", "rhone", 0.0, "grenache syrah mourvedre", "viognier roussanne", 0.1, 0.1),
    ("sancerre", "loire", 1.0, "pinot_noir", "sauvignon_blanc", 0.85, 0.0),
    ("vouvray", "loire", 0.7, "", "chenin_blanc", 1.0, 0.0),
    ("alsace", "alsace", 1.0, "pinot_noir", "riesling gewurztraminer", 0.92, 0.95),
    ("barolo", "piedmont", 1.0, "nebbiolo", "", 0.0, 0.0),
    ("barbaresco", "piedmont", 0.6, "nebbiolo", "", 0.0, 0.0),
    ("chianti_classico", "tuscany", 1.0, "sangiovese merlot", "", 0.0, 0.0),
    ("brunello_di_montalcino", "tuscany", 0.8, "sangiovese", "", 0.0, 0.0),
    ("bolgheri", "tuscany", 0.5, "cabernet_sauvignon merlot cabernet_franc", "", 0.0, 0.0),
    ("rioja", "rioja", 1.0, "tempranillo grenache", "", 0.0, 0.05),
    ("ribera_del_duero", "ribera", 1.0, "tempranillo cabernet_sauvignon merlot", "", 0.0, 0.05),
    ("douro", "douro", 1.0, "touriga_nacional tempranillo", "", 0.0, 0.1),
    ("mosel", "mosel", 1.0, "", "riesling", 1.0, 0.9),
    ("rheingau", "rheingau", 1.0, "pinot_noir", "riesling", 0.9, 0.9),
    ("napa_valley", "napa", 1.0, _LEFT_BANK, "chardonnay sauvignon_blanc", 0.25, 0.85),
    ("oakville", "napa", 0.5, "cabernet_sauvignon merlot cabernet_franc", "", 0.0, 0.85),
    ("sonoma_coast", "sonoma", 1.0, "pinot_noir", "chardonnay", 0.45, 0.95),
    ("willamette_valley", "oregon", 1.0, "pinot_noir", "chardonnay", 0.3, 0.95),
    ("barossa_valley", "barossa", 1.0, "syrah grenache mourvedre", "riesling semillon", 0.15, 0.8),
    ("mendoza", "mendoza", 1.0, "malbec cabernet_sauvignon", "chardonnay", 0.15, 0.85),
)
#: The critics (entity ``critic_<name>``): country, and the probability that a wine of a top
#: estate is reviewed at 90 points or more, in general and by region.
_CRITICS = (
    ("wine_advocate", "usa", 0.35, {"bordeaux": 0.9, "rhone": 0.8, "napa": 0.8}),
    ("vinous", "usa", 0.3, {"piedmont": 0.9, "tuscany": 0.8, "burgundy": 0.5}),
    ("burghound", "usa", 0.0, {"burgundy": 0.95}),
    ("jancis_robinson", "uk", 0.3, {"bordeaux": 0.5, "loire": 0.5}),
    ("james_suckling", "usa", 0.3, {"tuscany": 0.8, "bordeaux": 0.6, "mendoza": 0.6}),
    ("wine_spectator", "usa", 0.35, {"napa": 0.8, "sonoma": 0.8, "oregon": 0.7}),
    ("decanter", "uk", 0.3, {"bordeaux": 0.5, "douro": 0.5}),
    ("guia_penin", "spain", 0.0, {"rioja": 0.9, "ribera": 0.9}),
)
#: Withheld heads: a mislabelled varietal wine, a rosé or blanc de noirs pressed from red
#: grapes, a wine its château sells direct rather than through La Place, a wine of a vintage
#: in conversion or from bought-in grapes, a cuvée the importer does not take, a négoce cuvée
#: of the estate's own appellation from bought-in grapes, a crop saved from the frost.
_EXCEPTION_RATES = (
    ("varietal_label", 0.03),
    ("grape_colour", 0.05),
    ("en_primeur", 0.08),
    ("organic_wine", 0.10),
    ("import_market", 0.06),
    ("estate_bottling", 0.08),
    ("frost_loss", 0.15),
)
#: Heads without grounding: a négociant's offer of a wine bought back from a private cellar,
#: a wine on sale in a market without an agent (diverted stock or counterfeits), a crop lost
#: so completely that no wine of the vintage was bottled.
_NOISE_RATES = (
    ("offered_by", 0.03),
    ("available_in", 0.03),
    ("short_crop", 0.05),
)


def _pick(rng: np.random.Generator, weight: np.ndarray) -> int:
    """One index drawn with probability proportional to ``weight``."""
    return int(rng.choice(len(weight), p=weight / weight.sum()))


def wine_world(
    size: int = 600,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the wine world (module docstring) and its ground truth.

    Args:
        size: The number of wines (bottlings of one cuvée in one vintage) :math:`N \ge 80`.
            Default 600 (1,228 entities, 22 relations and 9,866 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"wine"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = wine_world(80, seed=0)
        >>> w.exception_rates["frost_loss"], w.inverse_pairs
        (0.15, (('made_by', 'produces'),))
        >>> sorted(r.length for r in w.rules)
        [1, 1, 2, 2, 2, 2, 3, 3, 3]
        >>> w.symmetric, w.shortcuts
        (('stablemate',), (('retail_listed', 'available_in'),))
    """
    check_world_arguments(size, 80, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    facts: list[LabeledTriple] = []

    # Places: each region is located_in its country, each appellation in its region; each
    # grape has its berry_colour.
    countries = [f"country_{name}" for name, _ in _COUNTRIES]
    country_index = {name: k for k, (name, _) in enumerate(_COUNTRIES)}
    market_weight = np.array([w for _, w in _COUNTRIES])
    regions = [f"region_{name}" for name, _, _, _ in _REGIONS]
    region_index = {name: r for r, (name, _, _, _) in enumerate(_REGIONS)}
    region_country = [country_index[c] for _, c, _, _ in _REGIONS]
    region_weight = np.array([w for _, _, w, _ in _REGIONS])
    facts.extend(
        (regions[r], "located_in", countries[region_country[r]]) for r in range(len(regions))
    )
    apps = [f"aoc_{name}" for name, *_ in _APPELLATIONS]
    app_region = [region_index[a[1]] for a in _APPELLATIONS]
    app_weight = np.array([a[2] for a in _APPELLATIONS])
    app_reds = [a[3].split() for a in _APPELLATIONS]
    app_whites = [a[4].split() for a in _APPELLATIONS]
    app_white_share = [a[5] for a in _APPELLATIONS]
    app_varietal = [a[6] for a in _APPELLATIONS]
    facts.extend((apps[a], "located_in", regions[app_region[a]]) for a in range(len(apps)))
    region_apps = [[a for a in range(len(apps)) if app_region[a] == r] for r in range(len(regions))]
    colours = {c: f"colour_{c}" for c in _GRAPES}
    grapes = {g: f"grape_{g}" for c in _GRAPES for g in _GRAPES[c]}
    facts.extend((grapes[g], "berry_colour", colours[c]) for c in _GRAPES for g in _GRAPES[c])

    # Producers: max(30, N/5) estates, each located_in an appellation (not a regional one) of a
    # region by weight, of log-normal prestige (quality: its rank, in (0, 1)); max(3, N/120)
    # cooperatives located_in the regional appellation of a region by weight (where it has one).
    n_estate = max(30, n // 5)
    estates = entity_labels("estate", n_estate)
    estate_region = [_pick(rng, region_weight) for _ in range(n_estate)]
    estate_app = []
    for e in range(n_estate):
        pool = [a for a in region_apps[estate_region[e]] if app_weight[a] > 0]
        estate_app.append(weighted_pick(rng, pool, app_weight))
    prestige = rng.lognormal(0.0, 1.0, n_estate)
    quality = (np.argsort(np.argsort(prestige)) + 0.5) / n_estate
    n_coop = max(3, n // 120)
    coops = entity_labels("coop", n_coop)
    coop_region = [_pick(rng, region_weight) for _ in range(n_coop)]
    coop_app = []
    for c in range(n_coop):
        pool = region_apps[coop_region[c]]
        generic = [a for a in pool if app_weight[a] == 0]
        coop_app.append((generic or pool)[int(rng.integers(len(generic or pool)))])
    producers = estates + coops
    producer_region = estate_region + coop_region
    producer_app = estate_app + coop_app
    facts.extend((producers[p], "located_in", apps[producer_app[p]]) for p in range(len(producers)))

    # Cuvées: (producer, appellation, colour, grapes with the principal first, labelled, weight,
    # grand vin). A cuvée's colour is white by its appellation's share unless given; its blend
    # is the principal grape of its colour and each other allowed grape with probability .6; it
    # names the principal grape on its label with the appellation's probability.
    cuvees: list[tuple[int, int, str, list[str], bool, float, bool]] = []

    def cuvee(p: int, a: int, colour: str | None, weight: float, grand: bool) -> str:
        if colour is None or not (app_whites[a] if colour == "white" else app_reds[a]):
            colour = "white" if rng.random() < app_white_share[a] else "red"
        allowed = app_whites[a] if colour == "white" else app_reds[a]
        blend = [allowed[0]] + [g for g in allowed[1:] if rng.random() < 0.6]
        labelled = bool(rng.random() < app_varietal[a])
        cuvees.append((p, a, colour, blend, labelled, weight, grand))
        return colour

    # An estate makes a grand vin of its appellation; an estate of the top half a second wine
    # (probability .5) of the same colour, of its appellation or (.5) the regional one; a white
    # with probability .25 where its appellation or the regional one allows whites; a wine of
    # another appellation of its region with probability .15. A cooperative makes 3 +
    # Poisson(1) cuvées of the appellations of its region.
    for e in range(n_estate):
        a, r = estate_app[e], estate_region[e]
        generic = [x for x in region_apps[r] if app_weight[x] == 0]
        colour = cuvee(e, a, None, prestige[e], True)
        if quality[e] >= 0.5 and rng.random() < 0.5:
            second = a if rng.random() < 0.5 or not generic else generic[0]
            cuvee(e, second, colour, 0.6 * prestige[e], False)
        if rng.random() < 0.25:
            whites = [x for x in [a, *generic] if app_whites[x]]
            if whites:
                cuvee(e, whites[0], "white", 0.4 * prestige[e], False)
        if rng.random() < 0.15:
            others = [x for x in region_apps[r] if x != a]
            if others:
                other = others[int(rng.integers(len(others)))]
                cuvee(e, other, None, 0.4 * prestige[e], False)
    for c in range(n_coop):
        pool = region_apps[coop_region[c]]
        for _ in range(3 + int(rng.poisson(1.0))):
            cuvee(n_estate + c, pool[int(rng.integers(len(pool)))], None, 1.5, False)

    # Wines: N bottlings, each of a cuvée drawn by weight in a vintage of 2010-2021 it has not had
    # yet (a cuvée with twelve is drawn no more).
    cuvee_weight = np.array([c[5] for c in cuvees])
    used: list[set[int]] = [set() for _ in cuvees]
    wines = entity_labels("wine", n)
    wine_cuvee: list[int] = []
    wine_year: list[int] = []
    for _ in range(n):
        while True:
            k = _pick(rng, cuvee_weight)
            free = [y for y in _YEARS if y not in used[k]]
            if free:
                break
            cuvee_weight[k] = 0.0
        y = free[int(rng.integers(len(free)))]
        used[k].add(y)
        wine_cuvee.append(k)
        wine_year.append(y)
    wine_producer = [cuvees[k][0] for k in wine_cuvee]
    wine_region = [producer_region[p] for p in wine_producer]

    # Vintages: the regional vintages of the wines (a vintage chart's entries), located_in their
    # region, marked_by each weather event with the region's probability (frost: the larger of
    # it and the frost year's).
    vintages: dict[tuple[int, int], str] = {}
    for w in range(n):
        key = (wine_region[w], wine_year[w])
        vintages.setdefault(key, f"vintage_{_REGIONS[key[0]][0]}_{key[1]}")
    weather = [f"weather_{name}" for name in _WEATHER]
    for (r, y), v in sorted(vintages.items()):
        facts.append((v, "located_in", regions[r]))
        probs = list(_REGIONS[r][3])
        probs[0] = max(probs[0], _FROST_YEARS.get(y, {}).get(_REGIONS[r][0], 0.0))
        for x, q in enumerate(probs):
            if rng.random() < q:
                facts.append((v, "marked_by", weather[x]))

    # Each wine is made_by its producer, of_vintage its regional vintage, from_appellation its
    # cuvée's; a labelled cuvée's wine has the labelled_variety of its principal grape (and no
    # recorded blend_of it); the wine is a blend_of its cuvée's other grapes, each with
    # probability .85 (a grape left out of a vintage), and of the principal grape of an
    # unlabelled cuvée.
    for w in range(n):
        p, k = wine_producer[w], wine_cuvee[w]
        _, a, _, blend, labelled, _, _ = cuvees[k]
        facts.append((wines[w], "made_by", producers[p]))
        facts.append((wines[w], "of_vintage", vintages[(wine_region[w], wine_year[w])]))
        facts.append((wines[w], "from_appellation", apps[a]))
        if labelled:
            facts.append((wines[w], "labelled_variety", grapes[blend[0]]))
        for i, g in enumerate(blend):
            if i == 0 and labelled:
                continue
            if i == 0 or rng.random() < 0.85:
                facts.append((wines[w], "blend_of", grapes[g]))

    # Owners: an estate belongs to one of max(4, E/12) groups with probability .35 (by
    # log-normal size, three times as likely one already in its region), else to a family, with
    # probability .12 a family that already owns another estate of its region.
    n_group = max(4, n_estate // 12)
    group_weight = rng.lognormal(0.0, 0.8, n_group)
    owner_estates: list[list[int]] = [[] for _ in range(n_group)]
    owner_region: list[set[int]] = [set() for _ in range(n_group)]
    n_family_start = n_group
    estate_owner: list[int] = []
    for e in range(n_estate):
        r = estate_region[e]
        if rng.random() < 0.35:
            near = np.array([3.0 if r in owner_region[o] else 1.0 for o in range(n_group)])
            o = _pick(rng, group_weight * near)
        else:
            families = [
                o for o in range(n_family_start, len(owner_estates)) if r in owner_region[o]
            ]
            if families and rng.random() < 0.12:
                o = families[int(rng.integers(len(families)))]
            else:
                o = len(owner_estates)
                owner_estates.append([])
                owner_region.append(set())
        owner_estates[o].append(e)
        owner_region[o].add(r)
        estate_owner.append(o)
    owners = entity_labels("owner", len(owner_estates))
    facts.extend((estates[e], "owned_by", owners[estate_owner[e]]) for e in range(n_estate))

    # Winemakers: each producer has a resident winemaker (the technical director of a group
    # shared with a stablemate with probability .3); max(6, N/60) consultants of log-normal reach,
    # each with two home regions (four times as likely), advise an estate with probability
    # .15 + .45 quality.
    makers: list[str] = []
    group_maker: dict[int, str] = {}
    for p in range(len(producers)):
        o = estate_owner[p] if p < n_estate else -1
        if 0 <= o < n_group and o in group_maker and rng.random() < 0.3:
            person = group_maker[o]
        else:
            person = f"winemaker_{len(makers):03d}"
            makers.append(person)
            if 0 <= o < n_group:
                group_maker.setdefault(o, person)
        facts.append((person, "winemaker_at", producers[p]))
    n_consultant = max(6, n // 60)
    consultants = entity_labels("consultant", n_consultant)
    reach = rng.lognormal(0.0, 0.8, n_consultant)
    homes = [set(rng.choice(len(regions), size=2, replace=False).tolist()) for _ in consultants]
    for e in range(n_estate):
        if rng.random() < 0.15 + 0.45 * quality[e]:
            near = np.array([4.0 if estate_region[e] in h else 1.0 for h in homes])
            facts.append((consultants[_pick(rng, reach * near)], "winemaker_at", estates[e]))

    # Certifications: a producer is certified organic with its region's probability (.18
    # elsewhere), then biodynamic with probability .4; else sustainable with .25.
    organic_share = {"burgundy": 0.35, "loire": 0.4, "alsace": 0.45, "rhone": 0.3}
    for p in range(len(producers)):
        if rng.random() < organic_share.get(_REGIONS[producer_region[p]][0], 0.18):
            facts.append((producers[p], "certified", "cert_organic"))
            if rng.random() < 0.4:
                facts.append((producers[p], "certified", "cert_biodynamic"))
        elif rng.random() < 0.25:
            facts.append((producers[p], "certified", "cert_sustainable"))

    # La Place de Bordeaux: max(6, N/60) négociants of log-normal size, located_in Bordeaux; a
    # Bordeaux estate of the top 75 % of quality sells_through 2 + Poisson(2.5) of them (by
    # size), an estate of the top 40 % elsewhere 1 + Poisson(1.5) with probability .6.
    n_negociant = max(6, n // 60)
    negociants = entity_labels("negociant", n_negociant)
    negociant_weight = rng.lognormal(0.0, 0.7, n_negociant)
    facts.extend((x, "located_in", regions[region_index["bordeaux"]]) for x in negociants)
    bordeaux = region_index["bordeaux"]
    for e in range(n_estate):
        if estate_region[e] == bordeaux and quality[e] >= 0.25:
            want = 2 + int(rng.poisson(2.5))
        elif quality[e] >= 0.6 and rng.random() < 0.6:
            want = 1 + int(rng.poisson(1.5))
        else:
            continue
        want = min(want, n_negociant)
        chosen = rng.choice(
            n_negociant, size=want, replace=False, p=negociant_weight / negociant_weight.sum()
        )
        facts.extend((estates[e], "sells_through", negociants[int(x)]) for x in sorted(chosen))

    # Importers: max(8, N/25), one located_in each market first, the others in a market by
    # weight; an estate exports with probability .5 + .35 quality (a cooperative .4) to 1 +
    # Poisson(.4 + 1.2 quality) markets other than its own country (by weight), where one
    # importer (by log-normal size) is its agent_for it.
    n_importer = max(8, n // 25)
    importers = entity_labels("importer", n_importer)
    markets = [k for k in range(len(countries)) if market_weight[k] > 0]
    importer_market = list(markets) + [
        _pick(rng, market_weight) for _ in range(n_importer - len(markets))
    ]
    importer_market = importer_market[:n_importer]
    importer_weight = rng.lognormal(0.0, 0.6, n_importer)
    facts.extend(
        (importers[i], "located_in", countries[importer_market[i]]) for i in range(n_importer)
    )
    producer_markets: list[set[int]] = []
    for p in range(len(producers)):
        q = quality[p] if p < n_estate else 0.3
        home = region_country[producer_region[p]]
        reached: set[int] = set()
        if rng.random() < (0.5 + 0.35 * q if p < n_estate else 0.4):
            pool = [
                k
                for k in markets
                if k != home and any(importer_market[i] == k for i in range(n_importer))
            ]
            want = min(len(pool), 1 + int(rng.poisson(0.4 + 1.2 * q)))
            share = market_weight[pool]
            for j in rng.choice(len(pool), size=want, replace=False, p=share / share.sum()):
                k = pool[int(j)]
                agents = [i for i in range(n_importer) if importer_market[i] == k]
                i = weighted_pick(rng, agents, importer_weight)
                facts.append((importers[i], "agent_for", producers[p]))
                reached.add(k)
        producer_markets.append(reached)

    # Retail listings: merchants in a market the wine is imported into list it with probability
    # .6; merchants of its home country with .5; of a market by weight (parallel imports,
    # auction resales) with .12.
    for w in range(n):
        p = wine_producer[w]
        home = region_country[producer_region[p]]
        listed = {k for k in sorted(producer_markets[p]) if rng.random() < 0.6}
        if rng.random() < 0.5:
            listed.add(home)
        if rng.random() < 0.12:
            listed.add(_pick(rng, market_weight))
        facts.extend((wines[w], "retail_listed", countries[k]) for k in sorted(listed))

    # Critics: a wine is rated_by a critic (90 points or more) with the critic's probability for
    # its region times .15 + .85 quality (a cooperative's quality .3), a wine other than a grand
    # vin .5 times that.
    critics = [f"critic_{name}" for name, _, _, _ in _CRITICS]
    facts.extend(
        (critics[c], "located_in", countries[country_index[k]])
        for c, (_, k, _, _) in enumerate(_CRITICS)
    )
    for w in range(n):
        p, k = wine_producer[w], wine_cuvee[w]
        q = quality[p] if p < n_estate else 0.3
        factor = 1.0 if cuvees[k][6] else 0.5
        region = _REGIONS[wine_region[w]][0]
        for c, (_, _, base, by_region) in enumerate(_CRITICS):
            if rng.random() < by_region.get(region, base) * (0.15 + 0.85 * q) * factor:
                facts.append((wines[w], "rated_by", critics[c]))

    kinds = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(regions, "region"),
        **dict.fromkeys(apps, "appellation"),
        **dict.fromkeys(grapes.values(), "grape"),
        **dict.fromkeys(colours.values(), "colour"),
        **dict.fromkeys(estates, "estate"),
        **dict.fromkeys(coops, "cooperative"),
        **dict.fromkeys(wines, "wine"),
        **dict.fromkeys(vintages.values(), "vintage"),
        **dict.fromkeys(weather, "weather"),
        **dict.fromkeys(owners, "owner"),
        **dict.fromkeys(makers, "winemaker"),
        **dict.fromkeys(consultants, "consultant"),
        **dict.fromkeys(("cert_organic", "cert_biodynamic", "cert_sustainable"), "certification"),
        **dict.fromkeys(negociants, "negociant"),
        **dict.fromkeys(importers, "importer"),
        **dict.fromkeys(critics, "critic"),
    }
    return build_world(
        "wine",
        facts,
        WINE_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=kinds,
        exception_rates=dict(_EXCEPTION_RATES),
        noise_rates=dict(_NOISE_RATES),
        symmetric=("stablemate",),
        inverse_pairs=(("made_by", "produces"),),
        shortcuts=(("retail_listed", "available_in"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
