r"""A school-education world: pupils and their families, schools, teachers, admissions, exams.

Written in session 33 by a helper as a **held-out** world for the explainer, without reading
:mod:`kg.explain`, the explainer benchmarks or their results, and never run with an explainer or
trained on while it was written: designed from school education in England, Wales and Scotland as a
study of school choice and transitions would record it (households sampled in the local authorities
of the three countries, each child of a household from the nursery year to year 13 with its year
group, sex, ethnicity, free-school-meal, English-as-an-additional-language and special-needs status;
the schools of the authorities, of five types and four phases, with their religious character, their
latest inspection rating and the multi-academy trusts of England's academies; school applications at
the transfers to reception, secondary school and the sixth form; the statutory assessments, exams
and exam boards of the three countries; a teacher survey of each school's teachers with their
degrees, initial teacher training and subject CPD), not from how any explainer decides. The rules
(:data:`SCHOOLS_RULES`, length = body atoms):

* ``staff_inverse: employs(S,T) <- works_at(T,S)``, length 1, an **inverse pair** (recorded in
  :attr:`~graphdata.worlds.World.inverse_pairs`; 415 staff pairs at seed 0, of 399 teachers,
  16 of them also at a second school) with no exception or noise;
* ``degree_specialism: qualified_in(T,J) <- degree_in(T,J)``, length 1, and ``itt_specialism:
  qualified_in(T,J) <- trained_on(T,K), course_subject(K,J)``, length 2: **a head with two
  bodies**, the subjects a teacher is qualified in through its degree or the specialism of its
  initial-teacher-training course (a generalist primary course has none; of the 351
  ``qualified_in`` facts at seed 0, .37 have both, .33 only the degree, .27 only the course and
  .03 neither);
* ``household_siblings: sibling_of(X,Y) <- in_household(X,H), in_household(Y,H), X != Y``,
  length 2: a **symmetric** head (:attr:`~graphdata.worlds.World.symmetric`, 602 facts at
  seed 0 from 359 households of one to four sampled children, no exception or noise) from a
  **star** on the household with an **inequality between the two head variables**;
* ``pupil_premium: premium_for(S,P) <- attends(P,S), recorded_as(P,status_fsm)``, length 2, the
  pupil premium a school receives for a pupil eligible for free school meals (Wales's pupil
  development grant and Scotland's pupil equity funding follow the same eligibility),
  **anchored on the constant** ``status_fsm``; the 118 pupils at seed 0 recorded with English
  as an additional language or special needs but not free school meals attract none;
* ``academy_employer: employer_of(R,T) <- employs(S,T), in_trust(S,R)``, length 2, the trust
  that employs an academy's teachers, a chain whose first atom is the **derived** inverse, and
  ``council_employer: employer_of(A,T) <- works_at(T,S), located_in(S,A),
  recorded_as(S,type_community)``, length 3, the local authority that employs a community
  school's teachers, a **star** on the school with **a constant** in its third atom: **a second
  head with two bodies** that never meet (of the 267 ``employer_of`` facts at seed 0, .38 are
  a trust's, .60 an authority's and .02 neither); the governing body or proprietor employs the
  staff of voluntary-aided, foundation and independent schools (120 teachers at seed 0), who
  have no employer in the graph;
* ``exam_centre: centre_for(S,B) <- attends(P,S), sat(P,E), set_by(E,B)``, length 3, the exam
  boards a school is a centre of, a chain from the school through its pupils' exams into the
  board hubs (52 facts at seed 0);
* ``subject_staffing: specialist_in(S,J) <- employs(S,T), qualified_in(T,J)``, length 2, the
  subjects a school has a qualified specialist for, a chain through **two derived** relations
  (243 facts at seed 0; the 14 school-subject pairs reached only through a teacher's subject
  CPD are not specialisms);
* ``sibling_priority: priority_at(P,S) <- applied_to(P,S), sibling_of(P,Q), attends(Q,S)``,
  length 3, the sibling criterion of school admissions: a **triangle** (pupil, school, sibling)
  whose first atom is parallel to the head and whose second is the **derived** symmetric
  ``sibling_of`` (73 of the 467 applications at seed 0 are to a sibling's school);
* a **correlated shortcut** (:attr:`~graphdata.worlds.World.shortcuts`), in no body:
  ``cpd_in`` (subject CPD, taken in half the subjects a teacher is qualified in and, as
  subject-knowledge enhancement, in most main subjects it is not) links .48 of the
  ``qualified_in`` pairs, and .86 of its training pairs are ``qualified_in`` pairs (seed 0);
* rules of length 1 (two), 2 (five) and 3 (three); 1-1 (``head_of``, ``sibling_of``), 1-N
  (``employer_of``, ``employs``, ``premium_for``), N-1 (``attends``, ``course_subject``,
  ``cpd_in``, ``degree_in``, ``in_household``, ``in_trust``, ``located_in``, ``priority_at``,
  ``qualified_in``, ``set_by``, ``trained_on``, ``works_at``) and N-N (``applied_to``,
  ``centre_for``, ``recorded_as``, ``sat``, ``specialist_in``) relations (by count at seed 0);
* **exceptions**: 3 % of ``degree_specialism``'s heads (a joint degree with the subject as its
  minor part), 2 % of ``itt_specialism``'s (a trainee who changed specialism during the course),
  4 % of ``pupil_premium``'s (eligibility recorded after the census date), 3 % of
  ``academy_employer``'s (a teacher employed through a supply agency), 5 % of
  ``council_employer``'s (an agency teacher, or one on the governing body's local contract),
  3 % of ``exam_centre``'s (entries made through a partner school's centre), 5 % of
  ``subject_staffing``'s (a specialist who teaches outside the subject, such as a physics
  graduate working as the special-needs coordinator) and 8 % of ``sibling_priority``'s (a
  sibling who will have left by the admission date, or who lives at another address) are
  withheld; a withheld ``qualified_in`` fact also leaves out the heads only it grounds.
  **Noise**: 3 % of the ``qualified_in`` (an overseas or assessment-only route to
  qualification), 2 % of the ``premium_for`` (a pupil matched to the wrong school in the
  census), 2 % of the ``employer_of`` (a teacher seconded to, or employed centrally by, another
  body), 3 % of the ``centre_for`` (a centre approval kept without current entries), 3 % of the
  ``specialist_in`` (a subject covered by a partner school's specialist) and 4 % of the
  ``priority_at`` facts (priority on medical or social grounds) have no grounding; a noise
  ``qualified_in`` fact feeds ``subject_staffing`` like any other.

**Statistics** at the default size and seed 0 (:func:`graphdata.worlds.world_statistics`): 1,640
entities (600 pupils, 399 teachers, 359 households, 102 exams, 54 schools, 51 teacher-training
courses, 15 year groups, 14 subjects, 8 local authorities, 6 exam boards, 5 school types, 5
ethnic groups, 4 phases, 4 inspection ratings, 4 pupil statuses, 3 countries, 3 trusts, 2
religious characters, 2 sexes), 22 relations; 8,378 train, 198 valid and 199 test triples; the
valid+test targets per rule of their shortest grounding are ``household_siblings`` 120,
``staff_inverse`` 84, ``degree_specialism`` 44, ``council_employer`` 35, ``subject_staffing`` 30,
``itt_specialism`` 25, ``pupil_premium`` 18, ``academy_employer`` 15, ``exam_centre`` 10,
``sibling_priority`` 10 (length 1: 128, 2: 208, 3: 55), and 6 noise facts; .11 of the targets
have more than one grounding; 45 exceptions (17 ``employer_of``, 13 ``specialist_in``, 8
``priority_at``, 4 ``qualified_in``, 2 ``centre_for``, 1 ``premium_for``). The default size, 600
pupils with a focal child of most households in a transfer year, gives every rule at least 8
held-out targets (at least 10 at seeds 0-3). **Hubs**: ``sex_female`` has 600 distinct training
neighbours, ``ethnicity_white`` 460, ``year_11`` 106, ``subject_maths`` 102, the busiest school
100, ``status_fsm`` 85, the busiest trust 73, ``course_england_primary`` 59, the busiest exam 50,
the busiest authority 45 and ``board_wjec`` 32 (a pupil a median of 7, a teacher 4); the 2-hop
enclosing subgraphs of the 198 test targets hold a median of 870.5 training triples (p90 1,873.4;
at seeds 1-3, 40 targets each, p90 1,986.7, 1,696.3 and 1,880.8).

**Base facts** (:func:`schools_world`), with :math:`N` = ``size`` pupils: the local authorities of
``_COUNTRIES`` (four in England, two in Wales, two in Scotland) are ``located_in`` their country,
of log-normal weight times the country's share of the sample (the study oversamples Wales and
Scotland), with a log-normal deprivation and ethnic diversity. :math:`\max(2A, \lfloor N/20
\rfloor)` primary and :math:`\max(A, \lfloor N/40 \rfloor)` secondary schools (:math:`A`
authorities; one of each in every authority first, the rest by weight), :math:`\max(2, \lfloor
N/200 \rfloor)` special schools and :math:`\max(3, \lfloor N/100 \rfloor)` independent schools
(all-through .4, prep .3, senior .3; by weight times the country's independent share) are
``located_in`` their authority and ``recorded_as`` their phase, their type (a state school's by
``_TYPE_SHARES``: no academies outside England, every Scottish state school a community school),
their religious character (every voluntary-aided school and .2 of the mainstream academies
Anglican (.6) or Catholic, .15 of Scotland's mainstream state schools Catholic, .3 of the
independent schools Anglican, Catholic or Jewish) and their inspection rating
(``_RATING_SHARES``); a state secondary school has a sixth form by the country's share, an
independent one always. Each English academy is ``in_trust`` one of :math:`\max(2, \lfloor
\text{academies}/5 \rfloor)` multi-academy trusts, of its authority with probability .7, else by
log-normal size, or (.15) a single-academy trust of its own. Households are drawn until there are
:math:`N` pupils: an authority by weight; independent (the country's share, where it has
independent schools), eligible for free school meals (a state household: the country's rate times
the authority's deprivation, at most .6), an ethnic group (the country's shares, the minorities'
times the authority's diversity), English as an additional language (the country's rate, three
times as likely in a minority group, .4 times in the white group) and a Catholic or Anglican
affiliation; one to four children (.42, .38, .14, .06): a focal child in a transfer year (the
nursery year before reception, year 6 or year 11; probability .6) or in any of the 15 year groups,
each next child 1 + Poisson(1.2) years older or younger than the others (.03 a twin), and children
outside the year groups not sampled. A pupil is ``in_household`` its household and ``recorded_as``
its year group, ethnic group and sex (female .49); it ``attends`` a school of its sector that
teaches its year (the state's when no independent one does), an elder sibling's (probability .85),
else one of the household's faith (.6), else one by log-normal weight, of its authority when there
is one (none in nursery, nor for .2 of the sixth-formers, at a further-education college); .03
have a plan (an education, health and care plan; a coordinated support plan in Scotland) and half
of those in the state sector attend a special school. A pupil at a school is ``recorded_as``
eligible for free school meals and with English as an additional language as its household is,
with its plan or (.12) special-educational-needs support. At a transfer (nursery to reception,
year 6 to 7, year 11 to 12) or, with probability .03, in year, a pupil ``applied_to`` 1 +
Poisson(1, 2, .6 and 0) schools of its sector that teach the next year (at most 3, 6 for an
English secondary school), an elder sibling's school first with probability .9, the others as its
school is chosen; a Scottish pupil only with a placing request (.25). A pupil ``sat`` the exams of
its current school this summer or last: the phonics check (English) in year 1, the
multiplication-tables check (maths) in year 4 and the key stage 2 tests (maths and English) in
year 6 of an English state primary; the 11+ Common Entrance (ISEB; maths and English) in year 6 of
an independent school (.6); GCSEs (maths, English, each science with probability .55, Welsh in
Wales, 2 + Poisson(1) options; maths and English with probability .4 each in a special school) in
year 11 and, for a pupil who stayed on (.7), year 12; four or five Highers in year 12 at a school
on SQA; three A levels (four with probability .15) or two Highers in year 13 (none in a special
school). Each exam is ``set_by`` its board: the Standards and Testing Agency, ISEB, SQA
(Scotland's state schools and half its independent ones), WJEC (Wales's state schools), else the
board the school chose for the subject by share (``_BOARDS``); .03 of entries are absent. Each
school has 3 + Poisson(2) (primary), 8 + Poisson(4) (secondary), 3 + Poisson(1) (special) or 7 +
Poisson(2) (all-through) teachers, the first its ``head_of``; a teacher ``works_at`` it and (.04)
at another school of its trust or, outside trusts, a maintained school of its authority, is
``recorded_as`` female (.85 in a primary school, .65 otherwise) or male, and has a main subject by
demand (``_SUBJECTS``) when it teaches secondary (in an all-through school with probability .6).
Its degree (``degree_in``) is in its main subject by the subject's share, else (.25) in another
subject by demand; a primary teacher's is in a school subject with probability .45. It
``trained_on`` an initial-teacher-training course of its country (.85) or another, of its main
subject or a primary course (generalist .72, or with a maths .14, English .08 or PE .06
specialism; the specialism is its ``course_subject``), unless it has no teacher training (.3 in an
independent school, .18 in an academy, .08 otherwise); it took subject CPD (``cpd_in``) in each
subject it is qualified in with probability .5, in a main subject it is not qualified in with .6
and in another subject with .04.

The ground truth (derived facts, groundings, the split) comes from
:func:`graphdata.worlds.base.build_world` with :data:`SCHOOLS_RULES`.
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

__all__ = ["SCHOOLS_RULES", "schools_world"]

#: The planted rules: who a school employs (an inverse pair), the subjects a teacher is qualified
#: in (a degree or an initial-teacher-training course), siblings (symmetric, a star on the
#: household with an inequality), the pupil premium (a constant), the employer of an academy's
#: teachers (its trust, through the derived staff) and of a community school's (its local
#: authority, a star with a constant), exam centres (a chain to the exam board), a school's
#: subject specialists (through two derived relations) and the sibling criterion of admissions
#: (a triangle through the derived siblings).
SCHOOLS_RULES = """\
staff_inverse: employs(S,T) <- works_at(T,S)
degree_specialism: qualified_in(T,J) <- degree_in(T,J)
itt_specialism: qualified_in(T,J) <- trained_on(T,K), course_subject(K,J)
household_siblings: sibling_of(X,Y) <- in_household(X,H), in_household(Y,H), X != Y
pupil_premium: premium_for(S,P) <- attends(P,S), recorded_as(P,status_fsm)
academy_employer: employer_of(R,T) <- employs(S,T), in_trust(S,R)
council_employer: employer_of(A,T) <- works_at(T,S), located_in(S,A), recorded_as(S,type_community)
exam_centre: centre_for(S,B) <- attends(P,S), sat(P,E), set_by(E,B)
subject_staffing: specialist_in(S,J) <- employs(S,T), qualified_in(T,J)
sibling_priority: priority_at(P,S) <- applied_to(P,S), sibling_of(P,Q), attends(Q,S)
"""

#: The countries (entity ``country_<name>``): their share of the sampled households (the study
#: oversamples the devolved nations, as the UK's PISA samples do), their local authorities
#: (entity ``authority_<name>_<i>``), the share of households that go independent, the
#: household rates of free-school-meal eligibility and of English as an additional language,
#: and the share of secondary schools with a sixth form (every Scottish secondary teaches S5 and
#: S6).
_COUNTRIES = (
    ("england", 0.60, 4, 0.07, 0.23, 0.20, 0.55),
    ("wales", 0.18, 2, 0.02, 0.21, 0.07, 0.70),
    ("scotland", 0.22, 2, 0.045, 0.17, 0.10, 1.00),
)
#: School types (``recorded_as`` ``type_<name>``) of state schools by country and phase
#: (primary, secondary, special), in the order community, voluntary aided, foundation, academy.
#: Scotland and Wales have no academies; every Scottish state school is the council's.
_TYPES = ("community", "voluntary_aided", "foundation", "academy")
_TYPE_SHARES = {
    "england": ((0.33, 0.17, 0.08, 0.42), (0.09, 0.07, 0.04, 0.80), (0.55, 0.0, 0.0, 0.45)),
    "wales": ((0.80, 0.15, 0.05, 0.0), (0.88, 0.10, 0.02, 0.0), (1.0, 0.0, 0.0, 0.0)),
    "scotland": ((1.0, 0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0)),
}
#: Inspection outcomes (``recorded_as`` ``rating_<name>``), on one four-point scale for the
#: three inspectorates' latest graded inspections: state schools, independent schools.
_RATINGS = ("outstanding", "good", "requires_improvement", "inadequate")
_RATING_SHARES = ((0.16, 0.70, 0.11, 0.03), (0.30, 0.60, 0.08, 0.02))
#: Pupil ethnicity (``recorded_as`` ``ethnicity_<name>``) by country.
_ETHNICITIES = ("white", "asian", "black", "mixed", "other")
_ETHNICITY_SHARES = {
    "england": (0.72, 0.12, 0.06, 0.07, 0.03),
    "wales": (0.88, 0.04, 0.02, 0.04, 0.02),
    "scotland": (0.86, 0.07, 0.02, 0.03, 0.02),
}
#: Year groups (``recorded_as`` ``year_<name>``), England and Wales numbering (Scotland's P1-S6
#: mapped onto it): children in a nursery about to apply for reception, reception, years 1-13.
_YEARS = ("nursery", "reception") + tuple(f"{i:02d}" for i in range(1, 14))
#: School subjects (entity ``subject_<name>``): the demand for secondary teachers of each (a
#: teacher's main subject), the share of its teachers with a degree in it, a primary teacher's
#: degree subject when that is a school subject, the probability of taking it at GCSE or
#: National 5 (maths, English, the sciences) or its weight among the options, and its share of
#: A-level or Higher entries. Welsh is taught, and taken at GCSE, in Wales only.
_SUBJECTS = (
    ("maths", 0.14, 0.55, 0.08, 1.0, 0.14),
    ("english", 0.14, 0.75, 0.30, 1.0, 0.09),
    ("biology", 0.07, 0.70, 0.10, 0.55, 0.10),
    ("chemistry", 0.06, 0.55, 0.02, 0.55, 0.09),
    ("physics", 0.05, 0.40, 0.02, 0.55, 0.06),
    ("history", 0.07, 0.80, 0.15, 0.17, 0.08),
    ("geography", 0.07, 0.75, 0.10, 0.17, 0.06),
    ("french", 0.06, 0.65, 0.04, 0.12, 0.03),
    ("computing", 0.05, 0.40, 0.01, 0.10, 0.05),
    ("art", 0.06, 0.70, 0.06, 0.12, 0.06),
    ("music", 0.05, 0.75, 0.04, 0.06, 0.02),
    ("pe", 0.08, 0.65, 0.06, 0.10, 0.04),
    ("religious_studies", 0.05, 0.45, 0.02, 0.16, 0.04),
    ("welsh", 0.05, 0.70, 0.0, 0.0, 0.01),
)
_SUBJECT_NAMES = tuple(s[0] for s in _SUBJECTS)
#: Exam boards (entity ``board_<name>``): the four awarding bodies of GCSEs and A levels in
#: England and their shares of a school's subject entries, with WJEC (Eduqas in England) the
#: board of Welsh state schools, SQA of Scottish ones (and of half the Scottish independent
#: schools), the Standards and Testing Agency (``board_sta``) of England's statutory primary
#: assessments and ISEB (``board_iseb``) of the independent schools' Common Entrance.
_BOARDS = (("aqa", 0.55), ("pearson", 0.20), ("ocr", 0.15), ("wjec", 0.10))
#: A primary initial-teacher-training course's specialism (generalist: none) and its share.
_PRIMARY_ITT: tuple[str | None, ...] = ("maths", "english", "pe", None)
_PRIMARY_ITT_SHARES = (0.14, 0.08, 0.06, 0.72)
#: Religious characters of schools (``recorded_as`` ``faith_<name>``).
_FAITHS = ("anglican", "catholic", "jewish")
#: The share of households with a Catholic affiliation, and with a Catholic or Anglican one
#: (Scotland's faith schools are Catholic), who favour a school of their faith.
_CATHOLIC = {"england": 0.08, "wales": 0.05, "scotland": 0.15}
_CHURCHGOING = {"england": 0.16, "wales": 0.11, "scotland": 0.15}
#: Withheld heads (module docstring).
_EXCEPTION_RATES = (
    ("degree_specialism", 0.03),
    ("itt_specialism", 0.02),
    ("pupil_premium", 0.04),
    ("academy_employer", 0.03),
    ("council_employer", 0.05),
    ("exam_centre", 0.03),
    ("subject_staffing", 0.05),
    ("sibling_priority", 0.08),
)
#: Heads without grounding (module docstring).
_NOISE_RATES = (
    ("qualified_in", 0.03),
    ("premium_for", 0.02),
    ("employer_of", 0.02),
    ("centre_for", 0.03),
    ("specialist_in", 0.03),
    ("priority_at", 0.04),
)


def _pick(rng: np.random.Generator, weight: np.ndarray) -> int:
    """One index drawn with probability proportional to ``weight``."""
    return int(rng.choice(len(weight), p=weight / weight.sum()))


def schools_world(
    size: int = 600,
    *,
    seed: int | None = 0,
    valid_fraction: float = 0.1,
    test_fraction: float = 0.1,
) -> World:
    r"""Draw the schools world (module docstring) and its ground truth.

    Args:
        size: The number of pupils :math:`N \ge 80`. Default 600 (1,640 entities, 22 relations
            and 8,775 triples at seed 0).
        seed: Seed of the NumPy generator for the facts, exceptions, noise and split; ``None``
            draws fresh entropy. Default 0.
        valid_fraction: Held-out share of each relation's derived and noise facts. Default 0.1.
        test_fraction: Held-out share for testing. Default 0.1.

    Returns:
        The :class:`~graphdata.worlds.World` named ``"schools"``.

    Raises:
        GraphDataError: On an out-of-range argument.

    Examples:
        >>> w = schools_world(80, seed=0)
        >>> w.exception_rates["sibling_priority"], w.inverse_pairs
        (0.08, (('works_at', 'employs'),))
        >>> sorted(r.length for r in w.rules if r.head.relation == "employer_of")
        [2, 3]
        >>> w.symmetric, w.shortcuts
        (('sibling_of',), (('cpd_in', 'qualified_in'),))
    """
    check_world_arguments(size, 80, seed, valid_fraction, test_fraction)
    rng = np.random.default_rng(seed)
    n = int(size)
    facts: list[LabeledTriple] = []

    # Local authorities: each country's, located_in it, of log-normal weight times the
    # country's share of the households; a log-normal deprivation scales the free-school-meal
    # rate of its households and a log-normal diversity the shares of its minority ethnic groups.
    countries = [f"country_{c[0]}" for c in _COUNTRIES]
    authorities: list[str] = []
    auth_country: list[int] = []
    for k, (name, _, count, *_rates) in enumerate(_COUNTRIES):
        for i in range(count):
            authorities.append(f"authority_{name}_{i}")
            auth_country.append(k)
    n_auth = len(authorities)
    share = np.array([c[1] / c[2] for c in _COUNTRIES])
    auth_weight = rng.lognormal(0.0, 0.4, n_auth) * share[auth_country]
    deprivation = rng.lognormal(0.0, 0.35, n_auth)
    diversity = rng.lognormal(0.0, 0.6, n_auth)
    facts.extend((authorities[a], "located_in", countries[auth_country[a]]) for a in range(n_auth))

    def country_of(a: int) -> str:
        return _COUNTRIES[auth_country[a]][0]

    # Schools (the study's first stage): max(2A, N/20) primaries and max(A, N/40) secondaries
    # (one of each in every authority first, the rest by weight), max(2, N/200) special schools
    # and max(3, N/100) independent schools (all-through, prep or senior) by weight times the
    # country's independent share. Each is located_in its authority and recorded_as its phase,
    # type (by country and phase), religious character and inspection rating.
    n_primary = max(2 * n_auth, n // 20)
    n_secondary = max(n_auth, n // 40)
    n_special = max(2, n // 200)
    n_independent = max(3, n // 100)
    phase: list[str] = []
    school_auth: list[int] = []
    for count, ph, first in (
        (n_primary, "primary", n_auth),
        (n_secondary, "secondary", n_auth),
        (n_special, "special", 0),
    ):
        for i in range(count):
            school_auth.append(i if i < first else _pick(rng, auth_weight))
            phase.append(ph)
    indep_weight = auth_weight * np.array([_COUNTRIES[k][3] for k in auth_country])
    for _ in range(n_independent):
        school_auth.append(_pick(rng, indep_weight))
        u = rng.random()
        phase.append("all_through" if u < 0.4 else "primary" if u < 0.7 else "secondary")
    n_school = len(phase)
    schools = entity_labels("school", n_school)
    stype: list[str] = []
    faith: list[str | None] = []
    sixth: list[bool] = []
    sqa: list[bool] = []
    for s in range(n_school):
        c = country_of(school_auth[s])
        facts.append((schools[s], "located_in", authorities[school_auth[s]]))
        f: str | None = None
        if s >= n_primary + n_secondary + n_special:
            t = "independent"
            if rng.random() < 0.3:
                f = _FAITHS[_pick(rng, np.array([0.6, 0.3, 0.1]))]
        else:
            row = ("primary", "secondary", "special").index(phase[s])
            t = _TYPES[_pick(rng, np.array(_TYPE_SHARES[c][row]))]
            if t == "voluntary_aided" or (
                t == "academy" and phase[s] != "special" and rng.random() < 0.2
            ):
                f = "anglican" if rng.random() < 0.6 else "catholic"
            elif c == "scotland" and phase[s] != "special" and rng.random() < 0.15:
                f = "catholic"
        stype.append(t)
        faith.append(f)
        p_sixth = 1.0 if t == "independent" else _COUNTRIES[auth_country[school_auth[s]]][6]
        sixth.append(phase[s] in ("secondary", "all_through") and bool(rng.random() < p_sixth))
        sqa.append(c == "scotland" and (t != "independent" or bool(rng.random() < 0.5)))
        rating = _RATINGS[_pick(rng, np.array(_RATING_SHARES[t == "independent"]))]
        flags = [f"phase_{phase[s]}", f"type_{t}", f"rating_{rating}"]
        flags += [f"faith_{f}"] if f is not None else []
        facts.extend((schools[s], "recorded_as", flag) for flag in flags)
    school_weight = rng.lognormal(0.0, 0.5, n_school)

    # Trusts: each English academy is in_trust a multi-academy trust, max(2, academies / 5) of
    # them with a home authority and a log-normal size, of its authority (probability .7) or
    # any by size, or (probability .15) a single-academy trust of its own.
    academies = [s for s in range(n_school) if stype[s] == "academy"]
    english = [a for a in range(n_auth) if country_of(a) == "england"]
    n_mat = max(2, len(academies) // 5)
    mat_home = [weighted_pick(rng, english, auth_weight) for _ in range(n_mat)]
    mat_weight = rng.lognormal(0.0, 0.6, n_mat)
    trust_of: dict[int, int] = {}
    n_trust = n_mat
    for s in academies:
        if rng.random() < 0.15:
            trust_of[s] = n_trust
            n_trust += 1
            continue
        local = [m for m in range(n_mat) if mat_home[m] == school_auth[s]]
        pool = local if local and rng.random() < 0.7 else list(range(n_mat))
        trust_of[s] = weighted_pick(rng, pool, mat_weight)
    trusts = entity_labels("trust", n_trust)
    facts.extend((schools[s], "in_trust", trusts[r]) for s, r in sorted(trust_of.items()))

    def serves(s: int, y: int) -> bool:
        """Whether school ``s`` teaches year index ``y`` (1 reception, ..., 14 year 13)."""
        if phase[s] == "primary":
            return 1 <= y <= 7
        if phase[s] == "secondary":
            return 8 <= y <= 12 or (y >= 13 and sixth[s])
        return 1 <= y <= 12 or (y >= 13 and (sixth[s] or phase[s] == "special"))

    def choose(pool: list[int], a: int, elder: list[int], keen: str | None, p_elder: float) -> int:
        """A school of ``pool``, of the authority when it has any (module docstring)."""
        near = [s for s in pool if school_auth[s] == a] or pool
        mine = [s for s in elder if s in pool]
        if mine and rng.random() < p_elder:
            return mine[0]
        faithful = [s for s in near if keen is not None and faith[s] == keen]
        if faithful and rng.random() < 0.6:
            return weighted_pick(rng, faithful, school_weight)
        return weighted_pick(rng, near, school_weight)

    # Households (the second stage): an authority by weight; independent (the country's share,
    # where it has independent schools), eligible for free school meals (state households, the
    # country's rate times the authority's deprivation), an ethnic group by the country's shares
    # and the authority's diversity, English as an additional language (the country's rate,
    # three times as likely in a minority ethnic group, .4 times in the white group) and a
    # Catholic or Anglican affiliation; 1-4 children (.42, .38, .14, .06): a focal child in a
    # transfer year (nursery, year 6, year 11; probability .6) or any year index of 0-14
    # (nursery, reception, years 1-13), each next one 1 + Poisson(1.2) years older or younger
    # than the others (.03 a twin); a child outside the years is not sampled.
    pupils: list[str] = []
    p_year: list[int] = []
    p_school: list[int | None] = []

    def elder_schools(elder: list[int]) -> list[int]:
        return [s for s in (p_school[j] for j in elder) if s is not None]

    p_household: list[int] = []
    p_flags: list[list[str]] = []
    p_applied: list[list[int]] = []
    n_household = 0
    while len(pupils) < n:
        a = _pick(rng, auth_weight)
        cname, _, _, p_indep, p_fsm, p_eal, _ = _COUNTRIES[auth_country[a]]
        indep_here = any(
            stype[s] == "independent" and country_of(school_auth[s]) == cname
            for s in range(n_school)
        )
        independent = indep_here and bool(rng.random() < p_indep)
        fsm = not independent and bool(rng.random() < min(0.6, p_fsm * deprivation[a]))
        ethnic = np.array(_ETHNICITY_SHARES[cname]) * np.array([1.0] + [diversity[a]] * 4)
        ethnicity = _ETHNICITIES[_pick(rng, ethnic)]
        eal = bool(rng.random() < p_eal * (0.4 if ethnicity == "white" else 3.0))
        u = rng.random()
        keen = (
            "catholic" if u < _CATHOLIC[cname] else "anglican" if u < _CHURCHGOING[cname] else None
        )
        kids = 1 + _pick(rng, np.array([0.42, 0.38, 0.14, 0.06]))
        focal = (0, 7, 12)[int(rng.integers(3))] if rng.random() < 0.6 else int(rng.integers(15))
        years = [focal]
        for _ in range(kids - 1):
            gap = 0 if rng.random() < 0.03 else 1 + int(rng.poisson(1.2))
            years.append(max(years) + gap if rng.random() < 0.5 else min(years) - gap)
        years = sorted((y for y in years if 0 <= y <= 14), reverse=True)
        h = n_household
        n_household += 1
        elder: list[int] = []
        for y in years[: n - len(pupils)]:  # the eldest first
            i = len(pupils)
            pupils.append(f"pupil_{i:04d}")
            p_year.append(y)
            p_household.append(h)
            flags = [f"year_{_YEARS[y]}", f"ethnicity_{ethnicity}"]
            flags.append("sex_female" if rng.random() < 0.49 else "sex_male")
            # The school of a child of reception age or older: none for a sixth-former at a
            # further-education college (probability .2); a special school for half the
            # children with a plan (an education, health and care plan; a coordinated support
            # plan in Scotland; .03 of children) in the state sector; else the sector's schools
            # that teach the year (the state's when the independent ones do not).
            plan = bool(rng.random() < 0.03)
            special = plan and not independent and bool(rng.random() < 0.5)
            school: int | None = None
            if y >= 1 and not (y >= 13 and rng.random() < 0.2):
                fits: list[int] = []
                for sector, sen in ((independent, special), (False, special), (False, False)):
                    fits = [
                        s
                        for s in range(n_school)
                        if serves(s, y)
                        and (stype[s] == "independent") == sector
                        and (phase[s] == "special") == sen
                    ]
                    if fits:
                        break
                school = choose(fits, a, elder_schools(elder), keen, 0.85)
            p_school.append(school)
            if school is not None:
                if fsm:
                    flags.append("status_fsm")
                if eal:
                    flags.append("status_eal")
                if plan:
                    flags.append("status_sen_plan")
                elif rng.random() < 0.12:
                    flags.append("status_sen_support")
            p_flags.append(flags)
            # Applications at a transfer (nursery to reception, year 6 to 7, year 11 to 12) or,
            # with probability .03, in year; in Scotland only a placing request (.25): 1 +
            # Poisson(1, 2, .6, 0) preferences, at most 3 (6 for a secondary in England), the
            # elder sibling's school listed first with probability .9.
            target = {0: 1, 7: 8, 12: 13}.get(y)
            if target is None and 1 <= y <= 11 and rng.random() < 0.03:
                target = y + 1
            chosen: list[int] = []
            if target is not None and (cname != "scotland" or rng.random() < 0.25):
                pool = [
                    s
                    for s in range(n_school)
                    if serves(s, target)
                    and phase[s] != "special"
                    and (stype[s] == "independent") == independent
                ]
                limit = {0: 3, 7: 6 if cname == "england" else 3, 12: 3}.get(y, 1)
                want = min(limit, 1 + int(rng.poisson({0: 1.0, 7: 2.0, 12: 0.6}.get(y, 0.0))))
                siblings = elder_schools(elder)
                while len(chosen) < want and len(chosen) < len(pool):
                    rest = [s for s in pool if s not in chosen]
                    chosen.append(choose(rest, a, siblings, keen, 0.9))
                    siblings = []
            p_applied.append(chosen)
            elder.append(i)
    households = entity_labels("household", n_household)
    for i in range(n):
        facts.append((pupils[i], "in_household", households[p_household[i]]))
        facts.extend((pupils[i], "recorded_as", flag) for flag in p_flags[i])
        at = p_school[i]
        if at is not None:
            facts.append((pupils[i], "attends", schools[at]))
        facts.extend((pupils[i], "applied_to", schools[s]) for s in sorted(p_applied[i]))

    # Exams sat at the current school this summer or last: the phonics check, the
    # multiplication-tables check and the key stage 2 tests (the Standards and Testing Agency)
    # in years 1, 4 and 6 at an English state primary; the 11+ Common Entrance (ISEB) in year 6
    # at an independent school (.6); GCSEs (National 5s at a school on SQA) in year 11, and in
    # year 12 for a pupil who stayed on (.7); Highers in year 12 at a school on SQA; A levels
    # (Highers) in year 13, none at a special school. GCSEs are maths, English, each science
    # with probability .55, Welsh in Wales and 2 + Poisson(1) options; a special school's pupils
    # take maths and English with probability .4 each. Each school enters a subject with one
    # board, by share (WJEC in Welsh state schools); .03 of entries are absent.
    gcse_weight = np.array([x[4] for x in _SUBJECTS[5:13]])
    post16_weight = np.array([x[5] for x in _SUBJECTS])
    board_share = np.array([b[1] for b in _BOARDS])
    school_board: dict[tuple[int, str], str] = {}
    exams: dict[str, str] = {}

    def gcses(s: int) -> list[int]:
        if phase[s] == "special":
            return [j for j in (0, 1) if rng.random() < 0.4]
        chosen = [0, 1] + [j for j in (2, 3, 4) if rng.random() < _SUBJECTS[j][4]]
        if country_of(school_auth[s]) == "wales" and stype[s] != "independent":
            chosen.append(_SUBJECT_NAMES.index("welsh"))
        k = min(8, 2 + int(rng.poisson(1.0)))
        picked = rng.choice(8, size=k, replace=False, p=gcse_weight / gcse_weight.sum())
        return chosen + sorted(5 + int(j) for j in picked)

    def post16(count: int) -> list[int]:
        picked = rng.choice(
            len(_SUBJECTS), size=count, replace=False, p=post16_weight / post16_weight.sum()
        )
        return sorted(int(j) for j in picked)

    for i in range(n):
        at = p_school[i]
        if at is None:
            continue
        s = at
        y, c = p_year[i], country_of(school_auth[s])
        entries: list[tuple[str, int]] = []
        state_primary = c == "england" and stype[s] != "independent" and phase[s] != "special"
        if state_primary and y in (2, 5):
            entries = [("phonics", 1)] if y == 2 else [("times_tables", 0)]
        elif state_primary and y == 7:
            entries = [("ks2", 0), ("ks2", 1)]
        elif y == 7 and stype[s] == "independent" and rng.random() < 0.6:
            entries = [("common_entrance", 0), ("common_entrance", 1)]
        elif y == 12 or (y == 13 and rng.random() < 0.7):
            entries = [("gcse", j) for j in gcses(s)]
        if y == 13 and sqa[s] and phase[s] != "special":
            entries += [("a_level", j) for j in post16(4 + int(rng.random() < 0.5))]
        elif y == 14 and phase[s] != "special":
            entries = [
                ("a_level", j) for j in post16(2 if sqa[s] else 3 + int(rng.random() < 0.15))
            ]
        for level, j in entries:
            if rng.random() < 0.03:
                continue
            if level in ("phonics", "times_tables", "ks2"):
                board = "sta"
            elif level == "common_entrance":
                board = "iseb"
            elif sqa[s]:
                board = "sqa"
            elif c == "wales" and stype[s] != "independent":
                board = "wjec"
            else:
                if (s, _SUBJECT_NAMES[j]) not in school_board:
                    school_board[(s, _SUBJECT_NAMES[j])] = _BOARDS[_pick(rng, board_share)][0]
                board = school_board[(s, _SUBJECT_NAMES[j])]
            if board == "sqa":
                level = {"gcse": "national_5", "a_level": "higher"}[level]
            exam = f"exam_{level}_{_SUBJECT_NAMES[j]}_{board}"
            exams[exam] = f"board_{board}"
            facts.append((pupils[i], "sat", exam))
    facts.extend((e, "set_by", b) for e, b in sorted(exams.items()))

    # Teachers (the study's teacher survey): per school 3 + Poisson(2) (primary), 8 + Poisson(4)
    # (secondary), 3 + Poisson(1) (special) or 7 + Poisson(2) (all-through), the first its head
    # (head_of). Each works_at its school and, with probability .04, also at another school of the
    # same trust or, outside trusts, a maintained school of the authority (a shared or peripatetic
    # teacher); is recorded_as female (.85 in primary, .65 otherwise) or male; and has a main
    # subject by demand if it teaches secondary (in an all-through school with probability .6). Its
    # degree is in the main subject by the subject's share, else (.25) in another subject by demand;
    # a primary teacher's is in a school subject with probability .45. It trained_on an
    # initial-teacher-training course in its country (.85) or another, of its main subject or
    # (primary) generalist with a mathematics (.14), English (.08) or PE (.06) specialism, unless it
    # has no teacher training (.3 in an independent school, .18 in an academy, .08 otherwise).
    teachers: list[str] = []
    demand = np.array([x[1] for x in _SUBJECTS])
    courses: dict[str, str | None] = {}
    for s in range(n_school):
        c = country_of(school_auth[s])
        base = {"primary": 3, "secondary": 8, "special": 3, "all_through": 7}[phase[s]]
        extra = {"primary": 2.0, "secondary": 4.0, "special": 1.0, "all_through": 2.0}[phase[s]]
        w = demand.copy()
        if c != "wales":
            w[-1] = 0.0  # Welsh is taught in Wales
        for k in range(base + int(rng.poisson(extra))):
            t = f"teacher_{len(teachers):04d}"
            teachers.append(t)
            facts.append((t, "works_at", schools[s]))
            if k == 0:
                facts.append((t, "head_of", schools[s]))
            if rng.random() < 0.04:
                if s in trust_of:
                    pool = [x for x in trust_of if trust_of[x] == trust_of[s] and x != s]
                else:
                    pool = [x for x in range(n_school) if school_auth[x] == school_auth[s]]
                    pool = [
                        x for x in pool if x != s and stype[x] not in ("academy", "independent")
                    ]
                if pool:
                    facts.append((t, "works_at", schools[weighted_pick(rng, pool, school_weight)]))
            female = 0.85 if phase[s] == "primary" else 0.65
            facts.append((t, "recorded_as", "sex_female" if rng.random() < female else "sex_male"))
            secondary = phase[s] == "secondary" or (
                phase[s] == "all_through" and bool(rng.random() < 0.6)
            )
            main = _pick(rng, w) if secondary else None
            known: set[int] = set()
            if main is not None:
                if rng.random() < _SUBJECTS[main][2]:
                    known.add(main)
                elif rng.random() < 0.25:
                    known.add(_pick(rng, w))
            elif rng.random() < 0.45:
                known.add(_pick(rng, np.array([x[3] for x in _SUBJECTS])))
            facts.extend((t, "degree_in", f"subject_{_SUBJECT_NAMES[j]}") for j in sorted(known))
            untrained = {"independent": 0.3, "academy": 0.18}.get(stype[s], 0.08)
            if rng.random() >= untrained:
                home = c if rng.random() < 0.85 else _COUNTRIES[int(rng.integers(3))][0]
                subject: str | None
                if main is not None:
                    subject = _SUBJECT_NAMES[main]
                    course = f"course_{home}_secondary_{subject}"
                else:
                    subject = _PRIMARY_ITT[_pick(rng, np.array(_PRIMARY_ITT_SHARES))]
                    course = f"course_{home}_primary" + (f"_{subject}" if subject else "")
                courses[course] = subject
                facts.append((t, "trained_on", course))
                if subject is not None:
                    known.add(_SUBJECT_NAMES.index(subject))
            # Subject CPD (cpd_in): in each subject it is qualified in with probability .5, in
            # a main subject it is not qualified in with .6 (subject-knowledge enhancement), and
            # in another subject by demand with .04.
            cpd = {j for j in sorted(known) if rng.random() < 0.5}
            if main is not None and main not in known and rng.random() < 0.6:
                cpd.add(main)
            if rng.random() < 0.04:
                cpd.add(_pick(rng, w))
            facts.extend((t, "cpd_in", f"subject_{_SUBJECT_NAMES[j]}") for j in sorted(cpd))
    facts.extend(
        (course, "course_subject", f"subject_{subject}")
        for course, subject in sorted(courses.items())
        if subject is not None
    )

    flag_kinds = {f"phase_{x}": "phase" for x in ("primary", "secondary", "special", "all_through")}
    flag_kinds |= {f"type_{x}": "school_type" for x in (*_TYPES, "independent")}
    flag_kinds |= {f"faith_{x}": "faith" for x in _FAITHS}
    flag_kinds |= {f"rating_{x}": "rating" for x in _RATINGS}
    flag_kinds |= {f"year_{x}": "year" for x in _YEARS}
    flag_kinds |= {f"ethnicity_{x}": "ethnicity" for x in _ETHNICITIES}
    flag_kinds |= {f"sex_{x}": "sex" for x in ("female", "male")}
    flag_kinds |= {f"status_{x}": "status" for x in ("fsm", "eal", "sen_plan", "sen_support")}
    boards = [f"board_{b}" for b, _ in _BOARDS] + ["board_sqa", "board_sta", "board_iseb"]
    kinds = {
        **dict.fromkeys(countries, "country"),
        **dict.fromkeys(authorities, "authority"),
        **dict.fromkeys(schools, "school"),
        **dict.fromkeys(trusts, "trust"),
        **dict.fromkeys(pupils, "pupil"),
        **dict.fromkeys(households, "household"),
        **dict.fromkeys(teachers, "teacher"),
        **dict.fromkeys([f"subject_{j}" for j in _SUBJECT_NAMES], "subject"),
        **dict.fromkeys(courses, "course"),
        **dict.fromkeys(exams, "exam"),
        **dict.fromkeys(boards, "board"),
        **flag_kinds,
    }
    return build_world(
        "schools",
        facts,
        SCHOOLS_RULES,
        seed=seed,
        size=n,
        rng=rng,
        entity_types=kinds,
        exception_rates=dict(_EXCEPTION_RATES),
        noise_rates=dict(_NOISE_RATES),
        symmetric=("sibling_of",),
        inverse_pairs=(("works_at", "employs"),),
        shortcuts=(("cpd_in", "qualified_in"),),
        valid_fraction=valid_fraction,
        test_fraction=test_fraction,
    )
