"""What a Karmada plane is asked for, and the feature gates its components run with."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import KitError

# The gate under test, on in the controller manager (bindings get a priority) and, unless a
# scenario turns it off, in the scheduler (the priority queue). The other two keep the model
# simple and make "room for exactly one" mean one: without overcommit protection two bindings
# popped back to back both see the room a status refresh ago; without the customized resource
# models the estimate is cluster-wide sums only.
CONTROLLER_MANAGER_GATES = {"PriorityBasedScheduling": True, "CustomizedClusterResourceModeling": False}
SCHEDULER_GATES = {"PriorityBasedScheduling": True, "SchedulingOvercommitProtection": True,
                   "CustomizedClusterResourceModeling": False}


@dataclass
class KarmadaOptions:
    members: tuple[str, ...] = ("m1", "m2", "m3")
    release: str = ""  # of the host and member control planes; default: the kit's default release
    ready_timeout: float = 120.0
    name: str = ""
    scheduler_binary: Path | None = None  # a user's karmada-scheduler instead of the kit's build
    scheduler_gates: dict[str, bool] = field(default_factory=dict)  # over the kit's and every scenario's
    scheduler_verbosity: int | None = None  # karmada-scheduler's -v (4 shows each attempt)
    failure_logs: Path | None = None  # where a failed start keeps its logs (ClusterOptions.failure_logs)


def gate_flag(gates: dict[str, bool]) -> str:
    return "--feature-gates=" + ",".join(f"{k}={str(v).lower()}" for k, v in sorted(gates.items()))


def parse_gates(text: str) -> dict[str, bool]:
    """``A=true,B=false`` as karmada-scheduler's --feature-gates takes it; which gates exist is its to say."""
    gates = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        name, eq, value = item.partition("=")
        if not eq or not name or value.lower() not in ("true", "false"):
            raise KitError(f"{item!r}: expected GATE=true or GATE=false")
        gates[name] = value.lower() == "true"
    return gates


def scheduler_gates(scenario_gates: dict[str, bool], options: KarmadaOptions) -> dict[str, bool]:
    """The scheduler's gates for a scenario: the kit's, the scenario's over them, the run's over both."""
    return {**SCHEDULER_GATES, **scenario_gates, **options.scheduler_gates}
