#!/usr/bin/python3
"""Say in the messages of 0031 and 0033 what the ZONEMD state is now
(zonemd_state.py made it).

usage: git filter-branch --msg-filter 'python3 zonemd_msg.py' base..HEAD
"""
import sys

OLD31 = """the zone has zonemd_pending from the swap on: the data in place has not
passed its ZONEMD check, and is not answered from, as when the zone is
expired. The check clears it when it ends (passed, failed, or no lookup
needed after all), and auth_zone_verify_zonemd makes, not drops, the
check of pending data when it is asked for the online part only. A zone
with nothing to read whose check needs a lookup is pending the same way:"""
NEW31 = """the data is put in place with its ZONEMD check waiting for the worker
(auth_zonemd_wait_worker): it has not passed the check, and is not
answered from, as when the zone is expired. A zone's ZONEMD state is one
field, zonemd_state (none, wait_worker, passed, failed), changed only by
auth_zone_zonemd_set, which also keeps the zonefile write that waits for
the check and drops it when the check does not pass; the answer paths
ask auth_zone_may_answer, the writes auth_zone_may_write. A worker's
lookup of the DNSKEY or DS puts the zone in wait_worker, so the answer
test needs no second field (zonemd_callback_env). The check ends the
wait (passed, failed, or no lookup needed after all; the check with a
key now says whether it passed), and auth_zone_verify_zonemd makes, not
drops, the check of waiting data when it is asked for the online part
only. A zone with nothing to read whose check needs a lookup waits the
same way:"""
OLD33 = """passed. The apply sets zonemd_pending (the reload patch before) when it
puts such data in place,"""
NEW33 = """passed. The apply puts such data in place in auth_zonemd_wait_worker
(auth_zone_zonemd_set, the reload patch before),"""

OLD39 = """the callback copies the key into a ZONEMD job for the thread and
returns. The job hashes a view of the zone's data without the zone lock
(only the thread changes data in place), ends the zone's pending state
(a failure expires the zone) and queues the zonefile write that waited
for the check, so the zonefile has one writer, the thread. Data whose
check is pending when a reload drops the need for a lookup is hashed
there too."""
NEW39 = """the callback copies the key into a ZONEMD job for the thread and
returns; the zone waits in a new state, auth_zonemd_wait_hash, not
answered from. The job hashes a view of the zone's data without the
zone lock (only the thread changes data in place), ends the wait
(passed, or failed: a failure expires the zone) and queues the
zonefile write that waited for the check, so the zonefile has one
writer, the thread. Data whose check waits when a reload drops the need
for a lookup is hashed there too."""
OLD31T = """answers had the data that failed, before the pending state)."""
NEW31T = """answers had the data that failed, before the pending state). The unit
test zonemd_state_test (testcode/unitzonemd.c) checks the states and the
write that waits: it fails when auth_zone_may_answer does not ask the
state."""

msg = sys.stdin.read()
for old, new in ((OLD31, NEW31), (OLD33, NEW33), (OLD39, NEW39),
        (OLD31T, NEW31T)):
    msg = msg.replace(old, new)
sys.stdout.write(msg)
