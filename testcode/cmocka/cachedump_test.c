/*
 * cachedump_test.c: dump_cache while the rrset cache's table grows
 * (issue 41, finding 16). dump_cache walks each table a few entries at a
 * time and unlocks it between batches, so inserts split bins meanwhile.
 * The walk must still dump every entry that was in the table throughout.
 *
 * The test makes the case the finding describes, deterministically: a
 * table of one slab is filled so that it starts to grow (no bin split
 * yet); the first batch stops before bin 2, whose only entry has the
 * hash bit that moves it to bin 2 + size/2 when bin 2 is split. The
 * output of that batch is written with ssl_printf (stubbed here), after
 * the table is unlocked: there the test inserts entries until bins 0-7
 * are split. Resuming at the bin of the saved hash jumps to bin 2 +
 * size/2 and leaves out bins 3 .. size/2-1.
 *
 * Built by run.sh with cachedump.o of the build; ssl_printf and
 * ssl_read_line, of daemon/remote.c, are stubs here.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "daemon/cachedump.h"
#include "daemon/remote.h"
#include "daemon/worker.h"
#include "services/cache/rrset.h"
#include "util/alloc.h"
#include "util/config_file.h"
#include "util/data/msgreply.h"
#include "util/data/packed_rrset.h"
#include "util/storage/lruhash.h"
#include "util/storage/slabhash.h"
#include "sldns/rrdef.h"
#include "sldns/sbuffer.h"

/** what the test needs in ssl_printf */
static struct {
	/** the cache's table that grows */
	struct lruhash* table;
	/** the cache, for inserts */
	struct rrset_cache* rrset;
	/** the alloc of the cache entries */
	struct alloc_cache* alloc;
	/** the inserts between the batches are done */
	int inserted;
	/** the entries' own numbers seen in the output, by number */
	char* seen;
	/** how many numbers there are */
	size_t nseen;
} dump;

/** the next number of an entry made */
static unsigned next_num = 0;

/** make an rrset e<num>.example. A 10.x.y.z, not yet inserted */
static struct ub_packed_rrset_key*
make_rrset(struct alloc_cache* alloc, unsigned num)
{
	struct ub_packed_rrset_key* k = alloc_special_obtain(alloc);
	struct packed_rrset_data* d;
	char label[16];
	size_t llen, len = sizeof(*d) + sizeof(size_t) + sizeof(uint8_t*) +
		sizeof(time_t) + 2 + 4;
	assert_non_null(k);
	k->entry.key = k;
	snprintf(label, sizeof(label), "e%u", num);
	llen = strlen(label);
	k->rk.dname_len = 1 + llen + 8 + 1;
	k->rk.dname = malloc(k->rk.dname_len);
	assert_non_null(k->rk.dname);
	k->rk.dname[0] = (uint8_t)llen;
	memmove(k->rk.dname+1, label, llen);
	memmove(k->rk.dname+1+llen, "\007example\000", 9);
	k->rk.type = htons(LDNS_RR_TYPE_A);
	k->rk.rrset_class = htons(LDNS_RR_CLASS_IN);
	d = calloc(1, len);
	assert_non_null(d);
	d->ttl = 3600;
	d->count = 1;
	d->trust = rrset_trust_ans_noAA;
	d->security = sec_status_unchecked;
	*(size_t*)(d+1) = 2 + 4;
	packed_rrset_ptr_fixup(d);
	d->rr_ttl[0] = 3600;
	d->rr_data[0][0] = 0;
	d->rr_data[0][1] = 4;
	d->rr_data[0][2] = 10;
	d->rr_data[0][3] = (uint8_t)(num >> 16);
	d->rr_data[0][4] = (uint8_t)(num >> 8);
	d->rr_data[0][5] = (uint8_t)num;
	k->entry.data = d;
	return k;
}

/** insert an entry with this hash value (not the hash of its name: the
 * test chooses the bins) */
static void
insert_hash(hashvalue_type h)
{
	struct ub_packed_rrset_key* k = make_rrset(dump.alloc, next_num++);
	k->entry.hash = h;
	slabhash_insert(&dump.rrset->table, h, &k->entry, k->entry.data,
		dump.alloc);
}

/** stub of daemon/remote.c: record the rrsets dumped; after the first
 * batch, split bins past the one the walk resumes at */
int
ssl_printf(RES* ATTR_UNUSED(ssl), const char* format, ...)
{
	char line[1024];
	unsigned num;
	va_list args;
	va_start(args, format);
	vsnprintf(line, sizeof(line), format, args);
	va_end(args);
	if(sscanf(line, "e%u.example.", &num) == 1 && num < dump.nseen)
		dump.seen[num] = 1;
	if(strncmp(line, ";rrset", 6) == 0 && !dump.inserted) {
		/* the first batch is printed, the table is unlocked: every
		 * insert splits some bins; in bin 1, where the walk was */
		size_t half = dump.table->size/2;
		dump.inserted = 1;
		while(dump.table->bins_in_use < half + 8)
			insert_hash((hashvalue_type)(1 | (next_num << 20)));
	}
	return 1;
}

/** stub of daemon/remote.c, not called by dump_cache */
int
ssl_read_line(RES* ATTR_UNUSED(ssl), char* ATTR_UNUSED(buf),
	size_t ATTR_UNUSED(max))
{
	return 0;
}

/** the dump of a table that grows between batches has every entry that
 * was in it throughout */
static void
test_dump_while_growing(void** state)
{
	struct config_file* cfg = config_create();
	struct alloc_cache alloc;
	struct slabhash* msg;
	struct worker w;
	time_t now = 1;
	size_t size, i, first, missing = 0;
	RES res;
	(void)state;
	assert_non_null(cfg);
	cfg->rrset_cache_slabs = 1;
	cfg->rrset_cache_size = 64*1024*1024;
	/* the test sets the hash values, the check would repair them */
	cfg->hash_integrity_check = 0;
	alloc_init(&alloc, NULL, 0);
	memset(&dump, 0, sizeof(dump));
	dump.alloc = &alloc;
	dump.rrset = rrset_cache_create(cfg, &alloc);
	assert_non_null(dump.rrset);
	dump.table = slabhash_gettable(&dump.rrset->table, 0);
	size = dump.table->size;
	/* one entry per bin: bin k has hash k, bin 2 has the bit that
	 * moves it at the split */
	for(i = 0; i < size; i++)
		insert_hash((hashvalue_type)(i == 2 ? (2 | size) : i));
	/* more in bin 1 until the table grows; no bin is split yet */
	while(dump.table->size == size)
		insert_hash((hashvalue_type)(1 | (next_num << 20)));
	assert_int_equal(dump.table->size, 2*size);
	assert_int_equal(dump.table->bins_in_use, size);
	first = next_num;
	dump.nseen = first;
	dump.seen = calloc(first, 1);
	assert_non_null(dump.seen);

	msg = slabhash_create(1, 16, 1024*1024, msgreply_sizefunc,
		query_info_compare, query_entry_delete, reply_info_delete,
		NULL);
	assert_non_null(msg);
	memset(&w, 0, sizeof(w));
	w.env.rrset_cache = dump.rrset;
	w.env.msg_cache = msg;
	w.env.now = &now;
	memset(&res, 0, sizeof(res));
	assert_int_equal(dump_cache(&res, &w), 1);
	assert_int_equal(dump.inserted, 1);
	for(i = 0; i < first; i++)
		if(!dump.seen[i])
			missing++;
	if(missing)
		print_message("%u of %u entries in the table throughout were "
			"not dumped\n", (unsigned)missing, (unsigned)first);
	assert_int_equal(missing, 0);

	free(dump.seen);
	slabhash_delete(msg);
	rrset_cache_delete(dump.rrset);
	alloc_clear(&alloc);
	config_delete(cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_while_growing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
