#!/usr/bin/env python3
"""Write the upstream submission set: the fork's series re-applied to the
pristine upstream release tarball (without Debian's patches), or to an
upstream tree (--onto, e.g. master), exported with git format-patch, and
one set with a cover letter per topic.

Patches are grouped by topic: a "Topic: NAME" line in the commit message,
or else the patch's line in patch-topics (repository top). Topic fork-only
is not for upstream. See CONTRIBUTING.md."""

import email.parser
import email.policy
import email.utils
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time

usage = """usage: make-upstream.py [--test] [--onto TREE [--fork-base DIR]] DLDIR PATCHDIR OUTDIR
  DLDIR holds the verified orig tarball (make base). OUTDIR is replaced
  only at the end. --onto: apply to TREE instead of the tarball, a git
  work tree whose tag "upstream" (else HEAD) is the upstream commit, as
  scripts/upstream-tree.sh writes it; --fork-base DIR, the tree the series
  was made on (make base: build/base), lets git am -3 merge each patch
  into TREE where its context differs. --test also builds series/ on that
  tree and runs upstream's make test there (result in the cover letters).
  environment: CHECK_RESULTS (default build/check-series/results),
  CONFIGURE_FLAGS, CC, CCACHE_DIR (for --test)"""

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORK_ONLY = "fork-only"
UNSORTED = "unsorted"
# The tree's initial commit and the exported patches are stable: fixed
# identities and dates, zero commit ids in the From lines.
BASE_ENV = {"GIT_AUTHOR_NAME": "Unbound release", "GIT_AUTHOR_EMAIL": "unbound@nlnetlabs.nl",
            "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z"}
CHANGELOG = "doc/Changelog"
CL_HEADER = re.compile(r"^\d{1,2} [A-Z][a-z]+ \d{4}: \S.*$")
# A doc/Changelog entry in a commit message: a paragraph of its own.
CL_BLOCK = re.compile(r"(?m)^Changelog entry:\n((?:.+\n?)+)")
# Trailers that are the fork's bookkeeping (topic, DEP-3 provenance), not
# part of the message upstream gets.
FORK_TRAILER = re.compile(r"(?mi)^(?:Topic|Origin|Forwarded|Last-Update):[ \t]*.*\n?")


def run(cmd, cwd=None, env=None, check=True, stdin=None):
    """Run cmd, return (rc, combined output); raise on failure if check."""
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(cmd, cwd=cwd, env=e, input=stdin, text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if check and p.returncode != 0:
        sys.exit("make-upstream: error: %s failed:\n%s" % (" ".join(cmd), p.stdout))
    return p.returncode, p.stdout


def read_pin():
    pin = {}
    with open(os.path.join(TOP, "base.pin")) as f:
        for line in f:
            m = re.match(r"^([A-Z0-9_]+)=(.*)$", line.strip())
            if m:
                pin[m.group(1)] = m.group(2)
    return pin


class Patch:
    """One patch file of the series, parsed."""

    def __init__(self, index, name, text):
        self.index, self.name, self.text = index, name, text
        msg = email.parser.HeaderParser(policy=email.policy.default).parsestr(text)
        self.author = " ".join(str(msg["From"] or "").split())
        self.date = str(msg["Date"] or "")
        self.subject = re.sub(r"^\[PATCH[^]]*\]\s*", "", " ".join(str(msg["Subject"] or "").split()))
        payload = msg.get_payload()
        body, _, _ = payload.partition("\n---\n")
        self.body = body.strip("\n")
        m = re.search(r"(?mi)^Topic:[ \t]*([A-Za-z0-9][A-Za-z0-9._-]*)[ \t]*$", self.body)
        self.topic = m.group(1).lower() if m else None
        self.topic_from = "Topic: line" if m else None
        # Sections of the diff, one per file.
        start = re.search(r"(?m)^diff --git ", text)
        self.head = text[:start.start()] if start else text
        self.sections = [s for s in re.split(r"(?m)^(?=diff --git )", text[start.start():])
                         if s] if start else []
        self.files = [re.match(r"diff --git a/(\S+)", s).group(1) for s in self.sections]
        self.tdirs = sorted({f.split("/")[1] for f in self.files
                             if f.startswith("testdata/") and f.split("/")[1].endswith(".tdir")})
        # The doc/Changelog entry: the message's "Changelog entry:"
        # paragraph (the fork's patches keep doc/Changelog out of their
        # diffs: CONTRIBUTING.md), or else the lines the patch adds at the
        # top of doc/Changelog.
        self.changelog = []
        self.changelog_plain = False
        m = CL_BLOCK.search(self.body)
        if m:
            self.changelog = m.group(1).rstrip("\n").split("\n")
            self.changelog_plain = True
        for s in self.sections if not m else []:
            if s.startswith("diff --git a/%s b/%s" % (CHANGELOG, CHANGELOG)):
                hunks = s.split("\n@@ ")[1:]
                added = [l[1:] for l in s.split("\n") if l.startswith("+") and not l.startswith("+++")]
                removed = [l for l in s.split("\n") if l.startswith("-") and not l.startswith("---")]
                self.changelog_plain = (len(hunks) == 1 and not removed
                                        and hunks[0].startswith("-1,"))
                while added and not added[-1].strip():
                    added.pop()
                self.changelog = added

    def changelog_ok(self):
        """Upstream's format: a "D Month YYYY: Name" line, then tab-dash items."""
        c = self.changelog
        return bool(c) and CL_HEADER.match(c[0]) and all(
            l.startswith("\t- ") or l.startswith("\t  ") for l in c[1:]) and len(c) > 1

    def stripped(self):
        """The patch without its doc/Changelog section (re-added by us on
        top of whatever doc/Changelog the target tree has)."""
        if not self.changelog_plain:
            return self.text
        return self.head + "".join(s for s in self.sections
                                   if not s.startswith("diff --git a/%s " % CHANGELOG))

    def tested(self):
        """Sentences of the message that say how it was tested."""
        out = []
        for para in re.split(r"\n\s*\n", self.body):
            m = re.search(r"(?:^|(?<=[.:]\s))((?:How t|T)est(?:ed|ing)\b.*)", para, re.S)
            if m:
                out.append(" ".join(m.group(1).split()))
        return out


def read_topics(path):
    """patch-topics: "PATCHFILE TOPIC", "title TOPIC TEXT", "doc TOPIC FILE"."""
    names, titles, docs = {}, {}, {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if not line:
                    continue
                w = line.split(None, 2)
                if w[0] == "title" and len(w) == 3:
                    titles[w[1]] = w[2]
                elif w[0] == "doc" and len(w) == 3:
                    docs.setdefault(w[1], []).append(w[2])
                elif len(w) == 2:
                    names[w[0]] = w[1].lower()
                else:
                    print("make-upstream: warning: patch-topics: cannot read line: %s" % line)
    return names, titles, docs


def insert_changelog(tree, entry):
    """Add ENTRY (header + items) at the top of doc/Changelog the way
    upstream does: under the top block when it has the same header."""
    path = os.path.join(tree, CHANGELOG)
    with open(path) as f:
        lines = f.read().split("\n")
    header, items = entry[0], entry[1:]
    if lines and lines[0] == header:
        end = lines.index("") if "" in lines else len(lines)
        lines[end:end] = items
    else:
        lines[0:0] = [header] + items + [""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


class Repo:
    """The export's git tree: the pristine tarball, or a clone of an
    upstream tree (onto), tagged upstream."""

    def __init__(self, path, tarball, version, onto=None):
        self.path = path
        # patch name -> its commit on branch fork-base (add_fork_base)
        self.fork_commits = {}
        if onto:
            run(["git", "clone", "-q", "--no-checkout", onto, path])
            ref = onto_ref(onto)
            self.git("checkout", "-q", "--detach", ref)
            self.git("tag", "-f", "upstream", ref)
            self.git("config", "core.autocrlf", "false")
            return
        os.makedirs(path)
        run(["tar", "-xzf", tarball, "-C", path, "--strip-components=1"])
        self.git("init", "-q")
        self.git("config", "core.autocrlf", "false")
        self.git("add", "-A", "-f", ".")
        self.git("commit", "-q", "-m", "Unbound %s (release tarball)" % version, env=BASE_ENV)
        self.git("tag", "upstream")

    def git(self, *args, check=True, env=None, stdin=None):
        e = {"GIT_COMMITTER_NAME": "Unbound Steady export",
             "GIT_COMMITTER_EMAIL": "unbound-steady@localhost"}
        e.update(env or {})
        return run(["git"] + list(args), cwd=self.path, env=e, check=check, stdin=stdin)[1]

    def head(self):
        return self.git("rev-parse", "HEAD").strip()

    def merge(self, p, env):
        """Cherry-pick patch P's commit on fork-base onto HEAD: returns
        (how, detail) as apply does: merged, resolved (a recorded
        resolution), present (no change left) or FAILED (a conflict)."""
        before = self.head()
        pick_env = dict(env, GIT_COMMITTER_NAME="Unbound Steady export",
                        GIT_COMMITTER_EMAIL="unbound-steady@localhost",
                        GIT_EDITOR="true")
        rc, out = run(["git", "cherry-pick", self.fork_commits[p.name]], cwd=self.path,
                      env=pick_env, check=False)
        how, detail = "merged", ""
        if rc != 0:
            conflicts = self.git("diff", "--name-only", "--diff-filter=U").split()
            staged = self.git("diff", "--cached", "--name-only").split()
            if not conflicts and not staged:
                self.git("cherry-pick", "--skip", check=False)
                return "present", "the tree has its change already"
            if not self.resolved_by_rerere():
                self.git("cherry-pick", "--abort", check=False)
                return "FAILED", "conflict in: " + " ".join(conflicts)
            rc, out = run(["git", "cherry-pick", "--continue"], cwd=self.path,
                          env=pick_env, check=False)
            if rc != 0:
                self.git("cherry-pick", "--abort", check=False)
                return "FAILED", "conflict in: " + " ".join(conflicts)
            how, detail = "resolved", "recorded resolution of its conflicts"
        if self.head() == before:
            return "present", "the tree has its change already"
        self.finish(p, env)
        return how, detail

    def finish(self, p, env):
        """The commit of patch P on HEAD gets the message upstream gets:
        the Changelog entry goes on top of this tree's doc/Changelog, as
        upstream's commits have it, and out of the message, with the
        trailers, which are the fork's bookkeeping."""
        if p.changelog_plain and p.changelog:
            insert_changelog(self.path, p.changelog)
            self.git("add", CHANGELOG)
        msg = self.git("log", "-1", "--format=%B")
        msg = FORK_TRAILER.sub("", CL_BLOCK.sub("", msg)).rstrip("\n") + "\n"
        msg = re.sub(r"\n{3,}", "\n\n", msg)
        self.git("commit", "-q", "--amend", "--allow-empty", "-F", "-", env=env, stdin=msg)

    def use_resolutions(self, rr_dir):
        """Reuse the conflict resolutions recorded in rr_dir (git rerere's
        rr-cache, see doc/upstream.md) when a patch is merged."""
        self.git("config", "rerere.enabled", "true")
        self.git("config", "rerere.autoupdate", "true")
        shutil.copytree(rr_dir, os.path.join(self.path, ".git", "rr-cache"), dirs_exist_ok=True)

    def resolved_by_rerere(self):
        """True if git am stopped at conflicts that rerere resolved (and
        staged) every one of, with no conflict marker left."""
        if self.git("diff", "--name-only", "--diff-filter=U").strip():
            return False
        staged = self.git("diff", "--cached", "--name-only").split()
        if not staged:
            return False
        rc, _ = run(["git", "grep", "-q", "--cached", "-e", "^<<<<<<< ", "-e", "^>>>>>>> ", "--"]
                    + staged, cwd=self.path, check=False)
        return rc != 0

    def add_fork_base(self, base_dir, patches, tmpdir):
        """Branch fork-base: the fork's base tree (with Debian's patches)
        and the series on it, where every patch applies as made. Its
        blobs are the preimages that git am -3 needs to merge a patch
        into another tree, such as upstream's master. Returns the names
        of the patches that did not apply there (none, normally)."""
        self.git("checkout", "-q", "--orphan", "fork-base")
        self.git("rm", "-rq", "--cached", "--ignore-unmatch", ".")
        self.git("clean", "-q", "-fdx")
        self.git("--work-tree", base_dir, "add", "-A", "-f", ".")
        self.git("commit", "-q", "-m", "the fork's base", env=BASE_ENV)
        self.git("checkout", "-q", "-f", "fork-base")
        failed = []
        for p in patches:
            pf = os.path.join(tmpdir, p.name)
            with open(pf, "w") as f:
                f.write(p.stripped())
            if not re.search(r"(?m)^diff --git ", p.stripped()):
                continue
            rc, _ = run(["git", "am", "-q", "--keep-cr", pf], cwd=self.path, check=False,
                        env={"GIT_COMMITTER_NAME": "Unbound Steady export",
                             "GIT_COMMITTER_EMAIL": "unbound-steady@localhost"})
            if rc != 0:
                self.git("am", "--abort", check=False)
                failed.append(p.name)
            else:
                self.fork_commits[p.name] = self.head()
        self.git("checkout", "-q", "-f", "upstream")
        self.git("clean", "-q", "-fdx")
        return failed

    def apply(self, p, tmpdir):
        """Apply patch P on HEAD as one commit. Returns (how, detail):
        how is clean, 3-way, fuzz or FAILED."""
        pf = os.path.join(tmpdir, p.name)
        with open(pf, "w") as f:
            f.write(p.stripped())
        env = {"GIT_COMMITTER_DATE": p.date}
        how, detail = None, ""
        if not re.search(r"(?m)^diff --git ", p.stripped()):
            # Only a Changelog entry: commit it by hand below.
            self.git("commit", "-q", "--allow-empty", "-m", p.subject + "\n\n" + p.body,
                     "--author", p.author, "--date", p.date, env=env)
            how = "clean"
        if how is None and p.name in self.fork_commits:
            # a true 3-way merge from the patch's own preimage; git am
            # would first try the patch by its context, which can match
            # a similar function elsewhere in the target
            return self.merge(p, env)
        if how is None:
            before = self.head()
            am_env = dict(env, GIT_COMMITTER_NAME="Unbound Steady export",
                          GIT_COMMITTER_EMAIL="unbound-steady@localhost")
            rc, out = run(["git", "am", "-3", "--keep-cr", pf], cwd=self.path,
                          env=am_env, check=False)
            if rc != 0 and self.resolved_by_rerere():
                # a conflict whose resolution is recorded (upstream-resolutions/)
                rc, out2 = run(["git", "am", "--continue"], cwd=self.path, env=am_env,
                               check=False)
                out += out2
                if rc == 0:
                    how, detail = "resolved", "recorded resolution of its conflicts"
            if rc == 0 and self.head() == before:
                # git am skips a patch whose change the tree has already
                return "present", "the tree has its change already"
            if rc == 0 and how is None:
                how = "3-way" if "3-way merge" in out else "clean"
            elif rc != 0:
                # git am could not use the blobs (files Debian's series
                # changed): try patch with fuzz on the pristine file.
                self.git("reset", "-q", "--hard", "HEAD")
                rc, out = run(["patch", "-p1", "-F3", "-N", "--no-backup-if-mismatch",
                               "--reject-file=-", "-i", pf], cwd=self.path, check=False)
                if rc == 0:
                    self.git("add", "-A", ".")
                    self.git("am", "--continue", env=env)
                    how = "fuzz"
                    fuzzed, cur = [], None
                    for line in out.split("\n"):
                        m = re.match(r"patching file (.*)", line)
                        if m:
                            cur = m.group(1)
                        if "with fuzz" in line and cur and cur not in fuzzed:
                            fuzzed.append(cur)
                    detail = "fuzz in: " + " ".join(fuzzed)
                else:
                    # patch may have made the new files of the patch
                    self.git("reset", "-q", "--hard", "HEAD")
                    self.git("clean", "-q", "-f", "-d")
                    self.git("am", "--abort", check=False)
                    rc, _ = run(["git", "apply", "--reverse", "--check", pf], cwd=self.path,
                                check=False)
                    if rc == 0:
                        # the tree has it already (a backport from it)
                        return "present", "the tree has its change already"
                    failed, cur = [], None
                    for line in out.split("\n"):
                        m = re.match(r"patching file (.*)", line)
                        if m:
                            cur = m.group(1)
                        if re.search(r"FAILED|can't find file|No file to patch|Reversed", line) \
                                and cur and cur not in failed:
                            failed.append(cur)
                    return "FAILED", "failed in: " + (" ".join(failed) or "?")
        self.finish(p, env)
        return how, detail

    def export(self, rng, outdir, cover=None):
        """format-patch RNG into OUTDIR; COVER: author of the cover letter."""
        os.makedirs(outdir, exist_ok=True)
        env = {}
        args = ["format-patch", "-q", "-n", "--zero-commit", "--no-signature",
                "--no-renames", "-o", outdir]
        if cover:
            args.append("--cover-letter")
            name, addr = email.utils.parseaddr(cover)
            env = {"GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": addr}
        self.git(*(args + [rng]), env=env)
        return sorted(f for f in os.listdir(outdir) if f.endswith(".patch"))


def onto_ref(tree):
    """The upstream commit of an --onto tree: its tag upstream, else HEAD."""
    rc, out = run(["git", "rev-parse", "--verify", "-q", "upstream^{commit}"], cwd=tree, check=False)
    if rc == 0:
        return out.strip()
    return run(["git", "rev-parse", "--verify", "HEAD^{commit}"], cwd=tree)[1].strip()


def onto_name(tree):
    """What an --onto tree is, for the texts: upstream-tree.sh names its
    commit "upstream <commit> <date>: <subject>"; else the commit id."""
    ref = onto_ref(tree)
    subject = run(["git", "log", "-1", "--format=%s", ref], cwd=tree)[1].strip()
    m = re.match(r"^upstream ([0-9a-f]{7,40}) (\d{4}-\d\d-\d\d)(?: with (\S+) merged)?:", subject)
    if m and m.group(3):
        return "upstream %s (%s) with %s merged" % m.groups()
    if m:
        return "upstream %s (%s)" % (m.group(1), m.group(2))
    return "upstream %s" % run(["git", "log", "-1", "--format=%h (%cs)", ref], cwd=tree)[1].strip()


def plural(n):
    return "%d patch%s" % (n, "" if n == 1 else "es")


def wrap(text, indent=""):
    """One paragraph, wrapped for a mail body."""
    return textwrap.wrap(text, 72, initial_indent=indent,
                         subsequent_indent=" " * len(indent), break_on_hyphens=False)


def doc_excerpt(path, limit=120):
    """Text of a results document for a cover letter: all of it when
    short, else its result sections, else its start."""
    with open(path) as f:
        lines = f.read().rstrip("\n").split("\n")
    if len(lines) <= limit:
        return lines
    keep, on, level = [], False, 0
    for l in lines:
        m = re.match(r"^(#+) ", l)
        if m:
            if on and len(m.group(1)) <= level:
                on = False
            if re.search(r"result|measur|effect|benchmark|number", l, re.I):
                on, level = True, len(m.group(1))
        if on:
            keep.append(l)
    if not keep:
        keep = lines[:60]
    return keep + ["", "(more in %s)" % os.path.relpath(path, TOP)]


def load_results():
    """make check-series results: key -> last line for that prefix."""
    path = os.environ.get("CHECK_RESULTS", os.path.join(TOP, "build/check-series/results"))
    res = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                w = line.split()
                if len(w) >= 4:
                    res[w[0]] = w
    return res


def pristine_test(repo, work, target):
    """Build the series branch's tree and run upstream's make test."""
    src, obj = os.path.join(work, "test-src"), os.path.join(work, "test-obj")
    os.makedirs(src)
    archive = subprocess.run(["git", "archive", "series"], cwd=repo.path,
                             stdout=subprocess.PIPE, check=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    env = {"CONFIGURE_FLAGS": "--disable-flto " + os.environ.get("CONFIGURE_FLAGS", "")}
    if shutil.which("ccache"):
        env["CC"] = "ccache " + os.environ.get("CC", "gcc")
        env.setdefault("CCACHE_DIR", os.environ.get(
            "CCACHE_DIR", os.path.join(TOP, "build/check-series/ccache")))
    log = os.path.join(work, "test.log")
    t0 = time.time()
    rc, out = run([os.path.join(TOP, "scripts/build.sh"), src, obj], env=env, check=False)
    if rc == 0:
        rc, out2 = run([os.path.join(TOP, "testcode/upstream-unit.sh"), obj], check=False)
        out += out2
    with open(log, "w") as f:
        f.write(out)
    m = re.search(r"^upstream: (\d+) passed, (\d+) failed", out, re.M)
    when = time.strftime("%Y-%m-%d", time.gmtime())
    if rc == 0 and m:
        return True, ("series/ applied to " + target["where"] + " builds (Debian's configure "
                      "options, without LTO) and passes upstream's make test: %s passed, "
                      "%s failed (%s, %ds)." % (m.group(1), m.group(2), when, time.time() - t0))
    return False, "series/ on %s FAILED to %s (log: test.log)." % (target["where"],
        "pass upstream's make test" if m else "build")


def main(argv):
    test, onto, fork_base = False, None, None
    while argv and argv[0] in ("--test", "--onto", "--fork-base"):
        if argv[0] == "--test":
            test, argv = True, argv[1:]
        elif len(argv) > 1 and argv[0] == "--onto":
            onto, argv = os.path.abspath(argv[1]), argv[2:]
        elif len(argv) > 1:
            fork_base, argv = os.path.abspath(argv[1]), argv[2:]
        else:
            argv = []
    if len(argv) != 3:
        print(usage, file=sys.stderr)
        return 2
    dl, pdir, out = argv
    pin = read_pin()
    version = pin["BASE_UPSTREAM_VERSION"]
    tarball = os.path.join(dl, pin["BASE_ORIG_FILE"])
    if not os.path.exists(tarball):
        sys.exit("make-upstream: error: no %s (run make base)" % tarball)
    if onto:
        if not os.path.isdir(os.path.join(onto, ".git")):
            sys.exit("make-upstream: error: %s is not a git work tree "
                     "(scripts/upstream-tree.sh writes one)" % onto)
        name = onto_name(onto)
        target = {"where": name, "short": name, "desc": name,
                  "index": "Applies to %s: %s, tag upstream (the patches need no "
                           "Debian patch)." % (name, onto)}
    else:
        target = {"where": "pristine %s" % version, "short": "Unbound %s" % version,
                  "desc": "Unbound %s as released (the tarball, without any "
                          "distribution's patches)" % version,
                  "index": "Applies to Unbound %s as released: %s (sha256 %s), without "
                           "Debian's patches." % (version, pin["BASE_ORIG_FILE"],
                                                  pin["BASE_ORIG_SHA256"])}
    names = run([os.path.join(TOP, "scripts", "series.sh"), pdir])[1].split()
    # Read every patch first: patches/ may change while this runs.
    patches = []
    for i, n in enumerate(names, 1):
        path = os.path.join(pdir, n)
        if not os.path.exists(path):
            sys.exit("make-upstream: error: patch %s is listed in %s/series but missing" % (n, pdir))
        with open(path) as f:
            patches.append(Patch(i, n, f.read()))

    topics_file = os.path.join(TOP, "patch-topics")
    tnames, titles, tdocs = read_topics(topics_file)
    warnings = []
    for p in patches:
        if p.topic is None and p.name in tnames:
            p.topic, p.topic_from = tnames[p.name], "patch-topics"
        if p.topic is None:
            p.topic, p.topic_from = UNSORTED, "none"
            warnings.append("%s has no topic: add a \"Topic: NAME\" line to its commit message "
                            "(or a line in patch-topics); exported under topic %s" % (p.name, UNSORTED))
        if not p.changelog:
            warnings.append("%s has no doc/Changelog entry" % p.name)
        elif not p.changelog_ok():
            warnings.append("%s: its doc/Changelog entry is not in upstream's format "
                            "(\"D Month YYYY: Name\" then tab-dash items)" % p.name)
        elif not p.changelog_plain:
            warnings.append("%s changes doc/Changelog beyond adding an entry at the top; "
                            "applied as it is" % p.name)
    # prefix keys, as make check-series writes them
    results, h = load_results(), hashlib.sha256()
    for p in patches:
        h.update(p.text.encode())
        p.check = results.get(h.hexdigest())

    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    work = os.path.abspath(out) + ".tmp"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tmp = tempfile.mkdtemp(prefix="make-upstream.")
    try:
        repo = Repo(os.path.join(work, "git"), tarball, version, onto)
        rr_dir = os.path.join(TOP, "upstream-resolutions")
        if onto and os.path.isdir(rr_dir):
            repo.use_resolutions(rr_dir)
        if fork_base:
            for name in repo.add_fork_base(fork_base, patches, tmp):
                warnings.append("%s does not apply to the fork's base (%s); its merge into "
                                "the target has no preimage" % (name, fork_base))
        # 1. The series for upstream, in order, without fork-only patches.
        repo.git("checkout", "-q", "-b", "series", "upstream")
        status, after = {}, {}
        for p in patches:
            if p.topic == FORK_ONLY:
                continue
            status[p.name] = repo.apply(p, tmp)
            if status[p.name][0] not in ("FAILED", "present"):
                after[p.name] = repo.head()
        # 2. Fork-only patches, on their own, only to report whether they
        # would apply without Debian's series.
        repo.git("checkout", "-q", "-b", FORK_ONLY, "upstream")
        for p in patches:
            if p.topic == FORK_ONLY:
                status[p.name] = repo.apply(p, tmp)
        # 3. One branch per topic: on the pristine tree when it applies
        # there on its own, else on the series up to its first patch.
        order = []
        for p in patches:
            if p.topic != FORK_ONLY and p.topic not in order:
                order.append(p.topic)
        topics = []
        for t in order:
            tp = [p for p in patches if p.topic == t and status[p.name][0] not in ("FAILED", "present")]
            info = {"name": t, "patches": tp, "standalone": True, "base": "upstream",
                    "ok": bool(tp), "fuzz": []}
            if tp:
                repo.git("checkout", "-q", "-B", "topic/" + t, "upstream")
                hows = []
                for p in tp:
                    hows.append(repo.apply(p, tmp))
                    if hows[-1][0] == "FAILED":
                        break
                info["fuzz"] = [(p.name, h[1]) for p, h in zip(tp, hows) if h[0] == "fuzz"]
                # on its own it needs fuzz, on the series it applies as it
                # is: exported on the series, where it was made
                series_exact = all(status[p.name][0] != "fuzz" for p in tp)
                if "FAILED" in [h[0] for h in hows] or (info["fuzz"] and series_exact):
                    info["fuzz"] = []
                    first = tp[0].index
                    prev = [q for q in patches if q.index < first and q.name in after]
                    info["standalone"] = False
                    info["base"] = after[prev[-1].name] if prev else "upstream"
                    info["needs"] = prev
                    repo.git("checkout", "-q", "-B", "topic/" + t, info["base"])
                    hows = [repo.apply(p, tmp) for p in tp]
                    info["ok"] = "FAILED" not in [h[0] for h in hows]
                    info["fuzz"] = [(p.name, h[1]) for p, h in zip(tp, hows) if h[0] == "fuzz"]
            topics.append(info)

        pristine = None
        if test and after:
            print("make-upstream: building series/ on %s and running make test" % target["where"])
            pristine = pristine_test(repo, work, target)
            shutil.rmtree(os.path.join(work, "test-src"), ignore_errors=True)
            shutil.rmtree(os.path.join(work, "test-obj"), ignore_errors=True)

        # Exports.
        if after:
            repo.export("upstream..series", os.path.join(work, "series"))
        repo.git("checkout", "-q", "series" if after else "upstream")
        index_topics, n = [], 0
        for info in topics:
            t = info["name"]
            if not info["ok"] and all(status[p.name][0] == "present" for p in patches
                                      if p.topic == t):
                index_topics.append("  %s: not exported, %s has its changes already" % (
                    t, target["where"]))
                continue
            if not info["ok"]:
                index_topics.append("  %s: NOT EXPORTED (%s; see Problems)" % (t, (
                    "none of its patches applies to %s" % target["where"]) if not info["patches"]
                    else "its patches do not apply in series order either"))
                continue
            n += 1
            d = os.path.join(work, "topics", "%02d-%s" % (n, t))
            files = repo.export("%s..topic/%s" % (info["base"], t), d, cover=info["patches"][0].author)
            title = cover_letter(os.path.join(d, files[0]), info, titles, tdocs, pristine, version,
                                 target)
            if not info["standalone"]:
                # what upstream-check.sh applies first: series/0001..N
                with open(os.path.join(d, "NEEDS"), "w") as f:
                    f.write("series %d\n" % len([q for q in info["needs"] if q.name in after]))
            where = "on %s" % target["where"] if info["standalone"] else \
                "on top of series/ patches 1..%d" % len(info["needs"])
            index_topics.append("  topics/%s/  %s (%s, applies %s)"
                                % (os.path.basename(d), title, plural(len(info["patches"])), where))

        problems = []
        for p in patches:
            how, detail = status[p.name]
            if how == "present":
                problems.append("%s: %s has its change already; left out" % (p.name, target["where"]))
            if how == "FAILED":
                problems.append("%s does not apply to %s without Debian's series (%s); "
                                "left out%s" % (p.name, target["where"], detail,
                                                "" if p.topic == FORK_ONLY else " of series/ and its topic"))
            elif how == "fuzz":
                problems.append("%s applies to %s only with fuzz (patch -F3, %s): "
                                "check the exported version" % (p.name, target["where"], detail))
        for info in topics:
            for name, detail in info["fuzz"]:
                if status[name][0] != "fuzz":
                    problems.append("%s applies only with fuzz (patch -F3, %s) in topic %s's own "
                                    "set: check topics/*-%s" % (name, detail, info["name"], info["name"]))
            if info["ok"] and not info["standalone"]:
                problems.append("topic %s does not apply to %s on its own; it is exported on "
                                "top of the series' patches before it" % (info["name"], target["where"]))

        write_index(work, target, patches, status, index_topics, problems, warnings, pristine)
        # Replace OUTDIR only now.
        shutil.rmtree(out, ignore_errors=True)
        os.rename(work, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    for p in patches:
        print("make-upstream: %-9s %s (topic %s)" % (status[p.name][0], p.name, p.topic))
    for line in problems:
        print("make-upstream: PROBLEM: " + line)
    for line in warnings:
        print("make-upstream: warning: " + line)
    if pristine:
        print("make-upstream: --test: " + pristine[1])
    print("make-upstream: wrote %s (index: %s)" % (out, os.path.join(out, "README")))
    return 0 if pristine is None or pristine[0] else 1


def cover_letter(path, info, titles, tdocs, pristine, version, target):
    """Fill in git's cover letter template for one topic; returns the title."""
    t, tp = info["name"], info["patches"]
    docs = [os.path.join(TOP, d) for d in tdocs.get(t, [])]
    docdir = os.path.join(TOP, "doc")
    if os.path.isdir(docdir):
        docs += [os.path.join(docdir, f) for f in sorted(os.listdir(docdir))
                 if f == t + ".md" or (f.startswith(t + "-") and f.endswith(".md"))]
    # and the results files under doc/ they link to (doc/bench-*.md ...)
    real = os.path.realpath(docdir) + os.sep
    for d in list(docs):
        if os.path.exists(d):
            with open(d) as f:
                for link in re.findall(r"\]\(([^)#\s]+\.md)\)", f.read()):
                    ld = os.path.normpath(os.path.join(os.path.dirname(d), link))
                    if os.path.realpath(ld).startswith(real):
                        docs.append(ld)
    docs = [d for i, d in enumerate(docs) if os.path.exists(d) and d not in docs[:i]]
    title = titles.get(t)
    if not title and docs:
        with open(docs[0]) as f:
            m = re.search(r"(?m)^# (.+)$", f.read())
        title = re.sub(r"\s*\(for [a-z ]+\)$", "", m.group(1)) if m else None
    if not title:
        title = tp[0].subject if len(tp) == 1 else t
    if info["standalone"]:
        b = wrap("These %s apply to %s, each with its doc/Changelog entry."
                 % (plural(len(tp)), target["desc"]))
    else:
        b = wrap("These %s apply to %s on top of the earlier patches of the "
                 "series (series/0001..%04d), each with its doc/Changelog entry."
                 % (plural(len(tp)), target["short"], len(info["needs"])))
    b += ["", "What and why", "============", ""]
    for i, p in enumerate(tp, 1):
        b += ["[%d/%d] %s" % (i, len(tp), p.subject), ""]
        b += [FORK_TRAILER.sub("", CL_BLOCK.sub("", p.body)).strip("\n"), ""]
    b += ["Measured effect", "===============", ""]
    if docs:
        for d in docs:
            b += ["From %s of the Unbound Steady repository:" % os.path.relpath(d, TOP), ""]
            b += ["  " + l if l else "" for l in doc_excerpt(d)] + [""]
    else:
        b += wrap("No results for this topic are recorded under doc/ yet; the numbers "
                  "the patches are based on are in their messages above.") + [""]
    b += ["How tested", "==========", ""]
    for i, p in enumerate(tp, 1):
        for s in p.tested():
            b += wrap(s, "- [%d/%d] " % (i, len(tp)))
    for i, p in enumerate(tp, 1):
        c = p.check
        if c and c[1] == "ok":
            extra = [w for w in c[4:] if w.startswith(("make-test=", "tdir="))]
            mt = extra[0].split("=", 1)[1] if extra else "?"
            td = extra[1].split("=", 1)[1] if len(extra) > 1 else "none"
            b += wrap("built with every patch before it in the fork (on %s with Debian's "
                      "security patches) and passed upstream's make test: %s tests%s "
                      "(make check-series, %s)." % (version, mt, "" if td == "none"
                                                    else ", tdir " + td, c[-1]),
                      "- [%d/%d] " % (i, len(tp)))
        elif c:
            b += wrap("make check-series FAILED on its prefix of the fork's series.",
                      "- [%d/%d] " % (i, len(tp)))
        else:
            b += wrap("not yet checked by make check-series in this form.",
                      "- [%d/%d] " % (i, len(tp)))
    tdirs = sorted({x for p in tp for x in p.tdirs})
    if tdirs:
        b += wrap("tdir tests added or changed: " + " ".join(tdirs), "- ")
    if pristine:
        b += wrap(pristine[1], "- ")
    b += ["", "doc/Changelog", "=============", ""]
    entries = {}
    for p in tp:
        if p.changelog:
            entries.setdefault(p.changelog[0], []).extend(p.changelog[1:])
    for h, items in entries.items():
        b += [h] + items + [""]
    with open(path) as f:
        text = f.read()
    text = text.replace("*** SUBJECT HERE ***", title, 1)
    text = text.replace("*** BLURB HERE ***", "\n".join(b).rstrip("\n"), 1)
    with open(path, "w") as f:
        f.write(text)
    return title


def write_index(work, target, patches, status, index_topics, problems, warnings, pristine):
    """build/upstream/README: what is where, and what went wrong."""
    L = ["Unbound Steady: submission set for upstream Unbound",
         "",
         "Generated by make upstream on %s from patches/series (%d patches)."
         % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), len(patches)),
         target["index"],
         "",
         "series/   every patch meant for upstream, in order: on a tree of %s," % target["short"],
         "          git am build/upstream/series/*.patch",
         "topics/   one set per topic, for one submission each: a cover letter",
         "          (0000-cover-letter.patch: what, why, measured effect, how tested,",
         "          doc/Changelog entries) and its patches; NEEDS, if there, says",
         "          how many patches of series/ go first",
         "git/      the tree they come from: tag upstream, branches",
         "          series, topic/NAME, fork-only (and fork-base: the series",
         "          on the fork's base, whose blobs the merges use)",
         "",
         "Topics:"]
    L += index_topics or ["  (none)"]
    L += ["", "Not for upstream (topic %s, kept in the fork only):" % FORK_ONLY]
    fo = [p for p in patches if p.topic == FORK_ONLY]
    L += ["  %s: %s (%s without Debian's series)" % (p.name, p.subject,
                                                     "applies" if status[p.name][0] != "FAILED"
                                                     else "does NOT apply")
          for p in fo] or ["  (none)"]
    L += ["", "Patches:"]
    L += ["  %-7s %s  [topic %s, from %s]" % (status[p.name][0], p.name, p.topic, p.topic_from)
          for p in patches]
    if pristine:
        L += ["", "Tested: " + pristine[1]]
    L += ["", "Problems:"] + (["  " + x for x in problems] or ["  none"])
    L += ["", "Warnings:"] + (["  " + x for x in warnings] or ["  none"])
    with open(os.path.join(work, "README"), "w") as f:
        f.write("\n".join(L) + "\n")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
