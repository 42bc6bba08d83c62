#!/usr/bin/env python3
"""usage: zonemd_doc.py   (a git filter-branch --tree-filter, run in the tree)

Issue 67, the review of item 2 (session 25): auth_zone_may_write's doc
comment says that it is the test of auth_zone_may_answer, and that the
write job makes the exception of a download whose check passed, not the
function; AUTH_ZONEMD_WRITE_KEEP is written (-1); auth_io_zonemd_queue's
doc comment names the state its job waits in, not the old zonemd_pending.
A tree without them (before patch 0031, 0039) is left as it is."""
import sys

PATH = "services/authzone.h"
OLD_DOC = """/**
 * Whether the zone's data may be written to its zonefile: it is not
 * expired, and its ZONEMD check does not wait. A download whose check
 * passed may be written while newer data waits (the write of a check
 * that ended).
 * @param z: the zone, locked.
 * @return true if it may be written.
 */"""
NEW_DOC = """/**
 * Whether the zone's data may be written to its zonefile: it is not
 * expired, and its ZONEMD check does not wait; the same test as
 * auth_zone_may_answer, so that a zonefile holds only data that may be
 * answered from. The caller makes one exception: the write of a check
 * that ended writes the download whose check passed while newer data
 * waits.
 * @param z: the zone, locked.
 * @return true if it may be written.
 */"""
OLD_DEF = "#define AUTH_ZONEMD_WRITE_KEEP -1\n"
NEW_DEF = "#define AUTH_ZONEMD_WRITE_KEEP (-1)\n"

IO_PATH = "services/authzone_io.h"
OLD_IO = """ * is dropped if other data is put in place before it runs. Until it has
 * run, the data is not answered from (zonemd_pending), and the zonefile
 * write that waits for the check (zonemd_callback_perform_write) is the
 * job's to do."""
NEW_IO = """ * is dropped if other data is put in place before it runs. Until it has
 * run, the zone is in auth_zonemd_wait_hash, and not answered from
 * (auth_zone_may_answer), and the zonefile write that waits for the check
 * (zonemd_callback_perform_write) is the job's to do."""

try:
    io_text = open(IO_PATH).read()
except FileNotFoundError:
    io_text = ""
if "auth_io_zonemd_queue" in io_text:
    if io_text.count(OLD_IO) != 1:
        sys.exit("zonemd_doc.py: %s has changed" % IO_PATH)
    open(IO_PATH, "w").write(io_text.replace(OLD_IO, NEW_IO))

try:
    text = open(PATH).read()
except FileNotFoundError:
    sys.exit(0)
if "auth_zone_may_write" not in text:
    sys.exit(0)
if text.count(OLD_DOC) != 1 or text.count(OLD_DEF) != 1:
    sys.exit("zonemd_doc.py: %s has changed" % PATH)
text = text.replace(OLD_DOC, NEW_DOC).replace(OLD_DEF, NEW_DEF)
open(PATH, "w").write(text)
