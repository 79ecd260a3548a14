#!/usr/bin/env python3
"""Opens a report page in headless Chromium through the DevTools protocol and
says what the browser drew, for tests/report/report_cli_test.cc to judge.

    browser_check.py CHROMIUM PAGE.html OUT_DIR WIDTH [WIDTH ...]

For each viewport width (CSS pixels, device scale 1) it loads the page, then
writes to OUT_DIR:
  chart-W-K.png   a capture of the K-th <svg> of the page at width W, clipped to
                  its own box and scrolled into view (so it does not matter how
                  far down the page the chart sits)
  page-W.png      the whole page, for people to look at
and prints one JSON object on stdout:
  {"widths": {"W": {"viewport": w, "page_width": scroll width of the page,
                    "page_height": ..., "charts": [{"index", "x", "y", "width",
                    "height", "visible", "elements", "png"}],
                    "tables": [{"index", "width", "box_width", "box_right",
                                "scrolls", "overflow_x"}]}},
   "console": ["level: text", ...]}   every console message and exception

It uses only the standard library: the protocol runs over --remote-debugging-pipe
(file descriptors 3 and 4, messages separated by NUL bytes). Exit status 2 on
bad usage, 1 when the browser cannot be driven (the message says why).
"""

import base64
import json
import os
import subprocess
import sys
import tempfile
import time

# A guard that turns a browser that stopped answering into a failure, far
# beyond the seconds a session takes on a slow, busy machine: not a measure.
TIMEOUT_S = 300


class Browser:
    def __init__(self, chromium, profile):
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()

        def child_fds():
            # The browser reads commands on fd 3 and writes replies on fd 4
            # (copied out of the way first: either pipe end may be 3 or 4).
            read_end, write_end = os.dup(to_browser_r), os.dup(from_browser_w)
            os.dup2(read_end, 3)
            os.dup2(write_end, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--user-data-dir=" + profile, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=child_fds, pass_fds=(3, 4))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []
        self.deadline = time.monotonic() + TIMEOUT_S

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:  # the browser may be gone already
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)

    def read_message(self):
        while b"\0" not in self.buffer:
            if time.monotonic() > self.deadline:
                raise RuntimeError("the browser did not answer within %d s" % TIMEOUT_S)
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("the browser closed its DevTools pipe (exit status %s)" % self.proc.poll())
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method, params=None, session=None):
        self.next_id += 1
        request = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            request["sessionId"] = session
        os.write(self.to_browser, json.dumps(request).encode() + b"\0")
        while True:
            message = self.read_message()
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError("%s: %s" % (method, message["error"].get("message")))
                return message.get("result", {})
            self.events.append(message)

    def wait_event(self, method, session):
        for i, event in enumerate(self.events):
            if event.get("method") == method and event.get("sessionId") == session:
                return self.events.pop(i)
        while True:
            message = self.read_message()
            if message.get("method") == method and message.get("sessionId") == session:
                return message
            self.events.append(message)


MEASURE = r"""(() => {
  const svgs = Array.from(document.querySelectorAll('svg')).filter(s => !s.parentElement.closest('svg'));
  const charts = svgs.map((s, index) => {
    const r = s.getBoundingClientRect();
    const style = getComputedStyle(s);
    return {index, x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height,
            visible: style.display !== 'none' && style.visibility !== 'hidden' && Number(style.opacity) > 0,
            elements: s.querySelectorAll('*').length};
  });
  const tables = Array.from(document.querySelectorAll('table')).map((t, index) => {
    // The box a table scrolls in: itself when it is a scroll container, else its parent.
    const own = getComputedStyle(t).overflowX;
    const box = (own === 'auto' || own === 'scroll') ? t : t.parentElement;
    const r = box.getBoundingClientRect();
    return {index, width: t.scrollWidth, box_width: box.clientWidth, box_right: r.right,
            scrolls: box.scrollWidth > box.clientWidth, overflow_x: getComputedStyle(box).overflowX};
  });
  const root = document.documentElement;
  return JSON.stringify({viewport: innerWidth, page_width: root.scrollWidth,
                         page_height: root.scrollHeight, charts, tables});
})()"""


def capture(browser, session, clip, path):
    shot = browser.send("Page.captureScreenshot",
                        {"format": "png", "captureBeyondViewport": True,
                         "clip": dict(clip, scale=1)}, session)
    with open(path, "wb") as f:
        f.write(base64.b64decode(shot["data"]))


def check_width(browser, session, page, out_dir, width):
    browser.send("Emulation.setDeviceMetricsOverride",
                 {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600}, session)
    browser.send("Page.navigate", {"url": "file://" + os.path.abspath(page)}, session)
    browser.wait_event("Page.loadEventFired", session)
    result = browser.send("Runtime.evaluate", {"expression": MEASURE, "returnByValue": True}, session)
    if "exceptionDetails" in result:
        raise RuntimeError("measuring the page failed: %s" % result["exceptionDetails"].get("text"))
    facts = json.loads(result["result"]["value"])
    for chart in facts["charts"]:
        chart["png"] = os.path.join(out_dir, "chart-%d-%d.png" % (width, chart["index"]))
        if chart["width"] >= 1 and chart["height"] >= 1:
            capture(browser, session, {"x": chart["x"], "y": chart["y"], "width": chart["width"],
                                       "height": chart["height"]}, chart["png"])
        else:
            chart["png"] = ""
    capture(browser, session, {"x": 0, "y": 0, "width": facts["page_width"], "height": facts["page_height"]},
            os.path.join(out_dir, "page-%d.png" % width))
    return facts


def console_messages(events):
    out = []
    for e in events:
        p = e.get("params", {})
        if e.get("method") == "Runtime.consoleAPICalled":
            out.append("%s: %s" % (p.get("type"), " ".join(str(a.get("value", a.get("description")))
                                                           for a in p.get("args", []))))
        elif e.get("method") == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append("exception: %s %s" % (d.get("text"), d.get("exception", {}).get("description", "")))
        elif e.get("method") == "Log.entryAdded":
            entry = p.get("entry", {})
            out.append("%s: %s %s" % (entry.get("level"), entry.get("text"), entry.get("url", "")))
    return out


def main(argv):
    if len(argv) < 5:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    chromium, page, out_dir = argv[1], argv[2], argv[3]
    widths = [int(w) for w in argv[4:]]
    with tempfile.TemporaryDirectory(prefix="infercost-browser-", dir=out_dir) as profile:
        browser = Browser(chromium, profile)
        try:
            target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                browser.send(domain + ".enable", {}, session)
            report = {"widths": {}}
            for width in widths:
                report["widths"][str(width)] = check_width(browser, session, page, out_dir, width)
            report["console"] = console_messages(browser.events)
        finally:
            browser.close()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (RuntimeError, OSError) as e:
        print("browser_check: %s" % e, file=sys.stderr)
        sys.exit(1)
