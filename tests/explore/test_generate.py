"""Model-only properties over the explorer's generated scenarios (harness/generate.py).

The same strategy that feeds ``./kit explore`` feeds these: whatever it draws
must load, simulate on both builds, and obey rules that hold for every
scheduler the specs allow, whatever the scenario.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from harness.run.pods.expectation import simulate
from harness.explore.generate import generate, scenario_trees
from harness.formats.pods import Scenario
from harness.formats.pods import CPU
from harness.kube import SLOT
from harness.targets import BUILDS
from reference.admission import HIGHEST_USER_DEFINABLE
from reference import filter as flt
from reference.objects import PREEMPT_NEVER

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)


def worlds_of(tree: dict):
    s = Scenario.model_validate(tree)
    return s, {b: simulate(s, b) for b in BUILDS}


@SETTINGS
@given(scenario_trees())
def test_no_pod_is_placed_on_a_node_without_room(tree):
    """A node holds more than it has only after it shrank (resizeNode keeps its pods), and then
    the scheduler places nobody more there."""
    _, by_build = worlds_of(tree)
    for worlds in by_build.values():
        for before, w in zip(worlds, worlds[1:]):
            for node in w.state.nodes:
                for resource in (SLOT, CPU):
                    used = sum(p.request_map.get(resource, 0) for p in w.state.pods_on(node.name))
                    if used > node.allocatable_map.get(resource, 0):
                        # A node resized down keeps its pods; a pod is never resized past its node.
                        assert resource == SLOT, (node.name, resource, used, w.log[-5:])
                        newcomers = {p.key for p in w.state.pods_on(node.name)} - {
                            p.key for p in before.state.pods_on(node.name)}
                        assert not newcomers, (node.name, newcomers, w.log[-5:])


@SETTINGS
@given(scenario_trees())
def test_victims_always_have_lower_priority_and_never_pods_never_preempt(tree):
    _, by_build = worlds_of(tree)
    for worlds in by_build.values():
        final = worlds[-1]
        for pr in final.predictions:
            if pr.outcome != "preempt":
                continue
            preemptor = next((w.state.pod_keyed(pr.pod) for w in reversed(worlds) if w.state.pod_keyed(pr.pod)), None)
            assert preemptor is not None and preemptor.preemption_policy != PREEMPT_NEVER
            for node in pr.nodes:
                for v in pr.victims[node]:
                    victim = next(w.state.pod_keyed(v) for w in worlds if w.state.pod_keyed(v) is not None)
                    assert victim.priority < preemptor.priority, (pr.pod, v)


@SETTINGS
@given(scenario_trees())
def test_bound_pods_pass_the_node_filters(tree):
    """A pod placed by the model passes selector and taint filters on its node when it is placed
    (initial pods excepted: the scenario places them; a node tainted or relabelled later keeps its
    pods, as NoSchedule and labels evict nobody)."""
    s, by_build = worlds_of(tree)
    initial = {f"default/{p.name}" for p in s.pods}
    for worlds in by_build.values():
        for before, w in zip(worlds, worlds[1:]):
            for pod in w.state.pods:
                was = before.state.pod_keyed(pod.key)
                if pod.node_name and pod.key not in initial and (was is None or not was.node_name):
                    node = w.state.node_named(pod.node_name)
                    for rule in (flt.taint_toleration, flt.node_affinity):
                        assert rule(w.state, pod, node, ()).code == flt.SUCCESS, (pod.key, rule.__name__)


@SETTINGS
@given(scenario_trees())
def test_simulation_is_deterministic(tree):
    s = Scenario.model_validate(tree)
    for b in BUILDS:
        a, c = simulate(s, b), simulate(s, b)
        assert [w.log for w in a][1:] == [w.log for w in c][1:]


def test_a_seed_draws_the_same_scenarios_and_another_seed_others():
    assert generate(15, 7) == generate(15, 7)
    assert generate(15, 7) != generate(15, 8)


def _cpu_before(tree: dict, resize: dict) -> int:
    """The cpu its pod asked for before ``resize`` (a step of ``tree``)."""
    name = resize["resizePod"]["name"]
    cpu = next(p["milliCPU"] for p in tree["pods"] if p["name"] == name)
    for st in tree["steps"][:tree["steps"].index(resize)]:
        cpu = st["resizePod"]["milliCPU"] if st.get("resizePod", {}).get("name") == name else cpu
    return cpu


def test_the_generator_reaches_the_whole_domain():
    """Over 300 draws every kind of thing the issue lists appears at least once."""
    trees = generate(300, 1)
    steps = [st for t in trees for st in t["steps"]]
    classes = [c for t in trees for c in t["priorityClasses"]]
    anns = [v for c in classes for v in c.get("annotations", {}).values()]
    seen = {
        "negative value": any(c["value"] < 0 for c in classes),
        "value at the limit": any(c["value"] == HIGHEST_USER_DEFINABLE for c in classes),
        "Never": any(c.get("preemptionPolicy") == "Never" for c in classes),
        "globalDefault": any(c.get("globalDefault") for c in classes),
        "unparsable annotation": any(not a.lstrip("-").isdigit() for a in anns),
        "negative annotation": "-1" in anns,
        "zero annotation": "0" in anns,
        "alone": any(t["alone"] for t in trees),
        "bypassScheduler": any(p.get("bypassScheduler") for t in trees for p in t["pods"]),
        "pdb": any(t.get("pdbs") for t in trees) and any("createPdb" in st for st in steps),
        "taint": any(n.get("taints") for t in trees for n in t["nodes"]),
        "explicit priority": any("priority" in st.get("createPod", {}) for st in steps),
        "affinity": any("podAffinity" in st.get("createPod", {}) for st in steps),
        "anti-affinity": any("podAntiAffinity" in st.get("createPod", {}) for st in steps),
        "little cpu": any("milliCPU" in n for t in trees for n in t["nodes"]),
        "a pod asking cpu": any("milliCPU" in st.get("createPod", {}) for st in steps),
        "resized down": any(st["resizePod"]["milliCPU"] < _cpu_before(t, st) for t in trees for st in t["steps"]
                            if "resizePod" in st),
        "resized up": any(st["resizePod"]["milliCPU"] > _cpu_before(t, st) for t in trees for st in t["steps"]
                          if "resizePod" in st),
        **{action: any(action in st for st in steps)
           for action in ("createPod", "deletePod", "createClass", "updateClass", "patchClass", "deleteClass", "wait")},
    }
    assert all(seen.values()), [k for k, v in seen.items() if not v]


def test_shrinking_keeps_the_smallest_tree_that_still_diverges():
    """The shrinker's search, with the cluster's verdict replaced by a rule: 'diverges while pod p1
    and a step creating a pod remain'. (The explorer asks a real cluster; this checks the search.)"""
    from harness.explore import campaign as explore
    from harness.run.pods.result import Result, StepRecord
    from reference.scheduler import PodView

    tree = generate(40, 3)
    tree = next(t for t in tree if any(p["name"] == "p1" for p in t["pods"])
                and sum("createPod" in s for s in t["steps"]) >= 1 and len(t["steps"]) >= 2 and len(t["nodes"]) >= 2)

    def diverges(s: Scenario) -> bool:
        return any(p.name == "p1" for p in s.pods) and any(st.createPod for st in s.steps)

    def run_many(batch):
        out = {}
        for s in batch:
            mism = [explore_mismatch()] if diverges(s) else []
            views = ({"p1": PodView("running", "n1")}, {"p1": PodView("pending")})
            out[s.id] = Result(s, "plugins", steps=[StepRecord(0, "x", *views, mism, [], [])])
        return out

    def explore_mismatch():
        from harness.run.pods.expectation import Mismatch
        return Mismatch("p1", "phase", "running", "pending")

    best, report, again = explore.shrink(tree, "outcome", run_many, rounds=30)
    assert again and "p1" in report
    s = Scenario.model_validate(best)
    assert diverges(s)
    assert len(s.pods) == 1 and len(s.steps) == 1 and len(s.nodes) == 1 and not s.pdbs


def test_kind_of_a_result():
    from harness.explore import campaign as explore
    from harness.run.pods.expectation import Mismatch
    from harness.run.pods.faults import Fault
    from harness.run.pods.result import Result, StepRecord

    s = Scenario.model_validate(generate(1, 1)[0])
    assert explore.kind_of(Result(s, "plugins")) is None
    assert explore.kind_of(Result(s, "plugins", error="initial pod p1 did not run")) == "runner"
    fault = Fault("one preemptor, victims on two nodes", "...", True)
    assert explore.kind_of(Result(s, "plugins", steps=[StepRecord(0, "x", {}, {}, [], [], [], [fault])])) == "scheduler fault"
    # The same race as a known bug of the build (x52-1319, plugins at 1.35): its second victim is a
    # difference from the model, which the race explains.
    known = Fault("one preemptor, victims on two nodes", "...", False, changes_outcome=True)
    moved = Mismatch("p4", "phase", "running on n2", "gone preempted")
    assert explore.kind_of(Result(s, "plugins", steps=[StepRecord(0, "x", {}, {}, [moved], [], [], [known])])) == "scheduler fault"
    assert explore.kind_of(Result(s, "plugins", steps=[StepRecord(0, "x", {}, {}, [moved], [], [], [])])) == "outcome"
    assert explore.kind_of(Result(s, "plugins", error="x", cancelled=True)) is None


def test_with_faults_every_fault_kind_and_point_is_drawn_and_every_draw_is_valid():
    from harness.explore.campaign import valid
    from harness.formats.faults import FAULT_ACTIONS, POINTS

    # A disconnect is drawn only as a step of its own, about once in 20 draws: two seeds' worth.
    trees = generate(300, 2, faults=True) + generate(300, 3, faults=True)
    assert all(valid(t) is not None for t in trees)
    steps = [st for t in trees for st in t["steps"]]
    counts = {a: sum(a in st or a in st.get("during", {}) for st in steps) for a in FAULT_ACTIONS}
    assert all(counts.values()), counts
    assert {st["during"]["at"] for st in steps if "during" in st} == set(POINTS)
    assert generate(30, 2) == generate(30, 2, faults=False), "draws without faults stay as they were"
