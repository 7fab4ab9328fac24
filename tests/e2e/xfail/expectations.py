"""Strict xfail per pass: expected failures are xfail, unexpected passes are xpass (a failure)."""
import parity


@parity.scenario(xfail={"gold": "raises on purpose", "candidate": "raises on purpose"})
def expected_failure(xp):
    raise ValueError("expected")


@parity.scenario(xfail={"gold": "only gold is expected to fail"})
def candidate_error_not_hidden(xp):
    raise ValueError("raises in the candidate pass too, where no failure was expected")


@parity.scenario(xfail={"candidate": "claimed broken, but it works"})
def unexpected_candidate_pass(xp):
    return xp.zeros(2)


@parity.scenario(xfail={"compare": "claimed to differ, but it does not"})
def unexpected_compare_pass(xp):
    return xp.zeros(2)


@parity.scenario
def skipped(xp):
    parity.skip("not applicable here")


@parity.scenario(rtol=0.0, params={"n": [1, 2]})
def plain(xp, n):
    return xp.full(n, 1.5)
