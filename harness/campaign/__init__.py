"""A campaign's shards as the pods of a Kubernetes Indexed Job, and their results merged.

``job``: the namespace and the Indexed Job (what each pod runs and needs, and why). ``collect``:
reading a pod's state and copying its results out of it. ``nodes``: putting the runner image
into a kind cluster's nodes (no registry) and taking it out again. ``run``: ``./kit campaign``,
which does all of it, always deletes what it created, and merges the shards with
``harness.shards.merge``.
"""
