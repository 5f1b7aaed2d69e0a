"""The host probes every cluster adapter waits with: a port that listens, a /healthz, a log's end."""

import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from harness.host import probes


def test_listening_tells_a_bound_port_from_a_free_one():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert probes.listening(port)
    assert not probes.listening(port)


class _Health(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/healthz" else 404)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_healthy_asks_healthz():
    server = HTTPServer(("127.0.0.1", 0), _Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        assert probes.healthy(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(OSError):  # not up yet: the caller's wait retries
        probes.healthy(server.server_address[1])


def test_tails_keep_the_last_lines(tmp_path):
    assert probes.tail("a\nb\nc\n\n", 2) == "b\nc"
    log = tmp_path / "x.log"
    log.write_text("\n".join(str(i) for i in range(20)))
    assert probes.log_tail(log, 3) == "17\n18\n19"
    assert probes.log_tail(tmp_path / "never-written.log") == ""
