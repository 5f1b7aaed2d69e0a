"""The scheduler's own connection to the API server, through a proxy the kit can cut: for the
fault step ``disconnectScheduler``, the API server up for everyone else.

``Link.arm`` (once, on a cluster of one scenario's own) starts toxiproxy (built from its pinned Go
module, ``harness/gomod/toxiproxy``) in front of the API server, points the cluster's copy of the
scheduler configuration (``clientConnection.kubeconfig``) at a kubeconfig naming the proxy, and
returns so the caller restarts the scheduler with it. ``Link.cut`` disables the proxy for a while:
toxiproxy closes every connection through it and refuses new ones, so each of the scheduler's
watches ends with an error and its writes fail, then enables it again. The other components
(kwok's controller, the controller manager, the kit's own client) keep their direct connections.

TLS goes through untouched: the proxy listens on the API server's own host, so the server's
certificate still names the address the scheduler dials.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from harness.clusters.kwokctl import Kwokctl
from harness.errors import KitError
from harness.host import lifecycle, ports, probes

PROXY, COMPONENT = "kube-apiserver", "toxiproxy"
SCHEDULER = "kube-scheduler"
BOUND = 30.0  # seconds for the proxy to listen


@dataclass
class Link:
    kwokctl: Kwokctl

    @property
    def port_key(self) -> str:
        return f"{self.kwokctl.workdir}-link"

    @property
    def api_file(self) -> Path:
        """Where the armed proxy's API address is kept, for ``cut``."""
        return self.kwokctl.cluster_dir / "toxiproxy-api"

    def arm(self) -> None:
        """The proxy running and the scheduler's configuration naming it; the scheduler still runs
        with its old connection until the caller restarts it."""
        from harness.build import pins, toolchain

        binary = toolchain.ensure_module(pins.wrapper("toxiproxy"))["toxiproxy-server"]
        if not self.kwokctl.alive(SCHEDULER):
            raise KitError("kube-scheduler is not running, so its connection cannot be routed through a proxy")
        config = self.kwokctl.config_file(SCHEDULER)
        if config is None:
            raise KitError("kube-scheduler runs without a --config file, so its connection cannot be routed "
                           "through a proxy")
        conf = yaml.safe_load(config.read_text())
        direct = Path((conf.get("clientConnection") or {}).get("kubeconfig") or "")
        if not direct.is_file():
            raise KitError(f"{config}: clientConnection.kubeconfig names no file, so the scheduler's connection "
                           "cannot be routed through a proxy")
        kubeconfig = yaml.safe_load(direct.read_text())
        server = urlsplit(kubeconfig["clusters"][0]["cluster"]["server"])
        chosen = ports.reserve(self.port_key, names=("toxiproxyApi", "toxiproxyListen"))
        api, listen = chosen["toxiproxyApi"], chosen["toxiproxyListen"]
        proxies = self.kwokctl.cluster_dir / "toxiproxy.json"
        proxies.write_text(json.dumps([{"name": PROXY, "listen": f"{server.hostname}:{listen}",
                                        "upstream": f"{server.hostname}:{server.port}", "enabled": True}]))
        log = self.kwokctl.log_path(COMPONENT)
        with open(log, "ab") as out:
            child = subprocess.Popen([str(binary), "-host", "127.0.0.1", "-port", str(api), "-config", str(proxies)],
                                     stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        # Beside kwokctl's own pid files: the cluster's stop ends it with the rest.
        self.kwokctl.pid_file(COMPONENT).write_text(str(child.pid))
        end = time.monotonic() + BOUND
        while not (probes.listening(api) and probes.listening(listen)):
            if child.poll() is not None or time.monotonic() > end:
                raise KitError("toxiproxy did not start listening in front of the API server", logs=[log])
            lifecycle.pause(0.1)
        self.api_file.write_text(f"http://127.0.0.1:{api}")
        kubeconfig["clusters"][0]["cluster"]["server"] = server._replace(netloc=f"{server.hostname}:{listen}").geturl()
        proxied = direct.with_name("kubeconfig-through-proxy")
        proxied.write_text(yaml.safe_dump(kubeconfig))
        conf["clientConnection"]["kubeconfig"] = str(proxied)
        self.kwokctl.rewrite(config, yaml.safe_dump(conf))

    def cut(self, seconds: float) -> str:
        """Every connection through the proxy closed and none accepted for ``seconds``, then the
        proxy open again; what it did, for the step's record."""
        began = time.monotonic()
        self._enable(False)
        try:
            lifecycle.pause(seconds)
        finally:
            self._enable(True)
        return f"the scheduler's connection to the API server cut for {time.monotonic() - began:.1f} s"

    def disarm(self) -> None:
        """The proxy ended (the caller restores the scheduler's configuration and restarts it)."""
        self.kwokctl.end(COMPONENT)
        self.api_file.unlink(missing_ok=True)
        self.release()

    def release(self) -> None:
        ports.release(self.port_key)

    def _enable(self, on: bool) -> None:
        if not self.api_file.exists():
            raise KitError("the scheduler's connection is not through the kit's proxy (Link.arm did not run)")
        url = f"{self.api_file.read_text().strip()}/proxies/{PROXY}"
        request = urllib.request.Request(url, data=json.dumps({"enabled": on}).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                if json.load(answer).get("enabled") is not on:
                    raise KitError(f"toxiproxy did not {'open' if on else 'close'} the scheduler's connection",
                                   logs=[self.kwokctl.log_path(COMPONENT)])
        except (urllib.error.URLError, OSError) as e:
            raise KitError(f"toxiproxy's API at {url} did not answer: {e}",
                           logs=[self.kwokctl.log_path(COMPONENT)]) from None


__all__ = ["Link"]
