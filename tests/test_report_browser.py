"""The HTML report in a real browser (headless Chromium over the DevTools protocol): charts drawn, no console
errors, no network, and hostile dataset text shown as text, never run.

One browser launch serves every check. Skips (with the reason) when Chromium or websocket-client is absent;
CI installs both (`apt-get install -y chromium`, the `test` extra). Set SEQPROF_SCREENSHOT_DIR to keep the
full-page screenshot for a human look.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from seqprof.dataset.histogram import LengthHistogram
from seqprof.dataset.profile import DatasetInfo, ExamplePreview, Profile, TokenizerInfo
from seqprof.dataset.recommend import recommend_max_seq_length
from seqprof.render.report import write_report

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
websocket = pytest.importorskip("websocket", reason="websocket-client not installed (pip install '.[test]')")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (apt-get install -y chromium)")

# Payloads that would run if any dataset/config string reached the page unescaped.
SCRIPT = "<script>window.__pwned = 1; alert('script')</script>"
IMG = "<img src=x onerror=\"window.__pwned = 2; alert('img')\">"
HOSTILE = f"{SCRIPT} then {IMG}"
VIEWPORT = (1200, 900)


class DevTools:
    """A minimal synchronous DevTools-protocol client: send a command, keep every event seen meanwhile."""

    def __init__(self, ws_url: str) -> None:
        self.ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_for(self, method: str, timeout: float = 20.0) -> dict:
        deadline = time.monotonic() + timeout
        seen = next((e for e in self.events if e.get("method") == method), None)
        while seen is None:
            if time.monotonic() > deadline:
                raise TimeoutError(method)
            msg = json.loads(self.ws.recv())
            self.events.append(msg)
            if msg.get("method") == method:
                seen = msg
        return seen

    def eval(self, expression: str):
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise RuntimeError(res["exceptionDetails"])
        return res["result"].get("value")

    def open(self, url: str) -> list[dict]:
        """Navigate and wait for load; return the events of this page load only."""
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")
        self.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        return self.events

    def screenshot(self, clip: dict | None = None) -> bytes:
        params = {"format": "png", "captureBeyondViewport": True}
        if clip:
            params["clip"] = {**clip, "scale": 1}
        return base64.b64decode(self.call("Page.captureScreenshot", **params)["data"])

    def pixel_stats(self, png: bytes) -> dict:
        """Decode the PNG with the browser's own decoder; grey-level variance and distinct colours."""
        b64 = base64.b64encode(png).decode()
        return self.eval(f"""(async () => {{
            const img = new Image(); img.src = 'data:image/png;base64,{b64}'; await img.decode();
            const c = new OffscreenCanvas(img.width, img.height), g = c.getContext('2d');
            g.drawImage(img, 0, 0);
            const d = g.getImageData(0, 0, img.width, img.height).data;
            let n = 0, s = 0, s2 = 0; const colours = new Set();
            for (let i = 0; i < d.length; i += 4) {{
                const v = 0.299 * d[i] + 0.587 * d[i + 1] + 0.114 * d[i + 2];
                n++; s += v; s2 += v * v; if (colours.size < 64) colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
            }}
            return {{width: img.width, height: img.height, variance: s2 / n - (s / n) ** 2, colours: colours.size}};
        }})()""")


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    profile_dir = tmp_path_factory.mktemp("chromium-profile")
    proc = subprocess.Popen(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile_dir}", "--remote-debugging-port=0", "--hide-scrollbars",
         f"--window-size={VIEWPORT[0]},{VIEWPORT[1]}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = profile_dir / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().count("\n") >= 1):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"chromium did not start (exit {proc.poll()})")
            time.sleep(0.05)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            page = next(t for t in json.load(resp) if t["type"] == "page")
        tools = DevTools(page["webSocketDebuggerUrl"])
        for domain in ("Page", "Runtime", "Log", "Network"):
            tools.call(f"{domain}.enable")
        tools.call("Emulation.setDeviceMetricsOverride", width=VIEWPORT[0], height=VIEWPORT[1],
                   deviceScaleFactor=1, mobile=False)
        yield tools
        tools.ws.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def _profile() -> Profile:
    rng = np.random.default_rng(7)
    prompt = rng.integers(20, 300, 3000)
    completion = rng.gamma(3.0, 90.0, 3000).astype(np.int64) + 5
    seq = prompt + completion
    hist = LengthHistogram.from_lengths(seq)
    return Profile(
        dataset=DatasetInfo(path=f"data/{HOSTILE}.jsonl", format="jsonl", rows=3000, skipped_rows=2,
                            schema="prompt_completion"),
        tokenizer=TokenizerInfo(name=f"tok{IMG}", vocab_size=32000),
        sequence=hist,
        fields={"prompt": LengthHistogram.from_lengths(prompt), f"completion{SCRIPT}": LengthHistogram.from_lengths(completion)},
        recommendation=recommend_max_seq_length(hist),
        longest=(ExamplePreview(location="data/x.jsonl:17", length=int(seq.max()), preview=f"Story: {HOSTILE} end"),
                 ExamplePreview(location=f"data/x.jsonl:{IMG}", length=int(seq.max()) - 1, preview=SCRIPT)),
    )


@pytest.fixture(scope="module")
def loaded(browser, tmp_path_factory):
    """The full report (every section, hostile strings everywhere) loaded once; its load events kept."""
    out = tmp_path_factory.mktemp("report") / "report.html"
    hist_max = _profile().sequence.max
    write_report(
        out, _profile(),
        buckets={"boundaries": [200, 300, 420, hist_max]},
        strategies={f"bucketed {IMG}": {"padding_efficiency": 0.9, "padded_tokens": 100, "batches": 10,
                                        "diversity": 0.8},
                    "fixed": {"padding_efficiency": 0.4, "padded_tokens": 900, "batches": 10, "diversity": 1.0}},
        findings=[{"code": "SP100", "severity": "warning", "message": f"value {SCRIPT}", "fix": IMG,
                   "file": "cfg.yaml", "line": 3, "key": "max_seq_length"}],
        memory={"components": {"weights": 14e9, f"acts {SCRIPT}": 30e9, "logits": 8e9}, "peak_bytes": 52e9,
                "capacity_bytes": 80 * 2**30, "gpu_name": f"H100{IMG}"},
        config_max_seq_length=hist_max // 2, config_path=f"cfg{SCRIPT}.yaml")
    events = list(browser.open(out.resolve().as_uri()))
    return out, events


def _show(browser, loaded) -> None:
    """Make sure the full report is the page on screen (another test may have navigated away)."""
    url = loaded[0].resolve().as_uri()
    if browser.eval("location.href") != url:
        browser.open(url)


def _errors(events: list[dict]) -> list[dict]:
    bad = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if (m in ("Runtime.exceptionThrown", "Page.javascriptDialogOpening")
                or (m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"))
                or (m == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"))):
            bad.append(e)
    return bad


def test_no_console_errors_no_network(loaded):
    out, events = loaded
    assert _errors(events) == []
    requested = {e["params"]["request"]["url"] for e in events if e.get("method") == "Network.requestWillBeSent"}
    assert requested == {out.resolve().as_uri()}  # nothing but the file itself: no CDN, font, or injected <img>


def test_hostile_text_is_shown_not_run(browser, loaded):
    _, events = loaded
    assert not [e for e in events if e.get("method") == "Page.javascriptDialogOpening"]
    _show(browser, loaded)
    dom = browser.eval("""({
        pwned: typeof window.__pwned,
        scripts: document.scripts.length,
        imgs: document.images.length,
        handlers: document.querySelectorAll('[onerror], [onload]').length,
        text: document.body.textContent,
    })""")
    assert dom["pwned"] == "undefined"
    assert dom["scripts"] == 0 and dom["imgs"] == 0 and dom["handlers"] == 0
    # escaped, not dropped: the reader sees exactly what the dataset holds
    assert dom["text"].count(SCRIPT) >= 5 and dom["text"].count(IMG) >= 5


def test_charts_are_drawn(browser, loaded):
    _show(browser, loaded)
    charts = browser.eval("""Array.from(document.querySelectorAll('svg.chart')).map(s => {
        const r = s.getBoundingClientRect();
        return {cls: s.getAttribute('class'), x: r.x + scrollX, y: r.y + scrollY, w: r.width, h: r.height,
                shapes: s.querySelectorAll('rect.bar, polyline, rect.segment').length};
    })""")
    kinds = sorted(c["cls"] for c in charts)
    # sequence + 2 fields: histogram and CDF each; the bucket histogram; the memory bar
    assert kinds.count("chart histogram") == 4 and kinds.count("chart cdf") == 3 and kinds.count("chart memory") == 1
    for c in charts:
        assert c["w"] > 300 and c["h"] > 60 and c["shapes"] > 0, c
        clip = {"x": c["x"], "y": c["y"], "width": c["w"], "height": c["h"]}
        stats = browser.pixel_stats(browser.screenshot(clip))
        assert stats["variance"] > 100 and stats["colours"] >= 4, (c, stats)
    full = browser.screenshot()
    keep = os.environ.get("SEQPROF_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / "report.png").write_bytes(full)
    assert full[:8] == b"\x89PNG\r\n\x1a\n"


def test_blank_page_measures_blank(browser, tmp_path):
    """The pixel check can fail: a page with nothing on it has zero variance."""
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body style='background:#fff'></body></html>")
    browser.open(blank.as_uri())
    stats = browser.pixel_stats(browser.screenshot({"x": 0, "y": 0, "width": 400, "height": 300}))
    assert stats["variance"] == 0 and stats["colours"] == 1


def test_report_without_optional_sections_loads_clean(browser, tmp_path):
    out = write_report(tmp_path / "bare.html", _profile())
    events = browser.open(out.resolve().as_uri())
    assert _errors(events) == []
    notes = browser.eval("Array.from(document.querySelectorAll('.absent')).length")
    assert notes == 4  # buckets, strategies, memory, findings each say they are absent
