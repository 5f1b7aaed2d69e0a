"""A pure-Python model of Karmada's binding priority (Karmada v1.18.2).

A PropagationPolicy may name a PriorityClass in spec.schedulePriority; the
detector in karmada-controller-manager copies that class's value onto the
ResourceBinding it builds, and karmada-scheduler's queue pops bindings by it.
One module per concept:

- objects      classes, apps (a Deployment with its own policy), members, bindings
- priority     the detector: what a binding's priority becomes, and when it is rebuilt
- policy       which (Cluster)PropagationPolicy claims a template, and policy preemption
- queue        the order karmada-scheduler tries bindings in: activeQ push and pop
- backoff      how long a failed binding waits in backoffQ, and the order waiting ones leave
- scheduling   one scheduling attempt: Divided replicas, Aggregated, against member room
- plan         a scenario as the model reads it: members, classes, steps
- world        the world between steps, and how the detector and karmada-scheduler change it
- predict      a scenario's steps chained into expectations, with reasons

docs/research/karmada-binding-priority.md holds the facts and their code pointers.
"""
