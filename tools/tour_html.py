#!/usr/bin/env python3
"""Writes the tour's one page of pictures: build/tour/index.html.

One section per program, in the chapter's order: what it printed, the SVG pictures it wrote (shown in the
page, read from the files beside it) and its claims table with the verdicts coloured. The page is plain
XHTML with no script and no network: open it from disk.

  tools/tour_html.py --dir build/tour                  # after tools/tour.sh: build/tour/<program>.txt + SVGs
  tools/tour_html.py --runs build/test-scratch --out F # from the program tests' runs (what the test checks)
  tools/tour_html.py --check F                         # well-formed, and every picture it shows exists
  tools/tour_html.py --screenshot F                    # rendered by a headless Chromium, not blank (exit 77
                                                       # when Debian's chromium is not installed)
"""
import argparse
import html
import os
import re
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from claims_md import parse_output  # noqa: E402  (the claims summary's reader, shared with CLAIMS.md)
import headless  # noqa: E402  (Debian's chromium, headless)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SVG_NAME = re.compile(r"[\w./-]+\.svg")
PAGE_NAME = re.compile(r"wrote ([\w./-]+\.html) \(([^)]*)\)")  # a page a program wrote: "wrote explorer.html (open it …)"
COLOURS = {"agrees": "#1a7f37", "shape": "#9a6700", "differs": "#cf222e", "unresolved": "#8250df"}

STYLE = """
body { font-family: sans-serif; max-width: 70em; margin: 2em auto; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.25em; margin-top: 2.5em; border-bottom: 1px solid #ccc; }
nav li { margin: 0.2em 0; }
pre { background: #f6f8fa; padding: 0.8em; overflow-x: auto; font-size: 0.85em; line-height: 1.35; }
img { max-width: 100%; border: 1px solid #eee; margin: 0.5em 0; display: block; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
td, th { border: 1px solid #ddd; padding: 0.3em 0.6em; vertical-align: top; text-align: left; }
.verdict { font-weight: bold; white-space: nowrap; }
p.page { background: #eef4ff; padding: 0.5em 0.8em; border-radius: 4px; }
details summary { cursor: pointer; color: #555; }
"""


def programs_in_order():
    path = os.path.join(ROOT, "build", "chapters.txt")
    if os.path.exists(path):
        return [l.strip() for l in open(path, encoding="utf-8") if l.strip()]
    return sorted(d for d in os.listdir(os.path.join(ROOT, "chapters")) if re.match(r"\d\d_", d))


def collect(args):
    """[(program, output text, folder its SVG names are relative to, folder of the page)]"""
    runs = []
    out_dir = os.path.dirname(os.path.abspath(args.out))
    for program in programs_in_order():
        if args.dir:
            text_path, svg_dir = os.path.join(args.dir, program + ".txt"), args.dir
        else:
            svg_dir = os.path.join(args.runs, program + "_runs")
            text_path = os.path.join(svg_dir, "stdout.txt")
        if os.path.exists(text_path):
            runs.append((program, open(text_path, encoding="utf-8", errors="replace").read(), svg_dir))
    return runs, out_dir


def section(program, text, svg_dir, out_dir):
    lines = text.splitlines()
    title = next((l for l in lines if l.startswith("Section ")), program)
    parts = [f'<h2 id="{program}">{html.escape(title)}</h2>',
             f"<p><code>build/bin/{program}</code></p>"]
    shown = set()
    for name in SVG_NAME.findall(text):
        path = os.path.join(svg_dir, name)
        if name in shown or not os.path.exists(path):
            continue
        shown.add(name)
        rel = os.path.relpath(path, out_dir)
        parts.append(f'<img src="{html.escape(rel)}" alt="{html.escape(name)}"/>')
    for name, what in PAGE_NAME.findall(text):
        path = os.path.join(svg_dir, name)
        if os.path.exists(path):
            rel = os.path.relpath(path, out_dir)
            parts.append(f'<p class="page"><a href="{html.escape(rel)}">{html.escape(os.path.basename(name))}</a>: '
                         f'{html.escape(what)}</p>')
    claims, skipped = parse_output(text)
    if claims:
        rows = []
        for c in claims:
            colour = COLOURS[c["verdict"]]
            why = f"<br/><small>{html.escape(c['why'])}</small>" if c["why"] else ""
            rows.append(f'<tr><td>{c["id"]}</td><td class="verdict" style="color:{colour}">{c["verdict"]}</td>'
                        f'<td>{html.escape(c["what"])}{why}</td><td>{html.escape(c["chapter"])}</td>'
                        f'<td>{html.escape(c["ours"])}</td></tr>')
        for cid, why in skipped:
            rows.append(f'<tr><td>{cid}</td><td class="verdict">skipped</td><td colspan="3">{html.escape(why)}</td></tr>')
        parts.append("<table><tr><th>claim</th><th>verdict</th><th>statement</th><th>chapter</th><th>ours</th></tr>"
                     + "".join(rows) + "</table>")
    parts.append(f"<details><summary>what it printed ({len(lines)} lines)</summary><pre>{html.escape(text)}</pre></details>")
    return "\n".join(parts)


def write(args):
    runs, out_dir = collect(args)
    if not runs:
        print(f"tour_html.py: no program output found ({args.dir or args.runs})", file=sys.stderr)
        return 1
    nav = "".join(f'<li><a href="#{p}">{html.escape(next((l for l in t.splitlines() if l.startswith("Section ")), p))}</a></li>'
                  for p, t, _ in runs)
    body = "\n".join(section(p, t, d, out_dir) for p, t, d in runs)
    page = f"""<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en">
<head><meta charset="utf-8"/><title>Attention and the Transformer — the tour</title><style>{STYLE}</style></head>
<body>
<h1>Attention and the Transformer — the tour (Chú ý và Transformer)</h1>
<p>Every section program of the chapter, in order: its pictures, its claims (each verdict:
<span style="color:{COLOURS['agrees']}">agrees</span>, <span style="color:{COLOURS['shape']}">shape</span> — only a
named weaker statement holds —, <span style="color:{COLOURS['differs']}">differs</span>, or
<span style="color:{COLOURS['unresolved']}">unresolved</span> — a trained claim whose seeds disagree; CLAIMS.md says why), and
what it printed. Written by <code>tools/tour.sh</code>.</p>
<nav><ul>{nav}</ul></nav>
{body}
</body>
</html>
"""
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(page)
    print(f"wrote {args.out} ({len(runs)} programs)")
    return 0


def check(path):
    try:
        tree = ET.parse(path)
    except (ET.ParseError, OSError) as e:
        print(f"{path}: not well-formed: {e}", file=sys.stderr)
        return 1
    ns = {"h": "http://www.w3.org/1999/xhtml"}
    imgs = tree.getroot().findall(".//h:img", ns)
    missing = [i.get("src") for i in imgs if not os.path.exists(os.path.join(os.path.dirname(path), i.get("src")))]
    links = [a.get("href") for a in tree.getroot().findall(".//h:a", ns) if not a.get("href", "#").startswith("#")]
    missing += [h for h in links if not os.path.exists(os.path.join(os.path.dirname(path), h))]
    sections = tree.getroot().findall(".//h:h2", ns)
    if missing:
        print(f"{path}: pictures or pages that do not exist: {', '.join(missing)}", file=sys.stderr)
        return 1
    if not sections or not imgs:
        print(f"{path}: {len(sections)} sections and {len(imgs)} pictures; expected some of each", file=sys.stderr)
        return 1
    for img in imgs:  # each picture is itself well-formed SVG
        src = os.path.join(os.path.dirname(path), img.get("src"))
        try:
            if not ET.parse(src).getroot().tag.endswith("svg"):
                raise ET.ParseError("the root is not <svg>")
        except ET.ParseError as e:
            print(f"{src}: not a well-formed SVG: {e}", file=sys.stderr)
            return 1
    print(f"{path}: well-formed; {len(sections)} sections, {len(imgs)} pictures and {len(links)} linked pages, all present")
    return 0


def screenshot(path):
    if not headless.browser():
        print("tour_html.py --screenshot: Debian's chromium is not installed; skipped")
        return headless.SKIPPED
    data = headless.screenshot(path, None, 1200, 2400)
    if data is None:
        print(f"{path}: chromium wrote no screenshot", file=sys.stderr)
        return 1
    distinct = headless.distinct_bytes(data)
    if distinct < 32:
        print(f"{path}: the screenshot looks blank ({distinct} distinct byte values)", file=sys.stderr)
        return 1
    print(f"{path}: rendered by {headless.browser()}; the screenshot has {distinct} distinct byte values")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--dir", help="the tour's folder: <program>.txt and the SVGs")
    g.add_argument("--runs", help="the program tests' scratch folder (<program>_runs/stdout.txt)")
    g.add_argument("--check", metavar="FILE", help="check a written page")
    g.add_argument("--screenshot", metavar="FILE", help="render a written page headless and check it is not blank")
    ap.add_argument("--out", help="where to write the page (default: DIR/index.html)")
    a = ap.parse_args()
    if a.check:
        return check(a.check)
    if a.screenshot:
        return screenshot(a.screenshot)
    if not a.out:
        if not a.dir:
            ap.error("--runs needs --out")
        a.out = os.path.join(a.dir, "index.html")
    return write(a)


if __name__ == "__main__":
    sys.exit(main())
