"""Process hygiene, no Kubernetes: the cache folder, signals and reaping (lifecycle, watchdog),
ports, probes of local components, and the kit's progress lines (console)."""
