#!/usr/bin/env python3
"""Checks an explorer page (explorer.html, written by 12_language_model's ladder) the way a learner opens it.

  tools/explorer_check.py PAGE [--max-mb 1] [--screenshot PNG]
  tools/explorer_check.py PAGE --tampered     # the self-check can fail: a copy with one weight doubled must fail it

- small: under --max-mb megabytes (1 for the --quick ladder's page, 5 at --full);
- self-contained: no external URL (no http:, https: or protocol-relative //… in a src, href or url(...));
- it works in a real browser: Debian's chromium opens it headless, runs its script, and the page's own self-check
  (<pre id="selfcheck">) says PASS: every attention row sums to 1 within 1e-5, nothing on later tokens, the
  selectors change what is drawn, and the first render within 2 s;
- it draws something: a screenshot (saved to PNG with --screenshot) is not blank.

Exit 0 when all hold, 1 when one fails (each failure named), 77 (skipped) when chromium is not installed.
"""
import argparse
import base64
import html
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import headless  # noqa: E402  (Debian's chromium, headless)
import struct  # noqa: E402
import tempfile  # noqa: E402

EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:|//)|url\(\s*["']?\s*(?:https?:|//)|@import""", re.I)


def self_check(page):
    """The page's own self-check line, as the headless browser left it."""
    m = re.search(r'<pre id="selfcheck">(.*?)</pre>', headless.dump_dom(page), re.S)
    return html.unescape(m.group(1)).strip() if m else "no <pre id=\"selfcheck\"> in the rendered page"


def tampered(page):
    """A copy of the page whose last stored weight (the last row's, of the first model's first head) is doubled:
    that row sums to more than 1, and the self-check must say FAIL and name it. Exit 0 when it does."""
    text = open(page, encoding="utf-8").read()
    m = re.search(r'(<script id="data" type="application/json">)(.*?)(</script>)', text, re.S)
    data = json.loads(m.group(2))
    raw = bytearray(base64.b64decode(data["models"][0]["readings"][0]["w"][0]))
    (last,) = struct.unpack_from("<f", raw, len(raw) - 4)
    struct.pack_into("<f", raw, len(raw) - 4, 2 * last + 0.01)
    data["models"][0]["readings"][0]["w"][0] = base64.b64encode(bytes(raw)).decode()
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "tampered.html")
        with open(copy, "w", encoding="utf-8") as f:
            f.write(text[:m.start(2)] + json.dumps(data).replace("</", "<\\/") + text[m.end(2):])
        verdict = self_check(copy)
    print(f"{page} with one weight doubled ({last:.4g} -> {2 * last + 0.01:.4g}):\n  " + verdict.replace("\n", "\n  "))
    if verdict.startswith("self-check: FAIL") and "sum misses 1" in verdict:
        print("  the self-check fails it, as it must")
        return 0
    print(f"{page}: FAILED: the self-check did not catch a row that sums to more than 1", file=sys.stderr)
    return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("page")
    ap.add_argument("--max-mb", type=float, default=1.0, help="the largest the page may be (default 1)")
    ap.add_argument("--screenshot", metavar="PNG", help="where to save the rendered page")
    ap.add_argument("--tampered", action="store_true", help="check that a copy with one weight doubled fails the self-check")
    a = ap.parse_args()
    if not os.path.isfile(a.page):
        print(f"explorer_check.py: no page at {a.page}", file=sys.stderr)
        return 1
    if a.tampered:
        if not headless.browser():
            print("explorer_check.py: Debian's chromium is not installed; skipped")
            return headless.SKIPPED
        return tampered(a.page)
    failures = []
    size = os.path.getsize(a.page)
    text = open(a.page, encoding="utf-8").read()
    print(f"{a.page}: {size / 1e6:.2f} MB (at most {a.max_mb:g})")
    if size > a.max_mb * 1e6:
        failures.append(f"{size / 1e6:.2f} MB, over {a.max_mb:g} MB")
    external = EXTERNAL.findall(text)
    if external:
        failures.append(f"{len(external)} external references, the first: {external[0]!r}")
    if not headless.browser():
        print("explorer_check.py: Debian's chromium is not installed; the browser checks are skipped")
        if failures:
            print("FAILED: " + "; ".join(failures), file=sys.stderr)
            return 1
        return headless.SKIPPED
    verdict = self_check(a.page)
    print("  " + verdict.replace("\n", "\n  "))
    if not verdict.startswith("self-check: PASS"):
        failures.append("the page's self-check did not pass")
    render = re.search(r"first render (\d+) ms", verdict)
    if render and int(render.group(1)) > 2000:
        failures.append(f"the first render took {render.group(1)} ms (2 s at most)")
    data = headless.screenshot(a.page, a.screenshot, 1100, 900, budget_ms=5000)
    if data is None:
        failures.append("chromium wrote no screenshot")
    else:
        distinct = headless.distinct_bytes(data)
        print(f"  screenshot: {distinct} distinct byte values" + (f", saved to {a.screenshot}" if a.screenshot else ""))
        if distinct < 32:
            failures.append(f"the screenshot looks blank ({distinct} distinct byte values)")
    if failures:
        print(f"{a.page}: FAILED: " + "; ".join(failures), file=sys.stderr)
        return 1
    print(f"{a.page}: passes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
