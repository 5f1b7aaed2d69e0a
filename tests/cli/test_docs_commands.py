"""Every `./kit` command the README and docs/commands.md show in their ```sh blocks exists, takes the
options shown, and answers `--help`; the offline ones (validate, check, explain, matrix of a
file, site, --version) run for real, in a folder set up as the README's walk-through says, and
exit 0. A command or option the docs show and the kit lacks fails here, not in a stranger's
first hour."""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.cli import bench, main, parser

REPO = Path(__file__).resolve().parents[2]
DOCS = ("README.md", "docs/commands.md")
CLI = [sys.executable, "-c", "import sys; from harness.cli import main; sys.exit(main())"]
# Commands that read files and start nothing: run for real.
OFFLINE = {"validate", "check", "explain", "matrix", "site"}


def sh_lines(text: str) -> list[str]:
    """The lines of a document's ```sh blocks."""
    out, fence = [], None
    for line in text.splitlines():
        if line.startswith("```"):
            fence = None if fence else (line.strip().removeprefix("```") or "text")
            continue
        if fence == "sh":
            out.append(line)
    return out


def shown() -> list[tuple[str, str]]:
    return [(doc, line) for doc in DOCS for line in sh_lines((REPO / doc).read_text()) if line.startswith("./kit")]


@dataclass(frozen=True)
class Shown:
    words: tuple[str, ...]  # the command's words, as the CLI's parser knows them (cluster up)
    full: tuple[str, ...]  # every argument shown, optional ones too, each `a|b` as its first choice
    required: tuple[str, ...]  # the arguments outside [...]: what to run for real


def read(line: str) -> Shown:
    """A shown command, or AssertionError naming what the kit does not have."""
    tokens = shlex.split(re.sub(r"\s+#.*$", "", line))
    assert tokens[0] == "./kit"
    full, required, group = [], [], None
    for t in tokens[1:]:
        if group is None and t.startswith("["):
            group, t = [], t[1:]
        if group is None:
            required.append(t.split("|")[0])
            full.append(t.split("|")[0])
            continue
        group.append(t.rstrip("]"))
        if t.endswith("]"):
            if group[0].startswith("-"):  # an option; [scenario files or folders] only describes
                full += [g.split("|")[0] for g in group]
            group = None
    words, p = [], parser()
    for t in required:
        choices = next((a.choices for a in p._actions if isinstance(a, argparse._SubParsersAction)), {})
        if t not in choices:
            break
        words.append(t)
        p = choices[t]
    assert words or required[0].startswith("-"), f"{line}: no command {required[0]!r} (./kit --help lists them)"
    return Shown(tuple(words), tuple(full), tuple(required))


COMMANDS = shown()
IDS = [f"{doc}: {line}" for doc, line in COMMANDS]


def passthrough(words: tuple[str, ...]) -> bool:
    """Whether the command hands its arguments on (to pytest, to a benchmark) unread."""
    p = parser()
    for w in words:
        p = next(a.choices for a in p._actions if isinstance(a, argparse._SubParsersAction))[w]
    return bool(p.get_default("passthrough"))


_HELP: dict[tuple[str, ...], str] = {}


def help_of(words: tuple[str, ...], capsys) -> str:
    """What `./kit WORDS --help` prints; it must exit 0."""
    if words not in _HELP:
        if words in {("conformance",), ("test",)}:  # pytest takes the process over: one of its own
            done = subprocess.run([*CLI, *words, "--help"], capture_output=True, text=True, timeout=120, cwd=REPO)
            assert done.returncode == 0, done.stderr
            _HELP[words] = done.stdout
        else:
            try:
                code = main([*words, "--help"])
            except SystemExit as e:
                code = e.code
            assert code in (0, None)
            _HELP[words] = capsys.readouterr().out
    return _HELP[words]


def test_the_docs_show_commands():
    assert len(COMMANDS) > 10 and {line.split()[1] for _, line in COMMANDS} >= {"conformance", "test", "check", "bench"}


@pytest.mark.parametrize("doc, line", COMMANDS, ids=IDS)
def test_each_shown_command_exists_with_the_options_shown(doc, line, capsys, monkeypatch):
    monkeypatch.setattr(bench.runpy, "run_path", lambda *a, **k: pytest.fail("a benchmark ran"))
    s = read(line)
    if not s.words:  # ./kit --help, ./kit --version: run below
        return
    text = help_of(s.words, capsys)
    if passthrough(s.words):
        # pytest's or a benchmark's options: its help must name each one shown.
        options = [a.split("=")[0] for a in s.full[len(s.words):] if a.startswith("-")]
        assert [o for o in options if o not in text] == [], f"{doc}: {line}"
    else:
        _, unknown = parser().parse_known_args(list(s.full))
        assert unknown == [], f"{doc}: {line}: the kit does not take {unknown}"


def test_a_command_the_kit_lacks_fails_here():
    with pytest.raises(AssertionError, match="no command 'frobnicate'"):
        read("./kit frobnicate --now")
    _, unknown = parser().parse_known_args(list(read("./kit validate [--strict]").full))
    assert unknown == ["--strict"]


@pytest.fixture(scope="module")
def walkthrough(tmp_path_factory):
    """A folder set up as the README's walk-through: the catalogue at scenarios/, and each file the
    docs' `cp` lines copy, with its id set to its file name as the comment beside them says."""
    root = tmp_path_factory.mktemp("walkthrough")
    (root / "scenarios").symlink_to(REPO / "scenarios")
    for doc in DOCS:
        for line in sh_lines((REPO / doc).read_text()):
            if line.startswith("cp "):
                src, dst = shlex.split(re.sub(r"\s+#.*$", "", line))[1:3]
                target = root / dst
                target.parent.mkdir(parents=True, exist_ok=True)
                text = (REPO / src).read_text().replace(f"id: {Path(src).stem}", f"id: {target.stem}")
                target.write_text(text)
    return root


RUN = [(doc, line) for doc, line in COMMANDS
       if (line.split()[1] in OFFLINE and "--kubeconfig" not in line) or line.split()[1] in ("--help", "--version")]


@pytest.mark.parametrize("doc, line", RUN, ids=[f"{doc}: {line}" for doc, line in RUN])
def test_each_offline_command_shown_runs_and_exits_0(doc, line, walkthrough, monkeypatch, capsys):
    monkeypatch.chdir(walkthrough)
    try:
        code = main(list(read(line).required))
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    assert code in (0, None), f"{doc}: {line}\n{out.out[-2000:]}\n{out.err[-2000:]}"
    shutil.rmtree(walkthrough / "artifacts", ignore_errors=True)  # a site's pages
