#!/usr/bin/env python3
"""Drives headless Chromium through the explorer of a running `tbforge serve`.

Python's standard library only: Chromium's DevTools protocol over
--remote-debugging-pipe (JSON messages separated by NUL bytes on file
descriptors 3 and 4), no WebSocket client needed.

For each tablebase served: load its page, check that the board is drawn as
SVG and the value shown is the API's, click the first (best) move a few
times with real mouse events and check that each click leads to the position
the move names, reload the permalink, save a screenshot and check that it is
not blank. For the first game, also type a position into the form; for every
game, open the statistics view and check its plots. Prints one line per
check and ends with "N passed, M failed"; exits 1 if any failed.

    python3 scripts/browser_test.py http://127.0.0.1:PORT OUT_DIR [--chromium PATH] [--plies N]
"""

import argparse
import base64
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import zlib

# The fewest board cells each drawer shows (boards.js): a real board, not an empty SVG.
MIN_CELLS = {
    "tictactoe": 9, "connect4": 4, "morris": 24, "checkers": 32, "nim": 1, "pegsolitaire": 33,
    "foreandaft": 17, "pancake": 1, "topspin": 4, "slidingtile": 4,
}
VALUE_WORDS = ("Win", "Loss", "Draw", "Solvable", "Goal", "Unsolvable")


class Browser:
    """One headless Chromium and one page, driven over the DevTools pipe."""

    def __init__(self, exe, width, height):
        self.profile = tempfile.mkdtemp(prefix="tbforge-chromium-")
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def fds():
            # Chromium reads commands on fd 3 and writes answers on fd 4. Through
            # fds far from both first, so that neither end clobbers the other.
            os.dup2(to_chrome_r, 100)
            os.dup2(from_chrome_w, 101)
            os.dup2(100, 3)
            os.dup2(101, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", "--hide-scrollbars",
             "--remote-debugging-pipe", f"--user-data-dir={self.profile}",
             f"--window-size={width},{height}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            # Not pass_fds: it closes every other fd after preexec_fn, 3 and 4 too.
            preexec_fn=fds, close_fds=False,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for method in ("Page.enable", "Runtime.enable"):
            self.call(method, session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=True)

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            if time.time() > deadline:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self.from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe (did it start? try running it by hand)")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=False, timeout=20):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        deadline = time.time() + timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self.next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            if "method" in answer:
                self.events.append(answer)

    def eval(self, expression):
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True}, session=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait_for(self, expression, what, timeout=10):
        deadline = time.time() + timeout
        # While a page loads its document may not have the elements yet.
        guarded = f"(() => {{ try {{ return !!({expression}); }} catch (e) {{ return false; }} }})()"
        while time.time() < deadline:
            if self.eval(guarded):
                return
            time.sleep(0.05)
        raise TimeoutError(f"timed out waiting for {what}")

    def navigate(self, url):
        self.call("Page.navigate", {"url": url}, session=True)

    def click_at(self, x, y):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                   "clickCount": 1}, session=True)

    def click(self, selector):
        """A real mouse click at the centre of the first element `selector` matches."""
        box = self.eval(f"""(() => {{
            const e = document.querySelector({json.dumps(selector)});
            if (!e) return null;
            e.scrollIntoView({{block: "center"}});
            const r = e.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2];
        }})()""")
        if box is None:
            raise RuntimeError(f"nothing to click at {selector}")
        self.click_at(*box)

    def type_text(self, text):
        self.call("Input.insertText", {"text": text}, session=True)

    def press_enter(self):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", {"type": kind, "key": "Enter", "code": "Enter",
                                                 "windowsVirtualKeyCode": 13, "text": "\r"}, session=True)

    def screenshot(self, path, selector=None):
        """The page (or the element `selector` matches) as PNG."""
        params = {"format": "png"}
        if selector is not None:
            box = self.eval(f"""(() => {{
                const e = document.querySelector({json.dumps(selector)});
                e.scrollIntoView({{block: "center"}});
                const r = e.getBoundingClientRect();
                return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height];
            }})()""")
            params["clip"] = {"x": box[0], "y": box[1], "width": box[2], "height": box[3], "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", params, session=True, timeout=30)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def exceptions(self):
        return [e["params"]["exceptionDetails"] for e in self.events if e.get("method") == "Runtime.exceptionThrown"]

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_chrome)
        os.close(self.from_chrome)
        shutil.rmtree(self.profile, ignore_errors=True)


def png_pixels(path):
    """(width, height, pixels as a list of tuples) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    pos, idat, width, height, depth, color = 8, b"", 0, 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    if depth != 8 or color not in (2, 6):
        raise ValueError(f"{path}: bit depth {depth}, colour type {color}; expected 8-bit RGB(A)")
    bpp = 3 if color == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    out, prev = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        # Undo the row's filter (PNG specification, section 9).
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p_ = a + b - c
                pa, pb, pc = abs(p_ - a), abs(p_ - b), abs(p_ - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.extend(bytes(line[i:i + 3]) for i in range(0, stride, bpp))
        prev = line
    return width, height, out


def png_spread(path):
    """(width, height, share of pixels unlike the commonest colour): 0 for a blank picture."""
    width, height, pixels = png_pixels(path)
    counts = {}
    for p in pixels:
        counts[p] = counts.get(p, 0) + 1
    return width, height, 1 - max(counts.values()) / len(pixels)


def api(base, name, position):
    q = urllib.parse.urlencode({"position": position})
    with urllib.request.urlopen(f"{base}/api/{urllib.parse.quote(name)}?{q}", timeout=10) as r:
        return json.load(r)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("base", help="the server, e.g. http://127.0.0.1:8080")
    ap.add_argument("out", help="folder for the screenshots")
    ap.add_argument("--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser") or "chromium")
    ap.add_argument("--plies", type=int, default=3, help="moves clicked per game")
    args = ap.parse_args()
    base = args.base.rstrip("/")
    os.makedirs(args.out, exist_ok=True)
    with urllib.request.urlopen(f"{base}/api/games", timeout=10) as r:
        games = json.load(r)
    passed, failed = 0, 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
            print(f"ok   {what}")
        else:
            failed += 1
            print(f"FAIL {what}")

    browser = Browser(args.chromium, 1200, 900)
    def drawn(position=None):
        """The page has drawn `position` (any, if None) and its moves."""
        cond = "document.body.dataset.state === 'ready' && document.querySelector('#board svg.board') !== null"
        if position is not None:
            cond += f" && document.body.dataset.position === {json.dumps(position)}"
        return cond

    try:
        for i, g in enumerate(games):
            name = g["name"]
            try:
                browser.navigate(f"{base}/?tb={urllib.parse.quote(name)}")
                browser.wait_for(drawn(), f"{name}: the board and value")
                line = []
                for _ in range(args.plies):
                    target = browser.eval("(() => { const b = document.querySelector('#moves tbody .move-button');"
                                          " return b ? [b.textContent, b.dataset.position] : null; })()")
                    if target is None:
                        break  # the game is over (or the goal reached) here
                    move, position = target
                    moved = ("new URLSearchParams(location.search).get('position') === "
                             f"{json.dumps(position)}")
                    # On the board where the move's points are drawn there
                    # (clicked one by one until the page takes the move), else
                    # in the list of moves.
                    points = [p for p in move.replace("x", "-").split("-")]
                    on_board = all(browser.eval(f"document.querySelector('#board [data-point=\"{p}\"]') !== null")
                                   for p in points)
                    if on_board:
                        for p in points:
                            browser.click(f'#board [data-point="{p}"]')
                            time.sleep(0.05)
                            if browser.eval(moved):
                                break
                    else:
                        browser.click("#moves tbody .move-button")
                    browser.wait_for(drawn(position) + " && document.querySelector('#position').value === "
                                     f"{json.dumps(position)} && {moved}",
                                     f"{name}: the position after clicking {move} on the {'board' if on_board else 'list'}")
                    line.append(f"{move} ({'board' if on_board else 'list'})")
                check(len(line) > 0 or browser.eval("document.querySelector('#no-moves').hidden === false"),
                      f"{name}: clicked the line {' '.join(line) or '(no move: terminal start)'}")
                position = browser.eval("document.querySelector('#position').value")
                shown = browser.eval("document.querySelector('#value').textContent")
                truth = api(base, name, position)
                goal = g["kind"] == "puzzle" and truth["distance"] == 0
                check(shown.startswith(VALUE_WORDS) and
                      browser.eval("document.querySelector('#value').dataset.outcome") == truth["outcome"] and
                      (truth["distance"] is None or truth["outcome"] == "draw" or
                       (shown == "Goal reached" if goal else f" {truth['distance']}" in shown)),
                      f"{name}: the value shown ({shown!r}) is the API's ({truth['outcome']}, {truth['distance']})")
                moves_shown = browser.eval("document.querySelectorAll('#moves tbody tr').length")
                check(moves_shown == len(truth["moves"]), f"{name}: {moves_shown} moves listed, the API has {len(truth['moves'])}")
                cells = browser.eval("document.querySelectorAll('#board svg.board .cell').length")
                pieces = browser.eval("document.querySelectorAll('#board svg.board .piece').length")
                check(cells >= MIN_CELLS.get(g["id"], 1),
                      f"{name}: the board has {cells} cells and {pieces} pieces")
                shot = os.path.join(args.out, f"{name}.png")
                browser.screenshot(shot)
                w, h = struct.unpack(">II", open(shot, "rb").read()[16:24])
                check(os.path.getsize(shot) > 10_000 and (w, h) == (1200, 900),
                      f"{name}: screenshot {shot} ({os.path.getsize(shot)} bytes, {w}x{h})")
                # The board alone: drawn, not a blank rectangle.
                board = os.path.join(args.out, f"{name}-board.png")
                browser.screenshot(board, "#board svg.board")
                w, h, spread = png_spread(board)
                check(w >= 150 and h >= 100 and spread > 0.05,
                      f"{name}: the board's picture {board} is {w}x{h}, {spread:.1%} unlike its background")
                # The permalink opens the same position.
                link = browser.eval("document.querySelector('#permalink').href")
                browser.navigate(link)
                browser.wait_for(drawn(position), f"{name}: the permalink")
                check(True, f"{name}: the permalink reopens {position!r}")
                if i == 0 and g.get("start") is not None:
                    # Type the start position into the form and submit it with Enter.
                    browser.eval("(() => { const e = document.querySelector('#position'); e.value = ''; })()")
                    browser.click("#position")
                    browser.type_text(g["start"])
                    browser.press_enter()
                    browser.wait_for(drawn(g["start"]) + " && new URLSearchParams(location.search).get('position')"
                                     f" === {json.dumps(g['start'])}", f"{name}: the typed position")
                    check(True, f"{name}: typed {g['start']!r} and pressed Enter")
                # The statistics view: the histogram and the W/D/L bars are drawn.
                browser.click("#view-stats")
                browser.wait_for("document.body.dataset.state === 'ready' && !document.querySelector('#stats').hidden",
                                 f"{name}: the statistics view")
                bars = browser.eval("document.querySelectorAll('#stats-body svg.histogram rect.bar').length")
                wdl = browser.eval("document.querySelectorAll('#stats-body svg.wdl rect').length")
                check(bars > 0 and wdl > 0, f"{name}: statistics with {bars} histogram bars and {wdl} W/D/L segments")
                browser.click("#histogram-log")
                log_bars = browser.eval("document.querySelector('#histogram-log').checked && "
                                        "document.querySelectorAll('#stats-body svg.histogram rect.bar').length")
                check(log_bars == bars, f"{name}: the log-scale histogram has the same {log_bars} bars")
                browser.screenshot(os.path.join(args.out, f"{name}-stats.png"))
            except Exception as e:  # one game's failure is reported, the others still run
                check(False, f"{name}: {e}")
        errors = browser.exceptions()
        check(not errors, f"no script error on the pages{': ' + str(errors[:2]) if errors else ''}")
    finally:
        browser.close()
    print(f"browser: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
