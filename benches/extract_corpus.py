#!/usr/bin/env python3
"""`archive extract` against trafilatura on one public extraction corpus, page by page.

Used by benches/aeb.sh and benches/heldout.sh; run it with the Python that has trafilatura
(their $VENV). For every page of the corpus:

* ours: the page's bytes written to a temp file, then `ARCHIVE extract FILE --url URL`, one
  process per run as a user runs it. The first run gives the output (its exit status: a
  non-zero exit is a page *refused*, and its stderr says why), then REPS more are timed; the
  time of a page is the median wall clock of one whole process (start, read, parse, extract,
  print JSON, exit) as measured from here with time.perf_counter around subprocess.run, and
  the median CPU time of that process (user + system, from the children's rusage), which moves
  less than the wall clock when the machine is loaded.
* trafilatura in-process: `trafilatura.extract(html)` with its defaults, once to warm up and
  for the output, then REPS times, the median (wall clock, and CPU time by time.process_time).
* trafilatura's command line (--traf-cli): `trafilatura < FILE`, one process per page
  (interpreter start and imports included, as a user's shell pays them), CLI_REPS runs, the
  median; the output of the first is scored as well. (`trafilatura -i FILE` would read FILE as
  a list of URLs to download, so the page goes on stdin.)

Scores, all computed here and written to OUT:

* the benchmark's shingle metric (scrapinghub's evaluate.py: 4-gram shingles of \\w+ tokens,
  per-page precision and recall normalised by the page's shingle count, the corpus precision
  the mean over pages with any prediction, the recall the mean over pages with any truth, F1
  their harmonic mean). A refused page has no prediction, so it lowers recall but not
  precision; `f1_pages` (the mean of per-page F1, a refused page counting 0) shows it plainly;
* the corpus' own scorer where it has one: WCXB word F1 (the mean of per-page word F1,
  imported from the corpus' evaluate.py), trafilatura's snippet counts (its tests/eval_common.py:
  'with' snippets found are true positives, 'without' snippets found false positives, summed
  over the corpus).

OUT gets: output/<system>.json (scrapinghub's prediction format, for its evaluate.py),
everblog_records.jsonl (our whole record per page), per-page.tsv (every page: status, the
likely listing trigger of a refused page, P/R/F1 of ours and trafilatura's, ms), worst.md (the
worst pages by our F1 with a one-word reason: refused / low precision / low recall), and
summary.json (the corpus figures).

usage: extract_corpus.py --corpus {aeb,wcxb,readability,trafilatura} --dir DIR --archive BIN
                         --out OUT [--reps N] [--traf] [--traf-cli] [--cli-reps N]
                         [--select article|nonarticle] [--limit N] [--worst N]
"""

import argparse
import gzip
import importlib.util
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

# ------------------------------------------------------------------ corpora


class Page:
    __slots__ = ("key", "url", "html", "truth", "with_", "without", "meta")

    def __init__(self, key, url, html, truth=None, with_=None, without=None, meta=None):
        self.key, self.url, self.html = key, url, html
        self.truth, self.with_, self.without = truth, with_, without
        self.meta = meta or {}


def load_aeb(d: Path, args):
    """scrapinghub/article-extraction-benchmark: html/<key>.html.gz, ground-truth.json."""
    truth = json.loads((d / "ground-truth.json").read_text(encoding="utf8"))
    for key in sorted(truth):
        html = gzip.decompress((d / "html" / f"{key}.html.gz").read_bytes())
        url = truth[key].get("url") or f"http://aeb.invalid/{key}"
        yield Page(key, url, html, truth=truth[key].get("articleBody", ""))


def load_wcxb(d: Path, args):
    """WCXB (Murrough-Foley/web-content-extraction-benchmark): test/ground-truth/<id>.json and
    test/html/<id>.html.gz; --select article keeps the pages labelled `article` (default),
    nonarticle the listing and collection pages (to count refusals of real listings)."""
    split = args.split or "test"
    for f in sorted((d / split / "ground-truth").glob("*.json")):
        data = json.loads(f.read_text(encoding="utf8"))
        pt = (data.get("_internal") or {}).get("page_type") or {}
        pt = pt.get("primary") if isinstance(pt, dict) else pt
        pt = "collection" if pt == "category" else (pt or "article")
        want = args.select or "article"
        if want == "article" and pt != "article":
            continue
        if want == "nonarticle" and pt not in ("listing", "collection"):
            continue
        gt = data.get("ground_truth") or {}
        html = gzip.decompress((d / split / "html" / f"{f.stem}.html.gz").read_bytes())
        yield Page(f.stem, data.get("url") or f"http://wcxb.invalid/{f.stem}", html,
                   truth=gt.get("main_content") or "", with_=gt.get("with") or [],
                   without=gt.get("without") or [], meta={"page_type": pt})


BLOCK_TAGS = {
    "p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote",
    "table", "tr", "td", "th", "section", "article", "figure", "figcaption", "dd", "dt", "dl",
    "hr", "header", "footer", "main", "aside", "nav",
}


def html_to_text(html: str) -> str:
    """Text of an HTML fragment with a line break at every block boundary (so that words of
    two paragraphs never run together)."""
    import lxml.html

    root = lxml.html.fromstring(f"<div>{html}</div>")
    for el in root.iter():
        if isinstance(el.tag, str) and el.tag.lower() in BLOCK_TAGS:
            el.tail = "\n" + (el.tail or "")
            if el.text is not None or len(el):
                el.text = "\n" + (el.text or "")
    return re.sub(r"\n\s*\n+", "\n\n", root.text_content()).strip()


def load_readability(d: Path, args):
    """mozilla/readability test/test-pages/<name>/{source,expected}.html: the pages whose
    source.html has at least 10,000 bytes (saved real pages; the smaller ones are synthetic
    unit tests of one feature). The truth is the text of expected.html (Readability's own
    reviewed output, not an independent annotation)."""
    base = d / "test" / "test-pages" if (d / "test" / "test-pages").is_dir() else d
    for page_dir in sorted(p for p in base.iterdir() if p.is_dir()):
        src = page_dir / "source.html"
        if not src.is_file() or src.stat().st_size < 10_000:
            continue
        expected = (page_dir / "expected.html").read_text(encoding="utf8")
        yield Page(page_dir.name, "http://fakehost/test/page.html", src.read_bytes(),
                   truth=html_to_text(expected))


def load_trafilatura(d: Path, args):
    """adbar/trafilatura tests/: evaldata.json (URL -> file, 'with' and 'without' snippets),
    the pages under tests/cache/ or tests/eval/; every entry, in URL order."""
    base = d / "tests" if (d / "tests" / "evaldata.json").is_file() else d
    data = json.loads((base / "evaldata.json").read_text(encoding="utf8"))
    for url in sorted(data):
        item = data[url]
        path = next((base / s / item["file"] for s in ("cache", "eval")
                     if (base / s / item["file"]).is_file()), None)
        if path is None:
            print(f"warning: {item['file']} missing, skipped", file=sys.stderr)
            continue
        # A few entries are keyed by a label ("hard::…"), not the page's URL.
        page_url = url if re.match(r"https?://", url) else f"http://trafilatura-eval.invalid/{item['file']}"
        yield Page(item["file"].removesuffix(".html"), page_url, path.read_bytes(),
                   with_=item["with"], without=item["without"])


LOADERS = {"aeb": load_aeb, "wcxb": load_wcxb, "readability": load_readability,
           "trafilatura": load_trafilatura}

# ------------------------------------------------------------------ metrics

_TOKEN = re.compile(r"\w+", re.UNICODE | re.MULTILINE | re.IGNORECASE | re.DOTALL)


def shingles(text: str, n: int = 4) -> Counter:
    toks = _TOKEN.findall(text or "")
    return Counter(tuple(toks[i:i + n]) for i in range(0, max(1, len(toks) - n + 1))
                   if toks[i:i + n])


def shingle_tp_fp_fn(true: str, pred: str):
    """scrapinghub evaluate.py's string_shingle_matching (normalised tp, fp, fn)."""
    t, p = shingles(true), shingles(pred)
    tp = fp = fn = 0.0
    for k in set(t) | set(p):
        a, b = t.get(k, 0), p.get(k, 0)
        tp += min(a, b)
        fp += max(0, b - a)
        fn += max(0, a - b)
    s = tp + fp + fn
    return (tp / s, fp / s, fn / s) if s > 0 else (tp, fp, fn)


def _precision(tp, fp, fn):
    if fp == fn == 0:
        return 1.0
    if tp == fp == 0:
        return 0.0
    return tp / (tp + fp)


def _recall(tp, fp, fn):
    if fp == fn == 0:
        return 1.0
    if tp == fn == 0:
        return 0.0
    return tp / (tp + fn)


def page_prf(tp_fp_fn):
    tp, fp, fn = tp_fp_fn
    p, r = _precision(tp, fp, fn), _recall(tp, fp, fn)
    return p, r, (2 * p * r / (p + r) if p + r > 0 else 0.0)


def corpus_prf(tp_fp_fns):
    """scrapinghub evaluate.py's metrics_from_tp_fp_fns."""
    ps = [_precision(*x) for x in tp_fp_fns if x[0] + x[1] > 0]
    rs = [_recall(*x) for x in tp_fp_fns if x[0] + x[2] > 0]
    p = statistics.mean(ps) if ps else 0.0
    r = statistics.mean(rs) if rs else 0.0
    return p, r, (2 * p * r / (p + r) if p + r > 0 else 0.0)


def paragraph_diff(truth: str, pred: str, n: int = 3, width: int = 110):
    """The longest runs of words of `pred` absent from `truth` (extra text kept) and of `truth`
    absent from `pred` (text missed), by aligning the two word sequences (difflib), words
    compared lower-cased without punctuation; runs of fewer than 3 words are left out."""
    import difflib

    tw, pw = (truth or "").split(), (pred or "").split()

    def key(w):
        return re.sub(r"\W+", "", w.lower())

    sm = difflib.SequenceMatcher(None, [key(w) for w in tw], [key(w) for w in pw],
                                 autojunk=False)
    extra, missed = [], []
    for op, i1, i2, j1, j2 in sm.get_opcodes():
        if op in ("insert", "replace") and j2 - j1 >= 3:
            extra.append(pw[j1:j2])
        if op in ("delete", "replace") and i2 - i1 >= 3:
            missed.append(tw[i1:i2])

    def show(runs):
        runs.sort(key=len, reverse=True)
        out = []
        for r in runs[:n]:
            text = " ".join(r)
            out.append(f"[{len(r)} words] " + (text if len(text) <= width else text[:width] + "…"))
        return out

    return show(extra), show(missed)


def norm_ws(text: str) -> str:
    return re.sub(r"\s+", " ", text or "").strip()


def snippet_counts(page: Page, text: str):
    """trafilatura tests/eval_common.py count_item: (tp, fp, fn, tn) by whitespace-normalised
    substring matching of the 'with' and 'without' snippets."""
    t = norm_ws(text)
    tp = sum(1 for w in page.with_ if norm_ws(w) in t)
    fp = sum(1 for w in page.without if norm_ws(w) in t)
    return tp, fp, len(page.with_) - tp, len(page.without) - fp


def snippet_prf(c):
    tp, fp, fn, _ = c
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ------------------------------------------------------------------ why a page was refused


def listing_triggers(html_bytes: bytes) -> str:
    """A guess, from the page alone, at which of core::listing::is_listing's generic triggers
    fired (approximated with lxml, not the extractor's own code): og:type=website, a "read
    more" teaser link, >= 3 linked headings, several <article>/h-entry blocks. Empty when none
    seems to: then the refusal is more likely "no text block" (fallback::article found none)."""
    import lxml.html

    try:
        root = lxml.html.fromstring(html_bytes)
    except Exception:  # noqa: BLE001 - a page lxml cannot read gets no guess
        return "?"
    hard_tags = {"button", "select", "textarea", "iframe", "script", "style", "noscript",
                 "template", "svg", "input", "label", "object", "embed", "figcaption", "head",
                 "nav", "aside", "footer", "dialog", "menu"}
    hard_roles = {"navigation", "complementary", "contentinfo", "banner", "dialog", "menu"}

    def hard(el):
        while el is not None:
            tag = el.tag.lower() if isinstance(el.tag, str) else ""
            style = (el.get("style") or "").replace(" ", "").lower()
            if (tag in hard_tags or el.get("hidden") is not None
                    or el.get("aria-hidden") == "true" or "display:none" in style
                    or "visibility:hidden" in style or el.get("role") in hard_roles):
                return True
            el = el.getparent()
        return False

    def text(el):
        return re.sub(r"\s+", " ", el.text_content() or "").strip()

    def where(el):
        """The nearest ancestor named by a class or id (`div.related-posts`), to say which part
        of the page a trigger sits in."""
        for anc in el.iterancestors():
            if not isinstance(anc.tag, str):
                continue
            name = anc.get("id") and f"#{anc.get('id')}" or (
                anc.get("class") and "." + ".".join(anc.get("class").split()[:2]))
            if name:
                return f"{anc.tag}{name}"[:50]
        return "body"

    found = []
    if any((m.get("content") or "").strip().lower() == "website"
           for m in root.iter("meta") if m.get("property") == "og:type"):
        found.append("og:type=website")
    classes = {"more-link", "readmore", "read-more", "read_more"}
    texts = ("read more", "continue reading", "read the rest", "weiterlesen", "lire la suite",
             "leer más", "seguir leyendo", "leggi tutto", "lees meer")
    for a in root.iter("a"):
        href = a.get("href")
        if href is None or href.startswith("#"):
            continue
        cls = {c.lower() for c in (a.get("class") or "").split()}
        t = text(a).lower().rstrip("….→» >")
        if (cls & classes or (t.startswith(texts) and len(t) < 40)) and not hard(a):
            found.append(f"teaser link ({t[:30]!r} in {where(a)})")
            break
    linked = Counter()
    for h in root.iter("h1", "h2", "h3", "h4"):
        ht = text(h)
        if not ht:
            continue
        at = sum(len(text(a)) for a in h.iter("a"))
        if at * 2 >= len(ht) and not hard(h):
            linked[where(h)] += 1
    if sum(linked.values()) >= 3:
        found.append(f"{sum(linked.values())} linked headings (in "
                     + ", ".join(f"{k} {v}" for k, v in linked.most_common(2)) + ")")
    blocks = []
    for el in root.iter():
        if not isinstance(el.tag, str):
            continue
        cls = (el.get("class") or "").split()
        if el.tag == "article" or "hentry" in cls or "h-entry" in cls:
            if any(isinstance(p.tag, str) and (p.tag == "article" or "hentry" in (p.get("class") or "").split())
                   for p in el.iterancestors()):
                continue
            ident = ((el.get("class") or "") + " " + (el.get("id") or "")).lower()
            if len(text(el)) >= 25 and not hard(el) and "comment" not in ident:
                blocks.append((len(text(el)), where(el)))
    sizes = [b[0] for b in blocks]
    if len(blocks) >= 2 and max(sizes) * 5 < sum(sizes) * 3:
        found.append(f"{len(blocks)} <article> blocks (in "
                     + ", ".join(f"{k} {v}" for k, v in Counter(b[1] for b in blocks).most_common(2)) + ")")
    return "; ".join(found)


# ------------------------------------------------------------------ runs


def timed_child(cmd, **kw):
    """Runs one child process: (CompletedProcess, wall ms, CPU ms). The CPU time (user +
    system, from the children's rusage) moves less than the wall clock on a loaded machine."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, **kw)
    wall = (time.perf_counter() - t) * 1e3
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)) * 1e3
    return proc, wall, cpu


def run_ours(archive: str, path: str, url: str, reps: int):
    """(record or None, error, median wall ms, median CPU ms) of `archive extract`."""
    cmd = [archive, "extract", path, "--url", url]
    proc, first, first_cpu = timed_child(cmd)
    walls, cpus = [], []
    for _ in range(reps):
        _, w, c = timed_child(cmd)
        walls.append(w)
        cpus.append(c)
    ms = statistics.median(walls) if walls else first
    cpu = statistics.median(cpus) if cpus else first_cpu
    if proc.returncode != 0:
        return None, proc.stderr.decode("utf8", "replace").strip(), ms, cpu
    try:
        return json.loads(proc.stdout), "", ms, cpu
    except json.JSONDecodeError as e:
        return None, f"unreadable JSON: {e}", ms, cpu


def run_traf_cli(traf_bin: str, path: str, reps: int):
    walls, cpus, out = [], [], None
    for _ in range(max(1, reps)):
        with open(path, "rb") as f:
            proc, w, c = timed_child([traf_bin], stdin=f)
        walls.append(w)
        cpus.append(c)
        if out is None:
            out = proc.stdout.decode("utf8", "replace")
    return out.strip(), statistics.median(walls), statistics.median(cpus)


def run_all(pages, args, out, label):
    traf = None
    if args.traf:
        import trafilatura as traf
    traf_bin = str(Path(sys.executable).with_name("trafilatura"))
    if args.traf_cli and not Path(traf_bin).exists():
        sys.exit(f"{traf_bin}: no trafilatura command beside {sys.executable}")
    ours_version = subprocess.run([args.archive, "--version"], capture_output=True,
                                  text=True).stdout.strip()

    rows, preds = [], {"everblog_extract": {}, "trafilatura": {}, "trafilatura_cli": {}}
    records = open(out / "everblog_records.jsonl", "w", encoding="utf8")
    tmp = tempfile.mkdtemp(prefix="everblog-corpus-")
    t_start = time.time()
    for n, page in enumerate(pages, 1):
        path = os.path.join(tmp, "page.html")
        with open(path, "wb") as f:
            f.write(page.html)
        rec, err, ms, cpu = run_ours(args.archive, path, page.url, args.reps)
        text = (rec or {}).get("content_text") or ""
        records.write(json.dumps({"key": page.key, "url": page.url, "refused": rec is None,
                                  "error": err, "record": rec}, ensure_ascii=False) + "\n")
        row = {"key": page.key, "url": page.url, "kb": len(page.html) / 1024, "ours_ms": ms,
               "ours_cpu_ms": cpu,
               "status": "ok" if rec is not None else
               ("refused" if re.search(r"no (article|post) on this page|listing", err) else "error"),
               "error": err, "ours_text": text, **page.meta}
        if rec is None:
            row["trigger"] = listing_triggers(page.html)
        preds["everblog_extract"][page.key] = {"articleBody": text}
        if traf is not None:
            html = (page.html.decode("utf8", "replace") if args.traf_input == "str"
                    else page.html)
            ttext = traf.extract(html) or ""
            runs, cpus = [], []
            for _ in range(args.reps):
                t, c = time.perf_counter(), time.process_time()
                traf.extract(html)
                runs.append((time.perf_counter() - t) * 1e3)
                cpus.append((time.process_time() - c) * 1e3)
            row["traf_ms"] = statistics.median(runs) if runs else float("nan")
            row["traf_cpu_ms"] = statistics.median(cpus) if cpus else float("nan")
            row["traf_text"] = ttext
            preds["trafilatura"][page.key] = {"articleBody": ttext}
        if args.traf_cli:
            ctext, cms, ccpu = run_traf_cli(traf_bin, path, args.cli_reps)
            row["trafcli_ms"] = cms
            row["trafcli_cpu_ms"] = ccpu
            row["trafcli_text"] = ctext
            preds["trafilatura_cli"][page.key] = {"articleBody": ctext}
        rows.append((page, row))
        if n % 25 == 0 or n == len(pages):
            print(f"  {label}: {n}/{len(pages)} pages, {time.time() - t_start:.0f} s",
                  file=sys.stderr)
    records.close()

    versions = {"everblog_extract": ours_version,
                "trafilatura": getattr(traf, "__version__", "") if traf else "",
                "trafilatura_cli": getattr(traf, "__version__", "") if traf else ""}
    for name, p in preds.items():
        if p:
            (out / "output" / f"{name}.json").write_text(
                json.dumps({"version": versions[name], "output": p}, ensure_ascii=False))

    shutil.rmtree(tmp, ignore_errors=True)
    return rows, versions


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True, choices=sorted(LOADERS))
    ap.add_argument("--dir", required=True, type=Path)
    ap.add_argument("--archive", required=True)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--traf", action="store_true", help="trafilatura.extract in-process")
    ap.add_argument("--traf-cli", action="store_true", help="trafilatura's command line")
    ap.add_argument("--cli-reps", type=int, default=1)
    ap.add_argument("--traf-input", choices=["str", "bytes"], default="bytes",
                    help="what trafilatura.extract gets: the page decoded as UTF-8 (lossy), or"
                         " its bytes (trafilatura then detects the charset itself)")
    ap.add_argument("--select", choices=["article", "nonarticle"])
    ap.add_argument("--split", choices=["dev", "test"])
    ap.add_argument("--limit", type=int)
    ap.add_argument("--worst", type=int, default=25)
    ap.add_argument("--label", default=None)
    ap.add_argument("--rescore", action="store_true",
                    help="no runs: score and report again from OUT/rows.json")
    args = ap.parse_args()

    out = args.out
    (out / "output").mkdir(parents=True, exist_ok=True)
    label = args.label or args.corpus
    pages = list(LOADERS[args.corpus](args.dir, args))
    if args.limit:
        pages = pages[: args.limit]
    if not pages:
        sys.exit(f"no pages found in {args.dir} for corpus {args.corpus}")

    if args.rescore:
        saved = json.loads((out / "rows.json").read_text(encoding="utf8"))
        by_key = {p.key: p for p in pages}
        rows = [(by_key[r["key"]], r) for r in saved["rows"] if r["key"] in by_key]
        for p, r in rows:
            if r["status"] != "ok":
                r["trigger"] = listing_triggers(p.html)
        versions, has_traf, has_cli = saved["versions"], saved["has_traf"], saved["has_cli"]
        ours_version = versions["everblog_extract"]
    else:
        rows, versions = run_all(pages, args, out, label)
        has_traf, has_cli = args.traf, args.traf_cli
        (out / "rows.json").write_text(json.dumps(
            {"versions": versions, "has_traf": has_traf, "has_cli": has_cli,
             "rows": [r for _, r in rows]}, ensure_ascii=False))
        ours_version = versions["everblog_extract"]

    # ---- scores
    wcxb_f1 = None
    if args.corpus == "wcxb" and (args.dir / "evaluate.py").is_file():
        wcxb_f1 = load_module(args.dir / "evaluate.py", "wcxb_evaluate").word_f1
    systems = [("ours", "ours_text")]
    if has_traf:
        systems.append(("trafilatura", "traf_text"))
    if has_cli:
        systems.append(("trafilatura_cli", "trafcli_text"))
    summary = {"corpus": label, "pages": len(rows), "reps": args.reps,
               "archive": ours_version, "trafilatura": versions["trafilatura"],
               "refused": sum(r["status"] == "refused" for _, r in rows),
               "errors": sum(r["status"] == "error" for _, r in rows), "systems": {}}
    for sysname, field in systems:
        s = {}
        if any(p.truth is not None for p, _ in rows):
            tff = []
            for p, r in rows:
                x = shingle_tp_fp_fn(p.truth, r[field])
                tff.append(x)
                r[f"{sysname}_prf"] = page_prf(x)
            s["shingle_p"], s["shingle_r"], s["shingle_f1"] = corpus_prf(tff)
            s["f1_pages"] = statistics.mean(r[f"{sysname}_prf"][2] for _, r in rows)
            if wcxb_f1:
                w = [wcxb_f1(r[field], p.truth) for p, r in rows]
                s["word_p"] = statistics.mean(x[0] for x in w)
                s["word_r"] = statistics.mean(x[1] for x in w)
                s["word_f1"] = statistics.mean(x[2] for x in w)
        if any(p.with_ for p, _ in rows):
            tot = [0, 0, 0, 0]
            for p, r in rows:
                c = snippet_counts(p, r[field])
                tot = [a + b for a, b in zip(tot, c)]
                if p.truth is None:
                    r[f"{sysname}_prf"] = snippet_prf(c)
            s["snippet_p"], s["snippet_r"], s["snippet_f1"] = snippet_prf(tot)
            s["snippet_counts"] = tot
            if not any(p.truth is not None for p, _ in rows):
                s["f1_pages"] = statistics.mean(r[f"{sysname}_prf"][2] for _, r in rows)
        ms_key = {"ours": "ours_ms", "trafilatura": "traf_ms",
                  "trafilatura_cli": "trafcli_ms"}[sysname]
        ms = [r[ms_key] for _, r in rows]
        s["ms_mean"], s["ms_median"] = statistics.mean(ms), statistics.median(ms)
        cpu = [r[ms_key.replace("_ms", "_cpu_ms")] for _, r in rows
               if ms_key.replace("_ms", "_cpu_ms") in r]
        if cpu:
            s["cpu_ms_mean"], s["cpu_ms_median"] = statistics.mean(cpu), statistics.median(cpu)
        summary["systems"][sysname] = s
    # Ours on the pages it extracts, against trafilatura on the same pages.
    kept = [(p, r) for p, r in rows if r["status"] == "ok"]
    if kept and "ours_prf" in rows[0][1] and has_traf:
        summary["on_pages_extracted"] = {
            "pages": len(kept),
            "ours_f1_pages": statistics.mean(r["ours_prf"][2] for _, r in kept),
            "trafilatura_f1_pages": statistics.mean(r["trafilatura_prf"][2] for _, r in kept),
        }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))

    # ---- per page, and the worst
    with open(out / "per-page.tsv", "w", encoding="utf8") as f:
        cols = ["key", "status", "trigger", "ours_p", "ours_r", "ours_f1", "traf_f1", "kb",
                "ours_ms", "traf_ms", "trafcli_ms", "ours_words", "url"]
        f.write("\t".join(cols) + "\n")
        for p, r in sorted(rows, key=lambda pr: pr[1].get("ours_prf", (0, 0, 0))[2]):
            op = r.get("ours_prf", (float("nan"),) * 3)
            tp = r.get("trafilatura_prf", (float("nan"),) * 3)
            f.write("\t".join([
                p.key, r["status"], r.get("trigger", ""), f"{op[0]:.3f}", f"{op[1]:.3f}",
                f"{op[2]:.3f}", f"{tp[2]:.3f}", f"{r['kb']:.0f}", f"{r['ours_ms']:.1f}",
                f"{r.get('traf_ms', float('nan')):.1f}", f"{r.get('trafcli_ms', float('nan')):.0f}",
                str(len(r["ours_text"].split())), p.url]) + "\n")
    refused = [(p, r) for p, r in rows if r["status"] != "ok"]
    worst = sorted(((p, r) for p, r in rows if r["status"] == "ok"),
                   key=lambda pr: pr[1].get("ours_prf", (0, 0, 0))[2])[: args.worst]
    triggers = Counter()
    for _, r in refused:
        for t in (r.get("trigger") or "none seen").split("; "):
            triggers[re.sub(r"\d+ |\(.*\)", "", t).strip()] += 1
    summary["refused_triggers"] = dict(triggers.most_common())
    (out / "summary.json").write_text(json.dumps(summary, indent=2))

    def why_of(p, r):
        op = r.get("ours_prf", (0, 0, 0))
        if r["status"] == "refused":
            return "refused" + (f" (likely: {r['trigger']})" if r.get("trigger")
                                else " (no listing trigger seen: no text block?)")
        if r["status"] == "error":
            return f"error: {r['error'][:80]}"
        if not r["ours_text"]:
            return "empty text"
        if op[0] < 0.5 and op[1] < 0.5:
            return "wrong block (low precision and recall)"
        return "low precision (extra text kept)" if op[0] < op[1] else "low recall (text missed)"

    def table(f, items):
        f.write("| page | ours F1 | P | R | trafilatura F1 | why | url |\n|---|---|---|---|---|---|---|\n")
        for p, r in items:
            op = r.get("ours_prf", (0, 0, 0))
            tf = r.get("trafilatura_prf", (float("nan"),) * 3)[2]
            f.write(f"| {p.key} | {op[2]:.3f} | {op[0]:.2f} | {op[1]:.2f} | {tf:.3f} | {why_of(p, r)} | {p.url} |\n")

    with open(out / "worst.md", "w", encoding="utf8") as f:
        f.write(f"# {label}: pages refused by `archive extract`, and the worst pages it extracts\n\n")
        f.write(f"## Refused or failed: {len(refused)} of {len(rows)}\n\nLikely triggers "
                "(a guess from the page with lxml, not the extractor's code): "
                + ", ".join(f"{k} {v}" for k, v in triggers.most_common()) + "\n\n")
        table(f, refused)
        f.write(f"\n## The {len(worst)} worst pages extracted, by our F1\n\n")
        table(f, worst)
        f.write("\n## Details of the worst extracted: text kept that the truth lacks (+), truth text missed (\u2212)\n")
        for p, r in worst:
            f.write(f"\n### {p.key} ({len(r['ours_text'].split())} words ours"
                    + (f", {len(p.truth.split())} truth" if p.truth is not None else "")
                    + f"; {why_of(p, r)})\n")
            if p.truth is not None:
                extra, missed = paragraph_diff(p.truth, r["ours_text"])
                for x in extra:
                    f.write(f"- + {x}\n")
                for x in missed:
                    f.write(f"- \u2212 {x}\n")
            if p.with_:
                t = norm_ws(r["ours_text"])
                for w in p.with_:
                    if norm_ws(w) not in t:
                        f.write(f"- missed 'with': {w[:100]}\n")
                for w in p.without:
                    if norm_ws(w) in t:
                        f.write(f"- kept 'without': {w[:100]}\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
