#!/usr/bin/env python3
"""mutate.py - run hand-written mutants against the unit tests (docs/TESTING.md, "Mutation testing").

A mutant is one small change to one source line, written as

    ID ~ path ~ line ~ original ~ replacement [~ equivalent: why | ~ open: why]

- path: relative to the repository root.
- line: the whole source line the mutant changes, stripped of leading and trailing
  whitespace, and " @N" after it when the same line occurs several times in the
  file (the Nth, counting from the top). Lines are found by their text, not their
  number, so a list stays usable as the code around it changes; a mutant whose
  line is gone, or is not the only one without an " @N", is reported "stale"
  rather than guessed at.
- original: a substring of that line; its first occurrence becomes replacement.
- equivalent: a mutant judged to change nothing observable, with the reason; its
  survival is expected and reported apart.
- open: a known gap no test covers yet (docs/TESTING.md lists them); its survival
  is reported apart too, so that a rerun flags only what is new.

A list names the tests to run in a header line, for every mutant below it:

    # tests: tcp/stack_ tcp/ api/lsock

each a test name or, ending in "/" or "_", a prefix (meson test names). They run in
order and the first failure (or a timeout) kills the mutant.

Usage: tests/mutation/mutate.py [--build DIR] [--timeout S] LIST... [--only ID...]
The build directory (default build-mut: debug, no LTO, set up if missing) must
not be one anything else is building in. Every mutated file is restored with
`git checkout` whatever happens; the tree must be clean for the files mutated.
Exit status: 0 when every survivor is marked equivalent or open, 1 otherwise.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def load(path):
    """The mutants of one list, each with the tests its header named."""
    muts, tests = [], None
    for n, raw in enumerate(open(path), 1):
        ln = raw.rstrip("\n")
        if ln.startswith("# tests:"):
            tests = ln[len("# tests:"):].split()
            continue
        if not ln.strip() or ln.lstrip().startswith("#"):
            continue
        parts = ln.split(" ~ ")
        if len(parts) not in (5, 6) or tests is None:
            sys.exit("%s:%d: want 'ID ~ path ~ line ~ original ~ replacement [~ equivalent: why]'"
                     " after a '# tests:' header" % (path, n))
        m = dict(id=parts[0].strip(), file=parts[1].strip(), line=parts[2].strip(),
                 orig=parts[3], repl=parts[4], mark=None, why=None, tests=tests)
        if len(parts) == 6:
            mark = parts[5].split(":", 1)
            if len(mark) != 2 or mark[0] not in ("equivalent", "open"):
                sys.exit("%s:%d: the sixth field must begin 'equivalent:' or 'open:'" % (path, n))
            m["mark"], m["why"] = mark[0], mark[1].strip()
        muts.append(m)
    return muts


def meson_tests(build):
    out = subprocess.run(["meson", "introspect", "--tests", build], capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out)


def select(all_tests, patterns):
    chosen = []
    for pat in patterns:
        for t in all_tests:
            hit = t["name"] == pat or (pat.endswith(("/", "_")) and t["name"].startswith(pat))
            if hit and t not in chosen:
                chosen.append(t)
    return chosen


def run_one(m, build, tests, timeout):
    path = os.path.join(ROOT, m["file"])
    src = open(path).read().split("\n")
    text, nth = m["line"], 0
    at = re.search(r" @(\d+)$", text)
    if at:
        text, nth = text[:at.start()], int(at.group(1))
    hits = [i for i, l in enumerate(src) if l.strip() == text and m["orig"] in l]
    if (nth and len(hits) < nth) or (not nth and len(hits) != 1):
        return "stale", "line %s in %s" % ("not found" if not hits else "found %d times" % len(hits),
                                           m["file"]), 0
    i = hits[nth - 1 if nth else 0]
    # The test programs, and what they take from the build as arguments (the BPF objects).
    targets = sorted({os.path.relpath(t["cmd"][0], build) for t in tests} |
                     {a for t in tests for a in t["cmd"][1:]
                      if not os.path.isabs(a) and os.path.isfile(os.path.join(build, a))})
    try:
        src[i] = src[i].replace(m["orig"], m["repl"], 1)
        open(path, "w").write("\n".join(src))
        b = subprocess.run(["nice", "ninja", "-C", build, "-j1"] + targets,
                           capture_output=True, text=True)
        if b.returncode:
            return "no-build", b.stdout[-200:].replace("\n", " "), i + 1
        for t in tests:
            try:
                r = subprocess.run(["nice"] + t["cmd"], capture_output=True, text=True,
                                   timeout=timeout, cwd=t.get("workdir") or build,
                                   env=dict(os.environ, **t.get("env", {})))
            except subprocess.TimeoutExpired:
                return "killed", t["name"] + " (timeout)", i + 1
            if r.returncode:
                fails = sorted({l.strip() for l in (r.stdout + r.stderr).splitlines()
                                if l.startswith("[  FAILED  ] test")})
                return "killed", "%s %s" % (t["name"], " ".join(fails[:2])), i + 1
        return "survived", "", i + 1
    finally:
        subprocess.run(["git", "-C", ROOT, "checkout", "--", m["file"]], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("lists", nargs="+")
    ap.add_argument("--build", default=os.path.join(ROOT, "build-mut"))
    ap.add_argument("--timeout", type=int, default=60, help="seconds a test may run (default 60)")
    ap.add_argument("--only", nargs="*", default=[], help="mutant ids to run")
    a = ap.parse_args()
    muts = [m for p in a.lists for m in load(p) if not a.only or m["id"] in a.only]
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--"] +
                           sorted({m["file"] for m in muts}), capture_output=True, text=True).stdout
    if dirty.strip():
        sys.exit("uncommitted changes in files to mutate (each is restored by git checkout):\n" + dirty)
    if not os.path.isdir(a.build):
        subprocess.run(["meson", "setup", a.build, "-Dbuildtype=debug", "-Db_lto=false"], cwd=ROOT,
                       check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["nice", "ninja", "-C", a.build], check=True, stdout=subprocess.DEVNULL)
    all_tests = meson_tests(a.build)
    count = {}
    unexpected = []
    for m in muts:
        t0 = time.time()
        tests = select(all_tests, m["tests"])
        if not tests:
            sys.exit("%s: no test matches %s" % (m["id"], " ".join(m["tests"])))
        verdict, info, ln = run_one(m, a.build, tests, a.timeout)
        if verdict == "survived" and m["mark"]:
            verdict, info = m["mark"], m["why"]
        elif verdict == "killed" and m["mark"]:
            info += " (marked %s: unmark it)" % m["mark"]
        count[verdict] = count.get(verdict, 0) + 1
        if verdict in ("survived", "stale", "no-build"):
            unexpected.append(m["id"])
        print("%s|%s:%d|%s -> %s|%s|%s|%.0fs" % (m["id"], m["file"], ln, m["orig"].strip(),
                                                m["repl"].strip(), verdict, info, time.time() - t0),
              flush=True)
    subprocess.run(["nice", "ninja", "-C", a.build], stdout=subprocess.DEVNULL)
    print(", ".join("%d %s" % (n, v) for v, n in sorted(count.items())))
    if unexpected:
        print("to look at: " + " ".join(unexpected))
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
