#!/usr/bin/env python3
"""The documents and the sources say what the code does, not how it came to be, and every link
between the documents resolves.

  docs_check.py SOURCE_DIR              check the tree
  docs_check.py --self-test             show that each rule catches what it is for

History: README.md, docs/ (Markdown and text; the JSON, PNG and CSV records under docs/results
are data and are not read), include/, src/ and tools/ must not name development sessions, issue
numbers, benchmark run or call numbers, or the source documents by their file names; the papers
are cited by title (docs/references.md).

Links: every relative link and image of README.md and docs/**/*.md names a file or folder of the
tree, and a #fragment names a heading (GitHub's anchor of it) or an explicit id of the target page.
A docs/ page named in include/, src/ or tools/ (a comment's "docs/results/...md") exists.
"""
import os
import re
import sys

HISTORY = [
    (re.compile(r"\bsessions? [0-9]", re.I), "a development session"),
    (re.compile(r"\bissues? #?[0-9]+", re.I), "an issue number"),
    (re.compile(r"\b(?:runs?|calls?) [1-9][0-9]?\.[0-9]{1,2}(?![0-9x%])(?!\s*(?:ms|us|ns|s|GB|MB)\b)", re.I),
     "a benchmark run or call number"),
    (re.compile(r"\brun[0-9]+(?:\.[0-9]+)*[a-z]?\.md\b|\brun[0-9]+\.[0-9]+", re.I), "a page or file named after a run"),
    (re.compile(r"seeds/"), "a path to the source documents"),
    (re.compile(r"\b[0-9]{3}_[0-9a-f]{16}\b"), "a source document's file name"),
    (re.compile(r"\bseeds? 00[0-9]\b", re.I), "a source document by its number"),
    (re.compile(r"NOTES-000"), "the notes on the source documents"),
    (re.compile(r"\buntil session\b|\bround 2\b", re.I), "a development story"),
]
TEXT_EXT = (".md", ".txt", ".h", ".c", ".cu", ".cuh", ".inc", ".def", ".cpp")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
ANCHOR_ID = re.compile(r"""<a\s+(?:id|name)\s*=\s*["']([^"']+)["']""", re.I)


def history_files(root):
    out = [os.path.join(root, "README.md")]
    for top in ("docs", "include", "src", "tools"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(TEXT_EXT):
                    out.append(os.path.join(d, f))
    return out


def history_hits(path, text):
    hits = []
    for n, line in enumerate(text.splitlines(), 1):
        for rx, what in HISTORY:
            m = rx.search(line)
            if m:
                hits.append(f"{path}:{n}: {what}: '{m.group(0)}' in: {line.strip()[:120]}")
    return hits


DOC_PATH = re.compile(r"\bdocs/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.(?:md|json|png|txt)\b")


def doc_path_problems(root, path, text):
    """docs/ files that a source file names must exist (a page renamed or folded leaves none)."""
    bad = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in DOC_PATH.finditer(line):
            if not os.path.exists(os.path.join(root, m.group(0))):
                bad.append(f"{path}:{n}: names {m.group(0)}, which does not exist")
    return bad


def slug(title):
    """GitHub's anchor of a heading: lower case, markup and punctuation dropped, spaces to '-'."""
    t = re.sub(r"`|\*\*|__", "", title.strip().lower())
    t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", t)
    t = re.sub(r"[^\w\- ]", "", t)
    return t.replace(" ", "-")


def strip_code(text):
    """Fenced blocks and inline code are not links."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(path, cache={}):
    if path not in cache:
        seen, out = {}, set()
        text = open(path, encoding="utf-8").read()
        for line in re.sub(r"^```.*?^```", "", text, flags=re.S | re.M).splitlines():
            m = HEADING.match(line)
            if m:
                s = slug(m.group(1))
                k = seen.get(s, 0)
                out.add(s if k == 0 else f"{s}-{k}")
                seen[s] = k + 1
        out.update(ANCHOR_ID.findall(text))
        cache[path] = out
    return cache[path]


def link_problems(root, path, text):
    bad, name = [], os.path.relpath(path, root)
    for m in LINK.finditer(strip_code(text)):
        target = m.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):
            continue  # http:, https:, mailto:
        where, _, frag = target.partition("#")
        dest = path if not where else os.path.normpath(os.path.join(os.path.dirname(path), where))
        if not dest.startswith(os.path.abspath(root)):
            bad.append(f"{name}: link '{target}' leaves the repository")
        elif not os.path.exists(dest):
            bad.append(f"{name}: link '{target}': no such file")
        elif frag and dest.endswith(".md") and frag not in anchors(dest):
            bad.append(f"{name}: link '{target}': no heading or id '{frag}' in {os.path.relpath(dest, root)}")
    return bad


def check(root):
    root = os.path.abspath(root)
    problems = []
    for p in history_files(root):
        if os.path.exists(p):
            rel, text = os.path.relpath(p, root), open(p, encoding="utf-8", errors="replace").read()
            problems += history_hits(rel, text)
            if not rel.startswith("docs"):
                problems += doc_path_problems(root, rel, text)
    docs = [os.path.join(root, "README.md")]
    for d, _, files in os.walk(os.path.join(root, "docs")):
        docs += [os.path.join(d, f) for f in sorted(files) if f.endswith(".md")]
    for p in docs:
        problems += link_problems(root, p, open(p, encoding="utf-8").read())
    return problems, len(docs)


def self_test():
    """Each rule must be able to fail: feed it what it is for, and what it must let pass."""
    must_hit = ["measured in session 7", "see issue 12", "Issue #3", "run 15.9 gave", "call 16.13",
                "h100-run15.md", "run15.9.json", "../shared/seeds/README.md", "000_361c478961634801.txt",
                "seed 004's run", "Seeds 000 and 003", "NOTES-000-003-004.md"]
    must_pass = ["the random rhs uses seed 2026", "mpirun -np 2", "the tests run 2 ranks on one GPU",
                 "round r + 2", "32 sessions of users", "runs 1.5x faster", "issue a launch",
                 "ranks run 0.311 ms a sweep", "it runs 1.5 ms", "gpu-run2.json (read by gpu_plots.py)"]
    fails = [s for s in must_hit if not history_hits("x", s)]
    fails += [s for s in must_pass if history_hits("x", s)]
    assert slug("`tb`: exact temporal blocking against `tuned`, n = 8192") == "tb-exact-temporal-blocking-against-tuned-n--8192"
    assert slug("Generators (`--gen`)") == "generators---gen"
    import tempfile
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "docs"))
        open(os.path.join(t, "docs", "a.md"), "w").write("# Top\n\n## Two words\n<a id=\"x1\"></a>\n")
        page = os.path.join(t, "README.md")
        ok = "[a](docs/a.md) [b](docs/a.md#two-words) [c](docs/a.md#x1) [d](https://e.org/x) `[e](nope.md)`\n"
        broken = ["[a](docs/b.md)", "[b](docs/a.md#three)", "![p](docs/p.png)", "[c](../outside.md)"]
        if link_problems(t, page, ok):
            fails.append("good links reported: " + "; ".join(link_problems(t, page, ok)))
        for b in broken:
            if not link_problems(t, page, b + "\n"):
                fails.append("broken link passed: " + b)
        if not doc_path_problems(t, "x.c", "/* see docs/results/h100-run16.md */"):
            fails.append("a comment naming a missing docs/ page passed")
        if doc_path_problems(t, "x.c", "/* see docs/a.md */"):
            fails.append("a comment naming an existing docs/ page was reported")
    for f in fails:
        print("self-test FAIL:", f)
    print(f"self-test: {len(fails)} failures")
    return 1 if fails else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) != 2:
        sys.exit("usage: docs_check.py SOURCE_DIR | --self-test")
    problems, n = check(sys.argv[1])
    for p in problems:
        print(p)
    print(f"{n} pages checked, {len(problems)} problems")
    sys.exit(1 if problems else 0)
