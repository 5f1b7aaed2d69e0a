"""The detector's policy claims and policy preemption (reference.binding.policy), one rule per test."""

from reference.binding.policy import (CPP, MATCH_ALL, MATCH_LABELS, MATCH_NAME, MISMATCH, PP, Policy, PolicyWorld,
                                      Selector, Template, create_policy, create_template, match, requeued_on_lowering,
                                      selector_match, set_priority)

T = Template("ns", "web", labels=(("app", "web"),))
BY_NAME, BY_LABEL, BY_KIND = Selector(name="web"), Selector(match_labels=(("app", "web"),)), Selector()


def pp(name, sel=BY_NAME, priority=None, preemption=False, ns="ns"):
    return Policy(PP, name, (sel,), namespace=ns, priority=priority, preemption=preemption, clusters=(name,))


def cpp(name, sel=BY_NAME, priority=None, preemption=False):
    return Policy(CPP, name, (sel,), priority=priority, preemption=preemption, clusters=(name,))


def world(*policies, gate=True):
    w = create_template(PolicyWorld(gate=gate), T)
    for p in policies:
        w = create_policy(w, p)
    return w


def test_a_name_decides_alone_then_labels_then_kind():
    assert selector_match(T, BY_NAME) == MATCH_NAME
    assert selector_match(T, Selector(name="web", match_labels=(("app", "other"),))) == MATCH_NAME
    assert selector_match(T, BY_LABEL) == MATCH_LABELS and selector_match(T, BY_KIND) == MATCH_ALL
    assert selector_match(T, Selector(name="db")) == MISMATCH


def test_unclaimed_templates_take_the_highest_priority_then_the_most_precise_then_the_lower_name():
    assert match(T, (pp("a", BY_KIND, 1), pp("b", BY_NAME, 0))).name == "a"
    assert match(T, (pp("a", BY_KIND), pp("b", BY_LABEL))).name == "b"
    assert match(T, (pp("z"), pp("m"))).name == "m"


def test_any_namespaced_policy_beats_every_cluster_policy_and_other_namespaces_do_not_count():
    assert match(T, (cpp("c", priority=100), pp("p", BY_KIND, -5))).kind == PP
    assert match(T, (cpp("c"), pp("p", ns="other"))).kind == CPP


def test_a_claimed_template_stays_without_preemption():
    w = world(pp("low", priority=1), pp("high", priority=9))
    assert w.propagated_to(T) == ("low",)


def test_preemption_needs_the_gate_and_always():
    assert world(pp("low", priority=1), pp("high", priority=9, preemption=True), gate=False).propagated_to(T) == ("low",)
    assert world(pp("low", priority=1), pp("high", priority=9, preemption=True)).propagated_to(T) == ("high",)


def test_an_equal_priority_does_not_preempt():
    assert world(pp("a", priority=5), pp("b", priority=5, preemption=True)).propagated_to(T) == ("a",)


def test_a_cluster_policy_never_preempts_a_namespaced_one():
    assert world(pp("p", priority=-1), cpp("c", priority=100, preemption=True)).propagated_to(T) == ("p",)


def test_a_policy_selecting_without_a_name_preempts_nothing():
    assert world(pp("low", priority=1), pp("high", BY_LABEL, 9, True)).propagated_to(T) == ("low",)


def test_a_raised_priority_preempts_at_the_policys_own_reconcile():
    w = world(pp("a", priority=5), pp("b", priority=1, preemption=True))
    assert set_priority(w, ("PropagationPolicy", "ns", "b"), 6).propagated_to(T) == ("b",)


def test_a_lowered_priority_requeues_only_those_strictly_between_the_values():
    old, new = pp("x", priority=10), pp("x", priority=4)
    others = (pp("at-old", priority=10, preemption=True), pp("mid", priority=5, preemption=True),
              pp("mid-never", priority=6), pp("at-new", priority=4, preemption=True),
              pp("unset", preemption=True), pp("elsewhere", priority=7, preemption=True, ns="other"),
              pp("higher-mid", priority=8, preemption=True))
    assert [p.name for p in requeued_on_lowering(old, new, others)] == ["higher-mid", "mid"]


def test_a_policy_at_the_old_priority_is_not_asked_again_when_the_claimant_drops():
    w = world(pp("a", priority=10, preemption=True), pp("b", priority=10, preemption=True))
    assert set_priority(w, ("PropagationPolicy", "ns", "a"), 4).propagated_to(T) == ("a",)
