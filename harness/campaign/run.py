"""``./kit campaign``: the suite in N shards as an Indexed Job, collected, cleaned up and merged.

In order: the runner image (built or found, ``harness.build.runner_image``), loaded into the
cluster's schedulable nodes; a namespace of the campaign's own with the Job (``job``); then a
poll of the Job's pods, each shard's results copied out as soon as its pod is ready
(``collect``), so that a finished shard frees its node while others still run; then the
namespace deleted and waited for, the image taken out of the nodes that lacked it, and the
shards merged by ``harness.shards.merge`` into the report one machine prints.

Nothing stays behind: the namespace and the image go in a ``finally`` (success, failure, a
KitError, Ctrl-C and SIGTERM, which the CLI turns into an interrupt), and, should the kit be
killed outright, a watchdog (``lifecycle``) runs the same removals as commands.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from harness.campaign import collect, job, nodes
from harness.errors import KitError
from harness.host import console, lifecycle
from harness.kube import KIT_LABEL
from harness.targets import DEFAULT_BUILD

POLL = 5.0  # seconds between looks at the pods
START_TIMEOUT = 600  # a pod not running by then will not run (no room, an image the node lacks)
DELETE_TIMEOUT = 300
API_PATIENCE = 60  # seconds of unanswered polls before the campaign gives up
COLLECT_TRIES = 3
# backoffLimitPerIndex: beta and on by default from 1.29 (alpha before), GA in 1.33.
MIN_RELEASE = (1, 29)


@dataclass
class Options:
    shards: int
    kubeconfig: Path | None = None
    kind: bool = False  # make the kit's own kind cluster for the campaign, and remove it after
    scheduler: str = DEFAULT_BUILD
    release: str | None = None  # the runner image's release (default: the kit's)
    image: str | None = None  # a runner image already built (on this Docker host, or on the nodes with no_load)
    no_load: bool = False
    out: Path = Path("artifacts/campaign")
    timeout: float = 7200  # seconds
    pytest_args: tuple[str, ...] = ()
    manifest: bool = False  # print the namespace and the Job, and run nothing


@dataclass
class Shard:
    index: int
    pod: str
    node: str
    folder: Path | None = None  # the collected results
    exit_code: int | None = None  # the suite's, inside the pod
    lost: str = ""  # why no results came back


@dataclass
class Outcome:
    shards: dict[int, Shard] = field(default_factory=dict)


def check(opts: Options) -> None:
    """Bad input is one clear error before anything is built or started."""
    if opts.shards < 1:
        raise KitError(f"--shards {opts.shards}: one or more")
    if not opts.manifest and (opts.kubeconfig is None) == (not opts.kind):
        raise KitError("say where the campaign runs: --kubeconfig FILE (an existing cluster) or --kind "
                       "(the kit's own kind cluster, made for the campaign and removed after)")
    if opts.kubeconfig is not None and not opts.kubeconfig.is_file():
        raise KitError(f"--kubeconfig {opts.kubeconfig}: no such file")
    if opts.timeout <= 0:
        raise KitError("--timeout: more than 0 minutes")
    if opts.no_load and not opts.image:
        raise KitError("--no-load runs an image the nodes already have: name it with --image")
    if opts.no_load and opts.kind:
        raise KitError("--no-load with --kind: the kind cluster made for the campaign has no image until the kit loads it")
    for a in opts.pytest_args:
        if a.split("=")[0] in ("--splits", "--group", "--artifacts", "--junitxml", "--scheduler"):
            raise KitError(f"{a}: the campaign sets it for every shard (--shards, --scheduler, the results folder)")


def plan(opts: Options, image: str, name: str, run_id: str) -> job.Plan:
    return job.Plan(namespace=name, image=image, shards=opts.shards, scheduler=opts.scheduler,
                    pytest_args=tuple(opts.pytest_args), timeout=int(opts.timeout), run_id=run_id)


def manifests(p: job.Plan) -> str:
    """The namespace and the Job as YAML for kubectl, the pod's script as a block a person can read."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper, value: str):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)

    Dumper.add_representer(str, text)
    return yaml.dump_all([job.namespace(p), job.job(p)], Dumper=Dumper, sort_keys=False)


def run(opts: Options) -> int:
    check(opts)
    run_id = f"campaign-{os.getpid()}-{int(time.time()) % 100000}"
    name = f"prioritykit-{run_id}"
    if opts.manifest:
        print(manifests(plan(opts, opts.image or _runner_image(opts.release), name, run_id)), end="")
        return 0
    if opts.image and not opts.no_load:
        from harness.build.node_image import image_exists

        if not image_exists(opts.image):
            raise KitError(f"--image {opts.image}: not on this Docker host, so it cannot be loaded into the nodes "
                           "(--no-load if the nodes have it already)")
    out = opts.out / name
    # The cluster first: an unreachable one is an error before minutes of image building.
    with _cluster(opts) as (kube, kind_name):
        p = plan(opts, opts.image or _runner_image(opts.release), name, run_id)
        outcome = campaign(kube, p, out, kind_name, opts)
    return report(outcome, out, opts.shards)


def _runner_image(release: str | None) -> str:
    from harness.build import runner_image

    return runner_image.ensure(release)


@contextmanager
def _cluster(opts: Options):
    """(Kube, the kind cluster's name or None) of the cluster the campaign runs on."""
    from harness.kube import Kube

    if opts.kind:
        from harness.clusters import kind
        from harness.clusters.base import running

        # The upstream build leaves the kind control plane's own scheduler as it is: the shards'
        # pods are scheduled by it, and the kit's kwok controller there has no node to play.
        with running(kind.KindCluster("upstream", kind.preflight(None))) as k:
            yield k.kube, k.name
        return
    kube = Kube(opts.kubeconfig)
    try:
        kube.check_reachable()
        _check_release(kube)
        kind_name = None
        if not opts.no_load:
            kind_name = nodes.kind_cluster_of(_targets(kube))
        yield kube, kind_name
    finally:
        kube.close()


def _check_release(kube) -> None:
    major, minor = (int("".join(ch for ch in x if ch.isdigit()) or 0) for x in kube.release().split("."))
    if (major, minor) < MIN_RELEASE:
        raise KitError(f"the cluster runs Kubernetes {major}.{minor}; a campaign's Job needs backoffLimitPerIndex, "
                       f"on by default from {MIN_RELEASE[0]}.{MIN_RELEASE[1]}")


def _targets(kube) -> list[str]:
    found = nodes.schedulable(kube.core.list_node().items)
    if not found:
        raise KitError("the cluster has no node a shard's pod can run on (every node is tainted, cordoned or kwok's)")
    return found


def campaign(kube, p: job.Plan, out: Path, kind_name: str | None, opts: Options) -> Outcome:
    """Load, submit, collect; and remove everything, whatever happens in between."""
    targets = _targets(kube)
    # Only the nodes that lack the image get it, and only they lose it again (even after a
    # load that failed half-way).
    load_into = nodes.lacking(targets, p.image) if kind_name is not None else []
    workdir = Path(tempfile.mkdtemp(prefix=lifecycle.WORKDIR_PREFIX + "campaign-"))
    lifecycle.write_owner(workdir)
    stack = ExitStack()
    try:
        _watch_over(workdir, p, kube, load_into, stack)
        if load_into:
            from harness.build import toolchain

            stack.callback(_unload, load_into, p.image)
            started = time.monotonic()
            console.log(f"loading {p.image} into {', '.join(load_into)} (kind load docker-image)")
            nodes.load(toolchain.ensure_module("kind")["kind"], kind_name, load_into, p.image)
            console.log(f"loaded in {time.monotonic() - started:.0f} s")
        if kind_name is not None and len(load_into) < len(targets):
            console.log(f"{', '.join(sorted(set(targets) - set(load_into)))} had {p.image} already")
        _api(f"creating namespace {p.namespace}", kube.create_namespace, p.namespace, p.labels[KIT_LABEL],
             labels=p.labels)
        stack.callback(_delete_namespace, kube, p.namespace)
        _api(f"creating the Job in {p.namespace}", kube.batch.create_namespaced_job, p.namespace, job.job(p))
        console.log(f"submitted Job {job.JOB_NAME} in namespace {p.namespace}: {p.shards} shard(s) of "
                    f"`{' '.join(job.conformance_args(p))}`")
        return wait_and_collect(kube, p, out, opts.timeout)
    finally:
        stack.close()
        shutil.rmtree(workdir, ignore_errors=True)  # the watchdog stands down once it is gone


def _api(what: str, call, *args, **kwargs):
    """An API call whose refusal is one KitError line (the server's own message), not a traceback."""
    from kubernetes.client.exceptions import ApiException

    try:
        return call(*args, **kwargs)
    except ApiException as e:
        try:
            message = json.loads(e.body).get("message", e.reason)
        except (TypeError, ValueError, AttributeError):
            message = e.reason
        raise KitError(f"{what}: the cluster said {e.status} {message}") from None


def _watch_over(workdir: Path, p: job.Plan, kube, load_into: list[str], stack: ExitStack) -> None:
    """Should the kit be killed with no chance to clean up, its watchdog deletes the namespace
    (with the kit's kubectl) and takes the image out of the nodes it was loaded into."""
    from harness.build import toolchain

    kubectl = toolchain.ensure_all(("kubernetes",))["kubectl"]
    lifecycle.add_teardown(workdir, [str(kubectl), "--kubeconfig", str(kube.kubeconfig), "delete", "namespace",
                                     p.namespace, "--ignore-not-found", "--wait=false"])
    for node in load_into:
        lifecycle.add_teardown(workdir, nodes.remove_command(node, p.image))
    watchdog = lifecycle.start_watchdog(workdir)
    stack.callback(lambda: _end(watchdog))


def _end(watchdog) -> None:
    watchdog.terminate()
    watchdog.wait()


def wait_and_collect(kube, p: job.Plan, out: Path, timeout: float) -> Outcome:
    outcome = Outcome()
    started = time.monotonic()
    selector = f"job-name={job.JOB_NAME}"
    last_note = 0.0
    silent_since: float | None = None  # when the API server stopped answering
    tries: dict[int, int] = {}  # copies out of a ready pod that failed, per shard
    while len(outcome.shards) < p.shards:
        try:
            pods = kube.core.list_namespaced_pod(p.namespace, label_selector=selector).items
            job_status = kube.batch.read_namespaced_job(job.JOB_NAME, p.namespace).status
            silent_since = None
        except Exception as e:
            # The cluster's API server shares the machine with the shards: a slow answer now and
            # then is no reason to throw away a campaign; a minute of them is.
            silent_since = silent_since if silent_since is not None else time.monotonic()
            if time.monotonic() - silent_since >= API_PATIENCE:
                raise KitError(f"the cluster's API server has not answered for {API_PATIENCE} s: {e}") from None
            time.sleep(POLL)
            continue
        states = [collect.state(pod) for pod in pods]
        # An index the Job gave up on whose pod is gone (deleted, evicted and removed) has no
        # state to read: the Job's own record says it failed.
        failed = job.indexes(job_status.failed_indexes)
        for i in sorted(failed - {st.shard for st in states} - set(outcome.shards)):
            outcome.shards[i] = Shard(i, "", "", lost="the Job marked this shard failed and its pod is gone")
            console.log(f"shard {i}/{p.shards}: the Job marked it failed, and its pod is gone")
        for st in states:
            if st.shard in outcome.shards:
                continue
            if st.kind == "stuck":
                raise KitError(f"{st.where()} cannot start: {st.detail}"
                               + (" (was the runner image loaded into that node?)" if "Never" in st.detail else ""))
            if st.kind == "pending" and time.monotonic() - started > START_TIMEOUT:
                raise KitError(f"{st.where()} did not start within {START_TIMEOUT // 60} min: {st.detail}")
            if st.kind == "ready":
                try:
                    outcome.shards[st.shard] = _collect(kube, p, st, out)
                except KitError as e:
                    # The pod keeps waiting: try again at the next poll, and give up on the third.
                    tries[st.shard] = tries.get(st.shard, 0) + 1
                    console.log(f"{e} (try {tries[st.shard]} of {COLLECT_TRIES})")
                    if tries[st.shard] >= COLLECT_TRIES:
                        outcome.shards[st.shard] = Shard(st.shard, st.name, st.node, lost=f"not collected: {e}")
            elif st.kind == "ended":
                tail = collect.log_tail(kube.core, p.namespace, st.name)
                outcome.shards[st.shard] = Shard(st.shard, st.name, st.node, lost=st.detail)
                console.log(f"{st.where()} ended before its results were collected: {st.detail}; its last lines:\n{tail}")
        if len(outcome.shards) == p.shards:
            break
        if time.monotonic() - started > timeout:
            left = [st for st in states if st.shard not in outcome.shards]
            raise KitError(f"the campaign did not finish within {timeout / 60:.0f} min: "
                           + "; ".join(f"{st.where()} {st.kind} {st.detail}".strip() for st in left)
                           + (f"; {p.shards - len(states)} pod(s) not created" if len(states) < p.shards else ""))
        if time.monotonic() - last_note >= 300:  # a word every 5 minutes, so a long wait is not silent
            last_note = time.monotonic()
            console.log(f"campaign: {len(outcome.shards)} of {p.shards} shard(s) collected after "
                        f"{(time.monotonic() - started) / 60:.0f} min; "
                        + ", ".join(f"shard {st.shard} {st.kind}" for st in sorted(states, key=lambda s: s.shard)
                                    if st.shard not in outcome.shards))
        time.sleep(POLL)
    return outcome


def _collect(kube, p: job.Plan, st: collect.PodState, out: Path) -> Shard:
    folder = out / f"shard-{st.shard}"
    code = collect.collect(kube.core, p.namespace, st, folder)
    console.log(f"collected shard {st.shard}/{p.shards} from {st.where()}: the suite exited {code}; in {folder}")
    return Shard(st.shard, st.name, st.node, folder=folder, exit_code=code)


def _delete_namespace(kube, name: str) -> None:
    """Delete the campaign's namespace and wait until it is gone with all its pods; never raise
    over the error that brought us here, but say what is left."""
    from kubernetes.client.exceptions import ApiException

    started = time.monotonic()
    try:
        kube.delete_namespace(name)
        while time.monotonic() - started < DELETE_TIMEOUT:
            try:
                kube.core.read_namespace(name)
            except ApiException as e:
                if e.status == 404:
                    console.log(f"namespace {name} deleted, with its Job and pods, in {time.monotonic() - started:.0f} s")
                    return
                raise
            time.sleep(1)
        console.log(f"namespace {name} is still terminating after {DELETE_TIMEOUT} s: check `kubectl get namespace {name}`")
    except Exception as e:
        console.log(f"could not delete namespace {name}: {e}; delete it with `kubectl delete namespace {name}`")


def _unload(loaded: list[str], image: str) -> None:
    failed = nodes.unload(loaded, image)
    if failed:
        console.log(f"could not remove {image} from node(s) {', '.join(failed)}")
    elif loaded:
        console.log(f"removed {image} from {', '.join(loaded)}")


def report(outcome: Outcome, out: Path, count: int) -> int:
    """Each shard's line, then the merge's report; the merge's exit code (as ``./kit merge``'s)."""
    from harness.shards.merge import merge

    for i in range(1, count + 1):
        s = outcome.shards.get(i)
        if s is None:
            print(f"shard {i}/{count}: no pod")
        elif s.lost:
            print(f"shard {i}/{count}: pod {s.pod} on {s.node or 'no node'}: LOST, {s.lost}")
        else:
            print(f"shard {i}/{count}: pod {s.pod} on {s.node}: the suite exited {s.exit_code}; results in {s.folder}")
    (out).mkdir(parents=True, exist_ok=True)
    (out / "campaign.json").write_text(json.dumps(
        {str(i): {"pod": s.pod, "node": s.node, "exit_code": s.exit_code, "lost": s.lost,
                  "folder": str(s.folder) if s.folder else None} for i, s in sorted(outcome.shards.items())},
        indent=1) + "\n")
    folders = [s.folder for _, s in sorted(outcome.shards.items()) if s.folder is not None]
    if not folders:
        raise KitError("no shard's results came back (see the lines above); nothing to merge")
    merged = merge(folders, out / "merged")
    print("\n".join(merged.lines))
    # As `./kit merge` exits: 1 on a failed test, and also when the shards do not add up to one
    # run (a lost shard is a missing one there).
    return 1 if merged.failed or merged.problems else 0
