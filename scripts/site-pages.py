#!/usr/bin/env python3
"""The site's own pages, for scripts/docs.sh: the task guides, the man pages in HTML, and the
landing page. The library reference beside them is DocC's.

Usage:
  site-pages.py man PAGES-DIR SITE     every PAGES-DIR/*.1 (rsakit help --man-pages) through
                                       mandoc -Thtml into SITE/man/NAME.1.html, and man/index.html
  site-pages.py guides REPOSITORY SITE every docs/**/*.md into SITE/guides/ (after `man`, so that
                                       guides can link man pages), and guides/index.html
  site-pages.py landing SITE           SITE/index.html linking the three, and SITE/site.css
  site-pages.py catalog MODULE DIR     DIR/MODULE.docc: a layer's one-page DocC catalog (its abstract)

Guides:
- docs/X.md becomes guides/X.html (sub-folders kept), and guides/index.html lists every page
  under its first heading.
- A relative link is resolved against the page's place in the repository, as GitHub does:
  to a guide, it becomes the .html page (the #fragment kept); to another Markdown file of the
  repository (README.md, CHANGELOG.md), that file is rendered too, into files/PATH.html, and
  its own links are followed the same way; to any other file, the file is copied into
  files/PATH; to a folder, files/PATH/index.html lists the folder. So a link that works on
  GitHub works in the site, and a link to a file that does not exist stays as written, for
  scripts/check-site.sh to report.
- A man page named in the text as rsakit-COMMAND(1) (or rsakit(1)) links to its HTML page.
- Python-Markdown (Debian python3-markdown) with its "extra" (tables, fenced code), "toc"
  (heading anchors) and "sane_lists" extensions.

Man pages: mandoc renders man(7) cross references (.BR rsakit-encrypt (1)) as bold text; they
become links to the pages that exist.

Writes nothing outside SITE.
"""

import html
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as etree

import markdown
from markdown.treeprocessors import Treeprocessor
from markdown.extensions import Extension

MAN_REFERENCE = re.compile(r"\b(rsakit(?:-[a-z0-9-]+)?)\((1)\)")


class Site:
    def __init__(self, repository, site):
        self.repository = os.path.realpath(repository)
        self.site = site
        self.queue = []  # repository paths of Markdown files still to render
        self.rendered = {}  # repository path -> title
        self.scheduled = set()

    def site_path(self, repo_path):
        """Where a repository file lives in the site (a path relative to SITE)."""
        if repo_path.startswith("docs/") and repo_path.endswith(".md"):
            return "guides/" + repo_path[len("docs/"):-len(".md")] + ".html"
        if repo_path.endswith(".md"):
            return "files/" + repo_path[:-len(".md")] + ".html"
        return "files/" + repo_path

    def schedule(self, repo_path):
        if repo_path not in self.scheduled:
            self.scheduled.add(repo_path)
            self.queue.append(repo_path)

    def rewrite(self, href, page_repo_path):
        """The site href for a link written on the repository page page_repo_path."""
        if not href or href.startswith(("#", "/")) or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", href):
            return href
        path, hash_mark, fragment = href.partition("#")
        path = path.split("?", 1)[0]
        if not path:
            return href
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page_repo_path), path))
        absolute = os.path.realpath(os.path.join(self.repository, target))
        if target.startswith("..") or not (absolute + os.sep).startswith(self.repository + os.sep):
            return href  # outside the repository: left as written
        if os.path.isdir(absolute):
            site_target = "files/" + target.rstrip("/") + "/index.html" if target != "." else "index.html"
            if target != ".":
                self.list_folder(target)
        elif os.path.isfile(absolute):
            if target.endswith(".md"):
                self.schedule(target)
            else:
                self.copy_file(target)
            site_target = self.site_path(target)
        else:
            return href  # a broken link stays broken, for the link check to name
        here = posixpath.dirname(self.site_path(page_repo_path))
        relative = posixpath.relpath(site_target, here or ".")
        return relative + (hash_mark + fragment if hash_mark else "")

    def copy_file(self, repo_path):
        destination = os.path.join(self.site, self.site_path(repo_path))
        if not os.path.exists(destination):
            os.makedirs(os.path.dirname(destination), exist_ok=True)
            shutil.copyfile(os.path.join(self.repository, repo_path), destination)

    def list_folder(self, repo_path):
        repo_path = repo_path.rstrip("/")
        destination = os.path.join(self.site, "files", repo_path, "index.html")
        if os.path.exists(destination):
            return
        entries = sorted(os.listdir(os.path.join(self.repository, repo_path)))
        items = []
        for entry in entries:
            child = repo_path + "/" + entry
            if entry.startswith(".") or os.path.islink(os.path.join(self.repository, child)):
                continue
            if os.path.isdir(os.path.join(self.repository, child)):
                self.list_folder(child)
                link = entry + "/index.html"
            else:
                if child.endswith(".md"):
                    self.schedule(child)
                else:
                    self.copy_file(child)
                link = posixpath.relpath(self.site_path(child), "files/" + repo_path)
            items.append(f'<li><a href="{html.escape(link)}">{html.escape(entry)}</a></li>')
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        depth = repo_path.count("/") + 2
        self.write(destination, repo_path + "/", "<ul>\n" + "\n".join(items) + "\n</ul>", depth)

    def write(self, destination, title, body, depth):
        up = "../" * depth
        with open(destination, "w", encoding="utf-8") as out:
            out.write(PAGE.format(title=html.escape(title), body=body, up=up))

    def render(self, repo_path):
        with open(os.path.join(self.repository, repo_path), encoding="utf-8") as source:
            text = source.read()
        site = self

        class Links(Treeprocessor):
            def run(self, root):
                for element in root.iter():
                    if element.tag == "a" and element.get("href") is not None:
                        element.set("href", site.rewrite(element.get("href"), repo_path))
                    elif element.tag == "img" and element.get("src") is not None:
                        element.set("src", site.rewrite(element.get("src"), repo_path))
                link_man_pages(root, site_page=site.site_path(repo_path), site_root=site.site)

        class LinksExtension(Extension):
            def extendMarkdown(self, md):
                md.treeprocessors.register(Links(md), "rsakit-links", 0)

        converter = markdown.Markdown(extensions=["extra", "toc", "sane_lists", LinksExtension()])
        body = converter.convert(text)
        match = re.search(r"^#\s+(.+?)\s*#*\s*$", text, re.MULTILINE)
        title = match.group(1).replace("`", "") if match else posixpath.basename(repo_path)
        site_path = self.site_path(repo_path)
        destination = os.path.join(self.site, site_path)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        self.write(destination, title, body, site_path.count("/"))
        self.rendered[repo_path] = title


def link_man_pages(root, site_page, site_root):
    """Turn rsakit-COMMAND(1) in text (not inside a link or a code block) into a link."""
    here = posixpath.dirname(site_page)

    def walk(element, inside):
        inside = inside or element.tag in ("a", "pre")
        children = list(element)
        for child in children:
            walk(child, inside)
        if inside:
            return
        # element.text, then each child's tail, may hold references.
        split_text(element, None)
        for child in children:
            split_text(element, child)

    def split_text(parent, after):
        text = parent.text if after is None else after.tail
        if not text or not MAN_REFERENCE.search(text):
            return
        pieces = []
        last = 0
        for match in MAN_REFERENCE.finditer(text):
            page = f"man/{match.group(1)}.{match.group(2)}.html"
            if not os.path.exists(os.path.join(site_root, page)):
                continue
            pieces.append((text[last:match.start()], match.group(0), posixpath.relpath(page, here)))
            last = match.end()
        if not pieces:
            return
        rest = text[last:]
        if after is None:
            parent.text = pieces[0][0]
            index = 0
        else:
            after.tail = pieces[0][0]
            index = list(parent).index(after) + 1
        for number, (_, label, href) in enumerate(pieces):
            link = etree.Element("a", href=href)
            link.text = label
            link.tail = pieces[number + 1][0] if number + 1 < len(pieces) else rest
            parent.insert(index, link)
            index += 1

    walk(root, False)


PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="{up}site.css">
</head>
<body>
<nav><a href="{up}index.html">rsakit documentation</a> · <a href="{up}guides/index.html">Guides</a> ·
<a href="{up}man/index.html">Command reference</a> · <a href="{up}reference/documentation/">Library reference</a></nav>
<main>
{body}
</main>
</body>
</html>
"""


def guides(repository, site_root):
    site = Site(repository, site_root)
    pages = []
    for folder, folders, files in os.walk(os.path.join(repository, "docs")):
        folders.sort()
        for name in sorted(files):
            if name.endswith(".md"):
                path = os.path.relpath(os.path.join(folder, name), repository).replace(os.sep, "/")
                pages.append(path)
                site.schedule(path)
    while site.queue:
        site.render(site.queue.pop(0))
    items = []
    for path in pages:
        link = site.site_path(path)[len("guides/"):]
        items.append(f'<li><a href="{html.escape(link)}">{html.escape(site.rendered[path])}</a></li>')
    body = "<h1>Guides</h1>\n<ul>\n" + "\n".join(items) + "\n</ul>"
    os.makedirs(os.path.join(site_root, "guides"), exist_ok=True)
    site.write(os.path.join(site_root, "guides", "index.html"), "Guides", body, 1)
    others = len(site.rendered) - len(pages)
    print(f"docs: guides: {len(pages)} pages" + (f", and {others} Markdown files they link" if others else ""))


def man(pages_dir, site_root):
    out = os.path.join(site_root, "man")
    os.makedirs(out, exist_ok=True)
    names = sorted(name for name in os.listdir(pages_dir) if re.fullmatch(r"[a-z0-9-]+\.[1-9]", name))
    if not names:
        raise SystemExit(f"docs: error: no man page in {pages_dir}")
    # rsakit(1) first, then the commands.
    names.sort(key=lambda name: (name != "rsakit.1", name))
    items = []
    for name in names:
        source = os.path.join(pages_dir, name)
        rendered = subprocess.run(["mandoc", "-Thtml", "-Ofragment", source], check=True, capture_output=True,
                                  text=True).stdout

        def page_link(match, label):
            target = f"{match.group('name')}.{match.group('section')}"
            return f'<a href="{target}.html">{label}</a>' if target in names else match.group(0)

        # A list term (.TP .BR rsakit-x (1)) is a permalink anchor already, and anchors cannot
        # nest: there the link to the page replaces the permalink. Then every reference
        # outside an anchor.
        reference = r"<b>(?P<name>[a-z0-9-]+)</b>\((?P<section>[1-9])\)"
        rendered = re.sub(r'<a class="permalink" href="#[^"]*">(?P<label>' + reference + r")</a>",
                          lambda match: page_link(match, match.group("label")), rendered)
        pieces = re.split(r"(<a\b.*?</a>)", rendered, flags=re.DOTALL)
        for index in range(0, len(pieces), 2):
            pieces[index] = re.sub(reference, lambda match: page_link(match, match.group(0)), pieces[index])
        rendered = "".join(pieces)
        title = name.rsplit(".", 1)[0].upper() + "(" + name.rsplit(".", 1)[1] + ")"
        with open(os.path.join(out, name + ".html"), "w", encoding="utf-8") as page:
            page.write(PAGE.format(title=html.escape(title), up="../",
                                   body=f'<h1 class="man-title">{html.escape(title)}</h1>\n{rendered}'))
        summary = ""
        with open(source, encoding="utf-8") as roff:
            lines = roff.read().splitlines()
        if ".SH NAME" in lines:
            line = lines[lines.index(".SH NAME") + 1]
            summary = re.sub(r"\\(.)", r"\1", line.split(" \\- ", 1)[-1])
        items.append(f'<li><a href="{html.escape(name)}.html">{html.escape(title)}</a> {html.escape(summary)}</li>')
    body = ("<h1>Command reference</h1>\n<p>The manual pages of the <code>rsakit</code> command, as "
            "<code>man rsakit</code> shows them once installed.</p>\n<ul>\n" + "\n".join(items) + "\n</ul>")
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as page:
        page.write(PAGE.format(title="Command reference", up="../", body=body))
    print(f"docs: man pages: {len(names)}")


def landing(site_root, modules):
    items = "\n".join(f'<li><a href="reference/documentation/{module.lower()}/">{module}</a> {html.escape(text)}</li>'
                      for module, text in modules)
    body = f"""<h1>rsakit documentation</h1>
<p>rsakit is an RSA library for Swift on Linux and the <code>rsakit</code> command built on it.</p>
<h2><a href="guides/index.html">Guides</a></h2>
<p>Task guides: what to run for a goal, from a first key pair to mutual TLS.</p>
<h2><a href="man/index.html">Command reference</a></h2>
<p>The manual page of every <code>rsakit</code> command, starting with
<a href="man/rsakit.1.html">rsakit(1)</a>.</p>
<h2><a href="reference/documentation/">Library reference</a></h2>
<p>Every public symbol, from DocC. <code>import RSAKit</code> brings all four layers; a package can
depend on one layer alone.</p>
<ul>
{items}
</ul>
"""
    with open(os.path.join(site_root, "index.html"), "w", encoding="utf-8") as page:
        page.write(PAGE.format(title="rsakit documentation", up="", body=body))
    with open(os.path.join(site_root, "site.css"), "w", encoding="utf-8") as css:
        css.write(CSS)
    # DocC's icon for the whole site (browsers ask for /favicon.ico), and DocC's optional
    # theme settings, which its pages request (a 404 would be a console error): the title
    # its pages carry after the symbol's name.
    shutil.copyfile(os.path.join(site_root, "reference", "favicon.ico"), os.path.join(site_root, "favicon.ico"))
    theme = os.path.join(site_root, "reference", "theme-settings.json")
    if not os.path.exists(theme):
        with open(theme, "w", encoding="utf-8") as settings:
            json.dump({"meta": {"title": "rsakit"}}, settings)


CSS = """body { font-family: -apple-system, "Helvetica Neue", Helvetica, Arial, sans-serif; line-height: 1.5;
  margin: 0; color: #1d1d1f; }
nav { padding: 0.6em 1.5em; background: #f5f5f7; border-bottom: 1px solid #d2d2d7; }
main { max-width: 52em; margin: 0 auto; padding: 1em 1.5em 3em; }
pre { background: #f5f5f7; padding: 0.8em; overflow-x: auto; }
code { font-family: "SF Mono", Menlo, Consolas, monospace; font-size: 0.92em; }
table { border-collapse: collapse; } th, td { border: 1px solid #d2d2d7; padding: 0.2em 0.5em; }
h1.man-title { font-size: 1.2em; }
"""

MODULES = [
    ("RSAKit", "the umbrella module: every layer's API in one place, with the articles"),
    ("RSAKitCore", "keys, RSA and its paddings, key formats, messages and the container (GMP, Nettle)"),
    ("RSAKitPKI", "X.509 certificates, trust evaluation, revocation, PKCS#12 (GnuTLS, libcurl)"),
    ("RSAKitKeychain", "the key store, the unlock agent, keys on PKCS#11 tokens (libsodium, p11-kit)"),
    ("RSAKitTLS", "the TLS client with a stored identity, and the HTTPS client"),
]


def catalog(module, folder):
    """A catalog of one page for a layer's archive: its abstract, and where the articles are."""
    text = dict(MODULES)[module]
    path = os.path.join(folder, module + ".docc")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, module + ".md"), "w", encoding="utf-8") as page:
        page.write(f"""# ``{module}``

{text[0].upper() + text[1:]}.

## Overview

This archive holds the public symbols of the {module} layer alone, for a package that depends on
that product only. `import RSAKit` brings every layer: its archive, beside this one, has the
articles and every layer's symbols in one place.
""")


def main():
    arguments = sys.argv[1:]
    if len(arguments) == 3 and arguments[0] == "guides":
        guides(arguments[1], arguments[2])
    elif len(arguments) == 3 and arguments[0] == "man":
        man(arguments[1], arguments[2])
    elif len(arguments) == 3 and arguments[0] == "catalog":
        catalog(arguments[1], arguments[2])
    elif len(arguments) == 2 and arguments[0] == "landing":
        landing(arguments[1], MODULES)
    else:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 64
    return 0


if __name__ == "__main__":
    sys.exit(main())
