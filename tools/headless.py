"""Debian's Chromium, headless: what the page checks (tools/tour_html.py, tools/explorer_check.py) share.

A page is opened from disk (file://), never over the network; the profile lives in a temporary folder.
"""
import os
import shutil
import subprocess
import tempfile
import zlib

SKIPPED = 77  # what ctest's SKIP_RETURN_CODE reads


def browser():
    """The chromium on PATH, or None."""
    return next((b for b in ("chromium", "chromium-browser") if shutil.which(b)), None)


def dump_dom(path, budget_ms=5000):
    """The page's DOM after its scripts ran (for up to budget_ms of virtual time), as text."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([browser(), "--headless", "--disable-gpu", "--no-sandbox", f"--user-data-dir={tmp}/profile",
                              f"--virtual-time-budget={budget_ms}", "--dump-dom", "file://" + os.path.abspath(path)],
                             capture_output=True, timeout=120)
    return out.stdout.decode("utf-8", errors="replace")


def screenshot(path, png, width, height, budget_ms=None):
    """Renders the page into png (width × height pixels; None: nowhere) after its scripts ran for budget_ms of
    virtual time (None: as soon as it loaded); returns the PNG's bytes, or None if chromium wrote none."""
    with tempfile.TemporaryDirectory() as tmp:
        shot = os.path.join(tmp, "page.png")
        subprocess.run([browser(), "--headless", "--disable-gpu", "--no-sandbox", f"--user-data-dir={tmp}/profile",
                        *([f"--virtual-time-budget={budget_ms}"] if budget_ms else []), f"--window-size={width},{height}", f"--screenshot={shot}",
                        "file://" + os.path.abspath(path)], capture_output=True, timeout=120)
        if not os.path.exists(shot):
            return None
        data = open(shot, "rb").read()
    if png:
        with open(png, "wb") as f:
            f.write(data)
    return data


def distinct_bytes(png_data):
    """How many byte values the image rows hold (zlib-compressed IDAT chunks): a blank page has a few, a page with
    text and pictures many."""
    idat, i = b"", 8
    while i < len(png_data):
        n = int.from_bytes(png_data[i:i + 4], "big")
        if png_data[i + 4:i + 8] == b"IDAT":
            idat += png_data[i + 8:i + 8 + n]
        i += 12 + n
    return len(set(zlib.decompress(idat)))
