#!/usr/bin/env python3
"""The browser check of the documentation site that scripts/docs.sh builds (scripts/check-site.sh
runs it; see there for what it asserts).

Usage: check-site.py SITE

Exit status 0 when every check passes (or when only the browser part was skipped because
Chromium cannot start at all, which it says), 1 when a check fails, each failure on a line
starting "check-site: error:".
"""

import html.parser
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

# (path, expected title): the pages opened in the browser. The symbol pages come from four
# archives (one per layer) merged into one; their titles are what DocC's JavaScript renders.
BROWSER_PAGES = [
    ("/index.html", "rsakit documentation"),
    ("/reference/documentation/", "rsakit"),
    ("/reference/documentation/rsakit/", "RSAKit"),
    ("/reference/documentation/rsakitcore/rsaprivatekey/", "RSAPrivateKey"),
    ("/reference/documentation/rsakitkeychain/rsakeystore/", "RSAKeyStore"),
    ("/reference/documentation/rsakitpki/rsatrust/", "RSATrust"),
    ("/reference/documentation/rsakittls/rsatlsconnection/", "RSATLSConnection"),
    ("/reference/documentation/rsakitcore/rsaerror/", "RSAError"),
    ("/guides/testing.html", None),  # the first heading of docs/testing.md, read below
    ("/man/rsakit-encrypt.1.html", "RSAKIT-ENCRYPT(1)"),
]
GUIDE_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "testing.md")


def guide_title():
    """The title the guide must show: its source's first level-1 heading, code marks removed."""
    with open(GUIDE_SOURCE, encoding="utf-8") as source:
        match = re.search(r"^#\s+(.+?)\s*#*\s*$", source.read(), re.MULTILINE)
    return match.group(1).replace("`", "") if match else None

failures = []


def fail(message):
    failures.append(message)
    print(f"check-site: error: {message}", file=sys.stderr, flush=True)


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links = []

    def handle_starttag(self, tag, attributes):
        for name, value in attributes:
            if value and ((name == "href" and tag in ("a", "link")) or (name == "src" and tag in ("img", "script"))):
                self.links.append(value)


class Crawler:
    """GET every same-origin URL once; parse the site's own HTML pages (not DocC's, whose
    links exist only after its JavaScript has run: those come from the navigator index and
    the pages' data JSON instead)."""

    def __init__(self, origin):
        self.origin = origin
        self.status = {}  # path -> status
        self.referrers = {}  # path -> first page that linked it

    def fetch(self, path):
        try:
            with urllib.request.urlopen(self.origin + path, timeout=30) as response:
                return response.status, response.read(), response.headers.get_content_type()
        except urllib.error.HTTPError as error:
            return error.code, b"", ""

    def check(self, url, referrer):
        """Check the same-origin url (absolute or a path); return its path, or None."""
        parts = urllib.parse.urlsplit(urllib.parse.urljoin(self.origin + "/", url))
        if f"{parts.scheme}://{parts.netloc}" != self.origin:
            return None
        path = parts.path or "/"
        if path in self.status:
            return path
        status, body, kind = self.fetch(path)
        self.status[path] = status
        self.referrers[path] = referrer
        if status != 200:
            fail(f"broken link: {path} answers {status} (linked from {referrer})")
            return None
        return (path, body, kind)

    def crawl_pages(self, seeds):
        """Breadth first over the site's own pages (all but /reference/)."""
        queue = list(seeds)
        parsed = set()
        pages = 0
        while queue:
            path, referrer = queue.pop(0)
            result = self.check(path, referrer)
            if not isinstance(result, tuple):
                continue
            path, body, kind = result
            if kind != "text/html" or path in parsed or path.startswith("/reference/"):
                continue
            parsed.add(path)
            pages += 1
            parser = Links()
            parser.feed(body.decode("utf-8", "replace"))
            for link in parser.links:
                absolute = urllib.parse.urljoin(self.origin + path, link)
                absolute = urllib.parse.urldefrag(absolute)[0]
                target = urllib.parse.urlsplit(absolute)
                if f"{target.scheme}://{target.netloc}" != self.origin:
                    continue
                if target.path not in self.status:
                    queue.append((target.path, path))
        return pages

    def crawl_reference(self):
        """Every page of DocC's navigator index has its HTML and its data JSON, and every
        reference a page's JSON names (the links it renders) has its JSON."""
        result = self.check("/reference/index/index.json", "the DocC navigator")
        if not isinstance(result, tuple):
            return 0, 0
        index = json.loads(result[1])
        paths = set()

        def walk(nodes):
            for node in nodes:
                if node.get("path"):
                    paths.add(node["path"].split("#")[0])
                walk(node.get("children", []))

        for language in index.get("interfaceLanguages", {}).values():
            walk(language)
        if not paths:
            fail("the DocC navigator index lists no page")
        references = set()
        for path in sorted(paths):
            self.check("/reference" + path.rstrip("/") + "/", "the DocC navigator")
            data = self.check("/reference/data" + path.rstrip("/") + ".json", "/reference" + path)
            if not isinstance(data, tuple):
                continue
            for reference in json.loads(data[1]).get("references", {}).values():
                url = reference.get("url")
                if reference.get("type") == "topic" and url and url.startswith("/") and not url.startswith("//"):
                    references.add((url.split("#")[0], path))
        for url, page in sorted(references):
            if url.startswith("/documentation/") or url.startswith("/tutorials/"):
                self.check("/reference/data" + url.rstrip("/") + ".json", "/reference" + page)
        return len(paths), len(references)


def start_server(site):
    server = subprocess.Popen(
        [sys.executable, "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", site],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline()
    match = re.search(r"port (\d+)", line)
    if not match:
        server.kill()
        raise SystemExit(f"check-site: error: http.server did not start: {line!r}")
    return server, f"http://127.0.0.1:{match.group(1)}"


def start_browser():
    """Debian's chromium through Debian's chromedriver (never a downloaded browser), or the
    reason it cannot start."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as error:
        # Not a reason to skip: scripts/install-deps.sh installs it.
        fail(f"selenium is not installed for {sys.executable} (pip install selenium): {error}")
        return None, None
    browser = os.environ.get("RSAKIT_CHROMIUM", "/usr/bin/chromium")
    driver_path = os.environ.get("RSAKIT_CHROMEDRIVER", "/usr/bin/chromedriver")
    for path in (browser, driver_path):
        if not os.access(path, os.X_OK):
            return None, f"{path} is not installed"
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for argument in ("--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1024",
                     "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    if os.geteuid() == 0:
        options.add_argument("--no-sandbox")  # Chromium's sandbox refuses to run as root
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        return webdriver.Chrome(service=Service(executable_path=driver_path), options=options), None
    except Exception as error:  # any failure to start is the one reason to skip
        return None, f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"


def check_in_browser(driver, origin, crawler):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.set_page_load_timeout(60)
    for path, title in BROWSER_PAGES:
        title = title or guide_title()
        began = time.monotonic()
        driver.get(origin + path)
        # DocC renders its page with JavaScript from the page's data JSON: wait for the title
        # element it writes (h1.title); the site's own pages have a plain h1.
        selector = "main h1.title, .topictitle h1" if path.startswith("/reference/") else "h1"

        def rendered(driver):
            for element in driver.find_elements(By.CSS_SELECTOR, selector):
                if element.text.strip():
                    return element.text.strip()
            return False

        try:
            shown = WebDriverWait(driver, 30).until(rendered)
        except Exception:
            body = driver.find_element(By.TAG_NAME, "body").text.strip().replace("\n", " ")[:200]
            fail(f"{path}: no title rendered in 30 s (the page shows: {body!r})")
            shown = None
        if shown is not None and shown != title:
            fail(f"{path}: the title rendered is {shown!r}, expected {title!r}")
        # Console errors, and every resource the page loaded (DocC's data JSON among them).
        for entry in driver.get_log("browser"):
            if entry.get("level") == "SEVERE":
                fail(f"{path}: console error: {entry.get('message')}")
        resources = driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => [e.name, e.responseStatus])")
        data = 0
        for name, status in resources:
            if not name.startswith(origin):
                continue
            # 0: served from the browser's cache without a status (a failed load logs a
            # console error as well, which fails above); 304: revalidated from the cache.
            if status not in (200, 0, 304):
                fail(f"{path}: loaded {name[len(origin):]} with status {status}")
            if name.startswith(origin + "/reference/data/") and name.endswith(".json"):
                data += 1
        if path.startswith("/reference/") and data == 0:
            fail(f"{path}: the page loaded no data JSON")
        # The links DocC rendered, checked like the others.
        hrefs = driver.execute_script(
            "return [...document.querySelectorAll('a[href]')].map(a => a.href)")
        links = 0
        for href in hrefs:
            href = urllib.parse.urldefrag(href)[0]
            if href.startswith(origin):
                crawler.check(href, path)
                links += 1
        print(f"check-site: {path}: {shown!r}, {links} same-origin links, {data} data JSON "
              f"({time.monotonic() - began:.1f} s)", flush=True)


def main():
    if len(sys.argv) != 2:
        print("usage: check-site.py SITE", file=sys.stderr)
        return 64
    site = sys.argv[1]
    for required in ("index.html", "reference/index/index.json", "guides/index.html", "man/index.html"):
        if not os.path.isfile(os.path.join(site, required)):
            fail(f"{site} has no {required}: is it a site scripts/docs.sh built?")
    if failures:
        return 1
    server, origin = start_server(site)
    try:
        crawler = Crawler(origin)
        began = time.monotonic()
        seeds = [("/index.html", "the check"), ("/guides/index.html", "the check"), ("/man/index.html", "the check")]
        for folder in ("guides", "man", "files"):
            for root, _, files in os.walk(os.path.join(site, folder)):
                for name in sorted(files):
                    if name.endswith(".html"):
                        relative = os.path.relpath(os.path.join(root, name), site).replace(os.sep, "/")
                        seeds.append(("/" + relative, "the check"))
        pages = crawler.crawl_pages(seeds)
        symbols, references = crawler.crawl_reference()
        print(f"check-site: links: {pages} pages of the site parsed, {symbols} DocC pages and "
              f"{references} DocC references, {len(crawler.status)} URLs fetched "
              f"({time.monotonic() - began:.1f} s)", flush=True)
        driver, reason = start_browser()
        if driver is None and reason is not None:
            print(f"check-site: SKIPPED the browser part: Chromium cannot start: {reason}", flush=True)
        elif driver is not None:
            try:
                check_in_browser(driver, origin, crawler)
            finally:
                driver.quit()
    finally:
        server.terminate()
        server.wait(timeout=10)
    if failures:
        print(f"check-site: {len(failures)} failures", file=sys.stderr)
        return 1
    print("check-site: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
