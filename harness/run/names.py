"""What a scenario's objects are called on the cluster: its isolation, in one small object.

Each scenario gets a namespace of its own, and every cluster-wide object it makes (nodes,
priority classes) carries the namespace as a prefix, so scenarios side by side never meet
and the kit can tell its objects from anyone else's. Reports speak the scenario's names;
``scenario_node`` and ``unprefix`` turn the cluster's back into them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Mapping

from reference.admission import SYSTEM_PREFIX

# The label on a pod scenario's nodes, which its pods select: no other scenario's pod lands there.
SCENARIO_LABEL = "priority-conformance.x-k8s.io/scenario"
NODE_NAME_LIMIT = 63  # a node's name is also its hostname label's value
CLASS_NAME_LIMIT = 253


def _shortened(scenario_id: str, limit: int) -> str:
    """The id cut to ``limit`` characters; a cut one ends with a hash of the whole id, so two ids
    that share their first ``limit`` characters never share a namespace."""
    if len(scenario_id) <= limit:
        return scenario_id
    return scenario_id[:limit - 7].rstrip("-") + "-" + hashlib.sha256(scenario_id.encode()).hexdigest()[:6]


@dataclass(frozen=True)
class Names:
    namespace: str
    prefix: str  # of every cluster-wide object the scenario makes
    nodes: Mapping[str, str] = field(default_factory=dict)  # scenario node -> cluster node, once placed

    @classmethod
    def for_pods(cls, scenario_id: str, run_id: str, copy: int = 0) -> Names:
        """``copy`` tells apart copies of one scenario run side by side (--repeat)."""
        short = _shortened(scenario_id, 40) + (f"-{copy}" if copy else "")
        return cls(f"{short}-{run_id}", f"{short}-{run_id}-")

    @classmethod
    def for_bindings(cls, scenario_id: str, run_id: str) -> Names:
        namespace = f"kb-{run_id}-" + _shortened(scenario_id, 63 - len(f"kb-{run_id}-"))
        return cls(namespace, namespace + "-")

    def with_nodes(self, nodes: Mapping[str, str]) -> Names:
        """These names once the scenario's nodes are placed (real nodes keep names of their own)."""
        return replace(self, nodes={**self.nodes, **nodes})

    def node_name(self, name: str) -> str:
        return self.nodes.get(name) or (self.prefix + name)[:NODE_NAME_LIMIT]

    def scenario_node(self, real: str) -> str:
        for name, placed in self.nodes.items():
            if placed == real:
                return name
        return real

    def class_name(self, name: str) -> str:
        # system- names are the API server's own; scenarios only try to create them, and are refused.
        if not name or name.startswith(SYSTEM_PREFIX):
            return name
        return (self.prefix + name)[:CLASS_NAME_LIMIT]

    def unprefix(self, name: str) -> str:
        return name[len(self.prefix):] if name.startswith(self.prefix) else name

    def mentions(self, line: str) -> bool:
        """Whether a log line is about this scenario (its namespace or one of its objects)."""
        return self.namespace in line or self.prefix in line
