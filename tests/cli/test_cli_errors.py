"""The command line's errors: one message and exit 2, never a traceback."""

from harness.cli import main as cli_main


def test_cli_reports_invalid_scenarios_without_a_traceback(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: bad\ntitle: x\n")
    assert cli_main(["validate", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "INVALID" in out and "Traceback" not in out


def test_cli_errors_exit_2_with_a_message(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("PRIORITYKIT_CACHE", str(tmp_path))
    assert cli_main(["cluster", "down", "--name", "never-started"]) == 2
    assert "no cluster named never-started is recorded" in capsys.readouterr().err
