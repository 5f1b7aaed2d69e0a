"""What every scenario format shares: strict YAML, strict models, names, durations, clear errors,
and one rule for reading a run's scenarios from files and folders.

A file is read as YAML that refuses duplicate keys, validated by a model that
refuses unknown fields, and every problem is one ``ScenarioError`` naming the
file, the field inside it and what was expected. A scenario's id is its file
name, so ids are unique within a folder; across the folders and files a run
is given, an id used twice is an error naming both files.

Which format a file is written in is told from its content by ``kind_of``.
"""

from __future__ import annotations

from dataclasses import dataclass

import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Callable, TypeVar

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from harness.errors import KitError

NAME = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
MAX_DURATION = timedelta(hours=24)  # longer than any scenario could be worth waiting for

# The scenario kinds: pods on nodes (scenarios/*.yaml), and Karmada bindings on member
# clusters (scenarios/karmada/*.yaml).
PODS, KARMADA = "pods", "karmada"
KINDS = (PODS, KARMADA)
KIND_NAMES = {PODS: "pod scenario", KARMADA: "Karmada scenario"}


class ScenarioError(KitError):
    """A scenario file that does not follow its format."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


Name = Annotated[str, Field(pattern=NAME, max_length=40)]
ScenarioId = Annotated[str, Field(pattern=NAME, max_length=50)]


def parse_duration(text: str | int | float) -> timedelta:
    """A duration from a scenario file; ValueError (never OverflowError) for anything else."""
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not a duration like 10s, 500ms, 2m")
    if isinstance(text, (int, float)):
        try:
            seconds = float(text)
        except OverflowError:
            seconds = float("inf")
    else:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*", str(text))
        if not m:
            raise ValueError(f"{text!r} is not a duration like 10s, 500ms, 2m")
        seconds = float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[m.group(2)]
    # timedelta overflows past ~1e9 days; the range check keeps that from ever being reached.
    if not 0 <= seconds <= MAX_DURATION.total_seconds():  # also refuses NaN
        raise ValueError(f"{text!r} is out of range: a duration is between 0s and {MAX_DURATION.total_seconds() / 3600:.0f}h")
    return timedelta(seconds=seconds)


# A duration as scenario files write it (10s, 500ms, 2m), for every duration field of every format.
Duration = Annotated[timedelta, BeforeValidator(parse_duration)]

# The shortest flush interval the kit runs a scheduler with (harness.flush): a span must be
# positive at it, so that a file is right at every interval.
SHORTEST_FLUSH = timedelta(seconds=60)


@dataclass(frozen=True)
class Span:
    """A step's time: a fixed duration, or one counted from the scheduler's flush interval
    (``flush``, ``flush+30s``, ``flush-3s``): a parked pod nothing wakes is retried once it has
    been parked longer than the interval, whatever the interval, and a file that says so is
    right at 60 s and at the release default of 5 minutes alike."""

    fixed: timedelta
    flushes: int = 0

    def at(self, flush: timedelta) -> timedelta:
        return self.fixed + self.flushes * flush

    def __str__(self) -> str:
        if not self.flushes:
            return f"{self.fixed.total_seconds():g}s"
        sign = "-" if self.fixed < timedelta(0) else "+"
        rest = f"{sign}{abs(self.fixed.total_seconds()):g}s" if self.fixed else ""
        return f"flush{rest}"


def parse_span(text) -> Span:
    if isinstance(text, Span):
        return text
    if isinstance(text, str):
        m = re.fullmatch(r"\s*flush\s*(?:([+-])\s*(.+?))?\s*", text)
        if m:
            offset = parse_duration(m.group(2)) if m.group(2) else timedelta(0)
            span = Span(-offset if m.group(1) == "-" else offset, 1)
            if span.at(SHORTEST_FLUSH) <= timedelta(0):
                raise ValueError(f"{text!r} is not positive at the shortest flush interval the kit runs "
                                 f"({SHORTEST_FLUSH.total_seconds():g}s)")
            return span
    try:
        return Span(parse_duration(text))
    except ValueError as e:
        if "out of range" in str(e):
            raise
        raise ValueError(f"{text!r} is not a duration like 10s, 500ms, 2m, or one from the flush interval "
                         "like flush, flush+30s, flush-3s") from None


# A step's wait or settle: a Duration, or a span from the flush interval.
SpanField = Annotated[Span, BeforeValidator(parse_span)]

MIB = 1 << 20


def parse_bytes(text: str | int) -> int:
    """A quantity of bytes as Kubernetes writes it ("300Mi", "1Gi"), in whole MiB."""
    from kubernetes.utils import parse_quantity

    try:
        value = parse_quantity(text)
    except (ValueError, TypeError):
        raise ValueError(f"not a quantity of bytes: {text!r} (e.g. 300Mi)") from None
    if value < 0 or value % MIB:
        raise ValueError(f"{text!r}: give whole mebibytes (e.g. 300Mi)")
    return int(value)


Bytes = Annotated[int, BeforeValidator(parse_bytes)]


def least_seconds(steps, flush: timedelta = timedelta(minutes=5)) -> float:
    """A lower bound of a scenario's run time: the time its steps make pass on purpose."""
    return sum((_at(st.wait, flush)).total_seconds() + (_at(st.settle, flush)).total_seconds()
               + (_at(getattr(st, "pauseScheduler", None), flush)).total_seconds()
               + (_at(getattr(st, "disconnect", None), flush)).total_seconds()
               + (_at(getattr(getattr(st, "during", None), "pauseScheduler", None), flush)).total_seconds()
               for st in steps)


def _at(t, flush: timedelta) -> timedelta:
    if t is None:
        return timedelta()
    return t.at(flush) if isinstance(t, Span) else t


def dupes(names: list[str], where: str, errors: list[str]) -> None:
    """Append an error for each name ``names`` repeats."""
    seen: set[str] = set()
    for n in names:
        if n in seen:
            errors.append(f"{where}: {n!r} is defined twice")
        seen.add(n)


# --- reading a file -------------------------------------------------------------------


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML loader that refuses duplicate keys: a silent override would hide a mistake."""


def _construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_mapping(path: Path) -> dict:
    """A scenario file's YAML as a mapping, or one ScenarioError naming the file and what is wrong."""
    try:
        raw = yaml.load(path.read_text(), Loader=_UniqueKeyLoader)
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such scenario file") from None
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{path}: not UTF-8 text: byte {e.start}") from None
    except OSError as e:
        raise ScenarioError(f"{path}: cannot be read: {e.strerror}") from None
    except RecursionError:
        raise ScenarioError(f"{path}: nested too deeply to be a scenario") from None
    except yaml.YAMLError as e:
        raise ScenarioError(f"{path}: not valid YAML: {e}") from None
    if not isinstance(raw, dict):
        raise ScenarioError(f"{path}: expected a mapping at the top level, got {type(raw).__name__}")
    return raw


def kind_of(raw: dict) -> str:
    """The kind of scenario a file's mapping describes: a Karmada scenario places apps on member
    clusters (``members:``, and may set karmada-scheduler's ``gates:``); a pod scenario, pods on
    nodes (``nodes:``; its ``gates:`` are its cluster's)."""
    return KARMADA if "members" in raw or ("gates" in raw and "nodes" not in raw) else PODS


def kind_of_file(path: Path) -> str:
    return kind_of(read_mapping(Path(path)))


# A key written after a dot; any other (a label's key, "topology.kubernetes.io/zone") goes in
# brackets, as Kubernetes writes field paths, so that its dots cannot be read as steps of the path.
_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def field_path(*steps: str | int) -> str:
    """A place in a scenario file, in the one notation every error uses (scenarios/README.md):
    ``steps[2].createPod.class``: list items by index in brackets, mapping keys after a dot."""
    out = ""
    for s in steps:
        if isinstance(s, int):
            out += f"[{s}]"
        elif _PLAIN_KEY.match(s):
            out += f".{s}" if out else s
        else:
            out += f"[{s}]"
    return out


def _in_file(loc: tuple, raw) -> str:
    """pydantic's location of an error as a path in the file: ``loc`` also holds the names of the
    types a union tried (``str``, ``list[str]``), which are not in the file; walking the file's own
    data tells them apart from its keys and indexes."""
    steps: list[str | int] = []
    here = raw
    for n, part in enumerate(loc):
        if isinstance(here, dict) and part in here:
            steps.append(part)
            here = here[part]
        elif isinstance(here, list) and isinstance(part, int) and 0 <= part < len(here):
            steps.append(part)
            here = here[part]
        elif isinstance(here, dict) and n == len(loc) - 1:
            steps.append(part)  # a field that is missing from the file
            here = None
    return field_path(*steps)


def describe(e: ValidationError, raw=None) -> str:
    """A validation error as ``path: what is wrong``, one per place; a value no member of a union
    accepts is one problem, each member's complaint joined by "or"."""
    by_place: dict[str, list[str]] = {}
    for err in e.errors():
        loc = _in_file(err["loc"], raw) if raw is not None else field_path(*err["loc"])
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown field"
        elif err["type"] == "value_error":
            msg = msg.removeprefix("Value error, ")
        if msg not in by_place.setdefault(loc, []):
            by_place[loc].append(msg)
    # Checks that span the whole file are reported at the top; their text names the field.
    return "; ".join(f"{loc}: {' or '.join(msgs)}" if loc else " or ".join(msgs) for loc, msgs in by_place.items())


M = TypeVar("M", bound=BaseModel)


def load_list(path: Path, model: type[M], what: str) -> list[M]:
    """A file holding a YAML list of ``model`` entries (an index: the mutants' rules, the peer
    cases), each with an ``id``: one KitError naming the file, the entry and the field, and one
    for an id listed twice."""
    try:
        raw = yaml.safe_load(path.read_text())
        if not isinstance(raw, list):
            raise TypeError("not a list")
    except (OSError, yaml.YAMLError, TypeError) as e:
        raise KitError(f"{path}: cannot be read as a list of {what}: {e}") from None
    out = []
    for i, r in enumerate(raw):
        try:
            out.append(model.model_validate(r))
        except ValidationError as e:
            name = r.get("id") if isinstance(r, dict) and isinstance(r.get("id"), str) else f"[{i}]"
            raise KitError(f"{path}: {name}: {describe(e, r)}") from None
    ids = [getattr(x, "id") for x in out]
    if len(set(ids)) != len(ids):
        raise KitError(f"{path}: id: {sorted({i for i in ids if ids.count(i) > 1})} listed twice")
    return out


def load_model(path: str | Path, model: type[M], kind: str | None = None) -> M:
    """One file as ``model``; its ``id`` must be its file name. With ``kind``, a file of another
    kind is named as such rather than as a pile of unknown fields."""
    path = Path(path)
    raw = read_mapping(path)
    if kind is not None and kind_of(raw) != kind:
        raise ScenarioError(f"{path}: this is a {KIND_NAMES[kind_of(raw)]}, not a {KIND_NAMES[kind]} "
                            f"(a Karmada scenario has members:)")
    try:
        obj = model.model_validate(raw)
    except ValidationError as e:
        raise ScenarioError(f"{path}: {describe(e, raw)}") from None
    found = getattr(obj, "id", path.stem)
    if found != path.stem:
        raise ScenarioError(f"{path}: id: {found!r} must match the file name {path.stem!r}")
    return obj


# --- a run's scenarios ------------------------------------------------------------------


def scenario_files(sources: list[Path], recursive: bool = False) -> list[Path]:
    """The files named by ``sources``: files as given, folders' *.yaml files in name order (with
    ``recursive``, those of their subfolders too). A missing path, or a folder without a scenario
    file, is an error: it is a mistake."""
    files: list[Path] = []
    for src in map(Path, sources):
        if src.is_dir():
            found = sorted(src.rglob("*.yaml") if recursive else src.glob("*.yaml"))
            if not found:
                raise ScenarioError(f"{src}: no scenario files (*.yaml) in this folder")
            files += found
        elif src.is_file():
            files.append(src)
        else:
            raise ScenarioError(f"{src}: no such scenario file or folder")
    return files


def unique_ids(found: list[tuple[str, Path]]) -> None:
    """The one rule for ids across a run's sources: an id used by two files is an error naming both.
    The same file named twice (a folder and a file in it) is one scenario, not two."""
    seen: dict[str, Path] = {}
    for sid, f in found:
        if sid in seen and seen[sid].resolve() != f.resolve():
            raise ScenarioError(f"{f}: id: {sid!r} is used by {seen[sid]} too; scenario ids must be unique")
        seen.setdefault(sid, f)


def load_sources(sources: list[Path], load: Callable[[Path], M]) -> list[M]:
    """Every scenario in ``sources`` (files or folders), each file once, loaded with ``load``."""
    files = scenario_files(sources)
    loaded = [(f, load(f)) for f in files]
    unique_ids([(getattr(s, "id"), f) for f, s in loaded])
    seen: set[Path] = set()
    out = []
    for f, s in loaded:
        if f.resolve() not in seen:
            seen.add(f.resolve())
            out.append(s)
    return out


def load_folder(directory: str | Path, load: Callable[[Path], M]) -> list[M]:
    """Every scenario of one folder (its *.yaml files, in name order)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ScenarioError(f"{directory}: no such scenario folder")
    return [load(p) for p in sorted(directory.glob("*.yaml"))]
