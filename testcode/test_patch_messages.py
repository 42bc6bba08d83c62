#!/usr/bin/env python3
"""Check the messages of the fork's patches (CONTRIBUTING.md, "Patch
messages"): a "subsystem: summary" subject, a "Changelog entry:"
paragraph in upstream's format and no doc/Changelog hunk, and the
trailers Topic, Origin, Forwarded and Last-Update (DEP-3) as the last
paragraph. Prints one line per problem and exits 1 if there is one."""

import email.parser
import email.policy
import os
import re
import subprocess
import sys

USAGE = "usage: test_patch_messages.py [PATCHDIR]  (default: patches/ of this repository)"
SUBJECT = re.compile(r"^[a-z][a-z0-9/._-]*(?:, [a-z][a-z0-9/._-]*)*: \S")
CL_HEADER = re.compile(r"^\d{1,2} [A-Z][a-z]+ \d{4}: \S.*$")
TRAILERS = {
    "Topic": re.compile(r"^[a-z0-9][a-z0-9._-]*$"),
    "Origin": re.compile(r"^\S.*$"),
    "Forwarded": re.compile(r"^(?:not-needed|no|https?://|upstream/[a-z0-9._-]+/)"),
    "Last-Update": re.compile(r"^\d{4}-\d{2}-\d{2}$"),
}


def problems_of(name, text):
    """The problems of one patch file's message, as strings."""
    out = []
    msg = email.parser.HeaderParser(policy=email.policy.default).parsestr(text)
    subject = re.sub(r"^\[PATCH[^]]*\]\s*", "", " ".join(str(msg["Subject"] or "").split()))
    if not SUBJECT.match(subject):
        out.append("subject is not 'subsystem: summary': %s" % subject)
    if re.search(r"(?m)^diff --git a/doc/Changelog ", text):
        out.append("changes doc/Changelog (put the entry in the message)")
    body = msg.get_payload().partition("\n---\n")[0].strip("\n")
    paras = re.split(r"\n[ \t]*\n", body)
    entry = [p for p in paras if p.startswith("Changelog entry:\n")]
    if len(entry) != 1:
        out.append("has %d 'Changelog entry:' paragraphs, not 1" % len(entry))
    else:
        lines = entry[0].split("\n")[1:]
        if not (len(lines) > 1 and CL_HEADER.match(lines[0]) and lines[1].startswith("\t- ")
                and all(l.startswith("\t- ") or l.startswith("\t  ") for l in lines[1:])):
            out.append("Changelog entry is not 'D Month YYYY: Name' then tab-dash items")
    last = paras[-1].split("\n") if paras else []
    found = {}
    for line in last:
        key, sep, value = line.partition(": ")
        if sep:
            found[key] = value
    for key, form in TRAILERS.items():
        if key not in found:
            out.append("no %s: trailer in the last paragraph" % key)
        elif not form.match(found[key]):
            out.append("%s: %s is not of the form %s" % (key, found[key], form.pattern))
    return ["%s: %s" % (name, p) for p in out]


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        sys.exit(USAGE)
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    pdir = argv[1] if len(argv) == 2 else os.path.join(top, "patches")
    names = subprocess.run([os.path.join(top, "scripts", "series.sh"), pdir], check=True,
                           capture_output=True, text=True).stdout.split()
    problems = []
    for name in names:
        with open(os.path.join(pdir, name)) as f:
            problems += problems_of(name, f.read())
    for p in problems:
        print("  " + p)
    print("test_patch_messages: %d patches, %d problems" % (len(names), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
