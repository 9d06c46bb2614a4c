"""Headless Chromium driven over the DevTools protocol, for checking rendered reports offline.

One browser process, one websocket (websocket-client, already a Jupyter dependency), one tab per page.
Every wait has a deadline and the browser's whole process group is ended on close, so a test cannot hang
or leave Chromium behind.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import websocket

# Flags that keep Chromium off the network and quiet: no sync, no component or safe-browsing updates,
# no QUIC probes, and every host name resolving to nothing, so a page that reaches out fails visibly.
OFFLINE_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--no-default-browser-check",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
    "--disable-default-apps", "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
    "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
]
START_TIMEOUT_S = 30.0
PAGE_TIMEOUT_S = 30.0

# What the page reports about each <img>: whether it decoded, its natural size, and the size it is shown at.
IMAGES_JS = """Array.from(document.images).map(i => ({
  src: i.currentSrc.slice(0, 40), complete: i.complete, naturalWidth: i.naturalWidth, naturalHeight: i.naturalHeight,
  shownWidth: i.getBoundingClientRect().width, alt: i.alt}))"""
PAGE_JS = """({title: document.title, scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth,
  height: Math.ceil(document.documentElement.scrollHeight), text: document.body ? document.body.innerText.length : 0})"""


def find_chromium() -> str | None:
    """The Chromium binary: $CHROMIUM, else Debian's /usr/bin/chromium or whatever `chromium` is on PATH."""
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@dataclass
class PageCheck:
    """What one page did while loading: errors, requests off the machine, its images, its layout."""

    url: str
    errors: list[str] = field(default_factory=list)
    remote_requests: list[str] = field(default_factory=list)
    images: list[dict[str, Any]] = field(default_factory=list)
    layout: dict[str, Any] = field(default_factory=dict)
    load_ms: float = 0.0
    screenshot: Path | None = None


class Browser:
    """A headless Chromium with a fresh profile; use as a context manager."""

    def __init__(self, binary: str, width: int = 1280, height: int = 800) -> None:
        self.binary, self.width, self.height = binary, width, height
        self.profile = tempfile.mkdtemp(prefix="wismo-chromium-")
        self.proc: subprocess.Popen | None = None
        self.ws: websocket.WebSocket | None = None
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def __enter__(self) -> "Browser":
        self.proc = subprocess.Popen(
            [self.binary, *OFFLINE_FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-port=0",
             f"--window-size={self.width},{self.height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        )
        # Chromium writes the port it chose and the browser's websocket path here once it listens.
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + START_TIMEOUT_S
        while not (port_file.exists() and len(port_file.read_text().split()) >= 2):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                stderr = self.proc.stderr.read().decode(errors="replace")[-2000:] if self.proc.poll() is not None else ""
                self.close()
                raise RuntimeError(f"Chromium did not start within {START_TIMEOUT_S:.0f} s: {stderr}")
            time.sleep(0.05)
        port, path = port_file.read_text().split()[:2]
        # No Origin header: Chromium refuses DevTools websockets from origins it was not told to allow.
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}{path}", timeout=PAGE_TIMEOUT_S, suppress_origin=True)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the socket, end the browser's process group (renderers included), remove the profile."""
        if self.ws is not None:
            self.ws.close()
            self.ws = None
        if self.proc is not None:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGTERM)
                try:
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait(10)
            self.proc.stderr.close()
            self.proc = None
        shutil.rmtree(self.profile, ignore_errors=True)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Send one DevTools command and return its result; events that arrive meanwhile are kept."""
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        self.ws.send(json.dumps(message))
        deadline = time.monotonic() + PAGE_TIMEOUT_S
        while time.monotonic() < deadline:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)
        raise TimeoutError(f"{method}: no answer within {PAGE_TIMEOUT_S:.0f} s")

    def wait_for(self, method: str, session: str) -> None:
        """Read events until `method` arrives for the session."""
        deadline = time.monotonic() + PAGE_TIMEOUT_S
        while not any(e.get("method") == method and e.get("sessionId") == session for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{method} did not arrive within {PAGE_TIMEOUT_S:.0f} s")
            self.events.append(json.loads(self.ws.recv()))

    def check(self, url: str, screenshot: Path | None = None) -> PageCheck:
        """Open `url` in a fresh tab at the browser's width, wait for load, and report what happened."""
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.events.clear()
        try:
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.call(f"{domain}.enable", session)
            self.call("Emulation.setDeviceMetricsOverride", session, width=self.width, height=self.height,
                      deviceScaleFactor=1, mobile=False)
            started = time.perf_counter()
            self.call("Page.navigate", session, url=url)
            self.wait_for("Page.loadEventFired", session)
            result = PageCheck(url, load_ms=(time.perf_counter() - started) * 1000)
            result.images = self.evaluate(IMAGES_JS, session)
            result.layout = self.evaluate(PAGE_JS, session)
            if screenshot is not None:
                result.screenshot = self.screenshot(session, result.layout["height"], screenshot)
            result.errors, result.remote_requests = _problems([e for e in self.events if e.get("sessionId") == session])
            return result
        finally:
            self.call("Target.closeTarget", targetId=target)

    def evaluate(self, expression: str, session: str) -> Any:
        """The JSON value of a JavaScript expression in the page."""
        reply = self.call("Runtime.evaluate", session, expression=expression, returnByValue=True)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"page script failed: {reply['exceptionDetails']}")
        return reply["result"]["value"]

    def screenshot(self, session: str, height: int, path: Path) -> Path:
        """A PNG of the whole page at the browser's width (capped at 16,000 px tall, the GPU texture limit)."""
        clip = {"x": 0, "y": 0, "width": self.width, "height": min(max(height, self.height), 16000), "scale": 1}
        data = self.call("Page.captureScreenshot", session, format="png", clip=clip, captureBeyondViewport=True)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path


def _problems(events: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Console errors, uncaught exceptions and error log entries; and every request that left the machine."""
    errors, remote = [], []
    for e in events:
        method, params = e.get("method"), e.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            errors.append("console." + params["type"] + ": " + " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            errors.append("exception: " + details.get("exception", {}).get("description", details.get("text", "")))
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            errors.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}".strip())
        elif method == "Network.requestWillBeSent":
            url = params.get("request", {}).get("url", "")
            if not url.startswith(("file:", "data:", "about:")):
                remote.append(url)
    return errors, remote
