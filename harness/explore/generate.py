"""Random but valid scenarios, as hypothesis strategies (the explorer's generator).

One strategy, ``scenario_trees()``, draws the parsed YAML tree of a scenario
over the model's whole domain: nodes with labels and taints, classes with
extreme, equal and negative values, ``Never`` policies, a global default,
toleration annotations of every kind, initial pods (some bound without the
scheduler), PDBs and a few steps. The same strategy drives the model-only
property tests (tests/explore/test_generate.py) and ``./kit explore``.

Every tree it draws loads as a Scenario; what it leaves out, it leaves out
because the cluster would not run it as the model assumes, never to avoid a
hard case:
- no NoExecute taints: the taint manager would evict pods, which no scenario models;
- initial pods fit their node and tolerate its NoSchedule taints, since they are placed by
  the scheduler pinned to that node and must not preempt anything while being placed;
- at most one globalDefault class at the start (a second is refused at set-up time; a step
  that creates one is fine, the model predicts its rejection);
- a scenario whose outcome would depend on when an unrelated cluster event wakes a parked
  pod (a toleration window that can end while it runs, or a global default) is ``alone``.

A third of the pod steps look mid-way (``settle`` shorter than the grace periods of the
victims), and the steps draw the events that do or do not wake parked pods: deleting pending
and nominated pods, class and PDB changes while pods wait, and node events (nodes added,
relabelled, tainted, cordoned, resized, and drained nodes deleted), and running pods resized
in place (harness/explore/cluster_events.py). A quarter of the scenarios count cpu: their nodes
have little, and pods ask for some.
"""

from __future__ import annotations

from hypothesis import strategies as st

from reference.admission import HIGHEST_USER_DEFINABLE as LIMIT  # the highest value a user class may have
from reference.toleration import DEFAULT_PREFIX
from harness.formats.faults import POINTS
from harness.explore.cluster_events import (CPU_STEP, SMALL_CPU, TAINT, ZONES, cpu_amount, node_step, resizable,
                                            resize_step)

MPP = DEFAULT_PREFIX + "minimum-preemptable-priority"
TS = DEFAULT_PREFIX + "toleration-seconds"
SHORT_WINDOW = (4, 20)  # toleration-seconds that end while a scenario runs
APPS = ("a", "b")


def _class_value(draw, taken: list[int]) -> int:
    kind = draw(st.sampled_from(["small", "small", "negative", "equal", "limit", "large"]))
    if kind == "equal" and taken:
        return draw(st.sampled_from(taken))
    if kind == "negative":
        return draw(st.integers(-1000, -1))
    if kind == "limit":
        return draw(st.sampled_from([LIMIT, LIMIT - 1]))
    if kind == "large":
        return draw(st.integers(10_000, 100_000_000))
    return draw(st.integers(0, 1000))


# Annotation values by kind ("none": the annotation is left out; "value", "short": drawn).
MPP_TEXT = {"above all": str(LIMIT), "garbage": "high", "negative": "-5", "zero": "0"}
TS_TEXT = {"garbage": "10m", "negative": "-1", "zero": "0", "long": "3600"}


def _annotations(draw, values: list[int], windows: bool = False) -> dict[str, str]:
    """A PreemptionToleration policy: either annotation missing, unparsable, negative, zero or
    meaningful. A policy exempts only with a minimum above the preemptor's priority and a
    non-zero toleration, so those are drawn often enough to matter."""
    out = {}
    mpp = draw(st.sampled_from(["none", "above all", "above all", "value", "garbage", "negative", "zero"]))
    if mpp == "value":
        out[MPP] = str(draw(st.sampled_from(values)) + draw(st.sampled_from([-1, 0, 1])))
    elif mpp in MPP_TEXT:
        out[MPP] = MPP_TEXT[mpp]
    ts = draw(st.sampled_from(["none", "garbage", "negative", "negative", "zero", "long", "long"]
                              + ["short"] * (3 if windows else 0)))
    if ts == "short":
        out[TS] = str(draw(st.integers(*SHORT_WINDOW)))
    elif ts in TS_TEXT:
        out[TS] = TS_TEXT[ts]
    return out


@st.composite
def classes(draw, windows: bool = False, global_default: bool = False) -> list[dict]:
    """2-7 classes; ``windows``: some may have toleration windows that end while the scenario runs."""
    n = draw(st.integers(2, 7))
    out: list[dict] = []
    values: list[int] = []
    default_at = draw(st.integers(0, n - 1)) if global_default else -1
    for i in range(n):
        value = _class_value(draw, values)
        values.append(value)
        c: dict = {"name": f"c{i + 1}", "value": value}
        if draw(st.integers(0, 4)) == 0:
            c["preemptionPolicy"] = "Never"
        if i == default_at:
            c["globalDefault"] = True
        if draw(st.booleans()):
            ann = _annotations(draw, values, windows)
            if ann:
                c["annotations"] = ann
        out.append(c)
    return out


@st.composite
def nodes(draw, cpu: bool = False) -> list[dict]:
    out = []
    for i in range(draw(st.integers(1, 4))):
        n: dict = {"name": f"n{i + 1}", "slots": draw(st.integers(1, 4))}
        if cpu:
            n["milliCPU"] = draw(st.sampled_from(SMALL_CPU))
        if draw(st.booleans()):
            n["labels"] = {"zone": draw(st.sampled_from(ZONES))}
        taint = draw(st.sampled_from(["none", "none", "none", "NoSchedule", "PreferNoSchedule"]))
        if taint != "none":
            n["taints"] = [{**TAINT, "effect": taint}]
        out.append(n)
    return out


def _toleration() -> dict:
    return {"key": TAINT["key"], "operator": "Equal", "value": TAINT["value"]}


@st.composite
def initial_pods(draw, node_list: list[dict], class_list: list[dict]) -> list[dict]:
    out = []
    names = [c["name"] for c in class_list]
    for node in node_list:
        # Mostly full nodes: preemption only happens where there is no room.
        room = node["slots"]
        full = draw(st.integers(0, 3)) > 0
        sizes = []
        while room > 0 and len(sizes) < 4:
            size = draw(st.integers(0 if not full else 1, min(3, room)))
            sizes.append(size)
            room -= size
            if not full and draw(st.booleans()):
                break
        small, cpu_left = "milliCPU" in node, node.get("milliCPU", 0)
        for slots in sizes:
            p: dict = {"name": f"p{len(out) + 1}", "node": node["name"], "slots": slots,
                       # 20 s: long enough that a look mid-way finds its victims still terminating.
                       "grace": draw(st.sampled_from([0, 1, 2, 5, 20]))}
            if draw(st.integers(0, 6)):
                p["class"] = draw(st.sampled_from(names))
            if draw(st.booleans()):
                p["labels"] = {"app": draw(st.sampled_from(APPS))}
            # Some ask for cpu (what a resize changes); on a node with little, only what is left,
            # and there often of the highest class: pods nobody can preempt, and may resize
            # (cluster_events.resizable), so that a pod waits for the cpu they hold.
            if (not small or cpu_left >= CPU_STEP) and draw(st.integers(0, 1 if small else 2)) == 0:
                p.update(qos="Burstable", milliCPU=cpu_amount(draw, cpu_left if small else 1000))
                cpu_left -= p["milliCPU"]
                if small and draw(st.booleans()):
                    p["class"] = max(class_list, key=lambda c: c["value"])["name"]
            if draw(st.integers(0, 6)) == 0:
                p["bypassScheduler"] = True
            elif any(t["effect"] == "NoSchedule" for t in node.get("taints", [])):
                p["tolerations"] = [_toleration()]
            out.append(p)
    return out


@st.composite
def new_pod(draw, name: str, class_list: list[dict], node_list: list[dict]) -> dict:
    p: dict = {"name": name, "slots": draw(st.sampled_from([1, 1, 1, 1, 2, 3])),
               "grace": draw(st.sampled_from([0, 1, 2]))}
    if any("milliCPU" in n for n in node_list) and draw(st.integers(0, 3)):
        p.update(qos="Burstable", milliCPU=cpu_amount(draw, max(SMALL_CPU) // 2))
    kind = draw(st.sampled_from(["class"] * 10 + ["none", "unknown"]))
    if kind == "class" and class_list:
        # Half the time one of the two highest classes, so that most new pods can preempt someone.
        ranked = sorted(class_list, key=lambda c: -c["value"])
        c = draw(st.sampled_from(ranked[:2] if draw(st.booleans()) else ranked))
        p["class"] = c["name"]
        if draw(st.integers(0, 7)) == 0:  # spec.priority set by hand: equal passes, other is refused
            p["priority"] = c["value"] + draw(st.sampled_from([0, 0, 1]))
    elif kind == "unknown":
        p["class"] = "missing"
    if draw(st.integers(0, 7)) == 0:
        p["preemptionPolicy"] = draw(st.sampled_from(["Never", "PreemptLowerPriority"]))
    if draw(st.booleans()):
        p["labels"] = {"app": draw(st.sampled_from(APPS))}
    if draw(st.integers(0, 4)) == 0:
        p["nodeSelector"] = {"zone": draw(st.sampled_from(ZONES))}
    if any(n.get("taints") for n in node_list) and draw(st.booleans()):
        p["tolerations"] = [_toleration()]
    affinity = draw(st.sampled_from(["none"] * 6 + ["podAffinity", "podAntiAffinity"]))
    if affinity != "none":
        p[affinity] = [{"labels": {"app": draw(st.sampled_from(APPS))},
                        "topology": draw(st.sampled_from(["hostname", "zone"]))}]
    return p


@st.composite
def steps(draw, class_list: list[dict], node_list: list[dict], pods: list[dict], windows: bool = False,
          faults: bool = False) -> list[dict]:
    out: list[dict] = []
    drawn: set[str] = set()  # the fault kinds drawn so far: which may follow them (_fault)
    live = [p["name"] for p in pods]
    classes_now = {c["name"]: c for c in class_list}
    # What a resize may name (cluster_events.resizable): the largest class value so far, and each
    # initial pod's cpu request now.
    start_values = {c["name"]: c["value"] for c in class_list}
    highest = max([0, *start_values.values()])
    defaulted = any(c.get("globalDefault") for c in class_list)
    cpu_now = {p["name"]: p["milliCPU"] for p in pods if "milliCPU" in p}
    small_cpu = {n["name"] for n in node_list if "milliCPU" in n}
    deleted: dict[str, dict] = {}
    made = 0
    nodes_now = {n["name"]: n for n in node_list}
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["createPod"] * 8 + ["deletePod"] * 2
                                    + ["createClass", "updateClass", "deleteClass", "recreateClass", "createPdb", "wait"]
                                    + ["node"] * 8 + ["resizePod"] * 3 + (["fault"] * 4 if faults else [])))
        targets = [p for p in resizable(pods, live, start_values, highest, defaulted)
                   if cpu_now[p["name"]] > CPU_STEP or p["node"] not in small_cpu] if kind == "resizePod" else []
        if targets:
            pod = draw(st.sampled_from(targets))
            step = draw(resize_step(pod["name"], cpu_now[pod["name"]], pod["node"] in small_cpu))
            cpu_now[pod["name"]] = step["resizePod"]["milliCPU"]
            out.append(_maybe_midway(draw, step))
        elif kind == "fault":
            out.append(draw(fault_step(drawn)))
        elif kind == "node":
            step = draw(node_step(nodes_now, len(out)))
            out.append(dict(step, settle=draw(st.sampled_from(MIDWAY))) if draw(st.booleans()) else step)
        elif kind == "deletePod" and live:
            name = draw(st.sampled_from(live))
            live.remove(name)
            out.append(_maybe_during(draw, _maybe_midway(draw, {"deletePod": name}), faults, drawn))
        elif kind == "createClass":
            made += 1
            value = LIMIT + 1 if draw(st.integers(0, 4)) == 0 else draw(st.integers(-100, 2000))
            c = {"name": f"x{made}", "value": value}
            if value <= LIMIT:  # a larger one is refused
                highest = max(highest, value)
            if draw(st.booleans()):
                c["annotations"] = _annotations(draw, [value], windows)
            classes_now[c["name"]] = c
            out.append({"createClass": c})
        elif kind == "updateClass" and classes_now:
            old = draw(st.sampled_from(sorted(classes_now.values(), key=lambda c: c["name"])))
            change = draw(st.sampled_from(["description", "value", "annotations", "annotations"]))
            new = dict(old)
            if change == "description":
                new["description"] = "changed"
            elif change == "value":
                new["value"] = old["value"] + 1  # immutable: refused
            else:
                new["annotations"] = _annotations(draw, [old["value"]], windows)
            # Sent as a replace or as a merge patch: the API server must judge both alike.
            out.append({draw(st.sampled_from(["updateClass", "patchClass"])): new})
            if change != "value":
                classes_now[old["name"]] = new
        elif kind == "deleteClass" and classes_now:
            name = draw(st.sampled_from(sorted(classes_now)))
            deleted[name] = classes_now.pop(name)
            out.append({"deleteClass": name})
        elif kind == "recreateClass" and deleted:
            name = draw(st.sampled_from(sorted(deleted)))
            c = dict(deleted.pop(name), value=draw(st.integers(-100, 2000)), globalDefault=False)
            highest = max(highest, c["value"])
            classes_now[name] = c
            out.append({"createClass": c})
        elif kind == "createPdb":
            out.append({"createPdb": {"name": f"b{len(out) + 1}", "selector": {"app": draw(st.sampled_from(APPS))},
                                      "minAvailable": draw(st.integers(0, 2))}})
        elif kind == "wait":
            out.append({"wait": f"{draw(st.integers(1, 15))}s"})
        else:
            name = f"q{len(out) + 1}"
            live.append(name)
            step = _maybe_midway(draw, {"createPod": draw(new_pod(name, list(classes_now.values()), list(nodes_now.values())))})
            out.append(_maybe_during(draw, step, faults, drawn))
    return out


def _fault(draw, drawn: set[str], during: bool = False) -> dict:
    """One fault's fields (harness.formats.pods.FAULT_ACTIONS), ``drawn`` the kinds drawn before:
    after a failover the leader is the standby, which the kit does not restart, and no second
    failover is possible; a disconnect cuts the first scheduler's connection, so it and a failover
    are never in one scenario, and it is drawn as a step of its own (a during: one may only come at
    victimGone, and drawing it would change every later draw of a seed already run)."""
    kinds = ["pauseScheduler", "restartApiserver"]
    if "failover" not in drawn:
        kinds += ["restartScheduler"] * 2 + ([] if "disconnectScheduler" in drawn else ["failover"])
        kinds += [] if during else ["disconnectScheduler"]
    kind = draw(st.sampled_from(kinds))
    drawn.add(kind)
    if kind == "failover":
        return {"failover": draw(st.sampled_from(["kill", "takeLease"]))}
    if kind == "pauseScheduler":
        return {"pauseScheduler": f"{draw(st.integers(1, 10))}s"}
    if kind == "disconnectScheduler":
        return {"disconnectScheduler": f"{draw(st.integers(2, 20))}s"}
    return {kind: draw(st.sampled_from(["kill", "graceful"]))}


@st.composite
def fault_step(draw, drawn: set[str]) -> dict:
    """A fault step at a quiet moment between two actions (docs/faults.md)."""
    return _maybe_midway(draw, _fault(draw, drawn))


def _maybe_during(draw, step: dict, faults: bool, drawn: set[str]) -> dict:
    """With faults drawn, a third of the pod steps inject one at a named point of what they start
    (a point that never comes injects nothing, and the model says whether it should have)."""
    if not faults or draw(st.integers(0, 2)) != 0:
        return step
    return dict(step, during=dict(_fault(draw, drawn, during=True), at=draw(st.sampled_from(POINTS))))


MIDWAY = ("2s", "3s")  # shorter than a 5 or 20 s grace period: the look comes before things settle


def _maybe_midway(draw, step: dict) -> dict:
    """A third of the pod steps look mid-way, while victims may still be terminating and parked
    pods have been retried (or not) only by the events so far: where the queue's wake-up rules
    show, which an outcome looked at once settled hides."""
    if draw(st.integers(0, 2)) == 0:
        return dict(step, settle=draw(st.sampled_from(MIDWAY)))
    return step


def looks_midway(tree: dict) -> bool:
    return any("settle" in s for s in tree.get("steps", []))


def _short_window(c: dict) -> bool:
    ts = c.get("annotations", {}).get(TS, "")
    return ts.isdigit() and SHORT_WINDOW[0] <= int(ts) <= SHORT_WINDOW[1]


@st.composite
def scenario_trees(draw, scenario_id: str = "explore", faults: bool = False) -> dict:
    # Both make a scenario `alone` (slower to run): a minority, drawn once per scenario.
    windows = draw(st.integers(0, 9)) == 0
    global_default = draw(st.integers(0, 29)) == 0
    node_list = draw(nodes(cpu=draw(st.integers(0, 3)) == 0))
    class_list = draw(classes(windows, global_default))
    pods = draw(initial_pods(node_list, class_list))
    pdbs = [{"name": f"keep-{app}", "selector": {"app": app}, "minAvailable": draw(st.integers(0, 2))}
            for app in APPS if draw(st.integers(0, 3)) == 0]
    step_list = draw(steps(class_list, node_list, pods, windows, faults))
    every_class = class_list + [c for s in step_list
                                if (c := s.get("createClass") or s.get("updateClass") or s.get("patchClass"))]
    alone = any(c.get("globalDefault") for c in every_class) or any(_short_window(c) for c in every_class)
    tree: dict = {"id": scenario_id, "title": "generated", "spec": "generated by ./kit explore",
                  "areas": ["preemption"], "alone": alone, "priorityClasses": class_list, "nodes": node_list,
                  "pods": pods, "steps": step_list}
    if pdbs:
        tree["pdbs"] = pdbs
    return tree


def generate(count: int, seed: int, faults: bool = False) -> list[dict]:
    """``count`` scenario trees, the same ones for the same seed (and hypothesis version);
    ``faults``: with fault steps and during: faults among the steps (docs/faults.md)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seed_

    out: list[dict] = []

    @settings(max_examples=count, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @seed_(seed)
    @given(scenario_trees(faults=faults))
    def collect(tree: dict) -> None:
        out.append(tree)

    collect()
    return [dict(t, id=draw_id(seed, i)) for i, t in enumerate(out[:count])]


def draw_id(seed: int, index: int) -> str:
    """The id of a seed's draw number ``index`` (from 0): a merge of shards knows every id to expect."""
    return f"x{seed}-{index + 1:04d}"
