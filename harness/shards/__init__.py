"""A long campaign split over machines, and the shards' results merged into one report.

``split``: the shard convention every campaign shares (``--shard i/N``, ``auto/N`` from a
Kubernetes Indexed Job's ``JOB_COMPLETION_INDEX``), deterministic parts, and the record each
shard leaves beside its results. ``merge``: those results, from every shard, into the report one
machine would print.
"""
