"""warcio writing the same records as a WARC everblog exported, for benches/warc_export.sh.

    python warcio_write.py IN.warc.gz OUT.warc.gz LEVEL

Reads every record of IN into memory first (type, URI, WARC headers, HTTP headers, payload),
untimed. Then times warcio's documented writing path: `create_warc_record` for each record
(warcio computes the block and payload digests), `write_record` with `gzip=True` (one gzip
member per record). LEVEL is the zlib level: warcio's own is 9; 6 is everblog's (flate2's
default). Prints one line: `seconds records`.
"""

import io
import sys
import time
import zlib

from warcio.archiveiterator import ArchiveIterator
from warcio.warcwriter import GzippingWrapper, WARCWriter

KEEP = ("WARC-Date", "WARC-Concurrent-To", "WARC-Refers-To-Target-URI", "WARC-Refers-To-Date",
        "WARC-Refers-To", "WARC-Profile", "WARC-Filename")


def main():
    src, dst, level = sys.argv[1], sys.argv[2], int(sys.argv[3])
    records = []
    with open(src, "rb") as f:
        for r in ArchiveIterator(f, no_record_parse=False, ensure_http_headers=False):
            headers = {k: v for k, v in r.rec_headers.headers if k in KEEP}
            if r.rec_type == "revisit":
                # A revisit's block is its HTTP headers; warcio takes the digest as given.
                headers["WARC-Payload-Digest"] = r.rec_headers.get_header("WARC-Payload-Digest")
            payload = r.raw_stream.read()
            records.append((r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), headers,
                            r.http_headers, r.rec_headers.get_header("Content-Type"), payload))

    if level != 9:
        def init(self, out):
            self.compressor = zlib.compressobj(level, zlib.DEFLATED, zlib.MAX_WBITS + 16)
            self.out = out
        GzippingWrapper.__init__ = init

    started = time.perf_counter()
    with open(dst, "wb") as out:
        writer = WARCWriter(out, gzip=True, warc_version="WARC/1.1")
        for rec_type, uri, headers, http, content_type, payload in records:
            if http is not None:
                http.headers_buff = None
            record = writer.create_warc_record(
                uri or "", rec_type, payload=io.BytesIO(payload), length=len(payload),
                warc_content_type=content_type or "", warc_headers_dict=headers,
                http_headers=http)
            writer.write_record(record)
    print(f"{time.perf_counter() - started:.3f} {len(records)}")


if __name__ == "__main__":
    main()
