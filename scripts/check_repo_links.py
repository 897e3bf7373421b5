#!/usr/bin/env python3
"""Fails when the repository refers to something it does not hold.

Checks every text file of the tree (sources, comments, scripts, docs, README):
  - no path outside the repository: no parent-folder "shared" docs, no absolute
    paths of the machine the project was written on (the patterns are FORBIDDEN);
  - every relative markdown link [text](target) of a .md file points at a file or
    folder that exists, and its #anchor, if any, at a heading of that page;
  - every citation of a page under docs/ exists, and so does the section it names:
    `<page>, "Title"` or `<page> ("Title")` needs a heading, a bold paragraph lead or
    a numbered step that starts with Title; `<page> section N` or `<page> sN` a
    heading numbered "N."; a README section cited the same way must exist in README.md;
  - bench/results holds only cited raw files: every file under it is cited by a
    .md page (its path, a glob with * or {a,b}, a folder below the dated one, or its
    file name), and every citation of bench/results/... matches at least one file.
    A citation written as REV:path (a file in git history, e.g.
    `git show 240cb2d:bench/results/...`) is not checked. The raw files themselves
    are recorded output: the paths they print are not references;
  - README.md stays an overview: at most README_MAX_LINES lines.

Usage: scripts/check_repo_links.py [repository root]   (exit 1 and one line per
problem: file:line: what is wrong)
"""
import fnmatch
import functools
import pathlib
import re
import subprocess
import sys

FORBIDDEN = ["../" + "shared", "/" + "work/"]
SKIP_DIRS = {".git", "dist", "out", ".carry", "node_modules"}
README_MAX_LINES = 150
BINARY_SUFFIXES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp", ".npy", ".xz",
                   ".gz", ".ico", ".icns", ".ttf", ".pdf", ".so", ".a"}
MD_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
DOC_CITATION = re.compile(r"(?<![\w/.])(docs/[\w./-]+?\.md)"
                          r"(?:(?:,\s*|\s*\(|'s\s+)\"([^\"]+)\"|\s+section\s+(\d+)|\s+s(\d+)\b)?")
README_SECTION = re.compile(r"README(?:\.md)?,\s*\"([^\"]+)\"")
RESULTS_CITATION = re.compile(r"(?<![\w:/])bench/results/(?:[^\s`'\"()\[\],;{}]|\{[^{}\s]*\})*")


def repoFiles(root):
    """Tracked and untracked-but-not-ignored files; a walk when there is no git."""
    try:
        listed = subprocess.run(["git", "-C", str(root), "ls-files", "--cached", "--others",
                                 "--exclude-standard", "-z"], check=True, capture_output=True).stdout
        names = [n for n in listed.decode().split("\0") if n]
        return sorted(root / n for n in names if (root / n).is_file())
    except (OSError, subprocess.CalledProcessError):
        return sorted(p for p in root.rglob("*") if p.is_file() and not any(
            part in SKIP_DIRS or part.startswith("build") for part in p.relative_to(root).parts[:-1]))


def textOf(path):
    if path.suffix.lower() in BINARY_SUFFIXES:
        return None
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", errors="replace")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@functools.lru_cache(maxsize=None)
def headingsOf(path):
    return [m.group(1).strip() for m in re.finditer(r"^#+\s+(.*)$", path.read_text(), re.M)]


def anchorOk(path, anchor):
    return anchor in {slug(h) for h in headingsOf(path)}


def sectionOk(path, title, number):
    headings = headingsOf(path)
    if number:
        return any(re.match(rf"{number}\.\s", h) for h in headings)
    wanted = title.lower().rstrip(".")
    if any(wanted in h.lower() for h in headings):
        return True
    lead = re.compile(r"^\s*(?:[-*]\s+|\d+[a-z]?\.\s+)?(?:\*\*)?" + re.escape(wanted), re.I | re.M)
    return bool(lead.search(path.read_text()))


def expandBraces(pattern):
    match = re.search(r"\{([^{}]*)\}", pattern)
    if not match:
        return [pattern]
    return [expanded for choice in match.group(1).split(",")
            for expanded in expandBraces(pattern[:match.start()] + choice + pattern[match.end():])]


def citedResults(citation, resultFiles):
    """The files under bench/results a citation names (a folder names all below it)."""
    matched = set()
    for pattern in expandBraces(citation.rstrip(".")):
        prefix = pattern.rstrip("/") + "/"
        for name in resultFiles:
            if fnmatch.fnmatchcase(name, pattern) or name.startswith(prefix) or (
                    "*" in pattern and fnmatch.fnmatchcase(name, pattern.rstrip("/") + "/*")):
                matched.add(name)
    return matched


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    problems = []
    files = repoFiles(root)
    resultFiles = {str(p.relative_to(root)) for p in files if str(p.relative_to(root)).startswith("bench/results/")}
    cited = set()

    for path in files:
        rel = str(path.relative_to(root))
        text = textOf(path)
        if text is None:
            continue
        isDoc = path.suffix == ".md"
        for number, line in enumerate(text.splitlines(), 1):
            where = f"{rel}:{number}"
            for pattern in FORBIDDEN:
                if pattern in line and not rel.startswith("bench/results/"):
                    problems.append(f"{where}: refers to '{pattern}', outside the repository")
            if isDoc:
                for target in MD_LINK.findall(line):
                    if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                        continue  # http:, https:, mailto:
                    name, _, anchor = target.partition("#")
                    linked = (path.parent / name).resolve() if name else path
                    if name and (not linked.exists() or root not in (linked, *linked.parents)):
                        problems.append(f"{where}: link to '{target}': no such file in the repository")
                    elif anchor and linked.suffix == ".md" and not anchorOk(linked, anchor):
                        problems.append(f"{where}: link to '{target}': no heading with that anchor")
            for m in DOC_CITATION.finditer(line):
                doc = root / m.group(1)
                if not doc.exists():
                    problems.append(f"{where}: cites {m.group(1)}, which does not exist")
                elif (m.group(2) or m.group(3) or m.group(4)) and not sectionOk(
                        doc, m.group(2) or "", m.group(3) or m.group(4)):
                    section = f'"{m.group(2)}"' if m.group(2) else f"section {m.group(3) or m.group(4)}"
                    problems.append(f"{where}: cites {m.group(1)} {section}, which has no such section")
            for m in README_SECTION.finditer(line):
                if not sectionOk(root / "README.md", m.group(1), None):
                    problems.append(f'{where}: cites README.md "{m.group(1)}", which has no such section'
                                    " (moved to a page under docs/?)")
            if isDoc:
                for m in RESULTS_CITATION.finditer(line):
                    citation = m.group(0)
                    if "<" in citation or citation.rstrip("/.") == "bench/results":
                        continue
                    if re.fullmatch(r"bench/results/[^/]+/?\.?", citation):
                        problems.append(f"{where}: cites all of {citation}: too broad, cite the files"
                                        " (or a commit's copy, REV:path)")
                        continue
                    matched = citedResults(citation, resultFiles)
                    if not matched:
                        problems.append(f"{where}: cites {citation}, which matches no file under bench/results")
                    cited |= matched

    pages = "\n".join(textOf(p) or "" for p in files if p.suffix == ".md")
    cited |= {name for name in resultFiles - cited
              if len(pathlib.PurePath(name).name) >= 10 and pathlib.PurePath(name).name in pages}
    readme = root / "README.md"
    if readme.exists() and len(readme.read_text().splitlines()) > README_MAX_LINES:
        problems.append(f"README.md: {len(readme.read_text().splitlines())} lines, more than {README_MAX_LINES}:"
                        " move the detail to a page under docs/")
    for name in sorted(resultFiles - cited):
        problems.append(f"{name}: not cited by any .md page (delete it: git history keeps it)")

    for problem in problems:
        print(problem)
    if problems:
        print(f"check_repo_links: {len(problems)} problem(s)")
        return 1
    print(f"check_repo_links: {len(files)} files, {len(resultFiles)} raw results, all references resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
