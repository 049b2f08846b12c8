"""Synthetic knowledge-graph worlds with planted Horn rules, exceptions, noise and ground truth.

Twenty-seven worlds besides :func:`graphdata.synthetic.family_kg`, each stressing what the family
world lets through (issue #18): :func:`academic_world` (a triangle rule, a field hub with 2-hop
enclosing subgraphs of thousands of triples, length-1 shortcuts beside length-3 bodies),
:func:`geography_world` (symmetric and inverse relations, a star body around a constant, a body atom
parallel to the head, noise and exceptions) and :func:`biology_world` (hub proteins, exceptions in
three rules, noise in two relations, a star around a constant, a triangle), and
:func:`software_world`, written as a held-out world after the explainer was tuned on the others (a
derived relation in another rule's body, a head with two bodies, a length-3 chain beside a
correlated length-2 shortcut, dependency hubs, exceptions and noise). :func:`corporate_world` was
written as a held-out world for session 21's explainer change (ownership groups, supply chains and
boards: two heads with two bodies each, one of them recursive, a derived length-2 relation
correlated with a length-3 head, a star with an inequality, a triangle through a derived relation,
country hubs, exceptions and noise). :func:`media_world` was written as a held-out world for session
22's explainer work, without reading :mod:`kg.explain` (films, albums and their people: an inverse
pair, a symmetric star with an inequality, a head with two disjoint bodies of lengths 1 and 2, a
head with two mostly agreeing length-3 bodies, chains into country and language hubs, a correlated
shortcut, exceptions and noise). :func:`sports_world` was written the same way as a held-out world
for the explainer work after session 22 (clubs, players, coaches, leagues and season awards: an
inverse pair fed by a length-1 rule, a symmetric star with an inequality, a head with two bodies one
through a derived relation, a head with two mostly agreeing length-3 chains into league and country
hubs, a derived correlated shortcut, exceptions and noise). :func:`travel_world` was written without
reading :mod:`kg` or the model-default benchmark, as a held-out world to check which embedding model
a training command picks without flags and later an explainer, never trained on while written
(airports, cities, regions, countries, airlines, alliances, aircraft and pilots: an inverse pair, a
route head with a hub-and-spoke body and a recursive return body, a hierarchy chain into country
hubs used by two more chains, a symmetric alliance star with an inequality, a codeshare triangle, a
symmetric correlated shortcut, exceptions and noise). :func:`commerce_world` was written the same
way, without reading :mod:`kg.explain` or the explainer benchmarks, as a world held out for the
explainer (customers, sellers, products, brands, a category tree, warehouses, cities and countries:
an inverse listing pair whose base side a length-1 own-label rule derives, a symmetric base
partnership completed by a length-1 rule, a symmetric competitor star with an inequality, a
recursive category rule of finite depth, a length-3 warehouse chain into country hubs feeding one of
a head's two bodies beside a correlated shortcut, a loyalty triangle, exceptions and noise).
:func:`clinical_world` was written the same way, without reading :mod:`kg.explain` or the explainer
benchmarks, as a world held out for the explainer (patients, clinicians, hospitals, conditions,
drugs, drug classes and genetic variants: an inverse care pair, a symmetric base interaction
relation and a symmetric colleague star with an inequality, standard care from diagnosis and
first-line therapy whose withheld prescriptions mostly carry a recorded allergy, a derived
prescription relation with held-out facts in four other bodies, a risk head with two bodies one
through it, a dose head with two triangle bodies, a rule anchored on the constant
``class_anticoagulant``, a correlated dispensing shortcut, exceptions and noise).
:func:`legal_world` was written the same way, without reading :mod:`kg.explain` or the explainer
benchmarks, as a world held out for the explainer (courts in a four-level hierarchy, judges, cases,
parties, lawyers, firms, statutes and their sections, legal areas, jurisdictions, cities and
countries: an inverse counsel pair, a symmetric adversary relation from two mirrored V-shaped bodies
through the case, vertical precedent as a recursive head of bounded depth with two bodies, a case's
area from its statutes or its specialised court beside a correlated docket shortcut, leading cases
from a citation star whose inequality is between the two citing cases, a lawyer's conflict of
interest as a triangle through the derived adversary relation, hubs, exceptions and noise).
:func:`energy_world` was written in session 27 the same way, without reading :mod:`kg.explain` or
the explainer benchmarks, as a world held out for the explainer, and run once after that session's
explainer change (power plants, fuels, generation companies, grid operators, substations in a
five-level voltage hierarchy, lines, balancing areas, countries, markets, purchase agreements and
outages: an inverse operator pair whose derived side is used twice in a four-node cycle, power flow
closed transitively to the depth of the hierarchy, the areas a plant supplies from three bodies of
lengths 1, 2 and 3 used in two more bodies, a coal exit anchored on a fuel at the end of a chain,
wind purchase agreements anchored on a fuel in the middle of one, a symmetric connection star and a
symmetric competition cycle with inequalities, a correlated bidding shortcut, exceptions correlated
with line outages and noise). :func:`agriculture_world` was written in session 27 the same way,
without reading :mod:`kg.explain` or the explainer benchmarks, as a world held out for the
explainer, and run once after session 28's explainer change (farms, fields, crops and varieties,
soils, regions in climate zones, weather stations, cooperatives, buyers, markets, agronomists,
pests, treatments and certifications: an inverse advisor pair, the crops a farm produces from a
length-3 field chain whose withheld facts mostly carry a recorded storm, pest risk through the
derived crops, supply from a contract or a cooperative, a local-supplier triangle through the
derived supply, a symmetric co-member star with an inequality, GlobalGAP group certification
anchored on ``cert_globalgap``, a correlated crop-declaration shortcut, region, crop and market
hubs, exceptions and noise). :func:`maritime_world` was written in session 28 the same way, without
reading :mod:`kg.explain` or the explainer benchmarks, as a world held out for the explainer, and
run once after that session's explainer change (vessels, carriers, owners, flag states on the Paris
MoU lists, classification societies, ports, terminals and liner services: an inverse operator pair
whose derived side is used in two bodies, the ports a vessel calls at from its liner service or its
berth records whose omitted calls are mostly recorded diversions, a cabotage triangle, port state
control inspections whose body hangs ``list_black`` off the vessel through two steps, reefer ports
anchored on ``cargo_reefer`` at the middle node of a chain through two derived relations, foreign
flags with an inequality between the tail and a branch off the head, a symmetric vessel-sharing star
with an inequality, a correlated AIS shortcut, port, cargo and carrier hubs, exceptions and noise).
:func:`telecom_world` was written in session 28 the same way, without reading :mod:`kg.explain` or
the explainer benchmarks, as a world held out for the explainer, and run once after session 29's
change (network and virtual operators, towers, spectrum bands, radio vendors, device models, cities,
countries and subscribers: roaming agreements made symmetric by a length-1 rule and inherited by
virtual operators from their hosts through the derived side of an inverse hosting pair, a recursive
head with two bodies; roaming footprints through the derived agreements, band deployment rolled up
from towers (dozens of groundings a head), device compatibility whose body has two atoms on the same
operator and band, a subscriber's home network from two disjoint bodies one anchored on
``kind_mno``, roaming eligibility anchored on ``feature_roaming`` off the head through two derived
relations, a correlated billing shortcut, feature, country, operator and band hubs, exceptions and
noise).
:func:`aviation_world` was written in session 29 the same way, without reading :mod:`kg.explain` or
the explainer benchmarks, as a world held out for the explainer, and run once with session 29's
explainer (network, low-cost and regional carriers, alliances, codeshares, airports in cities under
their country's authority, slot coordination, aircraft types and manufacturers, airframes and
pilots: an inverse capacity-purchase pair whose derived side feeds one of two bodies of the airports
where an airline's code is sold, the other through a codeshare relation made symmetric by a length-1
rule; fleets rolled up from airframes (several groundings a head), the types a pilot flies as a
triangle through the derived fleet with an atom parallel to the head, slots anchored on ``level_3``,
lounge access from a star on the alliance, foreign operator permits with an inequality between two
authorities reached by one relation, a correlated simulator-check shortcut, aircraft-type, airline,
authority and airport hubs, exceptions and noise).
:func:`publishing_world` was written in session 30 the same way, without reading :mod:`kg.explain`
or the explainer benchmarks, as a world held out for the explainer, and run once with session 29's
explainer unchanged (authors,
works and series, editions and translations in four formats, imprints of multinational and
independent groups, literary agencies and their co-agents abroad, translators, national and
translated-fiction prizes, countries and languages: an inverse representation pair, a symmetric
co-agent relation from two length-1 bodies reading an appointment both ways and a chain through it,
series membership recursive through its own head relation, translations told from originals by an
inequality between two body variables, prize eligibility from a chain or from a rule with a constant
in the head through the derived translations, rights sales with an existential branch, legal
deposit with an inequality against a constant, a correlated sales shortcut, language, country,
format and imprint hubs, exceptions and noise).
:func:`banking_world` was written in session 30 the same way, held out for the explainer and run
once after that session's change (retail and commercial banking: customers, their accounts at the
branches of international and local banks, loans with their borrowers, guarantors and collateral,
cards, card payments to merchants, employers, spouses and the watch lists of countries; its rules
are in its module docstring).
:func:`railways_world` was written in session 30 the same way, held out for the explainer and run
once in session 31 with the explainer unchanged (passenger railways: stations in towns of four
countries, lines and their managers, operators and their services, unit classes, units and depots,
drivers; its rules are in its module docstring).
:func:`parliament_world` was written in session 31 by a helper the same way, without reading
:mod:`kg.explain` or the explainer benchmarks, held out for the explainer and run once in session
32 with the explainer unchanged (parliamentary politics: politicians of four countries in the
constituencies of their regions, parties and coalitions, ministries and committees with their
policy areas, bills with their sponsors, stages and recorded votes, lobby groups and their
meetings; its rules are in its module docstring).
:func:`construction_world` was written in session 32 by a helper the same way, without reading
:mod:`kg.explain` or the explainer benchmarks, held out for the explainer and run once in session
32 after that session's change, folding the conjuncts (construction and real estate: sites in the
districts of cities in three countries, developers, main contractors and subcontractors, lenders,
building authorities and development corporations with their permits and inspectors; its rules
are in its module docstring).
:func:`ecology_world` was written in session 33 by a helper the same way, without reading
:mod:`kg.explain` or the explainer benchmarks, held out for the explainer and run once in session 33
after that session's change, distinct values (ecology and wildlife conservation: species of seven
classes with their habitats and food web, native and introduced ranges in the regions of four
countries, protected areas with their corridors and flyway stopovers, field stations with their
monitoring programmes and researchers, Red List and EU annex listings, citizen-science reports; its
rules are in its module docstring).
:func:`insurance_world` was written in session 33 by a helper the same way, without reading
:mod:`kg.explain` or the explainer benchmarks, held out for the explainer and run once in session
33 with that session's explainer (insurance: people and businesses of three countries with their
motor, home, liability, commercial property, health and life policies, insurers with their
regulators, reinsurers and retrocession funds, brokers and tied agents, insured vehicles and
buildings, loss events and claims with their handlers, loss adjusters, repairers and clinics, fraud
investigations; its rules are in its module docstring).
:func:`schools_world` was written in session 33 by a helper the same way, without reading
:mod:`kg.explain` or the explainer benchmarks, held out for the explainer and run once after
session 34's explainer change (school education: pupils of sampled households in the local
authorities of three countries, their schools of five types and four phases with their trusts and
inspection ratings, siblings and school admissions, teachers with their degrees, teacher training
and subject CPD, exams and exam boards; its rules are in its module docstring).
:func:`heritage_world` was written in session 34 by a helper the same way, without reading
:mod:`kg.explain` or the explainer benchmarks, held out for the explainer and run once in session
38 with the explainer of session 34, unchanged
(museums and art provenance: artworks by artists of fourteen schools and movements in eight media,
museums of four kinds in the cities of eight countries, catalogues raisonnés, galleries, auction
houses and their sales, loans to exhibitions, gaps in the provenance periods, collectors
dispossessed in 1933-1945 and their heirs; its rules are in its module docstring).
:func:`wine_world` was written in session 38 by a helper the same way, without reading
:mod:`kg.explain` or the explainer benchmarks, held out for the explainer and run once after that
session's explainer change (the most confident member)
(viticulture and the wine trade: wines of estates and cooperatives in the appellations of
seventeen regions, their cuvées, grapes and varietal labels, regional vintages marked by frost and
other weather, owners, winemakers and consultants, certifications, the négociants of La Place de
Bordeaux, importers, merchants' listings and critics; its rules are in its module docstring).
:func:`transit_world` was written in session 38 by a helper the same way, without reading
:mod:`kg.explain` or the explainer benchmarks, held out for the explainer and run once with that
session's final explainer, after wine
(urban public transport: bus, tram and metro lines and their stops in the districts of six
cities, fare zones and ticket products of the transit authorities, municipal and private
operators with their depots, vehicles of eleven types and five fuels, drivers with their licences
and route knowledge, strikes and other disruptions, accessibility features of stops and vehicle
types; its rules are in its module docstring).

Each generator draws base facts only; the rules are text (:data:`ACADEMIC_RULES`, ...) and the
ground truth, the split and its guarantee come from :func:`~graphdata.worlds.base.build_world`
through :mod:`graphdata.rules`. Pick one by name with :func:`world`; the table is
:data:`WORLDS`.
"""

from __future__ import annotations

from collections.abc import Callable

from graphdata.errors import GraphDataError
from graphdata.worlds.academic import ACADEMIC_RULES, academic_world
from graphdata.worlds.agriculture import AGRICULTURE_RULES, agriculture_world
from graphdata.worlds.aviation import AVIATION_RULES, aviation_world
from graphdata.worlds.banking import BANKING_RULES, banking_world
from graphdata.worlds.base import World, build_world
from graphdata.worlds.biology import BIOLOGY_RULES, biology_world
from graphdata.worlds.clinical import CLINICAL_RULES, clinical_world
from graphdata.worlds.commerce import COMMERCE_RULES, commerce_world
from graphdata.worlds.construction import CONSTRUCTION_RULES, construction_world
from graphdata.worlds.corporate import CORPORATE_RULES, corporate_world
from graphdata.worlds.ecology import ECOLOGY_RULES, ecology_world
from graphdata.worlds.energy import ENERGY_RULES, energy_world
from graphdata.worlds.geography import GEOGRAPHY_RULES, geography_world
from graphdata.worlds.heritage import HERITAGE_RULES, heritage_world
from graphdata.worlds.insurance import INSURANCE_RULES, insurance_world
from graphdata.worlds.legal import LEGAL_RULES, legal_world
from graphdata.worlds.maritime import MARITIME_RULES, maritime_world
from graphdata.worlds.media import MEDIA_RULES, media_world
from graphdata.worlds.parliament import PARLIAMENT_RULES, parliament_world
from graphdata.worlds.publishing import PUBLISHING_RULES, publishing_world
from graphdata.worlds.railways import RAILWAYS_RULES, railways_world
from graphdata.worlds.schools import SCHOOLS_RULES, schools_world
from graphdata.worlds.software import SOFTWARE_RULES, software_world
from graphdata.worlds.sports import SPORTS_RULES, sports_world
from graphdata.worlds.stats import WorldStatistics, world_statistics
from graphdata.worlds.telecom import TELECOM_RULES, telecom_world
from graphdata.worlds.transit import TRANSIT_RULES, transit_world
from graphdata.worlds.travel import TRAVEL_RULES, travel_world
from graphdata.worlds.wine import WINE_RULES, wine_world

__all__ = [
    "WORLDS",
    "world",
    "World",
    "build_world",
    "academic_world",
    "geography_world",
    "biology_world",
    "software_world",
    "corporate_world",
    "media_world",
    "sports_world",
    "travel_world",
    "commerce_world",
    "clinical_world",
    "legal_world",
    "energy_world",
    "agriculture_world",
    "maritime_world",
    "telecom_world",
    "aviation_world",
    "publishing_world",
    "banking_world",
    "railways_world",
    "parliament_world",
    "construction_world",
    "ecology_world",
    "insurance_world",
    "schools_world",
    "heritage_world",
    "wine_world",
    "transit_world",
    "ACADEMIC_RULES",
    "GEOGRAPHY_RULES",
    "BIOLOGY_RULES",
    "SOFTWARE_RULES",
    "CORPORATE_RULES",
    "MEDIA_RULES",
    "SPORTS_RULES",
    "TRAVEL_RULES",
    "COMMERCE_RULES",
    "CLINICAL_RULES",
    "LEGAL_RULES",
    "ENERGY_RULES",
    "AGRICULTURE_RULES",
    "MARITIME_RULES",
    "TELECOM_RULES",
    "AVIATION_RULES",
    "PUBLISHING_RULES",
    "BANKING_RULES",
    "RAILWAYS_RULES",
    "PARLIAMENT_RULES",
    "CONSTRUCTION_RULES",
    "ECOLOGY_RULES",
    "INSURANCE_RULES",
    "SCHOOLS_RULES",
    "HERITAGE_RULES",
    "WINE_RULES",
    "TRANSIT_RULES",
    "WorldStatistics",
    "world_statistics",
]

#: World name -> generator ``f(size, *, seed, valid_fraction, test_fraction) -> World``.
WORLDS: dict[str, Callable[..., World]] = {
    "academic": academic_world,
    "geography": geography_world,
    "biology": biology_world,
    "software": software_world,
    "corporate": corporate_world,
    "media": media_world,
    "sports": sports_world,
    "travel": travel_world,
    "commerce": commerce_world,
    "clinical": clinical_world,
    "legal": legal_world,
    "energy": energy_world,
    "agriculture": agriculture_world,
    "maritime": maritime_world,
    "telecom": telecom_world,
    "aviation": aviation_world,
    "publishing": publishing_world,
    "banking": banking_world,
    "railways": railways_world,
    "parliament": parliament_world,
    "construction": construction_world,
    "ecology": ecology_world,
    "insurance": insurance_world,
    "schools": schools_world,
    "heritage": heritage_world,
    "wine": wine_world,
    "transit": transit_world,
}


def world(
    name: str,
    *,
    seed: int | None = 0,
    size: int | None = None,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    """Draw a world by name from :data:`WORLDS`.

    Args:
        name: ``"academic"``, ``"geography"``, ``"biology"``, ``"software"``,
            ``"corporate"``, ``"media"``, ``"sports"``, ``"travel"``, ``"commerce"``,
            ``"clinical"``, ``"legal"``, ``"energy"``, ``"agriculture"``, ``"maritime"``,
            ``"telecom"``, ``"aviation"``, ``"publishing"``, ``"banking"``, ``"railways"``,
            ``"parliament"``, ``"construction"``, ``"ecology"``, ``"insurance"``, ``"schools"``,
            ``"heritage"``, ``"wine"`` or ``"transit"``.
        seed: The seed. Default 0.
        size: The number of primary entities (authors, cities, proteins, packages,
            companies, people, players, airports, customers, patients, cases, power plants,
            farms, vessels, subscribers, aircraft, works, customers, stations, politicians,
            sites, species, policyholders, pupils, artworks, wines, stops). Default ``None``: the
            generator's default (400, 800, 600, 500, 450, 320, 400, 240, 400, 400, 400, 260, 220,
            340, 400, 400, 300, 320, 240, 320, 360, 300, 300, 600, 900, 600, 600).
        valid_fraction: Held-out share per relation for validation. Default 0.1.
        test_fraction: Held-out share per relation for testing. Default 0.1.

    Returns:
        The :class:`World`.

    Raises:
        GraphDataError: On an unknown name (the message lists the names) or a bad argument.

    Examples:
        >>> w = world("geography", size=60, seed=1)
        >>> w.name, sorted(WORLDS)[-3:]
        ('geography', ['transit', 'travel', 'wine'])
    """
    make = WORLDS.get(name) if isinstance(name, str) else None
    if make is None:
        raise GraphDataError(
            f"name: expected one of {sorted(WORLDS)}, got {name!r}; the family world is "
            "graphdata.synthetic.family_kg"
        )
    fractions = {"seed": seed, "valid_fraction": valid_fraction, "test_fraction": test_fraction}
    return make(**fractions) if size is None else make(size, **fractions)
