"""The failure message's shape where upstream's own tests pin it (default_preemption_test.go
TestPostFilter, v1.35.8; framework/types.go FitError.Error)."""

from __future__ import annotations

from reference.fit_error import summary as _summary


def test_reasons_are_counted_and_sorted_as_count_reason_strings():
    # "1 x" sorts before "2 a": the count leads, as FitError.Error sorts the joined strings.
    assert _summary(["b", "b", "a", "c", "c"]) == "1 a, 2 b, 2 c"
    assert _summary(["z", "a", "a"]) == "1 z, 2 a"
