#!/usr/bin/env python3
"""Apply the fork's patch series to another base, given as tarballs, and
report per patch whether it applies, applies only with a three-way merge,
is already in the new base, or conflicts (and in which files)."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

USAGE = """usage: rebase-check.py [--keep-conflicts] OLDBASE PATCHDIR NEWBASE_DIR OUTDIR
  OLDBASE      the current base tree (build/base), which the series applies to
  PATCHDIR     the series (patches/)
  NEWBASE_DIR  the other base as tarballs, either
               - upstream's release tarball (one unbound-*.tar.gz/.tar.xz), or
               - Debian's source package: *.orig.tar.* and *.debian.tar.*
                 (Debian's debian/patches/series is applied, as for the base)
  OUTDIR       gets REPORT and src/, a git tree of the new base (tag
               newbase) with every patch that applied as one commit (branch
               rebased), to continue the move from (build/rebase-check)
  --keep-conflicts  a conflicting patch is merged again, its side taken
               in each conflicting hunk (-X theirs), and kept, so that the
               patches after it are checked against it, not against its
               absence: each conflict is then a patch's own
  Exit status: 0 when every patch applies, 1 when any conflicts, 2 on errors.
  Each patch is cherry-picked (three-way merge against the patch's old
  base); a conflict only in doc/Changelog (every patch adds its entry at the
  top) is resolved by putting the entry on top, and said so. A patch that
  conflicts elsewhere is left out and the next one is tried; a later
  conflict may come from that. Each conflicting file is reported with its
  number of conflicting hunks (conflict markers)."""

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, GIT_AUTHOR_NAME="rebase-check", GIT_AUTHOR_EMAIL="rebase-check@localhost",
           GIT_COMMITTER_NAME="rebase-check", GIT_COMMITTER_EMAIL="rebase-check@localhost",
           GIT_AUTHOR_DATE="2000-01-01T00:00:00Z", GIT_COMMITTER_DATE="2000-01-01T00:00:00Z",
           LC_ALL="C")


def die(msg, code=2):
    print("rebase-check: error: " + msg, file=sys.stderr)
    sys.exit(code)


def run(cmd, cwd=None, check=True):
    r = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True)
    if check and r.returncode != 0:
        die("%s failed:\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return r


def git(repo, *args, check=True):
    return run(["git", "-C", repo] + list(args), check=check)


def unpack(newdir, dest):
    """Unpack the tarballs of newdir into dest; returns a description."""
    tars = sorted(f for f in os.listdir(newdir) if re.search(r"\.tar(\.(gz|xz|bz2))?$", f))
    debian = [f for f in tars if ".debian.tar." in f]
    orig = [f for f in tars if ".orig.tar." in f]
    os.makedirs(dest)
    if debian or orig:
        if len(debian) != 1 or len(orig) != 1:
            die("%s: a Debian source needs one *.orig.tar.* and one *.debian.tar.* (found: %s)"
                % (newdir, " ".join(tars) or "none"))
        run(["tar", "-xf", os.path.join(newdir, orig[0]), "-C", dest, "--strip-components=1"])
        run(["tar", "-xf", os.path.join(newdir, debian[0]), "-C", dest])
        series = os.path.join(dest, "debian", "patches")
        if os.path.exists(os.path.join(series, "series")):
            r = run([os.path.join(TOP, "scripts", "apply-series.sh"), dest, series], check=False)
            if r.returncode != 0:
                die("Debian's patch series of the new base does not apply:\n" + r.stderr)
        return "Debian source %s + %s" % (orig[0], debian[0])
    if len(tars) != 1:
        die("%s: expected upstream's release tarball or Debian's orig and debian tarballs (found: %s)"
            % (newdir, " ".join(tars) or "none"))
    run(["tar", "-xf", os.path.join(newdir, tars[0]), "-C", dest, "--strip-components=1"])
    return "upstream tarball %s" % tars[0]


def changelog_entry(repo, commit):
    """The lines a commit adds at the top of doc/Changelog."""
    diff = git(repo, "show", "--format=", "-U0", commit, "--", "doc/Changelog").stdout
    added = []
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added.append(line[1:])
    return added


def conflict_hunks(repo, files):
    """The number of conflicting hunks (conflict markers) of each file."""
    hunks = {}
    for f in files:
        n = 0
        try:
            with open(os.path.join(repo, f), errors="replace") as fh:
                n = sum(1 for line in fh if line.startswith("<<<<<<< "))
        except (FileNotFoundError, IsADirectoryError):
            pass
        hunks[f] = n
    return hunks


def main():
    args = sys.argv[1:]
    keep = bool(args) and args[0] == "--keep-conflicts"
    if keep:
        args = args[1:]
    if len(args) != 4:
        print(USAGE, file=sys.stderr)
        return 2
    oldbase, pdir, newdir, out = (os.path.abspath(a) for a in args)
    for d, what in ((oldbase, "OLDBASE"), (pdir, "PATCHDIR"), (newdir, "NEWBASE_DIR")):
        if not os.path.isdir(d):
            die("%s %s is not a directory\n%s" % (what, d, USAGE))
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="rebase-check.", dir=out)
    try:
        # The series on the current base, one commit per patch (make-src).
        old = os.path.join(work, "old")
        r = run([os.path.join(TOP, "scripts", "make-src.sh"), oldbase, pdir, old], check=False)
        if r.returncode != 0:
            die("the series does not apply to the current base %s:\n%s" % (oldbase, r.stderr))
        commits = git(old, "rev-list", "--reverse", "base..HEAD").stdout.split()
        names = run([os.path.join(TOP, "scripts", "series.sh"), pdir]).stdout.split()
        if len(names) != len(commits):
            die("%d patches in the series but %d commits" % (len(names), len(commits)))

        # The new base, one commit, with the old commits' objects fetched
        # so that each patch can be merged three-way.
        new = os.path.join(work, "src")
        what = unpack(newdir, new)
        git(new, "init", "-q")
        git(new, "config", "core.autocrlf", "false")
        git(new, "add", "-A", "-f", ".")
        git(new, "commit", "-q", "-m", "New base: " + what)
        git(new, "tag", "newbase")
        git(new, "checkout", "-q", "-b", "rebased")
        git(new, "fetch", "-q", old, "HEAD:refs/old/series")

        report = ["rebase-check: the series (%d patches) on %s" % (len(names), what), ""]
        counts = {"applies": 0, "merged": 0, "already": 0, "conflict": 0, "hunks": 0}
        conflicting = []
        skipped = []
        for name, c in zip(names, commits):
            patch = os.path.join(pdir, name)
            # Applies as a plain patch, leaving aside its Changelog entry?
            plain = git(new, "apply", "--check", "--exclude=doc/Changelog", patch,
                        check=False).returncode == 0
            r = git(new, "cherry-pick", "--allow-empty", "--keep-redundant-commits", c,
                    check=False)
            note = ""
            if r.returncode != 0:
                unmerged = git(new, "diff", "--name-only", "--diff-filter=U").stdout.split()
                if "doc/Changelog" in unmerged:
                    # Every patch's entry goes on top of the new Changelog.
                    git(new, "checkout", "--ours", "--", "doc/Changelog")
                    path = os.path.join(new, "doc", "Changelog")
                    with open(path) as f:
                        body = f.read()
                    with open(path, "w") as f:
                        f.write("\n".join(changelog_entry(new, c)) + "\n" + body)
                    git(new, "add", "doc/Changelog")
                    unmerged.remove("doc/Changelog")
                    note = " (doc/Changelog: entry put on top of the new file)"
                if unmerged:
                    hunks = conflict_hunks(new, unmerged)
                    git(new, "cherry-pick", "--abort", check=False)
                    counts["conflict"] += 1
                    counts["hunks"] += sum(hunks.values())
                    conflicting.append(name)
                    where = " ".join("%s (%d)" % (f, hunks[f]) for f in unmerged)
                    kept = keep and git(new, "cherry-pick", "--allow-empty", "--keep-redundant-commits",
                                        "-X", "theirs", c, check=False).returncode == 0
                    if kept:
                        report.append("CONFLICT  %s (kept, its side taken)\n          in: %s"
                                      % (name, where))
                        continue
                    git(new, "cherry-pick", "--abort", check=False)
                    after = " (%d earlier patch(es) left out)" % len(skipped) if skipped else ""
                    report.append("CONFLICT  %s%s\n          in: %s" % (name, after, where))
                    skipped.append(name)
                    continue
                git(new, "-c", "core.editor=true", "cherry-pick", "--continue")
            if not git(new, "diff", "--name-only", "HEAD~1", "HEAD").stdout.strip():
                counts["already"] += 1
                report.append("ALREADY   %s (no change left: the new base has it)" % name)
                git(new, "reset", "-q", "--hard", "HEAD~1")
            elif plain:
                counts["applies"] += 1
                report.append("APPLIES   %s%s" % (name, note))
            else:
                counts["merged"] += 1
                report.append("MERGED    %s (applies only with a three-way merge)%s" % (name, note))
        report += ["", "rebase-check: %d apply, %d with a three-way merge, %d already in the new base, "
                   "%d conflict%s" % (counts["applies"], counts["merged"], counts["already"],
                                      counts["conflict"],
                                      (" (%d hunks): %s" % (counts["hunks"], " ".join(s[:4] for s in conflicting)))
                                      if conflicting else "")]
        # Keep the result: OUTDIR/src (branch rebased) and OUTDIR/REPORT.
        git(new, "update-ref", "-d", "refs/old/series")
        dest = os.path.join(out, "src")
        shutil.rmtree(dest, ignore_errors=True)
        os.rename(new, dest)
        with open(os.path.join(out, "REPORT"), "w") as f:
            f.write("\n".join(report) + "\n")
        print("\n".join(report))
        print("rebase-check: report in %s/REPORT, tree in %s (branch rebased)" % (out, dest))
        return 1 if counts["conflict"] else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
