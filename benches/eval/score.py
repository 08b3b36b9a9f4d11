#!/usr/bin/env python3
"""Score an everblog export against a held-out truth file.

usage: score.py TRUTH_JSON EXPORT_JSONL [--base http://127.0.0.1:PORT] [--threshold 0.95] [--f1 0.9]

Export rows (JSON Lines) carry url, blog, title, authors, published,
content_html, content_text, fetched_at.  Rows are matched to truth posts by URL
path (scheme/host dropped, percent-decoding, trailing "index.html" and
trailing-slash differences ignored).  With --base, rows whose URL is on another
origin are not matched (they count as false positives).

Metrics, all over truth posts (a missing post fails every metric):
  coverage    truth posts present in the export
  article_ok  multiset token F1(content_text, body_text) >= 0.9, tokens = casefolded \\w+
  title_ok    titles equal after whitespace normalisation
Informational: mean F1, false positives (export rows that are no truth post),
duplicate rows, authors and published-date agreement, the 5 worst posts.
The last line printed is a JSON summary.  Exit 0 when coverage, article and
title rates are all >= threshold, else 1 (2 on unusable input).
"""
import argparse
import json
import re
import sys
import unicodedata
import urllib.parse
from collections import Counter
from datetime import datetime, timezone

TOKEN = re.compile(r"\w+", re.UNICODE)


def tokens(s):
    return TOKEN.findall((s or "").casefold())


def f1(pred, gold):
    p, g = Counter(tokens(pred)), Counter(tokens(gold))
    if not p and not g:
        return 1.0
    common = sum((p & g).values())
    if common == 0:
        return 0.0
    prec = common / sum(p.values())
    rec = common / sum(g.values())
    return 2 * prec * rec / (prec + rec)


def ws(s):
    return re.sub(r"\s+", " ", s or "").strip()


def norm_path(url):
    """Path key used for matching: no scheme/host/query/fragment, percent-decoded,
    NFC, without trailing index.html / slash."""
    parts = urllib.parse.urlsplit(url or "")
    p = urllib.parse.unquote(parts.path) or "/"
    p = unicodedata.normalize("NFC", p)
    p = re.sub(r"/index\.html?$", "/", p)
    p = re.sub(r"/{2,}", "/", p)
    if len(p) > 1:
        p = p.rstrip("/")
    return p


def origin(url):
    parts = urllib.parse.urlsplit(url or "")
    host = (parts.hostname or "").lower()
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return (parts.scheme.lower(), host, port)


def parse_dt(s):
    if not s:
        return None
    try:
        d = datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        return None
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("truth")
    ap.add_argument("export")
    ap.add_argument("--base", help="origin the blog was served on; rows on other origins never match")
    ap.add_argument("--threshold", type=float, default=0.95)
    ap.add_argument("--f1", type=float, default=0.9, dest="f1_min")
    ap.add_argument("--worst", type=int, default=5)
    a = ap.parse_args()

    try:
        with open(a.truth, encoding="utf-8") as f:
            truth = json.load(f)
    except (OSError, ValueError) as e:
        print("score.py: cannot read truth %s: %s" % (a.truth, e), file=sys.stderr)
        return 2
    posts = truth["posts"]
    by_key = {}
    for p in posts:
        by_key.setdefault(norm_path(p["path"]), p)

    rows, bad_lines = [], 0
    try:
        with open(a.export, encoding="utf-8") as f:
            for line in f:
                if not line.strip():
                    continue
                try:
                    r = json.loads(line)
                    if not isinstance(r, dict):
                        raise ValueError
                    rows.append(r)
                except ValueError:
                    bad_lines += 1
    except OSError as e:
        print("score.py: cannot read export %s: %s" % (a.export, e), file=sys.stderr)
        rows = []
        bad_lines = -1

    base_origin = origin(a.base) if a.base else None
    matched = {}          # truth key -> first matching row
    false_pos, dups = [], 0
    for r in rows:
        url = r.get("url") or ""
        key = norm_path(url)
        if base_origin and urllib.parse.urlsplit(url).netloc and origin(url) != base_origin:
            false_pos.append(url)
            continue
        if key in by_key:
            if key in matched:
                dups += 1
            else:
                matched[key] = r
        else:
            false_pos.append(url)

    results = []
    for p in posts:
        key = norm_path(p["path"])
        r = matched.get(key)
        res = {"path": p["path"], "truth_title": p["title"], "present": r is not None,
               "f1": 0.0, "export_title": None, "article_ok": False, "title_ok": False,
               "authors_ok": False, "published_ok": False}
        if r is not None:
            res["f1"] = f1(r.get("content_text") or "", p["body_text"])
            res["export_title"] = r.get("title")
            res["article_ok"] = res["f1"] >= a.f1_min
            res["title_ok"] = ws(r.get("title")) == ws(p["title"])
            got_auth = sorted(ws(x) for x in (r.get("authors") or []) if isinstance(x, str))
            res["authors_ok"] = got_auth == sorted(ws(x) for x in p.get("authors") or [])
            dt_t, dt_e = parse_dt(p.get("published")), parse_dt(r.get("published"))
            if dt_t and dt_e:
                if dt_e.tzinfo is None:
                    res["published_ok"] = dt_e == dt_t.replace(tzinfo=None)
                else:
                    res["published_ok"] = dt_e == dt_t
        results.append(res)

    n = len(posts) or 1
    present = sum(r["present"] for r in results)
    art = sum(r["article_ok"] for r in results)
    tit = sum(r["title_ok"] for r in results)
    auth = sum(r["authors_ok"] for r in results)
    pub = sum(r["published_ok"] for r in results)
    mean_f1_all = sum(r["f1"] for r in results) / n
    mean_f1_present = (sum(r["f1"] for r in results if r["present"]) / present) if present else 0.0
    summary = {
        "blog": truth.get("engine"),
        "truth_posts": len(posts),
        "export_rows": len(rows),
        "bad_lines": bad_lines,
        "matched": present,
        "coverage": round(present / n, 4),
        "article": round(art / n, 4),
        "title": round(tit / n, 4),
        "authors": round(auth / n, 4),
        "published": round(pub / n, 4),
        "mean_f1": round(mean_f1_all, 4),
        "mean_f1_present": round(mean_f1_present, 4),
        "false_positives": len(false_pos),
        "duplicates": dups,
    }
    summary["pass"] = (summary["coverage"] >= a.threshold and summary["article"] >= a.threshold
                       and summary["title"] >= a.threshold)

    print("truth:   %s (%s), %d posts" % (a.truth, truth.get("engine"), len(posts)))
    print("export:  %s, %d rows%s" % (a.export, len(rows), (", %d unparsable lines" % bad_lines) if bad_lines > 0 else ""))
    print("coverage     %3d/%-3d %6.1f%%" % (present, len(posts), 100 * present / n))
    print("article ok   %3d/%-3d %6.1f%%   (token F1 >= %.2f; mean F1 %.3f over all, %.3f over matched)"
          % (art, len(posts), 100 * art / n, a.f1_min, mean_f1_all, mean_f1_present))
    print("title ok     %3d/%-3d %6.1f%%" % (tit, len(posts), 100 * tit / n))
    print("authors ok   %3d/%-3d %6.1f%%   (informational)" % (auth, len(posts), 100 * auth / n))
    print("published ok %3d/%-3d %6.1f%%   (informational: same instant)" % (pub, len(posts), 100 * pub / n))
    print("false positives: %d export rows are not truth posts%s" % (
        len(false_pos), (" e.g. " + ", ".join(false_pos[:5])) if false_pos else ""))
    if dups:
        print("duplicates: %d extra rows for already-matched posts" % dups)
    worst = sorted(results, key=lambda r: (r["present"], r["f1"], r["title_ok"]))[: a.worst]
    print("worst %d:" % len(worst))
    for r in worst:
        print("  F1 %.3f %s %s" % (r["f1"], "" if r["present"] else "MISSING", r["path"]))
        print("      truth title:  %r" % r["truth_title"])
        print("      export title: %r" % r["export_title"])
    print("verdict: %s" % ("PASS" if summary["pass"] else "FAIL"))
    print(json.dumps(summary, ensure_ascii=False))
    return 0 if summary["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
