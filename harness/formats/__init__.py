"""The scenario file formats: common.py (the one reader, errors and id rule every format uses),
pods.py (scenarios/*.yaml), bindings.py (scenarios/karmada/*.yaml), catalogue.py (either kind)."""
