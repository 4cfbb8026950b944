"""Helpers the ingest bench scripts share: a Debian source package's
test files (fetched with `apt-get source --download-only`, which needs
deb-src lines in the apt sources), docqa's chunks of one file read
back from a scratch index, and a text's case-folded word multiset."""
import collections
import glob
import os
import re
import sqlite3
import subprocess
import sys


def fetch_source(work, package, members, folder):
    """Unpacks the members (tar wildcards) of `package`'s original source
    into work/src and returns the first folder matching `folder` (a glob
    under the unpacked tree); exits naming --files when apt cannot."""
    src = os.path.join(work, "src")
    os.makedirs(src, exist_ok=True)
    r = subprocess.run(["apt-get", "source", "--download-only", package],
                       cwd=src, capture_output=True, text=True)
    tars = glob.glob(os.path.join(src, "*.orig.tar.*"))
    if not tars:
        sys.exit(f"cannot fetch {package}'s source (apt-get source needs "
                 "deb-src lines); give --files DIR\n" + r.stderr[-400:])
    subprocess.run(["tar", "xf", tars[0], "-C", src, "--wildcards"] + members,
                   check=True)
    return glob.glob(os.path.join(src, folder))[0]


def docqa_chunks(docqa, path, work, columns="text"):
    """Ingests one file into a scratch index (--no-embed) and returns its
    chunks' rows (the given columns, in order) and None, or None and the
    last line docqa wrote when it refused the file."""
    index = os.path.join(work, "idx-" + os.path.basename(path))
    r = subprocess.run([docqa, "ingest", path, "--index", index,
                        "--no-embed", "-q"], capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or
                      ["exit %d" % r.returncode])[-1]
    db = sqlite3.connect(os.path.join(index, "docqa.db"))
    rows = db.execute(f"SELECT {columns} FROM chunks ORDER BY ordinal")
    rows = rows.fetchall()
    db.close()
    return rows, None


WORD = re.compile(r"\w+", re.U)


def words(s):
    """The case-folded words of s, counted."""
    return collections.Counter(w.casefold() for w in WORD.findall(s))
