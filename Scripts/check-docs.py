#!/usr/bin/env python3
"""The checks that keep SDFetchCore.md's map true (make docs-check):

- every folder under Sources/SDFetchCore and every target under Sources/ is named in the
  "Source layout" block;
- every source path a table or the block cites (`Run/FetchRun.swift`) exists, under
  Sources/SDFetchCore/, Sources/sdfetch/ or the repository's root;
- every repository path the articles and the README cite (`Tests/...`, `Scripts/...`)
  exists.

Prints each drift and exits 1 when there is one. Usage: Scripts/check-docs.py [ROOT]
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
article = root / "Sources/SDFetchCore/SDFetchCore.docc/SDFetchCore.md"
text = article.read_text()
problems = []

layout = re.search(r"## Source layout\s*```(.*?)```", text, re.S)
if not layout:
    problems.append(f"{article}: no 'Source layout' block")
block = layout.group(1) if layout else ""
named = set(re.findall(r"([A-Za-z][A-Za-z0-9_.]*)/", block)) | set(re.findall(r"\b[A-Za-z][A-Za-z0-9_]*\b", block))

core = root / "Sources/SDFetchCore"
for folder in sorted(p for p in core.rglob("*") if p.is_dir() and not any(part.endswith(".docc") for part in p.parts)):
    if folder.name not in named:
        problems.append(f"{article.name}: Source layout lacks the folder {folder.relative_to(root)}/")
for target in sorted(p for p in (root / "Sources").iterdir() if p.is_dir()):
    if target.name not in named:
        problems.append(f"{article.name}: Source layout lacks the target Sources/{target.name}/")

bases = [core, root / "Sources/sdfetch", root / "Sources", root]
for path in sorted(set(re.findall(r"`([A-Za-z][A-Za-z0-9_+./-]*\.(?:swift|md|sh|py|c|h))`", text))):
    if not any((base / path).exists() for base in bases):
        problems.append(f"{article.name}: cites `{path}`, which does not exist")

articles = sorted((root / "Sources/SDFetchCore/SDFetchCore.docc").glob("*.md")) + [root / "README.md"]
for document in articles:
    cited = re.findall(r"`((?:Sources|Tests|Scripts|Fuzz|Bench)/[A-Za-z0-9_+./-]*[A-Za-z0-9_])`", document.read_text())
    for path in sorted(set(cited)):
        if "*" not in path and not (root / path).exists():
            problems.append(f"{document.name}: cites `{path}`, which does not exist")

for problem in problems:
    print(problem)
sys.exit(1 if problems else 0)
