"""Peer cases: karmada v1.18.2 test/e2e/suites/base/preemption_test.go, the five ``It`` blocks, stepped
through the binding model's detector (reference.binding.policy: which (Cluster)PropagationPolicy claims
a template, and when another preempts it). Each test names its upstream case and is the ``test:`` of
that case in peers/upstream-cases.yaml; the facts (which policies, their kinds, priorities, preemption
switches and clusters, the order they come in, where the deployment must show up, the event) are the
upstream cases', written anew.

How the cases map onto the model:

* Karmada's e2e runs karmada-controller-manager with every alpha gate on, so PropagationPolicyPreemption
  is on (``gate=True``).
* Every policy selects the one deployment by name and places it on one member: the policy upstream
  lets be preempted on the first member ("member1"), the preempting one on the second ("member2").
* Upstream waits for the deployment to appear on a member; here the binding follows its claimant's
  affinity (``propagated_to``). The PreemptPolicySucceed event upstream waits for is the model's event.
* The kit's Karmada scenario format carries no policies, so these are model tests, not scenarios.
"""

from __future__ import annotations

from reference.binding.policy import (CPP, PP, PREEMPT_SUCCEED, Policy, PolicyWorld, Selector, Template,
                                      create_policy, create_template, delete_policy, set_priority)

NS = "karmadatest"
DEPLOY = Template(NS, "deploy")
PREEMPTED, PREEMPTING = ("member1",), ("member2",)


def pp(name: str, clusters, priority=None, preemption=False) -> Policy:
    return Policy(PP, name, (Selector(namespace=NS, name=DEPLOY.name),), namespace=NS, priority=priority,
                  preemption=preemption, clusters=clusters)


def cpp(name: str, clusters, priority=None, preemption=False) -> Policy:
    return Policy(CPP, name, (Selector(namespace=NS, name=DEPLOY.name),), priority=priority,
                  preemption=preemption, clusters=clusters)


def preempted(w: PolicyWorld, by: Policy, of: Policy) -> bool:
    return any(r == PREEMPT_SUCCEED and k == DEPLOY.key and by.describe() in m and m.endswith(of.describe())
               for r, k, m in w.events)


def start(*policies: Policy) -> PolicyWorld:
    """The deployment, then the policies in order (each one's BeforeEach)."""
    w = create_template(PolicyWorld(gate=True), DEPLOY)
    for p in policies:
        w = create_policy(w, p)
    return w


def test_high_pp_preempts_low_pp():
    """It "Propagate the deployment with the low-priority PropagationPolicy and then create the high-priority
    PropagationPolicy to preempt it": low (5, preemption off) claims the deployment; high (10, Always) is
    created and takes it, with a PreemptPolicySucceed event; high is deleted and low claims it again."""
    high, low = pp("deploy-high-pp", PREEMPTING, 10, True), pp("deploy-low-pp", PREEMPTED, 5)
    w = start(low)
    assert w.propagated_to(DEPLOY) == PREEMPTED
    w = create_policy(w, high)
    assert w.propagated_to(DEPLOY) == PREEMPTING and w.claimant(DEPLOY) == high
    assert preempted(w, high, low)
    w = delete_policy(w, high.ref)
    assert w.propagated_to(DEPLOY) == PREEMPTED and w.claimant(DEPLOY) == low


def test_pp_preempts_cpp():
    """It "Propagate the deployment with the ClusterPropagationPolicy and then create the PropagationPolicy
    to preempt it": neither sets a priority; the namespaced policy (Always) takes the deployment from the
    cluster one anyway; deleting it gives the deployment back to the cluster policy."""
    namespaced, cluster = pp("deploy", PREEMPTING, preemption=True), cpp("deploy", PREEMPTED)
    w = start(cluster)
    assert w.propagated_to(DEPLOY) == PREEMPTED
    w = create_policy(w, namespaced)
    assert w.propagated_to(DEPLOY) == PREEMPTING and w.claimant(DEPLOY) == namespaced
    assert preempted(w, namespaced, cluster)
    w = delete_policy(w, namespaced.ref)
    assert w.propagated_to(DEPLOY) == PREEMPTED and w.claimant(DEPLOY) == cluster


def test_lowered_pp_is_preempted():
    """It "Propagate the deployment with the high-priority PropagationPolicy and then reduce it's priority to
    be preempted by the low-priority PropagationPolicy": high (10) and low (5), both Always, created in that
    order; high claims it. High's priority is patched to 4: low, now between 4 and 10, is requeued and
    preempts."""
    high, low = pp("deploy-high-pp", PREEMPTED, 10, True), pp("deploy-low-pp", PREEMPTING, 5, True)
    w = start(high, low)
    assert w.propagated_to(DEPLOY) == PREEMPTED and w.claimant(DEPLOY) == high
    w = set_priority(w, high.ref, 4)
    assert w.propagated_to(DEPLOY) == PREEMPTING and w.claimant(DEPLOY) == low
    assert preempted(w, low, w.policy(high.ref))


def test_high_cpp_preempts_low_cpp():
    """It "Propagate the deployment with the low-priority ClusterPropagationPolicy and then create the
    high-priority ClusterPropagationPolicy to preempt it": as the first case, with cluster policies."""
    high, low = cpp("deploy-high-cpp", PREEMPTING, 10, True), cpp("deploy-low-cpp", PREEMPTED, 5)
    w = start(low)
    assert w.propagated_to(DEPLOY) == PREEMPTED
    w = create_policy(w, high)
    assert w.propagated_to(DEPLOY) == PREEMPTING and preempted(w, high, low)
    w = delete_policy(w, high.ref)
    assert w.propagated_to(DEPLOY) == PREEMPTED and w.claimant(DEPLOY) == low


def test_lowered_cpp_is_preempted():
    """It "Propagate the deployment with the high-priority ClusterPropagationPolicy and then reduce it's
    priority to be preempted by the low-priority ClusterPropagationPolicy": as the third case, with
    cluster policies."""
    high, low = cpp("deploy-high-cpp", PREEMPTED, 10, True), cpp("deploy-low-cpp", PREEMPTING, 5, True)
    w = start(high, low)
    assert w.propagated_to(DEPLOY) == PREEMPTED
    w = set_priority(w, high.ref, 4)
    assert w.propagated_to(DEPLOY) == PREEMPTING and preempted(w, low, w.policy(high.ref))
