#!/usr/bin/python3
"""Narrow the interface of services/authzone_io.[ch] in one source tree.

usage: narrow_io.py [--check] TREE

Run on every commit of the series (git filter-branch --tree-filter), so
that each patch makes the code in the place where it ends up, and no
patch moves what an earlier one added:
- zone policy (keep-newer rules, ZONEMD state, zone health and
  statistics, apply timing, the AXFR difference, the data version, the
  RPZ fill) moves from authzone_io.c/.h to the end of authzone.c/.h;
- auth_io_running becomes auth_zones_io_running (the wrapper of that
  name goes), auth_zones_reload_zonefile_cancel becomes
  auth_io_job_abandon, auth_io_job_delete is static;
- a doc comment in a .c file that repeats the header's goes.
With --check, only report what would be done.
A tree without services/authzone_io.c is left as it is.
"""
import os
import re
import sys

# Top-level chunks moved from authzone_io.c to the end of authzone.c, by
# name; they keep the order they have in authzone_io.c.
MOVE_C = {
    "auth_zone_data_version_last", "auth_zone_data_version_next",
    "auth_zone_rpz_fill", "auth_zone_reread_keep_newer",
    "auth_zone_fast_reload_keeps", "auth_zone_fast_reload_fill",
    "auth_zone_fast_reload_keeps_data",
    "auth_zone_fast_reload_keep_policies",
    "auth_zone_fast_reload_keep_newer", "auth_zone_kept_zonemd",
    "auth_thread_cputime", "auth_apply_time_start", "auth_apply_time_end",
    "auth_xfer_count_transfer", "auth_zonefile_size",
    "auth_xfer_count_write", "auth_zone_get_health",
    "auth_zones_count_write", "auth_zones_count_apply_nomem",
    "zonemd_needs_lookup", "auth_zone_set_zonemd_pending",
    "struct auth_diff_rr", "struct auth_diff_walk", "auth_diff_add_change",
    "auth_diff_del", "auth_diff_node", "auth_diff_flush", "auth_diff_rr_add",
    "auth_diff_take", "auth_zone_axfr_difference",
}
# Declarations and types moved from authzone_io.h to the end of authzone.h.
MOVE_H = {
    "enum auth_axfr_diff_fail", "auth_zone_axfr_difference",
    "auth_zone_fast_reload_keep_newer", "auth_zone_fast_reload_keeps_data",
    "auth_zone_fast_reload_keep_policies", "auth_zone_data_version_next",
    "auth_zone_rpz_fill", "auth_zone_reread_keep_newer",
    "auth_zone_kept_zonemd", "auth_zones_count_write",
    "struct auth_apply_time", "auth_apply_time_start", "auth_apply_time_end",
    "auth_xfer_count_transfer", "auth_zonefile_size",
    "auth_xfer_count_write", "struct auth_zone_health",
    "auth_zone_get_health", "auth_zones_count_apply_nomem",
    "zonemd_needs_lookup", "auth_zone_set_zonemd_pending",
}
# Includes the moved code needs in authzone.c, after this line: each
# with a pattern of what needs it.
INCLUDES_AFTER = "#include <ctype.h>"
INCLUDES = [("#include <sys/stat.h>", r"\bstat\("),
            ("#include <time.h>", r"\bclock_gettime\(")]


# The file comment of authzone_io.c, as each patch has it, says what
# moved out.
FILE_COMMENT = [
    (" * Auth-zone I/O, besides services/authzone.c: the statistics of the\n"
     " * zonefile writes, the state of a ZONEMD check that waits for a lookup,\n"
     " * and auth_zone_reload, which reads the zonefile beside the zone's data.\n",
     " * Auth-zone I/O, besides services/authzone.c: the statistics of the\n"
     " * zonefile writes, and auth_zone_reload, which reads the zonefile beside\n"
     " * the zone's data.\n"),
    (" * these take with large zones. Its job queue and the reload (SIGHUP)\n"
     " * rules for zone data newer than its zonefile are here too.\n",
     " * these take with large zones. Its job queue is here too.\n"),
    (" * services/authzone.c keeps the zones, the transfer state machine and\n"
     " * the parsers, and calls in here (services/authzone_io.h).\n",
     " * services/authzone.c keeps the zones, the transfer state machine, the\n"
     " * parsers and the rules for zone data that the thread applies, and\n"
     " * calls in here (services/authzone_io.h).\n"),
    (" * fast_reload makes the thread wait while it replaces the zones, and\n"
     " * keeps a secondary zone's data that is newer than its zonefile.\n",
     " * fast_reload makes the thread wait while it replaces the zones.\n"),
]


def unused_forward_decls(lines):
    """remove the forward declarations of structs that a header no longer
    names"""
    text = "\n".join(lines)
    out = []
    for l in lines:
        m = re.match(r"struct (\w+);$", l)
        if m and len(re.findall(r"\bstruct %s\b" % m.group(1), text)) == 1:
            continue
        out.append(l)
    return out


class Chunk:
    """a top-level piece of C: its doc comment, then its code"""

    def __init__(self, name, start, code, end):
        self.name = name
        self.start = start    # first line, its comment included
        self.code = code      # first line of the code
        self.end = end        # last line

    def __repr__(self):
        return "%s %d-%d" % (self.name, self.start + 1, self.end + 1)


def chunk_name(head):
    """the name of a top-level definition or declaration"""
    pre = re.split(r"[{;=]", head)[0]
    if "(" not in pre:
        m = re.match(r"\s*(struct|enum)\s+(\w+)\s*$", pre)
        if m:
            return m.group(1) + " " + m.group(2)
        return re.findall(r"\w+", pre)[-1]
    return re.findall(r"(\w+)\s*\(", pre)[0]


def chunks(lines):
    """the top-level chunks of a C file; preprocessor lines and comments
    that stand apart are not in any"""
    out = []
    i = 0
    comment = None
    n = len(lines)
    while i < n:
        line = lines[i]
        if line.startswith("/*"):
            start = i
            while "*/" not in lines[i]:
                i += 1
            comment = start
            i += 1
            continue
        if line.strip() == "" or line.startswith("#"):
            comment = None
            i += 1
            continue
        j = i
        depth = 0
        seen = False
        while j < n:
            depth += lines[j].count("{") - lines[j].count("}")
            seen = seen or "{" in lines[j]
            if seen and depth == 0:
                break
            if not seen and lines[j].rstrip().endswith(";"):
                break
            j += 1
        head = " ".join(lines[i:j + 1])
        start = comment if comment is not None else i
        out.append(Chunk(chunk_name(head), start, i, j))
        comment = None
        i = j + 1
    return out


def cut(lines, chs):
    """remove chunks from lines (and the blank line after each); return
    the removed text of each, in order"""
    texts = []
    drop = set()
    for c in chs:
        texts.append(lines[c.start:c.end + 1])
        for k in range(c.start, c.end + 1):
            drop.add(k)
        if c.end + 1 < len(lines) and lines[c.end + 1].strip() == "":
            drop.add(c.end + 1)
    rest = [l for k, l in enumerate(lines) if k not in drop]
    return texts, rest


def norm_comment(lines):
    """the words of a comment"""
    t = " ".join(lines)
    t = re.sub(r"/\*\*|\*/|^\s*\*|\n\s*\*", " ", t)
    t = t.replace("*", " ")
    return " ".join(t.split())


def header_comments(lines):
    """name -> comment words of each declaration in a header"""
    out = {}
    for c in chunks(lines):
        if c.start < c.code:
            out[c.name] = norm_comment(lines[c.start:c.code])
    return out


def drop_repeated_comments(lines, hcomments, report, fname, only=None):
    """remove a function's doc comment in a .c file when the header has
    one; report those that differ. With only, just for the functions of
    those names."""
    drop = set()
    for c in chunks(lines):
        if c.start == c.code or c.name not in hcomments:
            continue
        if only is not None and c.name not in only:
            continue
        if "(" not in lines[c.code] and "(" not in lines[c.code + 1]:
            continue
        words = norm_comment(lines[c.start:c.code])
        if "without threads" in words:
            # the stub of a build without threads says what it does
            continue
        if words != hcomments[c.name]:
            report.append("%s: %s: its comment is not the header's, "
                          "which stays" % (fname, c.name))
        drop.update(range(c.start, c.code))
    return [l for k, l in enumerate(lines) if k not in drop]


def word_sub(text, old, new):
    return re.sub(r"\b%s\b" % re.escape(old), new, text)


def read(tree, rel):
    with open(os.path.join(tree, rel)) as f:
        return f.read().split("\n")


def write(tree, rel, lines):
    with open(os.path.join(tree, rel), "w") as f:
        f.write("\n".join(lines))


def c_files(tree):
    """the C sources and headers the renames apply to"""
    for d in ("services", "daemon", "testcode", "util", "smallapp",
              "libunbound", "iterator", "validator"):
        p = os.path.join(tree, d)
        if not os.path.isdir(p):
            continue
        for f in sorted(os.listdir(p)):
            if f.endswith((".c", ".h")):
                yield os.path.join(d, f)


def rename_everywhere(tree, old, new):
    for rel in c_files(tree):
        path = os.path.join(tree, rel)
        with open(path) as f:
            t = f.read()
        if re.search(r"\b%s\b" % re.escape(old), t):
            with open(path, "w") as f:
                f.write(word_sub(t, old, new))


def remove_named(lines, name):
    """remove the chunks of that name; return the new lines and how many"""
    chs = [c for c in chunks(lines) if c.name == name]
    _, rest = cut(lines, chs)
    return rest, len(chs)


# Wrappers in authzone.c that only the moved code called from
# authzone_io.c: the moved code calls what they wrap.
WRAPPERS = {"auth_ixfr_changes_add": "ixfr_changes_add",
            "auth_zone_zonemd_offline_verify": "zonemd_offline_verify"}


def drop_wrappers(tree, report):
    """remove a wrapper of WRAPPERS that no file but authzone.c calls"""
    azc, azh = "services/authzone.c", "services/authzone.h"
    for wrapper, static in WRAPPERS.items():
        elsewhere = False
        for rel in c_files(tree):
            if rel in (azc, azh):
                continue
            with open(os.path.join(tree, rel)) as f:
                if re.search(r"\b%s\b" % wrapper, f.read()):
                    elsewhere = True
        al = read(tree, azc)
        if elsewhere or not any(c.name == wrapper for c in chunks(al)):
            continue
        al, _ = remove_named(al, wrapper)
        al = [word_sub(l, wrapper, static) for l in al]
        hl, _ = remove_named(read(tree, azh), wrapper)
        write(tree, azc, al)
        write(tree, azh, hl)
        report.append("%s: the wrapper goes, %s is called" % (wrapper,
                                                                 static))


def narrow(tree, check=False):
    report = []
    ioc, ioh = "services/authzone_io.c", "services/authzone_io.h"
    azc, azh = "services/authzone.c", "services/authzone.h"
    if not os.path.exists(os.path.join(tree, ioc)):
        return report
    cl = read(tree, ioc)
    hl = read(tree, ioh)
    names_c = {c.name for c in chunks(cl)}

    # the doubled names
    if "auth_io_running" in names_c and "auth_zones_io_running" in names_c:
        cl, _ = remove_named(cl, "auth_zones_io_running")
        hl, _ = remove_named(hl, "auth_zones_io_running")
        report.append("auth_zones_io_running: wrapper removed")
    if "auth_io_job_abandon" in names_c and \
            "auth_zones_reload_zonefile_cancel" in names_c:
        cl, _ = remove_named(cl, "auth_zones_reload_zonefile_cancel")
        hl, _ = remove_named(hl, "auth_zones_reload_zonefile_cancel")
        report.append("auth_zones_reload_zonefile_cancel: removed")

    # the moves
    cch = [c for c in chunks(cl) if c.name in MOVE_C]
    hch = [c for c in chunks(hl) if c.name in MOVE_H]
    ctexts, cl = cut(cl, cch)
    htexts, hl = cut(hl, hch)
    report.append("moved to authzone.c: %s" % ", ".join(c.name for c in cch))
    report.append("moved to authzone.h: %s" % ", ".join(c.name for c in hch))

    # what stays must not use a static that moved, and what moves must
    # not use a static that stays
    statics_moved = {c.name for c, t in zip(cch, ctexts)
                     if t[c.code - c.start].startswith("static")}
    stay = chunks(cl)
    statics_stay = {c.name for c in stay if cl[c.code].startswith("static")}
    staytext = "\n".join(cl)
    movetext = "\n".join("\n".join(t) for t in ctexts)
    for s in statics_moved:
        if re.search(r"\b%s\b" % re.escape(s.split()[-1]), staytext):
            report.append("ERROR: %s moved, still used in %s" % (s, ioc))
    for s in statics_stay:
        if re.search(r"\b%s\b" % re.escape(s.split()[-1]), movetext):
            report.append("ERROR: %s stays, used by moved code" % s)
    for m in re.findall(r"\b(AUTH_[A-Z_]+)\b", movetext):
        if re.search(r"#define %s\b" % m, staytext):
            report.append("ERROR: macro %s stays in %s" % (m, ioc))
    if re.search(r"\bio->|struct auth_zones_io \{", movetext):
        report.append("ERROR: moved code uses the thread's struct")

    if check:
        return report

    al = read(tree, azc)
    while al and al[-1] == "":
        al.pop()
    for t in ctexts:
        al.append("")
        al.extend(t)
    al.append("")
    k = al.index(INCLUDES_AFTER) + 1
    for inc, need in INCLUDES:
        if inc not in al and re.search(need, movetext):
            al.insert(k, inc)
            k += 1
    ahl = read(tree, azh)
    endif = max(k for k, l in enumerate(ahl) if l.startswith("#endif"))
    block = []
    movedh = "\n".join("\n".join(t) for t in htexts)
    fwd = sorted(set(re.findall(r"struct (\w+)\s*\*", movedh)))
    have = "\n".join(ahl)
    fwd = [s for s in fwd if not re.search(r"^struct %s[ ;]" % s, have,
                                             re.M)]
    if fwd:
        block.extend("struct %s;" % s for s in fwd)
        block.append("")
    for t in htexts:
        block.extend(t)
        block.append("")
    ahl[endif:endif] = block

    write(tree, ioc, cl)
    write(tree, ioh, hl)
    write(tree, azc, al)
    write(tree, azh, ahl)

    # the other names of the doubled ones, everywhere
    rename_everywhere(tree, "auth_io_running", "auth_zones_io_running")
    rename_everywhere(tree, "auth_zones_reload_zonefile_cancel",
                      "auth_io_job_abandon")

    # auth_io_job_delete only in the unit
    cl = read(tree, ioc)
    hl = read(tree, ioh)
    abandon = [c for c in chunks(cl) if c.name == "auth_io_job_abandon"]
    # authzone.c calls it for a job that is done, from when
    # auth_io_job_abandon takes no auth zones for that
    abandon_done = abandon and "if(az && az->io)" in "\n".join(
        cl[abandon[0].code:abandon[0].end + 1])
    if abandon_done and any(c.name == "auth_io_job_delete"
                            for c in chunks(cl)):
        al = read(tree, azc)
        al = [l.replace("auth_io_job_delete(",
                       "auth_io_job_abandon(NULL, ")
              if "auth_io_job_delete(" in l else l for l in al]
        write(tree, azc, al)
        hl, _ = remove_named(hl, "auth_io_job_delete")
        for c in chunks(cl):
            if c.name == "auth_io_job_delete" and \
                    not cl[c.code].startswith("static"):
                cl[c.code] = "static " + cl[c.code]
        first_use = min(k for k, l in enumerate(cl)
                        if "auth_io_job_delete(" in l)
        defn = [c for c in chunks(cl) if c.name == "auth_io_job_delete"][0]
        if first_use < defn.code:
            report.append("ERROR: auth_io_job_delete used before its "
                          "definition")

    drop_wrappers(tree, report)

    # one doc comment, in the header
    cl = drop_repeated_comments(cl, header_comments(hl), report, ioc)
    text = "\n".join(cl)
    for old, new in FILE_COMMENT:
        text = text.replace(old, new)
    cl = text.split("\n")
    hl = unused_forward_decls(hl)
    al = drop_repeated_comments(read(tree, azc),
                                header_comments(read(tree, azh)), report,
                                azc, MOVE_C)
    write(tree, ioc, cl)
    write(tree, ioh, hl)
    write(tree, azc, al)
    return report


def main():
    args = sys.argv[1:]
    check = "--check" in args
    args = [a for a in args if a != "--check"]
    if len(args) != 1:
        sys.exit(__doc__.strip().split("\n\n")[1])
    report = narrow(args[0], check)
    for r in report:
        print(r, file=sys.stderr)
    if any(r.startswith("ERROR") for r in report):
        sys.exit(1)


if __name__ == "__main__":
    main()
