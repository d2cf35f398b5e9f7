#!/usr/bin/env python3
"""Load a page in headless Chromium and say what the browser saw.

    browser.py PAGE.html SHOT.png [PAGE SHOT]... > results

One browser for every page, each in a new tab.
Talks to Chromium over the DevTools protocol on a pipe
(--remote-debugging-pipe: no extra package, no port). Prints one JSON
object: load_ms (navigation start to the end of the load event, from the
page's own performance timing; the best of two loads after a first,
reported as first_load_ms), errors (console messages, exceptions and
log entries of level warning or error, CSP violations among them),
requests (any that was not for the page itself: the page must need no
network), and dom (counts of what the pictures drew, for the test to check
against the reports): one JSON line per page. Writes a screenshot of the
whole page to SHOT.png.
Exit status 0 when it got that far, 1 (and a line on stderr) when not;
the caller judges the result.
"""
import base64
import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import tempfile
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--remote-debugging-pipe"]

# What the pictures drew, read from the live DOM.
DOM = r"""(() => {
  // A mark is an element (.ev), or past a few thousand events a subpath
  // of one path per kind (.ev-all: one "M" per event).
  const count = (s, sel) => [...s.querySelectorAll(sel)].reduce((n, e) =>
    n + (/-all\b/.test(e.getAttribute('class'))
         ? (e.getAttribute('d').match(/M/g) || []).length : 1), 0);
  const kind = (s, k) => count(s, '.ev.' + k + ', .ev-all.' + k);
  return JSON.stringify({
  title: document.title,
  h1: (document.querySelector('h1') || {}).innerText || '',
  advice: [...document.querySelectorAll('.advice')].map(e => e.dataset.rule),
  timelines: [...document.querySelectorAll('svg.timeline')].map(s => ({
    axis: [...s.querySelectorAll('text[text-anchor=middle]')].map(
      t => t.textContent),
    fills: [...new Set([...s.querySelectorAll('path.seg')].map(
      p => p.getAttribute('fill')))].length,
    threads: +s.dataset.threads, events: +s.dataset.events,
    rows: s.querySelectorAll('g.row').length,
    marks: count(s, '.ev, .ev-all'),
    migrate: kind(s, 'migrate'), swap: kind(s, 'swap'),
    rollback: kind(s, 'rollback'), skip: kind(s, 'skip'),
    partners: count(s, '.ev-partner, .ev-partner-all'),
    merged: s.querySelectorAll('.ev-all').length > 0,
    tids: [...s.querySelectorAll('g.row')].map(g => +g.dataset.tid),
    height: s.getBoundingClientRect().height})),
  points: document.querySelectorAll('svg.roofline .pt').length,
  ceilings: document.querySelectorAll('svg.roofline .ceiling').length,
  processes: document.querySelectorAll('svg.locality g.proc').length,
  scripts: document.scripts.length,
  text: document.body.innerText.length,
  page_height: document.documentElement.scrollHeight});
})()"""


class Browser:
    def __init__(self, exe):
        self.profile = tempfile.mkdtemp(prefix="numalot-chromium-")
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()
        # Chromium reads commands on fd 3 and answers on fd 4.
        self.proc = subprocess.Popen(
            ["sh", "-c", 'exec "$0" "$@" 3<&%d 4>&%d' % (to_r, from_w),
             exe, *FLAGS, "--user-data-dir=" + self.profile,
             "--window-size=1280,900", "about:blank"],
            pass_fds=(to_r, from_w), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_r)
        os.close(from_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def close(self):
        try:
            self.send("Browser.close", session=False, wait=False)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_w)
        os.close(self.from_r)
        shutil.rmtree(self.profile, ignore_errors=True)

    def read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.from_r], [], [], left)[0]:
                raise TimeoutError("chromium did not answer")
            chunk = os.read(self.from_r, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=True, wait=True,
             timeout=60):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        if not wait:
            return None
        deadline = time.monotonic() + timeout
        while True:
            m = self.read(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, timeout=60):
        deadline = time.monotonic() + timeout
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self.read(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def evaluate(self, expr):
        r = self.send("Runtime.evaluate",
                      {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate: %s" % r["exceptionDetails"])
        return r["result"].get("value")


def problems(events, page_url):
    errors, requests = [], []
    for m in events:
        p, method = m.get("params", {}), m.get("method")
        if method == "Runtime.consoleAPICalled" and p.get("type") in (
                "error", "warning", "assert"):
            errors.append("console.%s: %s" % (p["type"], " ".join(
                str(a.get("value", a.get("description", "")))
                for a in p.get("args", []))))
        elif method == "Runtime.exceptionThrown":
            errors.append("exception: %s" % p["exceptionDetails"].get(
                "text", ""))
        elif method == "Log.entryAdded" and p["entry"]["level"] in (
                "error", "warning"):
            e = p["entry"]
            errors.append("log %s (%s): %s" % (e["level"], e["source"],
                                                e["text"]))
        elif method == "Network.requestWillBeSent":
            url = p["request"]["url"]
            if url != page_url:
                requests.append(url)
    return errors, requests


def visit(b, page, shot_path):
    """Load page five times: the first in a new tab, then four as a person
    who has the browser open sees it (the best of those is load_ms)."""
    target = b.send("Target.createTarget", {"url": "about:blank"},
                    session=False)
    b.session = b.send("Target.attachToTarget", {
        "targetId": target["targetId"], "flatten": True},
        session=False)["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        b.send(domain + ".enable")
    loads = []
    b.events.clear()
    for _ in range(5):
        b.send("Page.navigate", {"url": page})
        b.wait_event("Page.loadEventFired")
        # Let late messages (a failed resource, a CSP report) arrive.
        time.sleep(0.2)
        b.evaluate("1")
        timing = json.loads(b.evaluate(
            "JSON.stringify(performance.getEntriesByType('navigation')[0])"))
        loads.append(timing["loadEventEnd"] - timing["startTime"])
    dom = json.loads(b.evaluate(DOM))
    metrics = b.send("Page.getLayoutMetrics")["cssContentSize"]
    shot = b.send("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": metrics["width"],
                 "height": min(metrics["height"], 6000), "scale": 1}})
    pathlib.Path(shot_path).write_bytes(base64.b64decode(shot["data"]))
    errors, requests = problems(b.events, page)
    b.send("Target.closeTarget", {"targetId": target["targetId"]},
           session=False)
    b.session = None
    return {"load_ms": round(min(loads[1:]), 1),
            "first_load_ms": round(loads[0], 1),
            "errors": errors, "requests": requests, "dom": dom}


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit("usage: browser.py PAGE.html SHOT.png [PAGE SHOT]...")
    exe = os.environ.get("CHROMIUM") or shutil.which("chromium") or \
        shutil.which("chromium-browser")
    if not exe:
        sys.exit("browser.py: no chromium")
    b = Browser(exe)
    try:
        for page, shot in zip(args[::2], args[1::2]):
            seen = visit(b, pathlib.Path(page).resolve().as_uri(), shot)
            seen["page"] = page
            print(json.dumps(seen), flush=True)
    except (RuntimeError, TimeoutError, EOFError, OSError, KeyError) as e:
        sys.exit("browser.py: %s" % e)
    finally:
        b.close()


if __name__ == "__main__":
    main()
