"""A pure-Python model of Kubernetes pod priority and preemption semantics.

It predicts what kube-scheduler (DefaultPreemption) or the scheduler-plugins
PreemptionToleration build will do, as a set of allowed outcomes with
reasons. One module per concept, named as upstream names it:

- objects      the cluster objects (frozen dataclasses)
- admission    PriorityClass validation and a new pod's priority
- queue        the order pending pods are tried in, and retry windows
- filter       which nodes fit, and which are preemption candidates
- toleration   the PreemptionToleration policy (exemption of victims)
- preemption   eligibility, victims per node, the prediction
- victim       a victim as the scheduler weighs it: a pod, or a pod group disrupted whole
- candidates   the node choice among preemption candidates
"""
