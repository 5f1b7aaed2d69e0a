"""Building what the kit runs: control-plane binaries from pinned Go modules, the kind node image, the campaign runner image."""
