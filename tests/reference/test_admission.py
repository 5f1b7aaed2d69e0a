"""semantics.md section 1: PriorityClass and priority admission."""

from reference.admission import (
    Accepted,
    Rejected,
    admit_pod,
    default_class,
    validate_class_create,
    validate_class_update,
)
from reference.objects import Pod, PriorityClass

from tests.builders import pc, state


def test_user_defined_class_value_is_at_most_one_billion():
    assert isinstance(validate_class_create(state(), pc("top", 1_000_000_000)), Accepted)
    r = validate_class_create(state(), pc("over", 1_000_000_001))
    assert isinstance(r, Rejected) and r.field == "value" and "1000000000" in r.reason


def test_system_prefix_is_reserved_and_only_the_two_system_classes_exist():
    assert isinstance(validate_class_create(state(), pc("system-cluster-critical", 2_000_000_000)), Accepted)
    assert isinstance(validate_class_create(state(), pc("system-node-critical", 2_000_001_000)), Accepted)
    for bad in (pc("system-mine", 10), pc("system-node-critical", 5)):
        r = validate_class_create(state(), bad)
        assert isinstance(r, Rejected) and "reserved for system use" in r.reason


def test_value_and_preemption_policy_are_immutable_but_description_may_change():
    s = state([pc("a", 10)])
    assert isinstance(validate_class_update(s, pc("a", 11)), Rejected)
    assert validate_class_update(s, pc("a", 10, never=True)).field == "preemptionPolicy"
    changed = PriorityClass("a", 10, description="new words")
    assert isinstance(validate_class_update(s, changed), Accepted)


def test_only_one_global_default_a_second_is_rejected_on_create_and_update():
    s = state([pc("d1", 10, default=True), pc("other", 20)])
    r = validate_class_create(s, pc("d2", 5, default=True))
    assert isinstance(r, Rejected) and r.reason == "PriorityClass d1 is already marked as default. Only one default can exist"
    assert isinstance(validate_class_update(s, pc("other", 20, default=True)), Rejected)
    assert isinstance(validate_class_update(s, PriorityClass("d1", 10, global_default=True, description="x")), Accepted)


def test_raced_global_defaults_the_lowest_value_wins():
    s = state([pc("d-high", 50, default=True), pc("d-low", 7, default=True)])
    assert default_class(s).name == "d-low"
    assert admit_pod(s, Pod("p")).obj.priority == 7


def test_pod_naming_an_unknown_class_is_rejected_at_creation():
    r = admit_pod(state(), Pod("p", priority_class_name="nope"))
    assert isinstance(r, Rejected) and r.reason == "no PriorityClass with name nope was found"


def test_pod_without_class_gets_the_global_default_including_its_name():
    s = state([pc("def", 42, default=True, never=True)])
    admitted = admit_pod(s, Pod("p")).obj
    assert (admitted.priority_class_name, admitted.priority, admitted.preemption_policy) == ("def", 42, "Never")


def test_pod_without_class_and_no_default_gets_zero_and_preempt_lower_priority():
    admitted = admit_pod(state([pc("x", 5)]), Pod("p")).obj
    assert (admitted.priority, admitted.preemption_policy, admitted.priority_class_name) == (0, "PreemptLowerPriority", "")


def test_admission_copies_value_and_policy_and_rejects_a_pod_setting_other_values():
    s = state([pc("np", 100, never=True)])
    assert isinstance(admit_pod(s, Pod("p", priority_class_name="np"), requested_priority=100), Accepted)
    r = admit_pod(s, Pod("p", priority_class_name="np"), requested_priority=99)
    assert isinstance(r, Rejected) and "computed 100" in r.reason
    r = admit_pod(s, Pod("p", priority_class_name="np"), requested_policy="PreemptLowerPriority")
    assert isinstance(r, Rejected) and "computed Never" in r.reason


def test_changing_or_deleting_a_class_never_changes_existing_pods():
    s = state([pc("c", 100)])
    running = admit_pod(s, Pod("old", priority_class_name="c")).obj
    s = s.without_class("c").with_class(pc("c", 5)).with_pod(running)
    assert s.pod_keyed("default/old").priority == 100  # stamped value stays
    s = s.without_class("c")
    assert s.pod_keyed("default/old").priority == 100
    assert isinstance(admit_pod(s, Pod("new", priority_class_name="c")), Rejected)


def test_a_pod_group_with_its_own_policy_must_say_what_its_class_says():
    """With PodGroupPreemptionPolicy on (1.37), the defaulter writes PreemptLowerPriority into a
    group that leaves spec.preemptionPolicy out, and admission refuses it when its class says Never."""
    from reference.admission import admit_pod_group
    from reference.objects import PodGroup

    s = state([pc("polite", 100, never=True)])
    g = PodGroup("g", "default", priority_class_name="polite")
    refused = admit_pod_group(s, g, policy_field=True)
    assert isinstance(refused, Rejected) and refused.field == "spec.preemptionPolicy"
    assert "(PreemptLowerPriority) must not be provided" in refused.reason and "computed Never" in refused.reason
    said = admit_pod_group(s, g, policy_field=True, requested_policy="Never")
    assert isinstance(said, Accepted) and said.obj.preemption_policy == "Never"
    # Without the gate there is no such field to disagree.
    assert isinstance(admit_pod_group(s, g), Accepted)
