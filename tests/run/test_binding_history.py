"""The Karmada binding history without a control plane: recorded versions folded into what a check reads."""

from harness.run.bindings.history import BindingLog, Observed


def binding(app, rv, priority=None, clusters=None, scheduled=None):
    spec = {}
    if priority is not None:
        spec["schedulePriority"] = {"priority": priority}
    if clusters:
        spec["clusters"] = [{"name": c, "replicas": n} for c, n in clusters.items()]
    status = {"conditions": [{"type": "Scheduled", "status": scheduled[0], "reason": scheduled[1]}]} if scheduled else {}
    return {"metadata": {"name": f"{app}-deployment", "resourceVersion": str(rv)}, "spec": spec, "status": status}


def test_an_app_never_recorded_or_deleted_is_absent():
    log = BindingLog()
    assert log.now("web") == Observed("absent", None, (), "")
    log.add("ADDED", binding("web", 5, priority=10))
    log.add("DELETED", binding("web", 6, priority=10))
    assert log.now("web").state == "absent"


def test_the_latest_version_decides_the_state():
    log = BindingLog()
    log.add("ADDED", binding("web", 5, priority=10))
    assert log.now("web") == Observed("waiting", 10, (), "")
    log.add("MODIFIED", binding("web", 6, priority=10, scheduled=("False", "Unschedulable")))
    assert log.now("web").state == "unschedulable" and log.now("web").condition == "False/Unschedulable"
    log.add("MODIFIED", binding("web", 7, priority=10, clusters={"m2": 1, "m1": 2}, scheduled=("True", "Success")))
    now = log.now("web")
    assert now.state == "scheduled" and now.clusters == (("m1", 2), ("m2", 1)) and now.condition == "True"
    assert "scheduled, priority 10" in now.describe()


def test_a_binding_without_schedule_priority_has_its_priority_absent():
    log = BindingLog()
    log.add("ADDED", binding("web", 5))
    assert log.now("web").priority is None
    assert "priority absent" in log.now("web").describe()


def test_first_scheduled_orders_by_the_resource_version_that_first_carried_clusters():
    log = BindingLog()
    # Arrival order differs from the server's order: the resourceVersion decides.
    log.add("ADDED", binding("low", 9, clusters={"m1": 1}))
    log.add("ADDED", binding("high", 8, clusters={"m1": 1}))
    log.add("ADDED", binding("other", 7, clusters={"m1": 1}))
    log.add("MODIFIED", binding("high", 12, clusters={"m2": 1}))  # a later write does not move it
    log.add("ADDED", binding("waiting", 3))
    assert log.first_scheduled(["low", "high", "waiting"]) == ("high", "low")


def test_lines_show_every_version_in_arrival_order():
    log = BindingLog()
    log.add("ADDED", binding("web", 5))
    log.add("MODIFIED", binding("web", 6, priority=3, clusters={"m1": 1}, scheduled=("True", "Success")))
    lines = log.lines()
    assert len(lines) == 2
    assert "rv=5" in lines[0] and "priority=absent" in lines[0] and "Scheduled=-" in lines[0]
    assert "MODIFIED" in lines[1] and "clusters={'m1': 1}" in lines[1] and "Scheduled=True" in lines[1]
