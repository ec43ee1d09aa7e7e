"""HTML -> Markdown candidates for web_fetch, side by side (docs/web-fetch.md has the results).

Run each library in a fresh interpreter (import time is part of the comparison), in a scratch venv
that has them all:

    python -m venv /tmp/webcmp && /tmp/webcmp/bin/pip install html2text markdownify trafilatura readability-lxml
    for lib in html2text markdownify trafilatura readability+markdownify; do
        /tmp/webcmp/bin/python bench/web_markdown.py $lib bench/data/web/blog.html; done

It prints one JSON line per run: import and conversion milliseconds, characters out, tags left,
whether script text leaked; the Markdown goes to /tmp/web-<lib>-<page>.md to be read.
"""

import json
import re
import sys
import time
from pathlib import Path

name, path = sys.argv[1], Path(sys.argv[2])
t0 = time.perf_counter()
if name == "html2text":
    import html2text
elif name == "markdownify":
    import markdownify
elif name == "trafilatura":
    import trafilatura
elif name == "readability+markdownify":
    import markdownify
    import readability
else:
    raise SystemExit(f"unknown library {name}")
t1 = time.perf_counter()
html = path.read_text(encoding="utf-8")
if name == "html2text":
    converter = html2text.HTML2Text()
    converter.body_width = 0
    out = converter.handle(html)
elif name == "markdownify":
    out = markdownify.markdownify(html, heading_style="ATX", strip=["script", "style"])
elif name == "trafilatura":
    out = trafilatura.extract(html, output_format="markdown", include_links=True, include_tables=True,
                              include_formatting=True, favor_recall=True) or ""
else:
    doc = readability.Document(html)
    out = f"# {doc.short_title()}\n\n" + markdownify.markdownify(doc.summary(html_partial=True), heading_style="ATX")
t2 = time.perf_counter()
print(json.dumps({"lib": name, "page": path.name, "import_ms": round((t1 - t0) * 1000),
                  "convert_ms": round((t2 - t1) * 1000), "chars": len(out),
                  "tags_left": len(re.findall(r"</?[a-zA-Z][^>]*>", out)),
                  "script_leak": any(s in out for s in ("dataLayer", "alert(", "document.cookie"))}))
Path(f"/tmp/web-{name}-{path.stem}.md").write_text(out)
