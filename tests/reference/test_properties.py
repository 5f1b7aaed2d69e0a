"""Invariants of the preemption model, over generated clusters."""

from datetime import timedelta

from hypothesis import given, settings, strategies as st

from reference import filter as flt
from reference.preemption import predict
from reference.toleration import exempted_from_preemption

from tests.builders import SLOT, T0, node, pc, pod, state

CLASSES = [pc("c0", 0), pc("c1", 10, mpp=50, ts=-1), pc("c2", 20, mpp=100, ts=30), pc("c3", 30), pc("c4", 40, mpp=41)]


@st.composite
def clusters(draw, never: bool | None = None):
    n_nodes = draw(st.integers(1, 4))
    nodes = [node(f"n{i}", draw(st.integers(1, 4))) for i in range(n_nodes)]
    pods = []
    for n in nodes:
        free = dict(n.allocatable)[SLOT]
        while free > 0 and draw(st.booleans()):
            size = draw(st.integers(1, free))
            cls = draw(st.sampled_from(CLASSES))
            pods.append(pod(f"p{len(pods)}", cls.value, cls=cls.name, on=n.name, slots=size,
                            age=draw(st.integers(0, 100))))
            free -= size
    prio = draw(st.sampled_from([5, 15, 25, 35, 45, 100]))
    is_never = draw(st.booleans()) if never is None else never
    preemptor = pod("preemptor", prio, slots=draw(st.integers(1, 4)), never=is_never)
    return state(CLASSES, nodes, pods + [preemptor])


BUILDS = st.sampled_from(["upstream", "plugins"])


@settings(max_examples=300, deadline=None)
@given(clusters(), BUILDS)
def test_every_victim_has_lower_priority_than_the_preemptor(s, build):
    pr = predict(s, "default/preemptor", build, T0)
    for key in pr.possible_victims:
        assert s.pod_keyed(key).priority < s.pod_keyed("default/preemptor").priority


@settings(max_examples=200, deadline=None)
@given(clusters(never=True), BUILDS)
def test_a_never_pod_never_preempts(s, build):
    pr = predict(s, "default/preemptor", build, T0)
    assert pr.outcome in ("schedule", "unschedulable") and not pr.possible_victims


@settings(max_examples=300, deadline=None)
@given(clusters(never=False))
def test_an_exempted_pod_is_never_a_victim(s):
    preemptor = s.pod_keyed("default/preemptor")
    pr = predict(s, "default/preemptor", "plugins", T0)
    for key in pr.possible_victims:
        assert not exempted_from_preemption(s.pod_keyed(key), preemptor, s, T0)


@settings(max_examples=300, deadline=None)
@given(clusters(never=False), BUILDS)
def test_victims_are_minimal_giving_any_one_back_breaks_the_fit(s, build):
    pr = predict(s, "default/preemptor", build, T0)
    preemptor = s.pod_keyed("default/preemptor")
    for node_name, victims in pr.victims.items():
        n = s.node_named(node_name)
        after = s.without_pods(victims)
        assert flt.fits(after, preemptor, n)
        for v in victims:
            back = after.with_pod(s.pod_keyed(v))
            assert not flt.fits(back, preemptor, n)


@settings(max_examples=100, deadline=None)
@given(clusters(), BUILDS)
def test_predictions_are_deterministic(s, build):
    assert predict(s, "default/preemptor", build, T0) == predict(s, "default/preemptor", build, T0)


@settings(max_examples=100, deadline=None)
@given(clusters(never=False), st.integers(0, 200))
def test_time_only_ever_removes_exemptions(s, later):
    # A toleration only ends: whoever may be preempted now may be later too.
    now, then = T0, T0 + timedelta(seconds=later)
    pre = predict(s, "default/preemptor", "plugins", now)
    post = predict(s, "default/preemptor", "plugins", then)
    exempt_now = {k for v in pre.per_node for k, _ in v.exempted}
    exempt_then = {k for v in post.per_node for k, _ in v.exempted}
    assert exempt_then <= exempt_now
