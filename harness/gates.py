"""Feature gates and API versions a cluster starts with: what a user or a scenario asks for, and
what a release's binaries offer.

Which gates a release has, their stage and default, is read from the binaries the kit built
(each component's ``--help`` lists its settable gates), not from a table kept here: a table
would drift from the code it describes. Gates are given for every Kubernetes component at once
(``Gate=true``) or for one (``kube-scheduler:Gate=false``); the later of two settings wins.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from harness.errors import KitError

# The components a gate may be given to, as kwokctl names them (kind's kubelet included).
COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet")
_GATE = re.compile(r"^(?:(?P<component>[a-z-]+):)?(?P<gate>[A-Za-z0-9]+)=(?P<value>true|false)$")
_API = re.compile(r"^[a-z0-9.-]+/v\d+(?:(?:alpha|beta)\d+)?(?:=(?:true|false))?$|^api/(?:all|ga|beta|alpha)=(?:true|false)$")
_HELP_LINE = re.compile(r"kube:(?P<gate>\w+)=true\|false \((?P<stage>[A-Z]+) - default=(?P<default>true|false)\)")


# API versions a gate's components cannot work without, per release: the scheduler with
# GenericWorkload on watches Workloads and PodGroups and waits for them forever when the API
# server does not serve them (nothing is scheduled). The version moved each release
# (docs/research/feature-gates.md section 3: pkg/registry/scheduling/rest/storage_scheduling.go
# and the scheduler's informers in eventhandlers.go), so a scenario says the gate and the kit adds
# the release's --runtime-config entry.
SERVES: dict[str, dict[str, str]] = {
    "GenericWorkload": {"1.35": "scheduling.k8s.io/v1alpha1", "1.36": "scheduling.k8s.io/v1alpha2",
                        "1.37": "scheduling.k8s.io/v1beta1", "1.38": "scheduling.k8s.io/v1beta1"},
}

# Gates a release removed because another took over what they switched: from 1.37 the gang
# plugin and pod-group preemption are built when GenericWorkload is on (feature-gates.md section
# 3: default_plugins.go applyGangScheduling; DefaultPreemption New). A scenario written with the
# 1.36 names then runs on 1.37 as intended; naming the gate there would fail ("unrecognized
# feature gate"). The gate is dropped only where what took it over is set the same way.
FOLDED: dict[str, dict[str, str]] = {
    "1.37": {"GangScheduling": "GenericWorkload", "WorkloadAwarePreemption": "GenericWorkload"},
    "1.38": {"GangScheduling": "GenericWorkload", "WorkloadAwarePreemption": "GenericWorkload"},
}


class Unavailable(KitError):
    """A gate the release's binaries do not offer: what needs it cannot run there."""


@dataclass(frozen=True)
class Gate:
    name: str
    stage: str  # ALPHA, BETA, ... as the binary's help says
    default: bool


@dataclass(frozen=True)
class Settings:
    """Gates (component, or "" for every component; gate; value), in the order given, and the
    API server's --runtime-config entries."""

    gates: tuple[tuple[str, str, bool], ...] = ()
    runtime_config: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.gates or self.runtime_config)

    def merged(self, other: Settings) -> Settings:
        """These settings, then ``other``'s over them."""
        return Settings(self.gates + other.gates, tuple(dict.fromkeys(self.runtime_config + other.runtime_config)))

    def for_component(self, component: str) -> dict[str, bool]:
        out: dict[str, bool] = {}
        for comp, gate, value in self.gates:
            if comp in ("", component):
                out[gate] = value
        return out

    def names(self) -> set[str]:
        return {gate for _, gate, _ in self.gates}

    def flags(self) -> dict[str, dict[str, str]]:
        """Each component's extra flags (kwokctl's componentsPatches: flag name without dashes -> value)."""
        out: dict[str, dict[str, str]] = {}
        for component in COMPONENTS[:3]:
            gates = self.for_component(component)
            if gates:
                out[component] = {"feature-gates": ",".join(f"{g}={str(v).lower()}" for g, v in sorted(gates.items()))}
        if self.runtime_config:
            out.setdefault("kube-apiserver", {})["runtime-config"] = ",".join(self.runtime_config)
        return out

    def at(self, release: str) -> Settings:
        """These settings as ``release`` takes them: gates it folded into another (``FOLDED``) left out
        where that one is set alike, and the API versions the gates need there added (``SERVES``)."""
        folded = FOLDED.get(release, {})
        kept = tuple((c, g, v) for c, g, v in self.gates
                     if g not in folded or self.for_component(c or "kube-scheduler").get(folded[g]) != v)
        settings = Settings(kept, self.runtime_config)
        on = {gate for gate, value in settings.for_component("kube-apiserver").items() if value}
        needed = tuple(SERVES[g][release] for g in sorted(on) if release in SERVES.get(g, {}))
        return Settings(kept, tuple(dict.fromkeys(self.runtime_config + needed)))

    def describe(self) -> str:
        """One line for run headers and failure reports ("" when nothing is set)."""
        bits = [f"{c + ':' if c else ''}{g}={str(v).lower()}" for c, g, v in self.gates]
        if self.runtime_config:
            bits.append("runtime-config " + ",".join(self.runtime_config))
        return ", ".join(bits)


def parse(gates: str = "", runtime_config: str = "") -> Settings:
    """``Gate=true,kube-scheduler:Other=false`` and ``group/version[=true],...``; ValueError naming
    the entry that is wrong."""
    out = []
    for entry in filter(None, (e.strip() for e in gates.split(","))):
        m = _GATE.match(entry)
        if not m:
            raise ValueError(f"{entry!r}: write Gate=true|false, or component:Gate=true|false")
        component = m.group("component") or ""
        if component and component not in COMPONENTS:
            raise ValueError(f"{entry!r}: no component {component!r} (choose from {', '.join(COMPONENTS)})")
        out.append((component, m.group("gate"), m.group("value") == "true"))
    apis = []
    for entry in filter(None, (e.strip() for e in runtime_config.split(","))):
        if not _API.match(entry):
            raise ValueError(f"{entry!r}: write group/version, group/version=false or api/alpha=true")
        apis.append(entry)
    return Settings(tuple(out), tuple(apis))


@lru_cache(maxsize=None)
def offered(binary: Path) -> dict[str, Gate]:
    """The gates a Kubernetes binary lets one set, from its own --help."""
    try:
        done = subprocess.run([str(binary), "--help"], capture_output=True, text=True, timeout=60)
    except OSError as e:
        raise KitError(f"cannot ask {binary} for its feature gates: {e}") from None
    found = {m.group("gate"): Gate(m.group("gate"), m.group("stage"), m.group("default") == "true")
             for m in _HELP_LINE.finditer(done.stdout + done.stderr)}
    if not found:
        raise KitError(f"{binary} --help lists no feature gates: is it a Kubernetes component?")
    return found


def missing(settings: Settings, binaries: dict[str, Path]) -> list[str]:
    """The gates ``settings`` names that a component it goes to does not offer, as readable
    phrases ("GangScheduling (kube-scheduler)"); ``binaries``: component -> its binary."""
    lacking: dict[str, list[str]] = {}
    for component, gate, _ in settings.gates:
        for c in ([component] if component else [c for c in COMPONENTS if c in binaries]):
            if c in binaries and gate not in offered(binaries[c]) and c not in lacking.get(gate, []):
                lacking.setdefault(gate, []).append(c)
    return [f"{gate} ({', '.join(cs)})" for gate, cs in lacking.items()]


__all__ = ["COMPONENTS", "FOLDED", "SERVES", "Gate", "Settings", "Unavailable", "parse", "offered", "missing"]
