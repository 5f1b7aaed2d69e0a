"""What a pod scenario's run leaves behind: its evidence when it failed (or showed a known
fault), its timeline picture when asked. The archiver of Jepsen's split: it writes, it never
decides, and nothing it fails to write changes a verdict."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.kube import Kube
from harness.run import artifacts
from harness.run.pods import timeline
from harness.run.names import Names
from harness.run.pods.history import PodHistory
from harness.run.pods.result import Result


@dataclass(frozen=True)
class Archive:
    """Where one run's files go: ``root/label/scenario[-copy]``, and the scheduler log its lines
    are cut from."""

    root: Path | None
    label: str
    scenario: str
    release: str
    copy: int = 0
    scheduler_log: Path | None = None

    def folder(self) -> Path:
        assert self.root is not None
        return artifacts.scenario_dir(self.root, self.label, self.scenario, self.copy)


def keep_failure(archive: Archive, result: Result, history: PodHistory | None, kube: Kube, names: Names) -> None:
    """The pods and events as the watch last recorded them (every version beside), the scheduler's
    lines that mention the run, the timeline and the report."""
    if archive.root is None:
        return
    files: dict[str, str | bytes] = {}
    try:
        if history is not None:
            pods, events = history.pods(), history.events()
            files["pod-history.txt"] = "\n".join(history.lines()) + "\n"
        else:
            pods, events = kube.pods(names.namespace), kube.all_events(names.namespace)
        files["pods.json"] = artifacts.as_json(kube.api.sanitize_for_serialization(p) for p in pods)
        files["events.json"] = artifacts.as_json(kube.api.sanitize_for_serialization(e) for e in events)
    except Exception as e:  # the cluster may be what failed
        files["observe-error.txt"] = str(e)
    log = artifacts.log_slice(archive.scheduler_log, names.mentions)
    if log is not None:
        files["kube-scheduler.log"] = log
    files.update(timeline_files(archive, result, history))
    files.update(component_logs(result.error_logs))
    files["report.txt"] = result.report()
    d = archive.folder()
    artifacts.write(d, files)
    result.artifacts = d


def component_logs(logs: tuple[Path, ...], most: int = 4 << 20) -> dict[str, bytes]:
    """Copies of the component logs an error named (their last ``most`` bytes each), as
    ``cluster-logs/<file>``: the cluster's directory, where they are, goes with the cluster."""
    out: dict[str, bytes] = {}
    for log in logs:
        for f in sorted(log.glob("*.log")) if log.is_dir() else [log]:
            try:
                with open(f, "rb") as src:
                    src.seek(max(0, f.stat().st_size - most))
                    out[f"cluster-logs/{f.name}"] = src.read()
            except OSError:
                continue  # gone already: the report still names it
    return out


def keep_timeline(archive: Archive, result: Result, history: PodHistory | None) -> None:
    """A passing run's timeline alone (--timelines), where a failing run's artifacts go."""
    if archive.root is None or history is None:
        return
    d = archive.folder()
    artifacts.write(d, timeline_files(archive, result, history))
    result.artifacts = d


def timeline_files(archive: Archive, result: Result, history: PodHistory | None) -> dict[str, str | bytes]:
    """The run's timeline picture, or the reason it could not be drawn (never an exception: a
    picture does not change a verdict)."""
    if history is None:
        return {}
    versions = history.versions[:]  # a copy: the watch may still be appending
    return timeline.files(versions, result.steps, f"{archive.scenario} [{archive.label}, Kubernetes {archive.release}]")


__all__ = ["Archive", "component_logs", "keep_failure", "keep_timeline", "timeline_files"]
