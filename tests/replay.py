"""Local HTTP servers on 127.0.0.1 for the live backends' tests: a base that records every request and answers as
a subclass decides, and a server that replays provider-shaped JSON payloads."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Answer:
    """What the server does with one request: a JSON body with a status, after a delay; or it drops the request
    and stops listening (`go_down`), so that later requests are refused."""

    status: int = 200
    body: Any = None
    delay_s: float = 0.0
    go_down: bool = False


class LocalServer:
    """Answers each POST as `answer(path, body, headers)` says; keeps every request's path, body and headers."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                headers = {k.lower(): v for k, v in self.headers.items()}
                owner.requests.append({"path": self.path, "body": body, "headers": headers})
                answer = owner.answer(self.path, body, headers)
                if answer.go_down:
                    threading.Thread(target=owner.stop, daemon=True).start()
                    self.close_connection = True
                    return  # no response at all: the client sees the connection drop
                time.sleep(answer.delay_s)
                data = b"" if answer.body is None else json.dumps(answer.body).encode()
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up waiting (a timeout test)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.stopped = False

    def answer(self, path: str, body: Any, headers: dict[str, str]) -> Answer:
        """What to answer; subclasses decide."""
        raise NotImplementedError

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Stop serving and close the listening socket (a connection attempt is then refused)."""
        if not self.stopped:
            self.stopped = True
            self.httpd.shutdown()
            self.httpd.server_close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class ReplayServer(LocalServer):
    """Answers each POST with the next queued payload for its path, or 404 when none is left."""

    def __init__(self, replies: dict[str, list[dict[str, Any]]]) -> None:
        super().__init__()
        self.replies = {path: list(queue) for path, queue in replies.items()}

    def answer(self, path: str, body: Any, headers: dict[str, str]) -> Answer:
        """The next payload queued for the path."""
        queue = self.replies.get(path)
        return Answer(200, queue.pop(0)) if queue else Answer(404)
