#!/usr/bin/env python3
"""Turn one Markdown page into the shell script that runs its commands, for check-guides.sh.

The page rules (docs/testing.md, "Commands in the guides", says them for writers):
  - A fenced block whose info string is `sh` holds commands a reader types. They run, in page
    order, as one bash script (`set -euo pipefail`), so a later block sees the files and the
    store an earlier one made, as a reader following the page would.
  - `<!-- run: skip REASON -->` on the line right before a fence leaves that block out; the
    reason is listed on every run (for `sudo apt install`, or the test command itself).
  - `<!-- run: setup` ... `-->` is run where it stands and never shown: the files a page takes
    for granted (a report.pdf to encrypt, a server to talk to).
  - Commands may not hide from the check: an indented code block, or a fence marked bash,
    shell, console or shell-session, is an error. Output goes in ```text.

Usage: guide-blocks.py PAGE > script.sh; prints "skip LINE REASON" lines on stderr.
Exit status 2 on a page that breaks the rules, with the reason on stderr.
"""
import re
import shlex
import sys

FORBIDDEN = {"bash", "shell", "console", "shell-session", "zsh", "shellsession"}


def main(path: str) -> int:
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    out = []
    problems = []
    skip_reason = None
    i = 0
    in_html_comment = False
    previous_blank = True
    while i < len(lines):
        line = lines[i]
        number = i + 1
        # Markers and fences may be indented (inside a list item).
        setup = re.match(r"^\s*<!-- run: setup\s*$", line)
        skip = re.match(r"^\s*<!-- run: skip (.+?) -->\s*$", line)
        fence = re.match(r"^(\s*)(```+|~~~+)\s*([A-Za-z0-9_-]*)", line)
        if setup:
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != "-->":
                body.append(lines[i])
                i += 1
            if i == len(lines):
                problems.append(f"{path}:{number}: a setup comment that never closes")
                break
            out.append(f"__block={shlex.quote(f'{path}:{number} (setup)')}")
            out.extend(body)
            i += 1
            previous_blank = False
            continue
        if skip:
            skip_reason = skip.group(1)
            i += 1
            continue
        if line.lstrip().startswith("<!--") and "-->" not in line:
            in_html_comment = True
        if in_html_comment:
            if "-->" in line:
                in_html_comment = False
            i += 1
            continue
        if fence:
            indent, marker, info = fence.group(1), fence.group(2), fence.group(3).lower()
            body = []
            i += 1
            while i < len(lines) and not lines[i].lstrip().startswith(marker[0] * len(marker)):
                line_i = lines[i]
                body.append(line_i[len(indent):] if line_i.startswith(indent) else line_i.lstrip())
                i += 1
            if info in FORBIDDEN:
                problems.append(f"{path}:{number}: a ```{info} block: commands go in ```sh, output in ```text")
            elif info == "sh":
                if skip_reason is not None:
                    print(f"skip {path}:{number} {skip_reason}", file=sys.stderr)
                else:
                    out.append(f"__block={shlex.quote(f'{path}:{number}')}")
                    out.extend(body)
            elif skip_reason is not None:
                problems.append(f"{path}:{number}: a skip marker before a ```{info or 'plain'} block, which never runs")
            skip_reason = None
            i += 1
            previous_blank = False
            continue
        if skip_reason is not None and line.strip():
            problems.append(f"{path}:{number - 1}: a skip marker not right before a fence")
            skip_reason = None
        # An indented code block: four spaces after a blank line, outside a list.
        if previous_blank and line.startswith("    ") and line.strip() and not re.match(r"^\s*([-*+]|\d+\.)\s", line):
            problems.append(f"{path}:{number}: an indented code block: commands go in ```sh, output in ```text")
        previous_blank = not line.strip()
        i += 1
    for problem in problems:
        print(f"error {problem}", file=sys.stderr)
    print("\n".join(out))
    return 2 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
