"""The nightly workflow (.github/workflows/nightly.yml): valid against GitHub's workflow schema, and shaped so that
every candidate and shard runs and a failure anywhere fails the night."""
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(os.environ.get("PARITY_REPO", Path(__file__).resolve().parents[2]))
WORKFLOW = REPO / ".github" / "workflows" / "nightly.yml"


@pytest.fixture(scope="module")
def workflow():
    # ruamel.yaml comes with check-jsonschema; as YAML 1.2 it keeps the key `on` a string (PyYAML makes it True).
    yaml = pytest.importorskip("ruamel.yaml", reason="ruamel.yaml is not installed (requirements/test.in: check-jsonschema)")
    return yaml.YAML(typ="safe", pure=True).load(WORKFLOW.read_text())


def steps(job):
    return job.get("steps", [])


def test_the_workflow_matches_githubs_workflow_schema():
    if importlib.util.find_spec("check_jsonschema") is None:
        print("check-jsonschema is not importable (scripts/setup.sh installs it from requirements/lock.txt)")
        pytest.skip("check-jsonschema is not importable")
    proc = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(WORKFLOW)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_it_runs_nightly_and_on_demand(workflow):
    assert workflow["on"]["schedule"][0]["cron"]
    assert "workflow_dispatch" in workflow["on"]


def test_a_matrix_of_candidates_and_shards_that_never_cancels_itself(workflow):
    strategy = workflow["jobs"]["shard"]["strategy"]
    assert strategy["fail-fast"] is False
    assert {"candidate", "shard"} <= set(strategy["matrix"])
    shard_steps = [s.get("run", "") for s in steps(workflow["jobs"]["shard"])]
    assert "scripts/setup.sh" in shard_steps and "scripts/build.sh" in shard_steps, "the README's set-up"
    assert any(s.startswith("scripts/nightly.sh shard") for s in shard_steps)
    uploads = [s for s in steps(workflow["jobs"]["shard"]) if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert uploads and all(s.get("if") == "always()" for s in uploads), "a failing shard still leaves its artifacts"


def test_the_final_job_always_merges_and_fails_on_a_failed_shard_or_merge(workflow):
    merge = workflow["jobs"]["merge"]
    assert "shard" in merge["needs"] and merge["if"].startswith("always()")
    scripts = "\n".join(s.get("run", "") for s in steps(merge))
    assert "scripts/nightly.sh merge" in scripts and "GITHUB_STEP_SUMMARY" in scripts
    verdict = next(s for s in steps(merge) if s.get("name", "").startswith("Verdict"))
    assert verdict["if"] == "always()" and verdict["env"]["SHARDS_RESULT"] == "${{ needs.shard.result }}"
    assert "exit 1" in verdict["run"]


def test_no_step_hides_a_failure_and_actions_are_pinned_by_major_version(workflow):
    for name, job in workflow["jobs"].items():
        assert job.get("continue-on-error") is not True, name
        for step in steps(job):
            assert step.get("continue-on-error") is not True, (name, step)
            if "uses" in step:
                assert step["uses"].rsplit("@", 1)[1].startswith("v"), step["uses"]


def test_the_merged_junit_reports_are_published_to_the_runs_checks(workflow):
    merge = workflow["jobs"]["merge"]
    publish = [s for s in steps(merge) if s.get("uses", "").startswith("mikepenz/action-junit-report@")]
    assert len(publish) == 1 and publish[0]["if"] == "always()", "a failing night is the one to annotate"
    uploads = [s for s in steps(merge) if s.get("uses", "").startswith("actions/upload-artifact@")]
    written = [line.strip() for s in uploads for line in s["with"]["path"].splitlines() if line.strip().endswith(".xml")]
    assert written == ["${{ env.OUT }}/*/junit.xml"], "the JUnit path the merge step writes (scripts/nightly.sh merge)"
    assert publish[0]["with"]["report_paths"] == written[0]
    assert '--junit "$dir/junit.xml"' in (REPO / "scripts" / "nightly.sh").read_text()  # $dir: OUT/CANDIDATE
    assert merge["permissions"]["checks"] == "write" and merge["permissions"]["contents"] == "read"
