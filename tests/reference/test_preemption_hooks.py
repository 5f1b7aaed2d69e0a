"""The evaluator's hooks (reference.preemption.EligibleVictim, MoreImportant,
reference.candidates.ScoreFunc) where the peer rows (tests/peers/test_preemption_hooks_unit.py) do
not reach: PodEligibleToPreemptOthers asks IsEligiblePod too, and predict hands each hook on."""

from datetime import timedelta

from reference.preemption import predict

from tests.builders import T0, node, pod, state


def never_the_pod_named(name):
    return lambda node, victim, preemptor: all(p.name != name for p in victim.pods)


def test_a_terminating_pod_the_hook_would_keep_does_not_hold_the_preemptor_back():
    victim = pod("v", 1, on="n1", deletion_timestamp=T0 + timedelta(seconds=30), disruption_target_by_preemption=True)
    s = state(nodes=[node("n1", 2)], pods=[victim, pod("other", 1, on="n1"), pod("p", 100, nominated_node_name="n1", slots=2)])
    assert "terminating pod" in predict(s, "default/p", "upstream", T0).reasons[0]
    pr = predict(s, "default/p", "upstream", T0, eligible_victim=never_the_pod_named("v"))
    # v may not go, so it does not count as the preemptor's own victim still terminating; and with
    # it staying the preemptor cannot fit
    assert pr.outcome == "unschedulable" and "terminating pod" not in pr.reasons[0]
    assert ("default/v", "not eligible: the plugin's IsEligiblePod says no") in pr.per_node[0].exempted


def test_predict_hands_on_the_order_and_the_node_scores():
    # n1: a (older) and b, one slot each; the preemptor needs one: by default the newer b goes
    s = state(nodes=[node("n1", 2), node("n2", 2)],
              pods=[pod("a", 1, on="n1", age=100), pod("b", 1, on="n1", age=10),
                    pod("c", 5, on="n2", slots=2, age=10), pod("p", 100)])
    assert predict(s, "default/p", "upstream", T0).victims == {"n1": ("default/b",)}
    newer_first = lambda x, y: x.start > y.start  # noqa: E731 - the newer is the more important
    assert predict(s, "default/p", "upstream", T0, more_important=newer_first).victims == {"n1": ("default/a",)}
    # a score function of its own: the more victim priority the better, so n2 wins
    most_priority = lambda v, victims: sum(p.priority for p in victims)  # noqa: E731
    assert predict(s, "default/p", "upstream", T0, score_funcs=(most_priority,)).victims == {"n2": ("default/c",)}
