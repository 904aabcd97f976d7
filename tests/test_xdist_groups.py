"""The suite's xdist groups reach the scheduler: tests/conftest.py writes a test's group into its id
where pytest-xdist's own hook cannot (pytest 9.2 keeps the id where xdist 3.8 does not write), and a
lost group silently spreads a module's tests, and its fixtures, over every worker."""

from __future__ import annotations

import pytest

GROUP = "xdist-groups-check"


@pytest.mark.xdist_group(GROUP)
def test_a_grouped_test_carries_its_group_in_its_id(request: pytest.FixtureRequest) -> None:
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("only under `-n N --dist loadgroup` (the suite's default)")
    assert request.node.nodeid.endswith(f"@{GROUP}"), request.node.nodeid


def test_a_test_without_a_module_fixture_is_handed_out_on_its_own(request: pytest.FixtureRequest) -> None:
    """Only module- and class-scoped fixtures group a module's tests: an autouse one in conftest.py
    would group every module of the suite, and a large module would then run on one worker."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("only under `-n N --dist loadgroup` (the suite's default)")
    assert "@" not in request.node.nodeid, request.node.nodeid
