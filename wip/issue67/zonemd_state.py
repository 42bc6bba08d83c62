#!/usr/bin/python3
"""One owner for a zone's ZONEMD state, in one source tree.

usage: zonemd_state.py [--check] TREE

Run on every commit of the series (git filter-branch --tree-filter), so
that the patch that adds the state (0031) adds it in its final form and
each later patch uses it:
- the int zonemd_pending of struct auth_zone becomes
  enum auth_zonemd_state zonemd_state, changed only by
  auth_zone_zonemd_set (which replaces auth_zone_set_zonemd_pending);
- the answer paths ask auth_zone_may_answer, the fork's write paths
  auth_zone_may_write (upstream's write after the lookup's check keeps
  its test of zone_expired), a test of the pending state asks
  auth_zone_zonemd_waits;
- auth_zone_verify_zonemd_with_key_check returns whether the check
  passed, so that the check ends in passed or failed;
- a worker's lookup of the DNSKEY or DS puts the state in wait_worker,
  so that the answer test needs no second field.
With --check, only report what would be done. A tree without
zonemd_pending is left as it is. Exits 1 when zonemd_pending is left.
"""
import re
import sys

CHECK = False


def fail(msg):
    """Report a site that was not found, for the commit being filtered."""
    sys.stderr.write("zonemd_state.py: %s\n" % msg)


def sub1(text, pattern, repl, what, flags=re.S, optional=False):
    """Replace exactly one match of pattern; report if none is found."""
    new, n = re.subn(pattern, repl, text, count=1, flags=flags)
    if n == 0 and not optional:
        fail("not found: " + what)
    return new


def func_span(text, name):
    """The span of the definition of function name (its body to the '}'
    at the start of a line), or None."""
    m = re.search(r"\n(?:[a-z][\w ]*[ *])?%s\([^;{]*?\)\n\{" %
        re.escape(name), text)
    if not m:
        return None
    end = text.find("\n}\n", m.start())
    return (m.start(), end + 3)


def in_func(text, name, pattern, repl, what, optional=False, count=1):
    """Replace in the body of function name only."""
    span = func_span(text, name)
    if not span:
        if not optional:
            fail("no function %s for %s" % (name, what))
        return text
    body = text[span[0]:span[1]]
    new, n = re.subn(pattern, repl, body, count=count, flags=re.S)
    if n == 0 and not optional:
        fail("not found in %s: %s" % (name, what))
    return text[:span[0]] + new + text[span[1]:]


def has_hash_job(tree):
    """Whether the tree hashes a zone for its check on the I/O thread."""
    try:
        with open(tree + "/services/authzone_io.c") as f:
            return "auth_io_zonemd_queue" in f.read()
    except OSError:
        return False


ENUM_HEAD_HASH = """/**
 * The state of the ZONEMD check of a zone's data (its zonemd_state),
 * changed only by auth_zone_zonemd_set. Data is put in place with its
 * check made, in none, passed or failed, or with its check waiting for a
 * worker, in wait_worker. A worker's lookup of the DNSKEY or DS keeps it
 * there; after the lookup, the hash of the zone waits on the auth-zone
 * I/O thread, in wait_hash, and the check ends in passed or failed. Data
 * whose check waits is not answered from (auth_zone_may_answer) and not
 * written to the zonefile (auth_zone_may_write).
 */
"""

ENUM_HEAD = """/**
 * The state of the ZONEMD check of a zone's data (its zonemd_state),
 * changed only by auth_zone_zonemd_set. Data is put in place with its
 * check made, in none, passed or failed, or with its check waiting for a
 * worker, in wait_worker. A worker's lookup of the DNSKEY or DS keeps it
 * there; the check ends in passed or failed. Data whose check waits is
 * not answered from (auth_zone_may_answer) and not written to the
 * zonefile (auth_zone_may_write).
 */
"""

ENUM = """enum auth_zonemd_state {
	/** no check was made: zonemd-check is off, the zone has no data,
	 * or the data is put in place before it is checked */
	auth_zonemd_none = 0,
	/** the check waits for a worker: for its lookup of the DNSKEY or DS
	 * of the zone (zonemd_callback_env is set while the lookup runs),
	 * or, for data kept at a reload, for the check that the workers
	 * start after it */
	auth_zonemd_wait_worker,
%s	/** the check passed */
	auth_zonemd_passed,
	/** the check failed: the zone is expired, unless
	 * zonemd-permissive-mode is set */
	auth_zonemd_failed
};

/** for auth_zone_zonemd_set: keep the zonefile write that waits for the
 * check, and its download */
#define AUTH_ZONEMD_WRITE_KEEP -1

"""

ENUM_HASH_VALUE = """	/** the lookup is done, the hash of the zone waits on the auth-zone
	 * I/O thread */
	auth_zonemd_wait_hash,
"""

FIELD = """	/** the state of the ZONEMD check of the data in place; changed only
	 * by auth_zone_zonemd_set, see enum auth_zonemd_state */
	enum auth_zonemd_state zonemd_state;
"""

PROTOS = """/**
 * Change the state of the ZONEMD check of the zone's data, and the
 * zonefile write that waits for that check (zonemd_callback_perform_write,
 * perform_write_chunk_list). The one place that changes zonemd_state.
 * Data whose check is asked for is answered from and written only after
 * the check passed (CVE-2026-77955): a waiting state is left for the
 * verdict of that check (passed, failed), or for none when other data is
 * put in place or the check is no longer asked for, and the write that
 * waited is then dropped: it was for data whose check did not pass.
 * Caller holds the zone's write lock, or owns the zone (a copy).
 * @param z: the zone.
 * @param state: the new state.
 * @param write: AUTH_ZONEMD_WRITE_KEEP keeps the write that waits.
 *	Otherwise that write is dropped and, for a waiting state, replaced:
 *	true if the data is to be written to the zonefile when the check
 *	passes.
 * @param chunks: with a write to wait for, the download to write
 *	instead of the data, or NULL; the zone takes it (it may be the one
 *	it holds). Otherwise freed, unless AUTH_ZONEMD_WRITE_KEEP.
 */
void auth_zone_zonemd_set(struct auth_zone* z, enum auth_zonemd_state state,
	int write, struct auth_chunk* chunks);

/**
 * Whether the ZONEMD check of the zone's data waits%s.
 * @param z: the zone, locked.
 * @return true if the check waits.
 */
int auth_zone_zonemd_waits(struct auth_zone* z);

/**
 * Whether the zone's data may be answered from: it is not expired (a
 * failed ZONEMD check expires it), and its ZONEMD check does not wait.
 * @param z: the zone, locked.
 * @return true if it may be answered from.
 */
int auth_zone_may_answer(struct auth_zone* z);

/**
 * Whether the zone's data may be written to its zonefile: it is not
 * expired, and its ZONEMD check does not wait. A download whose check
 * passed may be written while newer data waits (the write of a check
 * that ended).
 * @param z: the zone, locked.
 * @return true if it may be written.
 */
int auth_zone_may_write(struct auth_zone* z);
"""

FUNCS = """void
auth_zone_zonemd_set(struct auth_zone* z, enum auth_zonemd_state state,
	int write, struct auth_chunk* chunks)
{
	struct auth_chunk* old;
	z->zonemd_state = state;
	if(write == AUTH_ZONEMD_WRITE_KEEP)
		return;
	old = z->perform_write_chunk_list;
	z->perform_write_chunk_list = NULL;
	z->zonemd_callback_perform_write = 0;
	if(write && auth_zone_zonemd_waits(z)) {
		z->zonemd_callback_perform_write = 1;
		z->perform_write_chunk_list = chunks;
	} else if(chunks != old) {
		auth_chunk_list_free(chunks);
	}
	if(old != z->perform_write_chunk_list)
		auth_chunk_list_free(old);
}

int
auth_zone_zonemd_waits(struct auth_zone* z)
{
	return z->zonemd_state == auth_zonemd_wait_worker%s;
}

int
auth_zone_may_answer(struct auth_zone* z)
{
	return !z->zone_expired && !auth_zone_zonemd_waits(z);
}

int
auth_zone_may_write(struct auth_zone* z)
{
	return !z->zone_expired && !auth_zone_zonemd_waits(z);
}
"""


def do_h(text, hashjob):
    text = text.replace(" * \tof DNSKEY chain of trust are processed; and data whose check is\n"
        " * \tpending (zonemd_pending) for a lookup that is no longer needed,\n"
        " * \tas its trust anchor went at a reload, is checked.\n",
        " * \tof DNSKEY chain of trust are processed; and data whose check\n"
        " * \twaits (auth_zone_zonemd_waits) for a lookup that is no longer\n"
        " * \tneeded, as its trust anchor went at a reload, is checked.\n")
    text = text.replace(" * \tof DNSKEY chain of trust are processed; and data whose check is\n"
        " * \tpending (zonemd_pending) for a lookup that is no longer needed,\n"
        " * \tas its trust anchor went at a reload, is checked (with the\n"
        " * \tauth-zone I/O thread, there).\n",
        " * \tof DNSKEY chain of trust are processed; and data whose check\n"
        " * \twaits (auth_zone_zonemd_waits) for a lookup that is no longer\n"
        " * \tneeded, as its trust anchor went at a reload, is checked (with\n"
        " * \tthe auth-zone I/O thread, there).\n")
    text = sub1(text, r"\t/\*\*(?:(?!/\*\*).)*?\*/\n\tint zonemd_pending;\n",
        lambda m: FIELD, "field zonemd_pending")
    if "enum auth_zonemd_state {" not in text:
        enum = (ENUM_HEAD_HASH if hashjob else ENUM_HEAD) + ENUM % (
            ENUM_HASH_VALUE if hashjob else "")
        text = sub1(text, r"(/\*\*\n \* Auth zone\.  Authoritative data)",
            lambda m: enum + m.group(1), "struct auth_zone")
    text = sub1(text, r"/\*\*(?:(?!/\*\*).)*?\*/\n"
        r"void auth_zone_set_zonemd_pending\(.*?\);\n",
        lambda m: PROTOS % (": for a worker,\n * or for the hash on the auth-zone I/O thread"
            if hashjob else " for a worker"), "set_zonemd_pending prototype")
    return text


ANSWER_COMMENT_LOOKUP = """\t\t/* Do not serve from a zone whose data may not be answered
\t\t * from: it is expired, or its ZONEMD check has not passed
\t\t * yet, so the content is not known to pass the configured
\t\t * check. The state is changed under z->lock, so this test
\t\t * is race-free. */
"""
ANSWER_COMMENT_DOWN = """\t\t/* see auth_zones_lookup: data whose ZONEMD check has not
\t\t * passed yet is treated like expiry */
"""


def do_c(text, hashjob):
    text = text.replace("its check is pending (zonemd_pending, or its",
        "its check waits (auth_zone_zonemd_waits, or its")
    # the setter and the predicates, where set_zonemd_pending was
    text = sub1(text, r"void\nauth_zone_set_zonemd_pending\(.*?\n}\n",
        lambda m: FUNCS % (" ||\n\t\tz->zonemd_state == auth_zonemd_wait_hash"
            if hashjob else ""), "set_zonemd_pending definition")
    # the answer paths
    text = sub1(text, r"if\(z->zone_expired \|\| z->zonemd_pending \|\|\n"
        r"\t\t\(z->zonemd_check && z->zonemd_callback_env\)\) \{\n"
        r"\t\t/\* Do not serve.*?\*/\n",
        lambda m: "if(!auth_zone_may_answer(z)) {\n" + ANSWER_COMMENT_LOOKUP,
        "answer test of auth_zones_lookup")
    text = sub1(text, r"if\(z->zone_expired \|\| z->zonemd_pending \|\|\n"
        r"\t\t\(z->zonemd_check && z->zonemd_callback_env\)\) \{\n"
        r"\t\t/\* see auth_zones_lookup.*?\*/\n",
        lambda m: "if(!auth_zone_may_answer(z)) {\n" + ANSWER_COMMENT_DOWN,
        "answer test of auth_zones_answer")
    # the verdicts
    text = in_func(text, "auth_zone_zonemd_fail",
        r"\tz->zonemd_pending = 0;\n",
        "\tauth_zone_zonemd_set(z, auth_zonemd_failed, "
        "AUTH_ZONEMD_WRITE_KEEP,\n\t\tNULL);\n", "zonemd_fail")
    span = func_span(text, "auth_zone_verify_zonemd_with_key_check")
    if span:
        body = text[span[0]:span[1]]
        body = re.sub(r"(auth_zone_zonemd_fail\([^;]*;\n\t+)return;",
            r"\1return 0;", body)
        body = body.replace("return;", "return 1;")
        body = re.sub(r"\n}\n$", "\n\treturn 1;\n}\n", body)
        text = text[:span[0]] + body + text[span[1]:]
        text = sub1(text, r"(@param result: if not NULL result reason "
            r"copied here\.\n)( \*/\nstatic )void(\n"
            r"auth_zone_verify_zonemd_with_key_check\()",
            r"\1 * @return true if the check passed.\n\2int\3",
            "with_key_check header")
    else:
        fail("no auth_zone_verify_zonemd_with_key_check")
    text = in_func(text, "auth_zone_verify_zonemd_with_key",
        r"\tauth_zone_verify_zonemd_with_key_check\((.*?)\);\n"
        r"\tz->zonemd_pending = 0;\n",
        lambda m: "\tif(auth_zone_verify_zonemd_with_key_check(" + m.group(1)
        + "))\n\t\tauth_zone_zonemd_set(z, auth_zonemd_passed,\n"
        "\t\t\tAUTH_ZONEMD_WRITE_KEEP, NULL);\n", "with_key")
    text = in_func(text, "auth_zone_verify_zonemd",
        r"\t\tz->zonemd_pending = 0;\n",
        "\t\tauth_zone_zonemd_set(z, auth_zonemd_none,\n"
        "\t\t\tAUTH_ZONEMD_WRITE_KEEP, NULL);\n", "verify_zonemd none")
    text = in_func(text, "auth_zone_verify_zonemd",
        r"only_online && !z->zonemd_pending",
        "only_online && !auth_zone_zonemd_waits(z)",
        "verify_zonemd only_online", count=0)
    # the lookup of a worker
    text = in_func(text, "zonemd_lookup_dnskey",
        r"(\tz->zonemd_callback_env = env;\n)",
        r"\1\tauth_zone_zonemd_set(z, auth_zonemd_wait_worker,\n"
        "\t\tAUTH_ZONEMD_WRITE_KEEP, NULL);\n", "lookup start")
    # the write after the callback's check, upstream's code, stays as it
    # is: the check has just ended there, so whether the data may be
    # written is whether it expired; upstream master changed those lines
    # (one more conflict at a rebase, for no change in what it does)
    # auth_zone_reload
    text = text.replace(
        "if(r == -1 && z->zonemd_pending && !z->zonemd_check) {",
        "if(r == -1 && auth_zone_zonemd_waits(z) &&\n"
        "\t\t\t\t!z->zonemd_check) {")
    text = re.sub(r"\n(\t+)auth_zone_set_zonemd_pending\(z, 0, 0, NULL\);",
        lambda m: "\n%sauth_zone_zonemd_set(z, auth_zonemd_none, 0, NULL);"
        % m.group(1) if len(m.group(1)) < 4 else
        "\n%sauth_zone_zonemd_set(z, auth_zonemd_none, 0,\n%s\tNULL);"
        % (m.group(1), m.group(1)), text)
    # keep-newer at a reload
    text = in_func(text, "auth_zone_reread_keep_newer",
        r"if\(z->zonemd_pending && z->zonemd_check\) \{\n"
        r"(\t+/\*.*?\*/\n)"
        r"(\t+)z->zonemd_callback_perform_write = 1;\n"
        r"(\t+\} else \{\n\t+/\*.*?\*/\n)"
        r"(\t+)z->zonemd_pending = 0;\n"
        r"\t+z->zonemd_callback_perform_write = 0;\n",
        lambda m: "if(auth_zone_zonemd_waits(z) && z->zonemd_check) {\n"
        + m.group(1) + m.group(2) + "auth_zone_zonemd_set(z, "
        "z->zonemd_state, 1,\n" + m.group(2) + "\tz->perform_write_chunk_list);\n"
        + m.group(3) + m.group(4) + "auth_zone_zonemd_set(z, "
        "auth_zonemd_none, 0, NULL);\n", "keep_newer", optional=True)
    # the kept data's check
    text = in_func(text, "auth_zone_kept_zonemd",
        r"\t\tif\(!z->zonemd_pending\) \{\n"
        r"\t\t\tz->zonemd_pending = 1;\n"
        r"\t\t\tz->zonemd_callback_perform_write = z->zonefile_behind;\n",
        "\t\tif(!auth_zone_zonemd_waits(z)) {\n"
        "\t\t\tauth_zone_zonemd_set(z, auth_zonemd_wait_worker,\n"
        "\t\t\t\tz->zonefile_behind, NULL);\n", "kept lookup",
        optional=True)
    text = in_func(text, "auth_zone_kept_zonemd",
        r"\tif\(z->zonemd_pending\) \{\n",
        "\tif(auth_zone_zonemd_waits(z)) {\n", "kept pending",
        optional=True)
    # fast_reload's keep-newer
    text = in_func(text, "auth_zone_fast_reload_keep_newer",
        r"\tauth_chunk_list_free\(new_z->perform_write_chunk_list\);\n"
        r"\tnew_z->perform_write_chunk_list = NULL;\n"
        r"\tnew_z->zonemd_pending = 0;\n"
        r"\tnew_z->zonemd_callback_perform_write = 0;\n",
        "\tauth_zone_zonemd_set(new_z, auth_zonemd_none, 0, NULL);\n",
        "fast_reload reset", optional=True)
    text = in_func(text, "auth_zone_fast_reload_keep_newer",
        r"old_z->zonemd_pending \|\|",
        "auth_zone_zonemd_waits(old_z) ||", "fast_reload test",
        optional=True)
    text = in_func(text, "auth_zone_fast_reload_keep_newer",
        r"\t\tnew_z->zonemd_pending = 1;\n"
        r"\t\tnew_z->zonemd_callback_perform_write = 1;\n"
        r"\t\tnew_z->zonefile_behind = 0;\n"
        r"\t\tif\(old_z->zonemd_pending\) \{\n"
        r"\t\t\tnew_z->perform_write_chunk_list =\n"
        r"\t\t\t\told_z->perform_write_chunk_list;\n"
        r"\t\t\told_z->perform_write_chunk_list = NULL;\n"
        r"\t\t\}\n",
        "\t\tstruct auth_chunk* chunks = NULL;\n"
        "\t\tif(auth_zone_zonemd_waits(old_z)) {\n"
        "\t\t\tchunks = old_z->perform_write_chunk_list;\n"
        "\t\t\told_z->perform_write_chunk_list = NULL;\n"
        "\t\t}\n"
        "\t\tauth_zone_zonemd_set(new_z, auth_zonemd_wait_worker, 1,\n"
        "\t\t\tchunks);\n"
        "\t\tnew_z->zonefile_behind = 0;\n", "fast_reload wait",
        optional=True)
    return text


def do_io(text, hashjob):
    text = text.replace("(zone_expired,\n * zonemd_pending), not the zone's.",
        "(zone_expired,\n * zonemd_state), not the zone's.")
    text = text.replace("vz->zonemd_pending = z->zonemd_pending;",
        "vz->zonemd_state = z->zonemd_state;")
    text = re.sub(r"\n(\t+)auth_zone_set_zonemd_pending\(z, zonemd_lookup, ",
        lambda m: "\n%sauth_zone_zonemd_set(z, zonemd_lookup?"
        "auth_zonemd_wait_worker:\n%s\tZONEMD_VERDICT, "
        % (m.group(1), m.group(1)), text)
    # the verdict of the check made before the data was put in place:
    # on the zone itself (in place), or on the new data (nz)
    text = in_func(text, "auth_io_apply_inplace", r"ZONEMD_VERDICT",
        "z->zonemd_state", "inplace verdict", optional=True)
    text = text.replace("ZONEMD_VERDICT, write_file,",
        "nz.zonemd_state, write_file,")
    text = text.replace("ZONEMD_VERDICT, 0, NULL)",
        "nz.zonemd_state, 0, NULL)")
    if "ZONEMD_VERDICT" in text:
        fail("a put in place without its verdict")
    # the write job
    text = sub1(text, r"\tif\(z->zone_expired\) \{\n"
        r"\t\t/\* data that failed ZONEMD is not written.*?\*/\n"
        r"\t\tlock_rw_unlock\(&z->lock\);\n"
        r"\t\tverbose\(VERB_ALGO, \"auth zone is expired, zonefile not \"\n"
        r"\t\t\t\"written\"\);\n\t\treturn;\n\t\}\n"
        r"\tif\(z->zonemd_pending && !(job->)?chunks\) \{\n",
        lambda m: m.group(0).replace(
            "\tif(z->zonemd_pending && ",
            "\tif(!auth_zone_may_write(z) && "),
        "write job", optional=True)
    # the write of data kept at a reload
    text = text.replace("\t\t/* an expired zone, also one whose ZONEMD check "
        "failed at\n\t\t * the reload, is not written */\n"
        "\t\tif(!behind || z->zone_expired || !z->zonefile ||\n",
        "\t\t/* data that may not be written, expired (also by a\n"
        "\t\t * ZONEMD check that failed at the reload) or waiting for\n"
        "\t\t * its check, is not written */\n"
        "\t\tif(!behind || !auth_zone_may_write(z) || !z->zonefile ||\n")
    # the hash job
    text = in_func(text, "auth_io_zonemd", r"\t\tif\(vz\.zone_expired\)\n"
        r"\t\t\tz->zone_expired = 1;\n\t\tz->zonemd_pending = 0;\n"
        r"\t\tif\(!z->zone_expired && job->perform_write\) \{\n",
        "\t\tif(vz.zone_expired)\n\t\t\tz->zone_expired = 1;\n"
        "\t\tauth_zone_zonemd_set(z, vz.zonemd_state,\n"
        "\t\t\tAUTH_ZONEMD_WRITE_KEEP, NULL);\n"
        "\t\tif(auth_zone_may_write(z) && job->perform_write) {\n",
        "hash verdict", optional=not hashjob)
    text = in_func(text, "auth_io_zonemd_queue",
        r"\tz->perform_write_chunk_list = NULL;\n"
        r"\tz->zonemd_callback_perform_write = 0;\n"
        r"\tz->zonemd_pending = 1;\n",
        "\t/* the job took the write that waits for the check */\n"
        "\tz->perform_write_chunk_list = NULL;\n"
        "\tauth_zone_zonemd_set(z, auth_zonemd_wait_hash, 0, NULL);\n",
        "hash queue", optional=not hashjob)
    # the reload's check of the data in use
    text = text.replace("pending = vz.zonemd_pending;",
        "pending = auth_zone_zonemd_waits(&vz);")
    text = text.replace("*cleared = (pending && !vz.zonemd_pending);",
        "*cleared = (pending && !auth_zone_zonemd_waits(&vz));\n"
        "\t*verdict = vz.zonemd_state;")
    text = text.replace("char** reason, int* expired, int* cleared)",
        "char** reason, int* expired, int* cleared,\n"
        "\tenum auth_zonemd_state* verdict)")
    text = text.replace(" * @param cleared: true is returned here if the check ended a pending\n"
        " *\tstate (zonemd_pending), as it does when it is not asked for or\n"
        " *\tfails; it never starts one (no lookups).\n",
        " * @param cleared: true is returned here if the check ended a waiting\n"
        " *\tstate (auth_zone_zonemd_waits), as it does when it is not asked\n"
        " *\tfor or fails; it never starts one (no lookups).\n"
        " * @param verdict: the state the check ended in is returned here.\n")
    text = text.replace("\tint check_cleared = 0;\n",
        "\tint check_cleared = 0;\n"
        "\tenum auth_zonemd_state check_verdict = auth_zonemd_none;\n")
    text = text.replace("reason, &check_expired,\n\t\t&check_cleared)",
        "reason, &check_expired,\n\t\t&check_cleared, &check_verdict)")
    text = re.sub(r"\n(\t*)if\(check_cleared\)\n\t*z->zonemd_pending = 0;\n",
        lambda m: "\n%sif(check_cleared)\n%s\tauth_zone_zonemd_set(z, "
        "check_verdict,\n%s\t\tAUTH_ZONEMD_WRITE_KEEP, NULL);\n"
        % (m.group(1), m.group(1), m.group(1)), text)
    text = re.sub(r"(\n\t+)z->zonemd_pending = 1;\n",
        lambda m: "%sauth_zone_zonemd_set(z, auth_zonemd_wait_worker,%s\t"
        "AUTH_ZONEMD_WRITE_KEEP, NULL);\n" % (m.group(1), m.group(1)), text)
    return text


UNIT = """/** a download of one chunk, for a zonefile write that waits */
static struct auth_chunk*
zonemd_state_chunk(void)
{
	struct auth_chunk* c = calloc(1, sizeof(*c));
	unit_assert(c);
	c->data = malloc(1);
	unit_assert(c->data);
	c->len = 1;
	return c;
}

/** zonemd unit test: the state of a zone's ZONEMD check, and the
 * zonefile write that waits for it (auth_zone_zonemd_set). Data whose
 * check waits is not answered from or written (CVE-2026-77955), and a
 * write that waited for a check that did not pass is dropped. */
static void zonemd_state_test(void)
{
	struct auth_zone z;
	struct auth_chunk* c;
	unit_show_func("services/authzone.c", "auth_zone_zonemd_set");
	memset(&z, 0, sizeof(z));
	z.zonemd_check = 1;
	unit_assert(z.zonemd_state == auth_zonemd_none);
	unit_assert(auth_zone_may_answer(&z) && auth_zone_may_write(&z));

	/* data is put in place whose check waits for a lookup; its
	 * download is written when the check passes */
	c = zonemd_state_chunk();
	auth_zone_zonemd_set(&z, auth_zonemd_wait_worker, 1, c);
	unit_assert(auth_zone_zonemd_waits(&z));
	unit_assert(!auth_zone_may_answer(&z) && !auth_zone_may_write(&z));
	unit_assert(z.zonemd_callback_perform_write &&
		z.perform_write_chunk_list == c);
	/* a worker starts the lookup: the write still waits */
	auth_zone_zonemd_set(&z, auth_zonemd_wait_worker,
		AUTH_ZONEMD_WRITE_KEEP, NULL);
	unit_assert(!auth_zone_may_answer(&z));
	unit_assert(z.zonemd_callback_perform_write &&
		z.perform_write_chunk_list == c);
	/* the check passes: answered, and the write is there to be done */
	auth_zone_zonemd_set(&z, auth_zonemd_passed, AUTH_ZONEMD_WRITE_KEEP,
		NULL);
	unit_assert(!auth_zone_zonemd_waits(&z));
	unit_assert(auth_zone_may_answer(&z) && auth_zone_may_write(&z));
	unit_assert(z.zonemd_callback_perform_write &&
		z.perform_write_chunk_list == c);
	/* the write is made to wait again with the download it has */
	auth_zone_zonemd_set(&z, auth_zonemd_wait_worker, 1,
		z.perform_write_chunk_list);
	unit_assert(z.zonemd_callback_perform_write &&
		z.perform_write_chunk_list == c);
	/* other data is put in place: the write that waited for a check
	 * that did not pass is dropped, its download freed */
	auth_zone_zonemd_set(&z, auth_zonemd_none, 0, NULL);
	unit_assert(auth_zone_may_answer(&z) && auth_zone_may_write(&z));
	unit_assert(!z.zonemd_callback_perform_write &&
		!z.perform_write_chunk_list);

	/* a check that fails expires the zone, unless
	 * zonemd-permissive-mode (auth_zone_zonemd_fail) */
	auth_zone_zonemd_set(&z, auth_zonemd_wait_worker, 1,
		zonemd_state_chunk());
	z.zone_expired = 1;
	auth_zone_zonemd_set(&z, auth_zonemd_failed, AUTH_ZONEMD_WRITE_KEEP,
		NULL);
	unit_assert(!auth_zone_may_answer(&z) && !auth_zone_may_write(&z));
	z.zone_expired = 0;
	unit_assert(auth_zone_may_answer(&z) && auth_zone_may_write(&z));
	/* a check that waits and asks for no write drops the one that
	 * waited; a download given to a state that does not wait is
	 * freed */
	auth_zone_zonemd_set(&z, auth_zonemd_wait_worker, 0, NULL);
	unit_assert(!z.zonemd_callback_perform_write &&
		!z.perform_write_chunk_list);
	auth_zone_zonemd_set(&z, auth_zonemd_passed, 1, zonemd_state_chunk());
	unit_assert(!z.zonemd_callback_perform_write &&
		!z.perform_write_chunk_list);
}

"""


def do_unit(text):
    if "zonemd_state_test" in text:
        return text
    text = sub1(text, r"(/\*\* zonemd unit tests \*/\nvoid zonemd_test)",
        lambda m: UNIT + m.group(1), "unit test")
    return sub1(text, r"(\tzonemd_verify_tests\(\);\n)",
        lambda m: m.group(1) + "\tzonemd_state_test();\n", "unit test call")


def cve_pointers(text):
    """CVE-2026-77955's rule is stated once, at auth_zone_zonemd_set; the
    other comments that named it point there."""
    text = text.replace(
        " * the DNSKEY lookup that it was made without. The workers check it "
        "after the reload (the zone counts as\n"
        "\t\t * changed), also when that needs no lookup\n"
        "\t\t * (auth_zone_verify_zonemd); until it passed, it is not\n"
        "\t\t * answered from, and the zonefile is written when it\n"
        "\t\t * passes (CVE-2026-77955) */",
        " * the DNSKEY lookup that it was made without. The\n"
        "\t\t * workers check it after the reload (the zone counts as\n"
        "\t\t * changed), also when that needs no lookup\n"
        "\t\t * (auth_zone_verify_zonemd); until it passed, it is not\n"
        "\t\t * answered from, and the zonefile is written when it\n"
        "\t\t * passes (auth_zone_zonemd_set) */")
    text = text.replace(" * (CVE-2026-77955): zonemd-check or the anchor may be "
        "new at this reload.\n", " * (auth_zone_zonemd_set): zonemd-check or "
        "the anchor may be new at this\n * reload.\n")
    text = text.replace("\t\t * not passed: it is not written (CVE-2026-77955); "
        "the check\n\t\t * queues its write when it passes. A download to "
        "write is of\n\t\t * the version whose check passed. */",
        "\t\t * not passed: it is not written (auth_zone_zonemd_set); the\n"
        "\t\t * check queues its write when it passes. A download to write\n"
        "\t\t * is of the version whose check passed. */")
    text = text.replace("\t\t * is not written (CVE-2026-77955); the check "
        "writes it when\n\t\t * it passes. A download to write is of the "
        "version whose\n\t\t * check passed. */",
        "\t\t * is not written (auth_zone_zonemd_set); the check writes it\n"
        "\t\t * when it passes. A download to write is of the version\n"
        "\t\t * whose check passed. */")
    return re.sub(r"\(CVE-2026-77955\)(?!: a waiting state)",
        "(auth_zone_zonemd_set)", text)


def do_remote(text):
    text = text.replace("p->old_z->zonemd_pending",
        "auth_zone_zonemd_waits(p->old_z)")
    return text.replace("old_z->zonemd_pending",
        "auth_zone_zonemd_waits(old_z)")


def main():
    global CHECK
    args = sys.argv[1:]
    if args and args[0] == "--check":
        CHECK = True
        args = args[1:]
    if len(args) != 1:
        sys.stderr.write(__doc__)
        return 2
    tree = args[0]
    with open(tree + "/services/authzone.h") as f:
        if "zonemd_pending" not in f.read():
            return 0
    hashjob = has_hash_job(tree)
    left = 0
    for name, fn in (("services/authzone.h", do_h),
            ("services/authzone.c", do_c),
            ("services/authzone_io.c", do_io),
            ("daemon/remote.c", lambda t, h: do_remote(t)),
            ("testcode/unitzonemd.c", lambda t, h: do_unit(t))):
        path = tree + "/" + name
        try:
            with open(path) as f:
                old = f.read()
        except OSError:
            continue
        new = fn(old, hashjob)
        if name.startswith("services/"):
            new = cve_pointers(new)
        olds = set(old.split("\n"))
        for line in new.split("\n"):
            if line not in olds and len(line.expandtabs(8)) > 80:
                fail("%s: long: %s" % (name, line.strip()))
        for line in new.split("\n"):
            if "zonemd_pending" in line:
                fail("%s: left: %s" % (name, line.strip()))
                left = 1
        if new != old and not CHECK:
            with open(path, "w") as f:
                f.write(new)
    return left


if __name__ == "__main__":
    sys.exit(main())
