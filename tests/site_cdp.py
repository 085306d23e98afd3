#!/usr/bin/env python3
"""site_cdp.py - drive headless Chromium over the DevTools protocol (--remote-debugging-pipe: JSON
messages ended by NUL on fds 3 and 4, no websocket, standard library only) for the check of the site
`hybench publish` writes (tests/check_publish_site.sh).

  site_cdp.py load URL...
      load each page; fail on an uncaught exception, a console error or a resource that failed to load
  site_cdp.py click CASE_URL NIGHT EXPECT
      on a case page: move the mouse onto the point of night NIGHT (index into HB_NIGHTS.nights) of the
      graph, check that the hover legend names that night's run id and commit, click, and check that
      the browser went to a page whose URL ends with EXPECT (the night's report) and that it loaded

Exit 0 pass, 1 fail (the reason printed). CHROMIUM names the browser (default: chromium).
"""
import json
import os
import select
import subprocess
import sys
import time


class Browser:
    def __init__(self):
        exe = os.environ.get("CHROMIUM", "chromium")
        to_chrome_r, self.w = os.pipe()
        self.r, from_chrome_w = os.pipe()

        def fds():  # the pipe ends as fds 3 and 4 of chromium, inheritable (copies first: either may be 3 or 4)
            a, b = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.p = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--remote-debugging-pipe",
             "--window-size=1400,1000", "--no-first-run", "about:blank"],
            preexec_fn=fds, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def _read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.time()
            if left <= 0:
                raise TimeoutError("no message from chromium")
            ready, _, _ = select.select([self.r], [], [], left)
            if ready:
                chunk = os.read(self.r, 1 << 20)
                if not chunk:
                    raise EOFError("chromium closed its pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, timeout=30, session=True):
        self.next_id += 1
        m = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            m["sessionId"] = self.session
        os.write(self.w, json.dumps(m).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            msg = self._read(deadline)
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def wait_event(self, name, timeout=30):
        deadline = time.time() + timeout
        while True:
            for i, e in enumerate(self.events):
                if e["method"] == name:
                    del self.events[i]
                    return e
            self.events.append(self._read(deadline))

    def attach(self):
        t = self.call("Target.createTarget", {"url": "about:blank"}, session=False)
        s = self.call("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True}, session=False)
        self.session = s["sessionId"]
        for m in ("Runtime.enable", "Page.enable", "Log.enable"):
            self.call(m)

    def load(self, url, timeout=60):
        self.events = [e for e in self.events if e["method"] != "Page.loadEventFired"]
        self.call("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired", timeout)
        time.sleep(0.3)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in r:
            raise RuntimeError("evaluating %s: %s" % (expr[:60], r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def errors(self):
        """Uncaught exceptions, console errors and failed resources seen so far (then forgotten)."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("uncaught: %s %s" % (d.get("text"), (d.get("exception") or {}).get("description", "")))
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.%s: %s" % (p.get("type"), [a.get("value", a.get("description")) for a in p.get("args", [])]))
            elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: %s %s" % (p["entry"].get("text"), p["entry"].get("url", "")))
        self.events = [e for e in self.events if e["method"] not in ("Runtime.exceptionThrown", "Runtime.consoleAPICalled", "Log.entryAdded")]
        return out

    def close(self):
        try:
            self.call("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("load", "click"):
        sys.exit(__doc__)
    b = Browser()
    fail = []
    try:
        b.attach()
        if sys.argv[1] == "load":
            for url in sys.argv[2:]:
                b.load(url)
                errs = b.errors()
                err_attr = b.eval("document.body.getAttribute('data-error')")
                if err_attr:
                    errs.append("data-error: " + err_attr)
                print("%s: %s" % (url, "; ".join(errs) if errs else "no console error"))
                fail += errs
        else:
            url, night, expect = sys.argv[2], int(sys.argv[3]), sys.argv[4]
            b.load(url)
            fail += b.errors()
            pt = b.eval("""(function () {
              var g = window.hbGraph, n = HB_NIGHTS.nights[%d], t = Date.parse(n.date), row = -1;
              for (var i = 0; i < g.numRows(); i++) if (g.getValue(i, 0) == t) row = i;
              if (row < 0) return null;
              var v = g.getValue(row, 1); if (Array.isArray(v)) v = v[1];
              var c = g.toDomCoords(t, v), r = document.getElementById('graph').getBoundingClientRect();
              return { x: r.left + c[0], y: r.top + c[1], run: n.run, commit: n.commit.slice(0, 12) };
            })()""" % night)
            if not pt:
                fail.append("night %d has no point in the graph" % night)
            else:
                mouse = {"x": pt["x"], "y": pt["y"], "button": "none"}
                b.call("Input.dispatchMouseEvent", dict(mouse, type="mouseMoved"))
                time.sleep(0.3)
                legend = b.eval("document.getElementById('legend').textContent")
                if pt["run"] not in legend or pt["commit"] not in legend:
                    fail.append("hover legend lacks run %s or commit %s: %r" % (pt["run"], pt["commit"], legend))
                else:
                    print("hover: %s" % legend)
                b.events = [e for e in b.events if e["method"] != "Page.loadEventFired"]
                click = dict(mouse, button="left", clickCount=1)
                b.call("Input.dispatchMouseEvent", dict(click, type="mousePressed"))
                b.call("Input.dispatchMouseEvent", dict(click, type="mouseReleased"))
                try:
                    b.wait_event("Page.loadEventFired", 20)
                except TimeoutError:
                    pass
                href = b.eval("location.href")
                if not href.endswith(expect):
                    fail.append("the click went to %s, not to ...%s" % (href, expect))
                else:
                    title = b.eval("document.title")
                    print("click: opened %s (%s)" % (href, title))
                fail += b.errors()
    except Exception as e:  # a protocol failure is a failed check, with its reason
        fail.append("%s: %s" % (type(e).__name__, e))
    finally:
        b.close()
    for f in fail:
        print("FAIL: " + f)
    sys.exit(1 if fail else 0)


if __name__ == "__main__":
    main()
