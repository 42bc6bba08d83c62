#!/usr/bin/python3
"""Texts of services/authzone_io.c replaced in every patch of the series
(a git filter-branch --tree-filter):
- on num_ixfrs, once no full transfer of an RPZ follows 5 IXFRs (that
  patch moved before the thread's);
- on the data version check of an AXFR's difference, once no worker
  reloads a zone while the auth-zone I/O thread runs;
- the in-place limit as a function of its own from the patch that sets
  it (a large IXFR applied to a copy), not from the AXFR difference's;
- includes that only the code moved to authzone.c needed.

usage: series_text.py TREE
"""
import os
import re
import sys

SUBS = [
    ("\t/* counted for the full transfer of an RPZ after some IXFRs; a full\n"
     "\t * transfer resets it */\n",
     "\t/* the IXFRs since the last full transfer */\n"),
    ("\t/* what xfr_process_chunk_list sets: the IXFRs counted for the full\n"
     "\t * transfer of an RPZ after some of them (a full transfer resets\n"
     "\t * it), the time the zone was acquired, whether it is an RPZ */\n",
     "\t/* what xfr_process_chunk_list sets: the IXFRs since the last full\n"
     "\t * transfer, the time the zone was acquired, whether it is an RPZ */\n"),
    ("\t\t/* the IXFRs that count towards a full transfer for RPZ\n"
     "\t\t * start again from the zone read */\n",
     "\t\t/* the IXFRs since the last full transfer start again\n"
     "\t\t * from the zone read */\n"),
    ("\t\t/* a worker replaced the data while the difference was\n"
     "\t\t * found (an auth_zone_reload that worker 0 runs itself when\n"
     "\t\t * its job cannot be allocated): the AXFR is applied whole */\n",
     "\t\t/* the data changed while the difference was found: the\n"
     "\t\t * AXFR is applied whole. Only this thread changes a zone's\n"
     "\t\t * data while it runs, and fast_reload pauses it between\n"
     "\t\t * jobs, not within one: a guard, no path that is taken */\n"),
    ("/** true if the IXFR in xfr is applied in place, for a zone of names\n"
     " * names: see AUTH_IXFR_COPY_RATIO */\n"
     "static int\n"
     "auth_io_ixfr_in_place(struct auth_xfer* xfr, size_t names)\n"
     "{\n"
     "\tsize_t max = names / AUTH_IXFR_COPY_RATIO;\n"
     "\tif(max < AUTH_IXFR_INPLACE_MAX)\n"
     "\t\tmax = AUTH_IXFR_INPLACE_MAX;\n"
     "\treturn auth_xfer_count_rrs(xfr, max) <= max;\n"
     "}\n",
     "/** the most RRs that an update applied in place changes, for a zone of\n"
     " * names names: see AUTH_IXFR_COPY_RATIO */\n"
     "static size_t\n"
     "auth_io_inplace_max(size_t names)\n"
     "{\n"
     "\tsize_t max = names / AUTH_IXFR_COPY_RATIO;\n"
     "\tif(max < AUTH_IXFR_INPLACE_MAX)\n"
     "\t\tmax = AUTH_IXFR_INPLACE_MAX;\n"
     "\treturn max;\n"
     "}\n"
     "\n"
     "/** true if the IXFR in xfr is applied in place, for a zone of names\n"
     " * names: see auth_io_inplace_max */\n"
     "static int\n"
     "auth_io_ixfr_in_place(struct auth_xfer* xfr, size_t names)\n"
     "{\n"
     "\tsize_t max = auth_io_inplace_max(names);\n"
     "\treturn auth_xfer_count_rrs(xfr, max) <= max;\n"
     "}\n"),
]

# Includes of authzone_io.c that only code now in authzone.c needed: an
# include goes when nothing of the unit matches its pattern.
UNUSED_INCLUDES = [("#include <sys/stat.h>\n", r"\bstat\("),
                   ("#include \"validator/val_anchor.h\"\n",
                    r"anchors_lookup|struct trust_anchor")]

if len(sys.argv) != 2:
    sys.exit(__doc__.strip().split("\n\n")[1])
path = os.path.join(sys.argv[1], "services/authzone_io.c")
if os.path.exists(path):
    with open(path) as f:
        t = f.read()
    for old, new in SUBS:
        t = t.replace(old, new)
    for inc, need in UNUSED_INCLUDES:
        if inc in t and not re.search(need, t.replace(inc, "")):
            t = t.replace(inc, "")
    with open(path, "w") as f:
        f.write(t)
