#!/usr/bin/python3
"""Check that the series' documentation is in QEMU's HTML manual.

  check_html.py SRC MANUAL

SRC is the QEMU tree, MANUAL the build's docs/manual folder (the html
target of a build configured with --enable-docs).  Checks:
  - docs/devel/aio-polling.rst became devel/aio-polling.html, with the
    page's title and its text on poll-weight;
  - the QMP reference documents poll-weight as a member of
    IothreadProperties (qapi/qom.json) and of IOThreadInfo
    (qapi/misc.json), inside each type's own entry;
  - the text that qemu-options.hx gives poll-weight (the -object iothread
    synopsis and its paragraph) is in the invocation page.
Prints one line per check; exits 1 if any fails.
"""

import html
import os
import re
import sys


def text_of(markup):
    """Visible text of HTML, whitespace collapsed."""
    markup = re.sub(r"<(script|style)\b.*?</\1>", " ", markup, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def squash(text):
    """Text with the spaces that tags leave around punctuation gone, for
    comparing rst prose with rendered HTML."""
    return re.sub(r"\s+", "", text.replace("\u2019", "'").replace("\u2018", "'"))


def rst_plain(text):
    text = re.sub(r"``([^`]*)``", r"\1", text)
    text = re.sub(r":[a-z]+:`([^`<]*?)(?:\s*<[^>]*>)?`", r"\1", text)
    return text.replace("\\", "")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def qapi_entry(page, name):
    """The HTML of @name's entry in a QAPI reference page, or None."""
    m = re.search(r'id="[^"]*[.\-:]%s"' % re.escape(name), page)
    if not m:
        # older generators: a section whose heading is the name
        m = re.search(r"<h\d[^>]*>\s*%s\b" % re.escape(name), page)
    if not m:
        return None
    rest = page[m.end():]
    nxt = re.search(r'<dl class="qapi |<section id=|id="object-QMP-|'
                    r'id="command-QMP-|id="event-QMP-', rest)
    return rest[:nxt.start()] if nxt else rest


def main():
    src, manual = sys.argv[1], sys.argv[2]
    failures = 0

    def result(ok, what):
        nonlocal failures
        print(("ok   " if ok else "FAIL ") + what)
        failures += 0 if ok else 1

    # 1. the new page
    rst = read(os.path.join(src, "docs/devel/aio-polling.rst"))
    title = next(l for l, u in zip(rst.splitlines(), rst.splitlines()[1:])
                 if l.strip() and re.fullmatch(r"[=#*-]{3,}", u.strip()))
    page_path = os.path.join(manual, "devel/aio-polling.html")
    page = text_of(read(page_path)) if os.path.exists(page_path) else ""
    result(bool(page) and title.strip() in page,
           f"devel/aio-polling.html has the page's title '{title.strip()}'")
    result("poll-weight" in page, "devel/aio-polling.html names poll-weight")
    index = read(os.path.join(manual, "devel/index.html")) \
        if os.path.exists(os.path.join(manual, "devel/index.html")) else ""
    linked = "aio-polling.html" in index or any(
        "aio-polling.html" in read(os.path.join(d, f))
        for d, _, fs in os.walk(os.path.join(manual, "devel"))
        for f in fs if f.endswith(".html") and f != "aio-polling.html")
    result(linked, "another devel page links to aio-polling.html")

    # 2. the QMP reference
    ref_path = os.path.join(manual, "interop/qemu-qmp-ref.html")
    ref = read(ref_path) if os.path.exists(ref_path) else ""
    for name, schema in (("IothreadProperties", "qapi/qom.json"),
                         ("IOThreadInfo", "qapi/misc.json")):
        entry = qapi_entry(ref, name)
        result(entry is not None and "poll-weight" in text_of(entry),
               f"QMP reference: {name} ({schema}) documents poll-weight")

    # 3. qemu-options.hx
    hx = read(os.path.join(src, "qemu-options.hx"))
    inv_path = os.path.join(manual, "system/invocation.html")
    inv = squash(text_of(read(inv_path))) if os.path.exists(inv_path) else ""
    synopsis = re.search(r"``(-object iothread,[^`]*poll-weight[^`]*)``", hx)
    result(bool(synopsis) and squash(synopsis.group(1)) in inv,
           "invocation page: the -object iothread synopsis with poll-weight")
    paras = [p for p in re.split(r"\n\s*\n", hx)
             if "poll-weight" in p and "``-object" not in p
             and not p.lstrip().startswith(("DEF(", "#", "SRST", "ERST"))]
    paras = [squash(rst_plain(p)) for p in paras]
    result(bool(paras) and all(p in inv for p in paras),
           f"invocation page: qemu-options.hx's {len(paras)} paragraph(s) "
           "on poll-weight")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
