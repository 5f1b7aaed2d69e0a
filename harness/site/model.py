"""Scenario files as plain page data: what each file says (set-up, steps, expectations, read from
the file itself), what the model predicts per build and why (the account ``./kit explain``
prints), and the verdicts recorded for it. Pure: no HTML here, and nothing written.

The set-up and steps are shown as the file writes them (its YAML, not the loader's defaults), so
the page is the file; the predictions come from the loaded, checked scenario.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from reference.release import DEFAULT_RELEASE, RELEASES

from harness.errors import KitError
from harness.formats import bindings, catalogue, common, pods
from harness.formats.common import KARMADA, ScenarioError
from harness.site.runs import Verdict
from harness.targets import BUILDS

KARMADA_AREA = "karmada"
# What each area pins, for its page's heading and title (the pytest markers of pyproject.toml say the
# same); every area has one (tests/site/test_site.py), or its pages would show its bare id.
AREA_TITLES = {
    "admission": "Priority admission and PriorityClass validation",
    "queue": "Scheduling queue order and retries",
    "preemption": "Preemption: which victims, which node",
    "nonpreempting": "preemptionPolicy: Never",
    "pdb": "PodDisruptionBudgets during preemption",
    "toleration": "The PreemptionToleration policy (scheduler-plugins)",
    "filter": "Which nodes are preemption candidates",
    "eviction": "The kubelet's node-pressure eviction ranking",
    "podgroup": "Pod groups: gang scheduling and workload-aware preemption",
    KARMADA_AREA: "Karmada binding priority",
}
AREAS = (*pods.AREAS, KARMADA_AREA)

# How an expectation reads, by field: {name} and {value} are the file's.
EXPECT_WORDS = {
    "running": "{name} runs on {value}",
    "preempted": "{name} is preempted",
    "notPreempted": "{name} is not preempted",
    "pending": "{name} stays pending",
    "nominated": "{name} is nominated to {value}",
    "rejected": "{name} is rejected, the message containing {value}",
    "priority": "{name} has priority {value}",
    "message": "{name}'s scheduling failure message contains {value}",
    "evicted": "{name} is evicted by its node's kubelet",
    "bindings": "the binding of {name}: {value}",
    "order": "bindings are first scheduled in the order {value}",
}
SETUP = {  # the file's set-up sections, with their headings, per kind
    common.PODS: (("priorityClasses", "PriorityClasses"), ("nodes", "Nodes"), ("pods", "Initial pods"),
                  ("pdbs", "PodDisruptionBudgets")),
    KARMADA: (("gates", "karmada-scheduler feature gates"), ("members", "Member clusters"),
              ("priorityClasses", "PriorityClasses")),
}


def flow(value: Any) -> str:
    """A value as the file would write it on one line (``{name: a, class: high}``)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, (dict, list)):  # a scalar: YAML would add a document end ("...")
        return json.dumps(value)
    return yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=10**6).strip()


def as_json(value: Any) -> str:
    """A value in a form a test can compare with the file's, whatever the page's wording."""
    return json.dumps(value, sort_keys=True, default=str)


@dataclass(frozen=True)
class Table:
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Expectation:
    field: str
    name: str  # the pod, class or app it is about ("" for a binding order)
    value: str  # the file's value as JSON ("" for a list field's entry)
    text: str


@dataclass(frozen=True)
class StepView:
    index: int
    action: str  # the action's field, or "expect"
    value: str  # the action's value as the file writes it
    value_json: str
    settle: str
    expectations: tuple[Expectation, ...]


@dataclass(frozen=True)
class AccountStep:
    """One step of the model's account: its log and reasons, and whether the expect holds."""

    index: int
    heading: str
    lines: tuple[tuple[int, str], ...]  # (depth, text)
    expect: str  # "met", "NOT met: ...", or "" for a step without expect
    pods: tuple[tuple[str, str], ...] = ()  # the model's view of each pod after the step


@dataclass(frozen=True)
class Prediction:
    title: str  # "plugins build, Kubernetes 1.35"
    specified: bool  # whether the scenario specifies this build and release (else a difference is expected)
    note: str
    start: str
    steps: tuple[AccountStep, ...]
    met: bool


@dataclass(frozen=True)
class ScenarioPage:
    id: str
    kind: str  # pods or karmada
    title: str
    spec: str
    areas: tuple[str, ...]
    source: str  # the file, relative to the repository where it is in it
    text: str  # the file as written
    applies: Table | None  # build x release: specified or expected to differ (pods)
    applies_to: str  # the same in a few words: "plugins, upstream >=1.35"
    setup: tuple[Table, ...]
    steps: tuple[StepView, ...]
    predictions: tuple[Prediction, ...]
    verdicts: tuple[Verdict, ...] = ()
    needs: str = ""  # what its cluster must have: feature gates, API versions, real kubelets

    @property
    def page(self) -> str:
        return f"scenarios/{self.id}.html"


@dataclass(frozen=True)
class AreaPage:
    name: str
    title: str
    scenarios: tuple[ScenarioPage, ...]

    @property
    def page(self) -> str:
        return f"areas/{self.name}.html"


@dataclass(frozen=True)
class Site:
    areas: tuple[AreaPage, ...]
    scenarios: tuple[ScenarioPage, ...]
    runs: str  # where the verdicts come from, or "" when no run is recorded
    counts: dict[str, int] = field(default_factory=dict)  # verdicts by outcome


# --- the file as written ------------------------------------------------------------


def table(title: str, section: Any) -> Table:
    """A set-up section (a list of mappings, or one mapping) as rows of the file's values."""
    items = section if isinstance(section, list) else [section]
    columns: list[str] = []
    for item in items:
        columns += [k for k in item if k not in columns]
    rows = tuple(tuple(flow(item[c]) if c in item else "" for c in columns) for item in items)
    return Table(title, tuple(columns), rows)


def expectations(expect: dict | None) -> tuple[Expectation, ...]:
    out = []
    for fld, entries in (expect or {}).items():
        if fld == "order":  # one list that is a single expectation
            out.append(Expectation(fld, "", as_json(entries), EXPECT_WORDS[fld].format(value=", ".join(entries))))
            continue
        items = entries.items() if isinstance(entries, dict) else ((e, None) for e in entries)
        for name, value in items:
            shown = " or ".join(value) if isinstance(value, list) and fld in ("running", "nominated") else (
                "no node" if value == "" and fld == "nominated" else repr(value) if isinstance(value, str)
                and fld in ("rejected", "message") else flow(value))
            words = EXPECT_WORDS.get(fld, "{name}: {value}")
            out.append(Expectation(fld, str(name), "" if value is None else as_json(value),
                                   words.format(name=name, value=shown)))
    return tuple(out)


def step_view(i: int, raw: dict, actions: tuple[str, ...]) -> StepView:
    action = next((a for a in actions if a in raw), "expect")
    value = raw.get(action) if action != "expect" else None
    return StepView(i, action, "" if value is None else flow(value), "" if value is None else as_json(value),
                    flow(raw["settle"]) if "settle" in raw else "", expectations(raw.get("expect")))


# --- what the model predicts ----------------------------------------------------------


def applies_table(s: pods.Scenario) -> Table:
    rows = tuple((b, *("specified" if s.applies_to(b, r) else "differs" for r in RELEASES)) for b in BUILDS)
    return Table("Builds and releases", ("build", *RELEASES), rows)


def pod_predictions(s: pods.Scenario) -> tuple[Prediction, ...]:
    """Each build's model: at the release the scenario specifies nearest the default for a build
    it specifies, at the default release (a difference expected) for one it does not."""
    from harness.run.pods.narrate import describe_misses, narrate

    out = []
    for build in BUILDS:
        specified = build in s.builds
        release = s.semantics(build, DEFAULT_RELEASE)[1] if specified else DEFAULT_RELEASE
        if not specified:
            note = f"the scenario specifies builds {', '.join(s.builds)}: a difference is expected"
        elif release != DEFAULT_RELEASE:
            note = f"the release nearest the default ({DEFAULT_RELEASE}) that the scenario specifies"
        else:
            note = f"specified for releases {s.releases_of(build)}" if s.releases_of(build) else "specified for every release"
        try:
            account = narrate(s, build, release)
        except ScenarioError as e:
            raise KitError(f"{s.id}: the {build} model cannot go through it: {e}") from None
        steps = tuple(AccountStep(
            st.index, f"{st.action} {st.argument}".strip(), tuple((ln.depth, ln.text) for ln in st.lines),
            "" if st.misses is None else ("met" if not st.misses else "NOT met: " + describe_misses(st.misses)),
            tuple((name, str(v)) for name, v in sorted(st.pods.items()))) for st in account.steps)
        out.append(Prediction(f"{build} build, Kubernetes {release}", specified, note,
                              ", ".join(account.start) or "no pods", steps, account.met))
    return tuple(out)


def binding_predictions(s: bindings.KarmadaScenario) -> tuple[Prediction, ...]:
    from harness.build import pins
    from harness.run.bindings.narrate import narrate

    steps = tuple(AccountStep(st.index, f"{st.action} {st.argument}".strip(), tuple((0, ln) for ln in st.lines),
                              "" if st.misses is None else ("met" if not st.misses else "NOT met: " + "; ".join(st.misses)))
                  for st in narrate(s))
    gate = "on" if s.gates.PriorityBasedScheduling else "off"
    return (Prediction(f"karmada-scheduler {pins.karmada_version()}, PriorityBasedScheduling {gate}", True,
                       "the binding model depends on no Kubernetes release", "", steps,
                       all(not st.expect.startswith("NOT") for st in steps)),)


# --- pages ------------------------------------------------------------------------------


def scenario_page(path: Path, s: catalogue.AnyScenario, verdicts: list[Verdict] | None = None) -> ScenarioPage:
    raw = common.read_mapping(path)
    kind = KARMADA if isinstance(s, bindings.KarmadaScenario) else common.PODS
    actions = bindings.ACTIONS if kind == KARMADA else pods.ACTIONS
    setup = tuple(table(title, raw[key]) for key, title in SETUP[kind] if raw.get(key))
    steps = tuple(step_view(i, st, actions) for i, st in enumerate(raw["steps"]))
    if kind == KARMADA:
        areas, applies, predictions = (KARMADA_AREA,), None, binding_predictions(s)
        applies_to = "karmada"
    else:
        areas, applies, predictions = tuple(s.areas), applies_table(s), pod_predictions(s)
        applies_to = ", ".join(f"{b} {s.releases_of(b)}".strip() for b in s.builds)
    try:
        source = str(path.resolve().relative_to(catalogue.CATALOGUES[common.PODS].parent))
    except ValueError:
        source = str(path)
    return ScenarioPage(s.id, kind, s.title, s.spec, areas, source, path.read_text(), applies, applies_to, setup,
                        steps, predictions, tuple(verdicts or ()), "" if kind == KARMADA else needs_of(s))


def needs_of(s: pods.Scenario) -> str:
    bits = [s.cluster_settings().describe()] if s.cluster_settings() else []
    if s.needs_kubelet:
        bits.append("real kubelets (--cluster kind): node pressure")
    return "; ".join(bits)


def load(sources: list[Path] | None = None) -> list[tuple[Path, catalogue.AnyScenario]]:
    """Every scenario file of ``sources`` (default: the catalogue, both kinds), checked; one
    KitError listing the files that are not valid."""
    try:
        files = catalogue.files(sources)
    except ScenarioError as e:
        raise KitError(str(e)) from None
    scenarios, errors = catalogue.check(files)
    if errors:
        raise KitError("invalid scenario files:\n" + "\n".join(errors))
    seen, out = set(), []
    for f, s in zip(files, scenarios):  # check() keeps the files' order when all are valid
        if f.resolve() not in seen:
            seen.add(f.resolve())
            out.append((f, s))
    return out


def build(loaded: list[tuple[Path, catalogue.AnyScenario]], verdicts: dict[str, list[Verdict]] | None = None,
          runs: str = "") -> Site:
    verdicts = verdicts or {}
    pages = tuple(scenario_page(f, s, verdicts.get(s.id)) for f, s in loaded)
    areas = tuple(AreaPage(a, AREA_TITLES.get(a, a), tuple(p for p in pages if a in p.areas)) for a in AREAS)
    counts: dict[str, int] = {}
    for p in pages:
        for v in p.verdicts:
            counts[v.outcome] = counts.get(v.outcome, 0) + 1
    return Site(tuple(a for a in areas if a.scenarios), pages, runs, counts)


__all__ = ["AREAS", "AreaPage", "Prediction", "ScenarioPage", "Site", "StepView", "Table", "build", "load",
           "scenario_page"]
