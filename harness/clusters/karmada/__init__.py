"""The Karmada adapter: a local Karmada control plane (``plane.KarmadaPlane``), its options and
feature gates (``options``), its processes (``components``), what it installs on its host
(``install``) and its member clusters (``members``). Callers import from here.
"""

from harness.clusters.karmada.components import COMPONENTS, PORT_NAMES, Components
from harness.clusters.karmada.install import KARMADA_NAMESPACES, KWOK_ADMIN, module_dir
from harness.clusters.karmada.options import (CONTROLLER_MANAGER_GATES, SCHEDULER_GATES, KarmadaOptions, gate_flag,
                                              parse_gates)
from harness.clusters.karmada.plane import KarmadaPlane

__all__ = ["COMPONENTS", "CONTROLLER_MANAGER_GATES", "KARMADA_NAMESPACES", "KWOK_ADMIN", "PORT_NAMES",
           "SCHEDULER_GATES", "Components", "KarmadaOptions", "KarmadaPlane", "gate_flag", "module_dir", "parse_gates"]
