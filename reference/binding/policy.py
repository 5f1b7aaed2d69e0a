"""Policy preemption: which (Cluster)PropagationPolicy claims a resource template, and when another takes it.

Upstream (v1.18.2): pkg/detector/policy.go (propagateResource), compare.go
(getHighestPriority*), preemption.go, detector.go (OnPropagationPolicyUpdate,
HandlePropagationPolicyCreationOrUpdate, ReconcilePropagationPolicy and their
cluster twins, handlePolicyDeletion), claim.go, pkg/util/selector.go.

This is the policies' own spec.priority, not a PriorityClass: it decides which
policy's placement (and schedulePriority) a template's binding follows, before
karmada-scheduler is involved. A template is claimed once and then stays with its
claimant; a newer or better policy takes it only by preemption, which needs the
PropagationPolicyPreemption gate (alpha, off by default; Karmada's e2e runs with
every alpha gate on) and spec.preemption Always on the policy that takes.

The detector's queues run asynchronously; the model runs each step's work to the
end before the next step begins, as if each change were seen once the last one had
settled. Upstream need not: a template reconciled between two policies created back
to back is claimed by the first, not the better, and keeps it unless the second may
preempt. The model does not follow those races.
Not modelled: a policy's selectors changing (cleanPPUnmatchedRBs), dependent
overrides, lazy activation, and MultiClusterService's claim.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

PP = "PropagationPolicy"
CPP = "ClusterPropagationPolicy"

# util.ImplicitPriority: how precisely a selector names a template; more precise wins a tie.
MISMATCH, MATCH_ALL, MATCH_LABELS, MATCH_NAME = 0, 1, 2, 3

PREEMPT_SUCCEED = "PreemptPolicySucceed"
APPLY_SUCCEED = "ApplyPolicySucceed"


@dataclass(frozen=True)
class Template:
    """A namespaced resource template (a Deployment): what a policy's selectors match."""

    namespace: str
    name: str
    labels: tuple[tuple[str, str], ...] = ()
    kind: str = "apps/v1/Deployment"

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


@dataclass(frozen=True)
class Selector:
    """A resourceSelector. ``match_labels`` None: no labelSelector at all (not an empty one)."""

    kind: str = "apps/v1/Deployment"
    namespace: str = ""
    name: str = ""
    match_labels: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True)
class Policy:
    kind: str  # PP or CPP
    name: str
    selectors: tuple[Selector, ...]
    namespace: str = ""  # a PP's own namespace; "" for a CPP
    priority: int | None = None  # spec.priority; None when unset
    preemption: bool = False  # spec.preemption is Always (the default is Never)
    clusters: tuple[str, ...] = ()  # placement.clusterAffinity.clusterNames
    class_name: str | None = None  # spec.schedulePriority.priorityClassName

    @property
    def ref(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)

    @property
    def explicit(self) -> int:
        # ExplicitPriority: an unset priority counts as 0 when policies are compared.
        return 0 if self.priority is None else self.priority

    def describe(self) -> str:
        return f"{self.kind} {self.namespace + '/' if self.namespace else ''}{self.name}"


def _selector_namespace(policy: Policy, s: Selector) -> str:
    # The webhook defaults a PropagationPolicy's selector namespace to the policy's own.
    return s.namespace or (policy.namespace if policy.kind == PP else "")


def selector_match(t: Template, s: Selector, namespace: str = "") -> int:
    """ResourceSelectorPriority: a name decides alone; without one a labelSelector; without either, all."""
    if s.kind != t.kind or (namespace and namespace != t.namespace):
        return MISMATCH
    if s.name:
        return MATCH_NAME if s.name == t.name else MISMATCH
    if s.match_labels is None:
        return MATCH_ALL
    return MATCH_LABELS if set(s.match_labels) <= set(t.labels) else MISMATCH


def implicit(t: Template, p: Policy) -> int:
    """The best of the policy's selectors; a PropagationPolicy sees only its own namespace."""
    if p.kind == PP and p.namespace != t.namespace:
        return MISMATCH
    return max((selector_match(t, s, _selector_namespace(p, s)) for s in p.selectors), default=MISMATCH)


def highest(t: Template, policies: tuple[Policy, ...]) -> Policy | None:
    """getHighestPriority(Cluster)PropagationPolicy: explicit priority, then precision, then the lower name."""
    matched = [p for p in policies if implicit(t, p) > MISMATCH]
    if not matched:
        return None
    best = max(p.explicit for p in matched)
    matched = [p for p in matched if p.explicit == best]
    most = max(implicit(t, p) for p in matched)
    return min((p for p in matched if implicit(t, p) == most), key=lambda p: p.name)


def match(t: Template, policies: tuple[Policy, ...]) -> Policy | None:
    """What an unclaimed template is claimed by: any matching PropagationPolicy before any cluster one.

    A namespaced policy wins whatever the priorities: cluster policies are consulted only
    when no PropagationPolicy of the template's namespace matches.
    """
    return (highest(t, tuple(p for p in policies if p.kind == PP))
            or highest(t, tuple(p for p in policies if p.kind == CPP)))


def preemption_enabled(p: Policy, gate: bool) -> bool:
    """preemptionEnabled: the policy asks for it (Always) and the gate is on."""
    return p.preemption and gate


def may_preempt(preemptor: Policy, claimant: Policy) -> bool:
    """Whether an enabled preemptor takes a template from its claimant.

    PropagationPolicy over PropagationPolicy, and ClusterPropagationPolicy over
    ClusterPropagationPolicy: only a strictly higher priority (a tie keeps the claimant).
    A PropagationPolicy takes from any ClusterPropagationPolicy whatever the
    priorities; a ClusterPropagationPolicy never takes from a PropagationPolicy.
    """
    if preemptor.ref == claimant.ref:
        return False
    if preemptor.kind == PP and claimant.kind == CPP:
        return True
    if preemptor.kind != claimant.kind:
        return False
    return preemptor.explicit > claimant.explicit


def named_templates(p: Policy, templates: tuple[Template, ...]) -> tuple[Template, ...]:
    """The templates a preemptor looks at: those a selector names, fetched by name.

    A selector without a name fetches nothing (the lookup by an empty name fails), so a
    policy that selects by labels or kind alone preempts nothing, however high its priority.
    """
    out = []
    for s in p.selectors:
        ns = _selector_namespace(p, s)
        out += [t for t in templates if s.name and t.name == s.name and t.kind == s.kind and t.namespace == ns]
    return tuple(dict.fromkeys(out))


def requeued_on_lowering(old: Policy, new: Policy, policies: tuple[Policy, ...]) -> tuple[Policy, ...]:
    """HandleDeprioritized(Cluster)PropagationPolicy: who gets a chance to preempt when a priority drops.

    Only policies of the same kind (and, for PropagationPolicies, the same namespace)
    whose priority is set, whose preemption is Always and whose priority lies strictly
    between the new and the old value, highest first. One at the old value or above is
    not requeued: it could not preempt the old priority and is not asked again now.
    """
    out = [p for p in policies
           if p.kind == new.kind and (p.kind == CPP or p.namespace == new.namespace)
           and p.priority is not None and p.preemption and new.explicit < p.explicit < old.explicit]
    return tuple(sorted(out, key=lambda p: -p.explicit))


@dataclass(frozen=True)
class PolicyWorld:
    """The detector's view: templates, policies, and which policy claims each template."""

    gate: bool = False  # PropagationPolicyPreemption on karmada-controller-manager
    templates: tuple[Template, ...] = ()
    policies: tuple[Policy, ...] = ()
    claims: tuple[tuple[str, tuple[str, str, str]], ...] = ()  # (template key, policy ref)
    events: tuple[tuple[str, str, str], ...] = ()  # (reason, template key, message)

    def policy(self, ref: tuple[str, str, str]) -> Policy | None:
        return next((p for p in self.policies if p.ref == ref), None)

    def claimant(self, t: Template) -> Policy | None:
        ref = dict(self.claims).get(t.key)
        return None if ref is None else self.policy(ref)

    def propagated_to(self, t: Template) -> tuple[str, ...]:
        """The clusters the template's binding is placed by: its claimant's affinity."""
        p = self.claimant(t)
        return p.clusters if p else ()

    def _claim(self, t: Template, p: Policy | None) -> PolicyWorld:
        rest = tuple(c for c in self.claims if c[0] != t.key)
        return replace(self, claims=rest if p is None else rest + ((t.key, p.ref),))

    def _event(self, reason: str, t: Template, message: str) -> PolicyWorld:
        return replace(self, events=self.events + ((reason, t.key, message),))


def reconcile_template(w: PolicyWorld, t: Template) -> PolicyWorld:
    """propagateResource: a claimed template follows its claimant; an unclaimed one is matched."""
    claimant = w.claimant(t)
    if claimant is None:
        # A claim naming a policy that is gone is cleaned up first, then the template matches afresh.
        claimant = match(t, w.policies)
        if claimant is None:
            return w._claim(t, None)  # waits for a policy to come
        w = w._claim(t, claimant)
    return w._event(APPLY_SUCCEED, t, f"binding follows {claimant.describe()}")


def _preempt(w: PolicyWorld, p: Policy, t: Template) -> PolicyWorld:
    claimant = w.claimant(t)
    if claimant is None or not may_preempt(p, claimant):
        return w
    w = w._claim(t, p)._event(PREEMPT_SUCCEED, t, f"{p.describe()} preempted {claimant.describe()}")
    # The new claim is a template update: the template is reconciled and its binding rebuilt.
    return reconcile_template(w, t)


def reconcile_policy(w: PolicyWorld, p: Policy) -> PolicyWorld:
    """Handle(Cluster)PropagationPolicyCreationOrUpdate: waiting templates it matches, then preemption."""
    for t in w.templates:
        if w.claimant(t) is None and implicit(t, p) > MISMATCH:
            w = reconcile_template(w, t)
    if preemption_enabled(p, w.gate):
        for t in named_templates(p, w.templates):
            w = _preempt(w, p, t)
    return w


def create_template(w: PolicyWorld, t: Template) -> PolicyWorld:
    return reconcile_template(replace(w, templates=w.templates + (t,)), t)


def create_policy(w: PolicyWorld, p: Policy) -> PolicyWorld:
    return reconcile_policy(replace(w, policies=w.policies + (p,)), p)


def set_priority(w: PolicyWorld, ref: tuple[str, str, str], priority: int | None) -> PolicyWorld:
    """A patch of spec.priority: the policy is reconciled; a drop also requeues those who may now preempt."""
    old = w.policy(ref)
    if old is None or old.priority == priority:
        return w  # no generation change: the update event is dropped
    new = replace(old, priority=priority)
    w = replace(w, policies=tuple(new if p.ref == ref else p for p in w.policies))
    w = reconcile_policy(w, new)
    if w.gate and new.explicit < old.explicit:
        for p in requeued_on_lowering(old, new, w.policies):
            w = reconcile_policy(w, p)
    return w


def delete_policy(w: PolicyWorld, ref: tuple[str, str, str]) -> PolicyWorld:
    """handlePolicyDeletion: the policy's claims are removed and each template it held matches afresh.

    The binding itself stays; it is rebuilt by whichever policy claims the template next.
    """
    held = [t for t in w.templates if dict(w.claims).get(t.key) == ref]
    w = replace(w, policies=tuple(p for p in w.policies if p.ref != ref))
    for t in held:
        w = reconcile_template(w._claim(t, None), t)
    return w


__all__ = [
    "APPLY_SUCCEED", "CPP", "MATCH_ALL", "MATCH_LABELS", "MATCH_NAME", "MISMATCH", "PP", "PREEMPT_SUCCEED",
    "Policy", "PolicyWorld", "Selector", "Template", "create_policy", "create_template", "delete_policy",
    "highest", "implicit", "match", "may_preempt", "named_templates", "preemption_enabled", "reconcile_policy",
    "reconcile_template", "requeued_on_lowering", "selector_match", "set_priority",
]
