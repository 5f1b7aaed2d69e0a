"""Seeded scheduler bugs and the kill matrix: does the suite notice each one?

The catalogue's files are ``harness.formats.mutants``; a mutant's binary is built by
``harness.build.mutants``. Here: ``matrix`` runs the conformance catalogue against each mutant
binary, as an ordinary ``--scheduler-binary`` run in a pytest process of its own (so isolation,
reports and artifacts are the suite's own); ``runs`` tallies each run from its JUnit report
(``harness.run.results``) and says each mutant's verdict; ``rules`` is the table of the rules the
mutants break.

A mutant is killed when any test fails on a difference from the model; by default a run stops at
its first failing scenario (``-x``), since one failure is the verdict. A baseline run of the
unmutated builds comes first and must be green, or the matrix is void: a flaky scenario would
fake kills.
"""
