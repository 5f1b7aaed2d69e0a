"""The local cluster without starting it: its configuration, its start and what a failed start leaves."""

from contextlib import contextmanager

import pytest
import yaml

from harness.clusters.config import STAGES, kwokctl_config, scheduler_config
from harness.clusters.local import ClusterOptions
from harness.errors import KitError


def test_scheduler_profiles_differ_only_at_post_filter():
    plugins, upstream = scheduler_config("plugins"), scheduler_config("upstream")
    assert plugins["profiles"][0]["plugins"] == {"postFilter": {
        "enabled": [{"name": "PreemptionToleration"}], "disabled": [{"name": "DefaultPreemption"}]}}
    assert "plugins" not in upstream["profiles"][0]
    assert plugins["apiVersion"] == "kubescheduler.config.k8s.io/v1"


def test_kwokctl_uses_only_local_binaries(tmp_path):
    names = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok"]
    bins = {n: tmp_path / n for n in names}
    conf = kwokctl_config(bins, tmp_path / "sched.yaml", tmp_path / "cache")["options"]
    assert conf["runtime"] == "binary"
    for key in ("etcdBinary", "kubeApiserverBinary", "kubeControllerManagerBinary", "kubeSchedulerBinary",
                "kubectlBinary", "kwokControllerBinary"):
        assert conf[key].startswith(str(tmp_path)), key


def test_kwok_stages_keep_deleted_pods_until_their_grace_ends():
    stages = {d["metadata"]["name"]: d for d in yaml.safe_load_all(STAGES.read_text())}
    assert set(stages) == {"kit-node-ready", "kit-node-heartbeat", "kit-pod-running", "kit-pod-resize-actuated",
                           "kit-pod-terminate-after-grace"}
    term = stages["kit-pod-terminate-after-grace"]["spec"]
    assert term["delay"]["durationFrom"]["expressionFrom"] == ".metadata.deletionTimestamp"
    assert term["next"] == {"delete": True}
    # A running pod reports the resources its kubelet actuated (the API server allows a resize only
    # then), and a resize is actuated when spec and report differ; never for a terminating pod.
    assert "resources: {{ YAML . 5 }}" in stages["kit-pod-running"]["spec"]["next"]["statusTemplate"]
    resize = stages["kit-pod-resize-actuated"]["spec"]["selector"]["matchExpressions"]
    assert {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"} in resize
    assert any(e["key"].startswith("[.spec.containers[] | .resources] ==") and e["values"] == ["false"] for e in resize)


def test_cluster_options_reject_bad_input(tmp_path):
    with pytest.raises(KitError, match="unknown scheduler build"):
        ClusterOptions(build="mine")
    with pytest.raises(KitError, match="scheduler binary not found"):
        ClusterOptions(scheduler_binary=tmp_path / "nope")


def test_unreachable_cluster_is_a_clear_error(tmp_path):
    from harness.kube import Kube

    kc = tmp_path / "kubeconfig"
    kc.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "t"}}]}))
    with pytest.raises(KitError, match="unreachable"):
        Kube(kc).check_reachable()
    (tmp_path / "broken").write_text("::: not yaml")
    with pytest.raises(KitError, match="cannot load kubeconfig"):
        Kube(tmp_path / "broken")


def test_kwokctl_gets_the_kits_ports_and_the_schedulers_verbosity(tmp_path):
    conf = kwokctl_config({k: tmp_path / k for k in ("etcd", "kube-apiserver", "kube-controller-manager",
                                                     "kube-scheduler", "kubectl", "kwok")},
                          tmp_path / "s.yaml", tmp_path, {"etcdPort": 20001, "kubeSchedulerPort": 20002}, 5)
    assert conf["options"]["etcdPort"] == 20001 and conf["options"]["kubeSchedulerPort"] == 20002
    assert conf["componentsPatches"] == [{"name": "kube-scheduler",
                                          "extraArgs": [{"key": "v", "value": "5"}]}]


def test_component_flags_name_the_clusters_certificates_once_its_directory_is_known(tmp_path):
    from harness.clusters.config import with_pki

    assert with_pki({"kube-apiserver": {"requestheader-client-ca-file": "{pki}/ca.crt", "x": "y"}}, tmp_path) == \
        {"kube-apiserver": {"requestheader-client-ca-file": f"{tmp_path}/ca.crt", "x": "y"}}
    assert with_pki({}, tmp_path) == {}


def test_kwokctls_directory_says_which_components_run_and_which_lost_their_port(tmp_path):
    import os

    from harness.clusters.kwokctl import Kwokctl
    from harness.host import ports

    k = Kwokctl(tmp_path, "c1")
    assert k.cluster_dir == tmp_path / "clusters" / "c1" and k.log_path("etcd") == k.logs_dir / "etcd.log"
    assert k.pids() == {} and not k.alive("etcd") and k.port_taken() is None
    k.pid_file("etcd").parent.mkdir(parents=True)
    k.pid_file("etcd").write_text(f"{os.getpid()}\n")
    k.pid_file("kwok-controller").write_text("not a pid")
    assert k.pids() == {"etcd": os.getpid()}
    assert k.alive("etcd") and not k.alive("kwok-controller") and not k.alive("kube-scheduler")
    k.logs_dir.mkdir()
    k.log_path("etcd").write_text("serving\n")
    k.log_path("kube-scheduler").write_text(f"listen tcp 127.0.0.1:1: bind: {ports.BIND_FAILURE}\n")
    assert k.port_taken() == "kube-scheduler"


KWOKCTL_START = """#!/bin/sh
# kwokctl's `start cluster` as far as the wait sees it: the exited scheduler runs again and listens.
d="$KWOK_WORKDIR/clusters/c1"
echo "$@" >> "$KWOK_WORKDIR/kwokctl-calls"
[ "$3 $4" = "start cluster" ] || exit 0
: > "$d/logs/kube-scheduler.log"
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); time.sleep(60)' {port} > /dev/null 2>&1 &
echo $! > "$d/pids/kube-scheduler.pid"
"""


def _scheduler_that_exited(tmp_path, kwokctl_script: str, log: str):
    """A cluster directory whose kube-scheduler ran once and exited with ``log``, and a kwokctl
    stand-in that plays ``start cluster``: (the Kwokctl, the exited process, a kubeconfig)."""
    import subprocess

    from harness.clusters.kwokctl import Kwokctl

    binary = tmp_path / "kwokctl"
    binary.write_text(kwokctl_script)
    binary.chmod(0o755)
    k = Kwokctl(tmp_path, "c1", binary)
    k.pid_file("kube-scheduler").parent.mkdir(parents=True)
    k.logs_dir.mkdir()
    ended = subprocess.Popen(["true"])
    ended.wait()
    k.pid_file("kube-scheduler").write_text(f"{ended.pid}\n")
    k.log_path("kube-scheduler").write_text(log)
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n"
                          "users: [{name: u, user: {}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
                          "current-context: c\n")
    return k, ended, kubeconfig


@pytest.mark.parametrize("restarts", [1, 0])
def test_a_component_that_exits_while_the_cluster_starts_is_started_once_more_with_its_log_kept(tmp_path, restarts):
    import os
    import socket

    from harness.clusters.kwokctl import wait_ready

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    k, ended, kubeconfig = _scheduler_that_exited(tmp_path, KWOKCTL_START.format(port=port),
                                                  "gave up waiting for the API server\n")
    only_scheduler = ("kube-apiserver", "kube-controller-manager", "kwok-controller")
    try:
        if restarts == 0:
            with pytest.raises(KitError, match=r"kube-scheduler did not become ready \(it exited\)"):
                wait_ready(k, kubeconfig, {"kubeSchedulerPort": port}, 20, only_scheduler, restarts=0)
            assert not (tmp_path / "kwokctl-calls").exists()
            return
        wait_ready(k, kubeconfig, {"kubeSchedulerPort": port}, 20, only_scheduler)
        assert (tmp_path / "kwokctl-calls").read_text() == "--name c1 start cluster\n"
        assert (k.logs_dir / "kube-scheduler.previous.log").read_text() == "gave up waiting for the API server\n"
    finally:
        pid = k.pids().get("kube-scheduler")
        if pid and pid != ended.pid:
            os.kill(pid, 9)


KWOKCTL_START_SKIPS_LIVE_PIDS = """#!/bin/sh
# kwokctl's `start cluster` as kwok v0.8 decides it: a component whose pid file names a pid that
# answers signal 0 counts as running, and is not started.
d="$KWOK_WORKDIR/clusters/c1"
echo "$@" >> "$KWOK_WORKDIR/kwokctl-calls"
[ "$3 $4" = "start cluster" ] || exit 0
if [ -f "$d/pids/kube-scheduler.pid" ] && kill -0 "$(cat "$d/pids/kube-scheduler.pid")" 2>/dev/null; then exit 0; fi
python3 -c 'import socket,sys,time; s=socket.socket(); s.bind(("127.0.0.1",int(sys.argv[1]))); s.listen(); time.sleep(60)' {port} > /dev/null 2>&1 &
echo $! > "$d/pids/kube-scheduler.pid"
"""


def test_an_exited_component_not_yet_reaped_is_started_again(tmp_path):
    """A component that exited but that nothing has reaped yet is a zombie: it answers signal 0,
    so kwokctl would take it for running and start nothing, and the wait would run out its
    deadline. The restart removes its pid file first."""
    import os
    import socket
    import subprocess
    import time

    from harness.clusters.kwokctl import wait_ready
    from harness.host import lifecycle

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    k, _, kubeconfig = _scheduler_that_exited(tmp_path, KWOKCTL_START_SKIPS_LIVE_PIDS.format(port=port), "gave up\n")
    zombie = subprocess.Popen(["true"])  # never waited for: a zombie until this test ends
    deadline = time.monotonic() + 10
    while lifecycle.alive(zombie.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(zombie.pid, 0)  # answers signal 0, as kwokctl asks
    k.pid_file("kube-scheduler").write_text(f"{zombie.pid}\n")
    try:
        wait_ready(k, kubeconfig, {"kubeSchedulerPort": port}, 20,
                   ("kube-apiserver", "kube-controller-manager", "kwok-controller"))
        assert k.pids()["kube-scheduler"] != zombie.pid
    finally:
        zombie.wait()
        pid = k.pids().get("kube-scheduler")
        if pid and pid != zombie.pid:
            os.kill(pid, 9)


KWOKCTL_START_DIES = """#!/bin/sh
# kwokctl's `start cluster` for a scheduler that fails again at once: a new pid, and no log yet.
d="$KWOK_WORKDIR/clusters/c1"
[ "$3 $4" = "start cluster" ] || exit 0
true &
echo $! > "$d/pids/kube-scheduler.pid"
"""


def test_a_component_that_exits_again_after_its_restart_is_named_with_the_logs_that_exist(tmp_path):
    """The error lists the first run's log first, and never a log the second run did not write
    (a user told "its log: PATH" must find PATH)."""
    from harness.clusters.kwokctl import wait_ready

    k, _, kubeconfig = _scheduler_that_exited(tmp_path, KWOKCTL_START_DIES, "scheduler: cannot start\n")
    with pytest.raises(KitError, match=r"it exited, also after it was started again") as e:
        wait_ready(k, kubeconfig, {"kubeSchedulerPort": 1}, 20,
                   ("kube-apiserver", "kube-controller-manager", "kwok-controller"))
    assert e.value.logs == (k.previous_log_path("kube-scheduler"),)
    assert all(p.exists() for p in e.value.logs)
    assert "cannot start" in e.value.logs[0].read_text()


def test_the_api_server_is_told_its_address_only_where_no_default_route_exists():
    from harness.clusters.local import has_default_route

    header = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\n"
    assert has_default_route(header + "eth0\t00000000\t0102A8C0\t0003\t0\t0\t0\t00000000\n", "")
    # A pod on kind here: a route to its subnet only, and kube-apiserver refused to start.
    assert not has_default_route(header + "eth0\t0000F40A\t00000000\t0001\t0\t0\t0\t00FFFFFF\n", "")
    assert has_default_route(header, "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
                                     "fe800000000000000000000000000001 00000400 00000000 00000000 00000003 eth0\n")
    # ...and its IPv6 table: only the unreachable (RTF_REJECT) default on lo, which is no route out.
    assert not has_default_route(header, "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
                                         "00000000000000000000000000000000 ffffffff 00000001 00000000 00200200 lo\n")


def test_a_failed_start_leaves_its_logs_where_the_run_keeps_its_results(tmp_path, monkeypatch):
    """A control plane that does not come up is removed, but the logs its error names are kept
    first: in the run's artifacts folder when it has one (they travel with a CI upload or a
    campaign pod's /results), and the message points there."""
    from harness.clusters import local

    monkeypatch.setenv("PRIORITYKIT_CACHE", str(tmp_path / "cache"))
    kwokctl = tmp_path / "kwokctl"  # stopping a cluster that never started has nothing to do
    kwokctl.write_text("#!/bin/sh\nexit 0\n")
    kwokctl.chmod(0o755)
    monkeypatch.setattr(local, "binaries", lambda options: {"kwokctl": kwokctl})

    def fails(cluster, bins):
        cluster.logs_dir.mkdir(parents=True)
        cluster.log_path("kube-controller-manager").write_text("F1124 exiting: the reason\n")
        raise KitError("kube-controller-manager exited", logs=[cluster.log_path("kube-controller-manager"),
                                                               cluster.logs_dir / "never-written.log"])

    monkeypatch.setattr(local.LocalCluster, "_create", fails)
    kept = tmp_path / "artifacts" / "cluster-logs"
    cluster = local.LocalCluster(ClusterOptions(name="prio-failing", failure_logs=kept))
    with pytest.raises(KitError) as e:
        cluster.up()
    [folder] = kept.iterdir()
    assert folder.name.startswith("prio-failing-")
    assert (folder / "kube-controller-manager.log").read_text() == "F1124 exiting: the reason\n"
    # The error names the kept copy, and only files that are there.
    assert e.value.logs == (folder / "kube-controller-manager.log",)
    assert str(folder / "kube-controller-manager.log") in str(e.value) and "never-written" not in str(e.value)
    assert cluster.workdir is None and not (tmp_path / "cache" / "logs").exists()


def test_an_exited_component_is_started_again_only_once_the_api_server_is_healthy(tmp_path, monkeypatch):
    """Started again while the API server still runs a post-start hook, kube-controller-manager
    would give up as before: the restart waits for /healthz (bounded by the same deadline)."""
    import os
    import socket

    from kubernetes import client

    from harness.clusters import kwokctl as kwokctl_module

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    k, ended, kubeconfig = _scheduler_that_exited(tmp_path, KWOKCTL_START.format(port=port), "gave up\n")
    monkeypatch.setattr(client.CoreV1Api, "list_namespace", lambda self, **kw: object())
    asked = []
    monkeypatch.setattr(kwokctl_module, "api_healthy",
                        lambda api: asked.append(not (tmp_path / "kwokctl-calls").exists()) or len(asked) > 3)
    try:
        kwokctl_module.wait_ready(k, kubeconfig, {"kubeSchedulerPort": port}, 20,
                                  ("kube-controller-manager", "kwok-controller"))
        # Three answers "not healthy", each with no restart made yet; the fourth let it start.
        assert asked == [True, True, True, True]
        assert (tmp_path / "kwokctl-calls").read_text() == "--name c1 start cluster\n"
    finally:
        pid = k.pids().get("kube-scheduler")
        if pid and pid != ended.pid:
            os.kill(pid, 9)


@contextmanager
def _healthz(answers: dict[str, list[tuple[int, str]]]):
    """A fake API server answering each path in turn from ``answers`` (status, body), 404 elsewhere:
    a client of it, whose host a test may point elsewhere."""
    import http.server
    import threading

    from kubernetes import client

    class Healthz(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            status, body = answers[self.path].pop(0) if answers.get(self.path) else (404, "")
            self.send_response(status)
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *a):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Healthz)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield client.ApiClient(client.Configuration(host=f"http://127.0.0.1:{server.server_port}"))
    finally:
        server.shutdown()
        server.server_close()


def test_api_healthy_reads_the_api_servers_healthz():
    from harness.clusters.kwokctl import api_healthy

    with _healthz({"/healthz": [(500, ""), (200, "ok")]}) as api:
        assert not api_healthy(api)  # a post-start hook still running: 500
        assert api_healthy(api)
        api.configuration.host = "http://127.0.0.1:1"
        assert not api_healthy(api)  # not answering


def test_health_failures_names_the_api_servers_failing_checks():
    """A late component's error says what the API server was still doing (a post-start hook,
    etcd), read from /healthz?verbose, or that it did not answer at all."""
    from harness.clusters.kwokctl import health_failures

    failing = "[+]ping ok\n[-]poststarthook/rbac/bootstrap-roles failed: reason withheld\n[+]etcd ok\n"
    with _healthz({"/healthz?verbose=true": [(500, failing), (200, "[+]ping ok\nhealthz check passed\n")]}) as api:
        assert health_failures(api) == "[-]poststarthook/rbac/bootstrap-roles failed: reason withheld"
        assert health_failures(api) == "none"
        api.configuration.host = "http://127.0.0.1:1"
        assert health_failures(api).startswith("not answering")


def test_a_rewritten_cluster_file_comes_back_as_first_written_and_an_extra_process_ends(tmp_path):
    """What a fault's set-up changed (harness.clusters.standby and link rewrite the scheduler's
    configuration and start a process beside kwokctl's) is undone before the cluster is handed on."""
    import subprocess

    from harness.clusters.kwokctl import Kwokctl

    k = Kwokctl(tmp_path, "c1")
    k.pid_file("x").parent.mkdir(parents=True)
    config = k.cluster_dir / "scheduler.yaml"
    config.write_text("leaderElection: {leaderElect: false}\n")
    k.rewrite(config, "leaderElection: {leaderElect: true}\n")
    k.rewrite(config, "leaderElection: {leaderElect: true}\nclientConnection: {}\n")
    k.restore_files()
    assert config.read_text() == "leaderElection: {leaderElect: false}\n"
    assert list(k.cluster_dir.rglob("*.kit-original")) == []

    child = subprocess.Popen(["sleep", "60"])
    k.pid_file("kube-scheduler-standby").write_text(str(child.pid))
    k.end("kube-scheduler-standby")
    assert child.poll() is not None and not k.pid_file("kube-scheduler-standby").exists()
    k.end("toxiproxy")  # nothing runs: nothing to do


def test_the_components_around_the_scheduler_run_on_one_processor_and_the_scheduler_on_its_default(tmp_path):
    from harness.clusters.config import CONTROL_PLANE_ENV

    conf = kwokctl_config({k: tmp_path / k for k in ("etcd", "kube-apiserver", "kube-controller-manager",
                                                     "kube-scheduler", "kubectl", "kwok")},
                          tmp_path / "s.yaml", tmp_path, scheduler_verbosity=4, envs=CONTROL_PLANE_ENV)
    patches = {p["name"]: p for p in conf["componentsPatches"]}
    assert patches["kube-scheduler"] == {"name": "kube-scheduler", "extraArgs": [{"key": "v", "value": "4"}]}
    for c in ("etcd", "kube-apiserver", "kube-controller-manager", "kwok-controller"):
        assert patches[c] == {"name": c, "extraEnvs": [{"name": "GOMAXPROCS", "value": "1"}]}
    # A control plane without some components (Karmada's host) patches only the ones it runs.
    host = kwokctl_config({k: tmp_path / k for k in ("etcd", "kube-apiserver", "kube-controller-manager",
                                                     "kube-scheduler", "kubectl", "kwok")},
                          tmp_path / "s.yaml", tmp_path, disable=("kube-scheduler", "kube-controller-manager"),
                          envs=CONTROL_PLANE_ENV)
    assert [p["name"] for p in host["componentsPatches"]] == ["etcd", "kube-apiserver", "kwok-controller"]
