#!/usr/bin/env python3
"""Stand-in for the `archive` CLI, used only to self-test holdout.sh.

    FAKE_HOLDOUT_DIR=DIR fake_archive.py --db DB add URL | crawl --all | export --format jsonl

It does what the real tool must, the cheap way: `add` fetches the feed over
HTTP; `crawl` follows links from the site root over HTTP and keeps the pages
whose path is a truth post (looked up in DIR/*/truth.json — cheating, this is a
harness test); `export` prints rows built from truth plus the fetched pages.
FAKE_DEGRADE=1 drops every 8th post and pads titles, to see a FAIL."""
import json, os, re, sys, glob, urllib.request, urllib.parse
from html.parser import HTMLParser
from datetime import datetime, timezone

args = sys.argv[1:]
db = args[args.index("--db") + 1]
cmd = [a for i, a in enumerate(args) if a != "--db" and (i == 0 or args[i - 1] != "--db")]
state = json.load(open(db)) if os.path.exists(db) else {"feeds": [], "pages": {}}


class L(HTMLParser):
    def __init__(self):
        super().__init__(); self.h = []
    def handle_starttag(self, t, a):
        if t == "a" and dict(a).get("href"):
            self.h.append(dict(a)["href"])


def get(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode("utf-8", "replace")


def truth_for(feed):
    fp = urllib.parse.urlsplit(feed).path
    for t in glob.glob(os.path.join(os.environ["FAKE_HOLDOUT_DIR"], "*", "truth.json")):
        d = json.load(open(t))
        if d["feed_path"] == fp and os.path.getsize(t):
            yield d


def key(p):
    p = urllib.parse.unquote(urllib.parse.urlsplit(p).path)
    return re.sub(r"index\.html$", "", p)


if cmd[0] == "add":
    get(cmd[1])
    state["feeds"].append(cmd[1])
elif cmd[0] == "crawl":
    for feed in state["feeds"]:
        truth = next(truth_for(feed))
        posts = {key(p["path"]) for p in truth["posts"]}
        origin = "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(feed))
        seen, queue = set(), [truth["home_path"]]
        while queue and len(seen) < 500:
            cur = queue.pop()
            if key(cur) in seen:
                continue
            seen.add(key(cur))
            try:
                html = get(origin + cur)
            except Exception:
                continue
            if key(cur) in posts:
                state["pages"][key(cur)] = origin + cur
            l = L(); l.feed(html)
            for h in l.h:
                u = urllib.parse.urlsplit(urllib.parse.urljoin(origin + cur, h))
                if "{0.scheme}://{0.netloc}".format(u) == origin and not re.search(r"\.(xml|css|js|svg|json)$", u.path):
                    queue.append(u.path)
elif cmd[0] == "export":
    deg = os.environ.get("FAKE_DEGRADE") == "1"
    for feed in state["feeds"]:
        truth = next(truth_for(feed))
        for i, p in enumerate(truth["posts"]):
            url = state["pages"].get(key(p["path"]))
            if not url or (deg and i % 8 == 0):
                continue
            print(json.dumps({"url": url, "blog": feed, "title": p["title"] + (" | Blog" if deg and i % 5 == 1 else ""),
                              "authors": p["authors"], "published": p["published"], "content_html": "",
                              "content_text": p["body_text"], "fetched_at": datetime.now(timezone.utc).isoformat()},
                             ensure_ascii=False))
json.dump(state, open(db, "w"))
