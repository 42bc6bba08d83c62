/*
 * cmocka unit tests of util/storage/lruhash.c and slabhash.c of Unbound
 * Steady: every API function, also while a table grows incrementally (some
 * bins split, others not yet), the second-chance lru policy, the wait
 * after a failed grow, one grow at a time, and the populating of new
 * segments. The tests
 * run twice: with tables that start with 2 bins, and with 1 bin.
 * Built by testcode/cmocka/run.sh against the objects of a build directory.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <pthread.h>
#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif
#include "util/storage/lruhash.h"
#include "util/storage/slabhash.h"
#include "util/log.h"

/** the number of test keys in the big tests */
#define NKEYS 5000

/** the start size of the tables that newtable makes */
static size_t test_start_size = 2;

/** the hash of a test key: it spreads ids over bins and slabs */
static hashvalue_type
id_hash(int id)
{
	return (hashvalue_type)id * 2654435761u;
}

/** make a test key, with the hash of its id */
static struct slabhash_testkey*
newkey(int id)
{
	struct slabhash_testkey* k = calloc(1, sizeof(*k));
	assert_non_null(k);
	k->id = id;
	k->entry.hash = id_hash(id);
	k->entry.key = k;
	lock_rw_init(&k->entry.lock);
	return k;
}

/** make test data holding a value */
static struct slabhash_testdata*
newdata(int v)
{
	struct slabhash_testdata* d = calloc(1, sizeof(*d));
	assert_non_null(d);
	d->data = v;
	return d;
}

/** free a key that was not inserted */
static void
freekey(struct slabhash_testkey* k)
{
	test_slabhash_delkey(k, NULL);
}

/** new table with start size test_start_size and room for maxnum
 * entries */
static struct lruhash*
newtable(size_t maxnum)
{
	struct lruhash* t = lruhash_create(test_start_size,
		maxnum * test_slabhash_sizefunc(NULL, NULL),
		test_slabhash_sizefunc, test_slabhash_compfunc,
		test_slabhash_delkey, test_slabhash_deldata, NULL);
	assert_non_null(t);
	return t;
}

/** insert id with data value v */
static void
put(struct lruhash* t, int id, int v)
{
	struct slabhash_testkey* k = newkey(id);
	k->entry.data = newdata(v);
	lruhash_insert(t, k->entry.hash, &k->entry, k->entry.data, NULL);
}

/** look up id: the data value, or -1 if absent */
static int
get(struct lruhash* t, int id)
{
	struct slabhash_testkey* k = newkey(id);
	struct lruhash_entry* e = lruhash_lookup(t, k->entry.hash, k, 0);
	int v = -1;
	if(e) {
		assert_int_equal(((struct slabhash_testkey*)e->key)->id, id);
		v = ((struct slabhash_testdata*)e->data)->data;
		lock_rw_unlock(&e->lock);
	}
	freekey(k);
	return v;
}

/** count the entries of a bin */
static size_t
bin_len(struct lruhash_bin* b)
{
	size_t n = 0;
	struct lruhash_entry* e;
	for(e = b->overflow_list; e; e = e->overflow_next)
		n++;
	return n;
}

/** bin i of the table, by the segment layout of struct lruhash */
static struct lruhash_bin*
test_bin_at(struct lruhash* t, size_t i)
{
	size_t first = (size_t)1 << t->start_shift;
	int k = 1;
	if(i < first)
		return &t->segments[0][i];
	while((first << k) <= i)
		k++;
	return &t->segments[k][i - (first << (k-1))];
}

/** is the table in the middle of a doubling */
static int
growing(struct lruhash* t)
{
	return t->bins_in_use < t->size;
}

/** check that a segment is allocated for the start size and for every
 * doubling, and no other */
static void
check_segments(struct lruhash* t)
{
	size_t k;
	assert_int_equal((size_t)1 << t->start_shift, test_start_size);
	for(k = 0; k < LRUHASH_MAX_SEGMENTS; k++) {
		/* shifted down: test_start_size << k wraps where size_t
		 * has 32 bits */
		if((t->size >> k) >= test_start_size)
			assert_non_null(t->segments[k]);
		else	assert_null(t->segments[k]);
	}
}

/** check the table's invariants: lru list, counts, space, every entry in
 * the bin where lookups look for it, bin masks */
static void
check_table(struct lruhash* t)
{
	struct lruhash_entry* p;
	size_t c = 0, inbins = 0, i, half = t->size / 2;
	lock_quick_lock(&t->lock);
	assert_true(t->size_mask == (int)t->size - 1);
	assert_true(t->bins_in_use <= t->size);
	if(growing(t))
		assert_true(t->bins_in_use >= half);
	for(p = t->lru_start; p; p = p->lru_next) {
		if(p->lru_next)
			assert_ptr_equal(p->lru_next->lru_prev, p);
		c++;
	}
	assert_int_equal(c, t->num);
	assert_int_equal(t->space_used, t->num *
		test_slabhash_sizefunc(NULL, NULL));
	check_segments(t);
	/* a bin of the lower half whose partner is not in use holds the
	 * entries of both; every other bin in use only its own */
	for(i = 0; i < t->bins_in_use; i++) {
		struct lruhash_bin* b = test_bin_at(t, i);
		if(growing(t) && i < half && i + half >= t->bins_in_use)
			assert_int_equal(b->mask, (hashvalue_type)t->size_mask
				>> 1);
		else	assert_int_equal(b->mask,
				(hashvalue_type)t->size_mask);
		for(p = b->overflow_list; p; p = p->overflow_next)
			assert_int_equal(p->hash & b->mask, i);
		inbins += bin_len(b);
	}
	assert_int_equal(inbins, t->num);
	lock_quick_unlock(&t->lock);
}

/** traverse callback: count visits per id */
static void
count_visit(struct lruhash_entry* e, void* arg)
{
	int* seen = (int*)arg;
	seen[((struct slabhash_testkey*)e->key)->id]++;
}

/** basic insert, lookup, update, remove */
static void
test_basic(void** state)
{
	struct lruhash* t = newtable(100);
	(void)state;
	assert_int_equal(get(t, 1), -1);
	put(t, 1, 10);
	put(t, 2, 20);
	assert_int_equal(get(t, 1), 10);
	assert_int_equal(get(t, 2), 20);
	put(t, 1, 11); /* update replaces the data */
	assert_int_equal(get(t, 1), 11);
	assert_int_equal(t->num, 2);
	{
		struct slabhash_testkey* k = newkey(1);
		lruhash_remove(t, k->entry.hash, k);
		lruhash_remove(t, k->entry.hash, k); /* absent: no-op */
		freekey(k);
	}
	assert_int_equal(get(t, 1), -1);
	assert_int_equal(t->num, 1);
	check_table(t);
	lruhash_delete(t);
}

/** grow from 2 bins to NKEYS entries; after every insert all keys are
 * found exactly once, the invariants hold, and each insert moves a
 * bounded number of bins; the move ends before the next doubling */
static void
test_grow_incremental(void** state)
{
	struct lruhash* t = newtable(NKEYS * 2);
	int i, j, seen_growing = 0, seen_partial = 0;
	int* seen = calloc(NKEYS, sizeof(int));
	(void)state;
	assert_non_null(seen);
	for(i = 0; i < NKEYS; i++) {
		size_t before_in_use = t->bins_in_use;
		size_t before_size = t->size;
		int was_growing = growing(t);
		put(t, i, i);
		if(growing(t)) {
			seen_growing++;
			if(was_growing && t->size == before_size)
				assert_true(t->bins_in_use - before_in_use <= 4);
			if(t->bins_in_use > t->size/2 + 4 &&
				t->bins_in_use < t->size - 4)
				seen_partial++;
		}
		/* a doubling never starts while one is in progress: the
		 * insert that starts one has finished the one before */
		if(t->size > before_size) {
			assert_int_equal(t->size, before_size * 2);
			if(was_growing)
				assert_true(before_size - before_in_use <= 4);
		}
		if(i % 97 == 0 || growing(t)) {
			check_table(t);
			for(j = 0; j <= i; j += (i > 500 ? 37 : 1))
				assert_int_equal(get(t, j), j);
		}
		/* traverse visits every entry once, mid-migration too */
		if(growing(t) && i % 13 == 0) {
			memset(seen, 0, NKEYS * sizeof(int));
			lruhash_traverse(t, 0, &count_visit, seen);
			for(j = 0; j <= i; j++)
				assert_int_equal(seen[j], 1);
		}
	}
	assert_true(seen_growing > 0);
	assert_true(seen_partial > 0);
	assert_true(t->num == NKEYS);
	for(j = 0; j < NKEYS; j++)
		assert_int_equal(get(t, j), j);
	free(seen);
	lruhash_delete(t);
}

/** insert at least 1000 keys, then more until a migration is in
 * progress; returns the id after the last one inserted */
static int
fill_until_growing(struct lruhash* t, int start)
{
	int i = start;
	while(i < start + 1000 || !growing(t)) {
		put(t, i, i);
		i++;
		assert_true(i < start + 100000);
	}
	return i;
}

/** remove, clear, status, get_mem, collisions while growing */
static void
test_ops_while_growing(void** state)
{
	struct lruhash* t = newtable(100000);
	int n, j;
	size_t m, mi, r, mem;
	(void)state;
	n = fill_until_growing(t, 0);
	/* remove every other key, old and new bins alike */
	for(j = 0; j < n; j += 2) {
		struct slabhash_testkey* k = newkey(j);
		lruhash_remove(t, k->entry.hash, k);
		freekey(k);
	}
	check_table(t);
	for(j = 0; j < n; j++)
		assert_int_equal(get(t, j), j % 2 ? j : -1);
	/* memory counts the bins of every segment */
	mem = lruhash_get_mem(t);
	assert_true(mem >= sizeof(struct lruhash) + t->space_used +
		t->size * sizeof(struct lruhash_bin));
	lruhash_status(t, "growing table", 1);
	lruhash_get_collisions(t, 0, &m, &mi, &r, NULL);
	assert_true(m >= mi);
	/* clear while growing, then use it again */
	assert_true(growing(t));
	lruhash_clear(t);
	assert_int_equal(t->num, 0);
	assert_int_equal(t->space_used, 0);
	for(j = 0; j < n; j++)
		assert_int_equal(get(t, j), -1);
	check_table(t);
	for(j = 0; j < 3 * n; j++)
		put(t, j, j + 1);
	for(j = 0; j < 3 * n; j++)
		assert_int_equal(get(t, j), j + 1);
	check_table(t);
	lruhash_delete(t);
}

/** a table that grows while it is full: eviction during the migration */
static void
test_reclaim_while_growing(void** state)
{
	struct lruhash* t = newtable(300);
	int j;
	(void)state;
	for(j = 0; j < 5000; j++) {
		put(t, j, j);
		assert_true(t->num <= 300);
		if(growing(t))
			check_table(t);
	}
	check_table(t);
	/* the newest entries are there */
	for(j = 5000 - 50; j < 5000; j++)
		assert_int_equal(get(t, j), j);
	lruhash_delete(t);
}

/** eviction: the least recently used goes first, but an entry read since
 * it was last put at the front gets a second chance */
static void
test_second_chance(void** state)
{
	struct lruhash* t = newtable(4);
	(void)state;
	put(t, 1, 1); put(t, 2, 2); put(t, 3, 3); put(t, 4, 4);
	/* no reads: the oldest goes */
	put(t, 5, 5);
	assert_int_equal(get(t, 1), -1);
	/* 2 is the oldest now, but read: 3 goes instead */
	assert_int_equal(get(t, 2), 2);
	put(t, 6, 6);
	assert_int_equal(get(t, 2), 2);
	assert_int_equal(get(t, 3), -1);
	assert_int_equal(get(t, 4), 4);
	check_table(t);
	lruhash_delete(t);
}

/** eviction stays bounded when every entry has been read */
static void
test_all_referenced(void** state)
{
	struct lruhash* t = newtable(100);
	int j;
	(void)state;
	for(j = 0; j < 100; j++)
		put(t, j, j);
	for(j = 0; j < 100; j++)
		assert_int_equal(get(t, j), j);
	put(t, 1000, 1000);
	assert_int_equal(t->num, 100);
	assert_int_equal(get(t, 1000), 1000);
	check_table(t);
	lruhash_delete(t);
}

/** max_collisions counts the chain scanned by an insert, also across a
 * migration, and the interval value resets */
static void
test_collisions(void** state)
{
	struct lruhash* t = newtable(100000);
	size_t m, mi, r;
	int j;
	(void)state;
	for(j = 0; j < 5; j++) {
		struct slabhash_testkey* k = newkey(j);
		k->entry.hash = 0x40; /* all in one bin at any size */
		k->entry.data = newdata(j);
		lruhash_insert(t, 0x40, &k->entry, k->entry.data, NULL);
	}
	lruhash_get_collisions(t, 1, &m, &mi, &r, NULL);
	assert_int_equal(m, 4);
	assert_int_equal(mi, 4);
	lruhash_get_collisions(t, 0, &m, &mi, &r, NULL);
	assert_int_equal(m, 4);
	assert_int_equal(mi, 0);
	fill_until_growing(t, 100);
	{
		struct slabhash_testkey* k = newkey(7);
		k->entry.hash = 0x40;
		k->entry.data = newdata(7);
		lruhash_insert(t, 0x40, &k->entry, k->entry.data, NULL);
	}
	/* the chain of the five, maybe with others of the fill in it */
	lruhash_get_collisions(t, 0, &m, &mi, &r, NULL);
	assert_true(mi >= 5);
	lruhash_delete(t);
}

/** insert_or_retrieve returns the present entry or inserts, locked */
static void
test_insert_or_retrieve(void** state)
{
	struct lruhash* t = newtable(100000);
	struct slabhash_testkey* k;
	struct lruhash_entry* e;
	int j, n;
	(void)state;
	n = fill_until_growing(t, 0);
	for(j = n - 20; j < n + 20; j++) {
		struct slabhash_testdata* d = newdata(-j);
		k = newkey(j);
		k->entry.data = d;
		e = lruhash_insert_or_retrieve(t, k->entry.hash, &k->entry,
			d, NULL);
		assert_int_equal(((struct slabhash_testkey*)e->key)->id, j);
		if(j < n) { /* present: the old data stays, the key is ours */
			assert_ptr_not_equal(e, &k->entry);
			assert_int_equal(((struct slabhash_testdata*)e->data)->data, j);
			lock_rw_unlock(&e->lock);
			test_slabhash_deldata(d, NULL);
			freekey(k);
		} else {
			assert_ptr_equal(e, &k->entry);
			lock_rw_unlock(&e->lock);
		}
	}
	check_table(t);
	lruhash_delete(t);
}

/** the table and key that __wrap_pthread_rwlock_wrlock looks up, at the
 * first write lock of an entry other than the key's own; NULL: none */
static struct lruhash* unseen_table = NULL;
/** the key that the wrapper looks up in unseen_table */
static struct slabhash_testkey* unseen_key = NULL;
/** set when the wrapper looked the key up; 2 if the lookup found it */
static int unseen_looked = 0;

/** the real pthread_rwlock_wrlock */
int __real_pthread_rwlock_wrlock(pthread_rwlock_t* l);

/** pthread_rwlock_wrlock, that first looks up unseen_key when a write
 * lock of another entry is taken while unseen_table is set: the evicted
 * entry's, in the reclaim of an insert into a full table. The lookup
 * runs in the inserting thread, as a lookup of another thread could run
 * at that moment; the key's bin is not the evicted entry's, whose bin
 * lock the reclaim holds. */
int
__wrap_pthread_rwlock_wrlock(pthread_rwlock_t* l)
{
	if(unseen_table && unseen_looked == 0 &&
		l != &unseen_key->entry.lock) {
		struct lruhash_entry* e;
		unseen_looked = 1;
		e = lruhash_lookup(unseen_table, unseen_key->entry.hash,
			unseen_key, 0);
		if(e) {
			unseen_looked = 2;
			lock_rw_unlock(&e->lock);
		}
	}
	return __real_pthread_rwlock_wrlock(l);
}

/** insert_or_retrieve into a full table returns the new entry write
 * locked before any lookup can find it: while its reclaim evicts an
 * entry, a lookup of the new key finds nothing. Before, the entry was
 * in its bin, unlocked, while the reclaim ran, and a lookup took it
 * (a reader before the writer that was to fill it in). */
static void
test_insert_or_retrieve_unseen(void** state)
{
	int n = 8, j;
	struct lruhash* t = newtable((size_t)n);
	struct slabhash_testkey* k;
	struct lruhash_entry* e;
	size_t evicted_bin;
	(void)state;
	for(j = 1; j <= n; j++)
		put(t, j, j);
	assert_int_equal(t->num, n);
	/* id 1 is at the lru end, not read: the reclaim evicts it */
	evicted_bin = lruhash_bin_index(t, id_hash(1));
	for(j = 1000; lruhash_bin_index(t, id_hash(j)) == evicted_bin; j++)
		;
	k = newkey(j);
	k->entry.data = newdata(j);
	unseen_key = k;
	unseen_looked = 0;
	unseen_table = t;
	e = lruhash_insert_or_retrieve(t, k->entry.hash, &k->entry,
		k->entry.data, NULL);
	unseen_table = NULL;
	assert_ptr_equal(e, &k->entry);
	lock_rw_unlock(&e->lock);
	/* the reclaim ran, and its lookup did not find the new entry */
	assert_int_equal(unseen_looked, 1);
	assert_int_equal(t->num, n);
	assert_int_equal(get(t, 1), -1);
	assert_int_equal(get(t, j), j);
	check_table(t);
	lruhash_delete(t);
}

/** the slabhash API on top: insert, lookup, remove, traverse, count,
 * collisions, memory, clear */
static void
test_slabhash_api(void** state)
{
	struct slabhash* sh = slabhash_create(4, 2, 4 * 1000 *
		test_slabhash_sizefunc(NULL, NULL), test_slabhash_sizefunc,
		test_slabhash_compfunc, test_slabhash_delkey,
		test_slabhash_deldata, NULL);
	int j;
	long long num, coll, m, mi, r;
	int* seen = calloc(2000, sizeof(int));
	(void)state;
	assert_non_null(sh);
	assert_non_null(seen);
	for(j = 0; j < 2000; j++) {
		struct slabhash_testkey* k = newkey(j);
		k->entry.data = newdata(j);
		slabhash_insert(sh, k->entry.hash, &k->entry, k->entry.data, NULL);
	}
	assert_int_equal(count_slabhash_entries(sh), 2000);
	get_slabhash_stats(sh, &num, &coll);
	assert_int_equal(num, 2000);
	slabhash_get_collisions(sh, 0, &m, &mi, &r, NULL);
	assert_int_equal(m, coll);
	slabhash_traverse(sh, 0, &count_visit, seen);
	for(j = 0; j < 2000; j++) {
		struct slabhash_testkey* k = newkey(j);
		struct lruhash_entry* e;
		assert_int_equal(seen[j], 1);
		e = slabhash_lookup(sh, k->entry.hash, k, 0);
		assert_non_null(e);
		lock_rw_unlock(&e->lock);
		if(j % 2)
			slabhash_remove(sh, k->entry.hash, k);
		freekey(k);
	}
	assert_int_equal(count_slabhash_entries(sh), 1000);
	assert_true(slabhash_get_mem(sh) > 1000 *
		test_slabhash_sizefunc(NULL, NULL));
	assert_true(slabhash_is_size(sh, 4 * 1000 *
		test_slabhash_sizefunc(NULL, NULL), 4));
	slabhash_clear(sh);
	assert_int_equal(count_slabhash_entries(sh), 0);
	free(seen);
	slabhash_delete(sh);
}

/** while set, every malloc fails: the program is linked with
 * -Wl,--wrap=malloc (run.sh), and lruhash.c allocates only its
 * segments with malloc */
static int malloc_fail = 0;
/** the mallocs that failed */
static int malloc_failed = 0;

/** while not 0, the mallocs of this many bytes are counted, and the
 * first one waits until hold_release is set */
static size_t hold_size = 0;
/** the mallocs of hold_size bytes */
static int hold_count = 0;
/** set when the first malloc of hold_size waits */
static int hold_waiting = 0;
/** set to let the malloc that waits go on */
static int hold_release = 0;
/** protects the hold_ variables */
static pthread_mutex_t hold_mutex = PTHREAD_MUTEX_INITIALIZER;
/** signals hold_waiting and hold_release */
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;

/** the real malloc */
void* __real_malloc(size_t n);

/** malloc, failing while malloc_fail is set, and held as hold_size
 * says */
void*
__wrap_malloc(size_t n)
{
	if(malloc_fail) {
		malloc_failed++;
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&hold_mutex);
	if(hold_size != 0 && n == hold_size && ++hold_count == 1) {
		hold_waiting = 1;
		pthread_cond_broadcast(&hold_cond);
		while(!hold_release)
			pthread_cond_wait(&hold_cond, &hold_mutex);
	}
	pthread_mutex_unlock(&hold_mutex);
	return __real_malloc(n);
}

/** the key that grow_insert inserts */
static int grow_key;

/** insert grow_key into the table arg, in a thread of its own */
static void*
grow_insert(void* arg)
{
	put((struct lruhash*)arg, grow_key, grow_key);
	return NULL;
}

/** while one insert's grow allocates the new segment, the inserts of
 * other threads do not start a grow of their own: one segment malloc per
 * doubling (before, every insert that found the table full before the
 * segment was in place allocated one, and all but one were freed) */
static void
test_grow_once(void** state)
{
	struct lruhash* t = newtable(100000);
	pthread_t thr;
	size_t size;
	int j = 0;
	(void)state;
	/* full but for one entry, and not splitting: the next insert
	 * grows the table */
	while(t->size < 1024 || t->num + 1 != t->size ||
		t->bins_in_use != t->size) {
		put(t, j, j);
		j++;
	}
	size = t->size;
	pthread_mutex_lock(&hold_mutex);
	hold_size = size * sizeof(struct lruhash_bin);
	hold_count = hold_waiting = hold_release = 0;
	pthread_mutex_unlock(&hold_mutex);
	grow_key = j++;
	assert_int_equal(pthread_create(&thr, NULL, grow_insert, t), 0);
	pthread_mutex_lock(&hold_mutex);
	while(!hold_waiting)
		pthread_cond_wait(&hold_cond, &hold_mutex);
	pthread_mutex_unlock(&hold_mutex);
	/* the table is full, its segment not in place yet */
	for(; j < grow_key + 50; j++)
		put(t, j, j);
	pthread_mutex_lock(&hold_mutex);
	assert_int_equal(hold_count, 1);
	hold_release = 1;
	pthread_cond_broadcast(&hold_cond);
	pthread_mutex_unlock(&hold_mutex);
	assert_int_equal(pthread_join(thr, NULL), 0);
	pthread_mutex_lock(&hold_mutex);
	assert_int_equal(hold_count, 1);
	hold_size = 0;
	pthread_mutex_unlock(&hold_mutex);
	assert_int_equal(t->size, size * 2);
	assert_int_equal(t->grow_wait, 0);
	while(--j >= 0)
		assert_int_equal(get(t, j), j);
	lruhash_delete(t);
}

/** a table whose segment malloc fails tries again only after a wait that
 * doubles with every failure, not at every insert (and does not log an
 * error at every insert); it grows when malloc works again */
static void
test_grow_backoff(void** state)
{
	struct lruhash* t = newtable(100000);
	size_t size;
	int j;
	(void)state;
	for(j = 0; j < 1024; j++)
		put(t, j, j);
	size = t->size;
	assert_true(size >= 1024);
	malloc_fail = 1;
	malloc_failed = 0;
	for(j = 1024; j < 1024 + 20000; j++)
		put(t, j, j);
	malloc_fail = 0;
	/* tries after 0, 1024, 3072, 7168 and 15360 more inserts */
	assert_true(malloc_failed >= 1);
	assert_true(malloc_failed <= 6);
	assert_int_equal(t->size, size);
	for(j = 1024 + 20000; j < 1024 + 40000; j++)
		put(t, j, j);
	assert_true(t->size > size);
	for(j = 0; j < 1024 + 40000; j += 97)
		assert_int_equal(get(t, j), j);
	lruhash_delete(t);
}

/** the page of the next bin that a growing table splits has been
 * populated before the split writes it under the table lock, so that
 * the split takes no page fault (Linux with MADV_POPULATE_WRITE) */
static void
test_split_populated(void** state)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
	struct lruhash* t = lruhash_create(1024, 1000000 *
		test_slabhash_sizefunc(NULL, NULL), test_slabhash_sizefunc,
		test_slabhash_compfunc, test_slabhash_delkey,
		test_slabhash_deldata, NULL);
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	void* probe = mmap(NULL, page, PROT_READ|PROT_WRITE,
		MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
	size_t checked = 0;
	int j;
	(void)state;
	assert_non_null(t);
	assert_true(probe != MAP_FAILED);
	if(madvise(probe, page, MADV_POPULATE_WRITE) != 0) {
		/* the kernel is older than 5.14 */
		munmap(probe, page);
		lruhash_delete(t);
		skip();
	}
	munmap(probe, page);
	for(j = 0; t->size < 256*1024; j++) {
		put(t, j, j);
		if(t->bins_in_use < t->size) {
			/* the bin the next split writes */
			size_t i = t->bins_in_use;
			int lg = 0;
			unsigned char vec;
			uintptr_t a;
			while(((size_t)2 << lg) <= i)
				lg++;
			a = (uintptr_t)&t->segments[lg - t->start_shift + 1]
				[i - ((size_t)1 << lg)];
			assert_int_equal(mincore((void*)(a & ~(page - 1)),
				page, &vec), 0);
			if(!(vec & 1))
				fail_msg("bin %zu of %zu is on a page not "
					"populated yet", i, t->size);
			checked++;
		}
	}
	/* the splits of the doublings up to 128k bins: 32k inserts */
	assert_true(checked > 30000);
	lruhash_delete(t);
#else
	(void)state;
	skip();
#endif
}

int
main(void)
{
	static const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_grow_incremental),
		cmocka_unit_test(test_ops_while_growing),
		cmocka_unit_test(test_reclaim_while_growing),
		cmocka_unit_test(test_second_chance),
		cmocka_unit_test(test_all_referenced),
		cmocka_unit_test(test_collisions),
		cmocka_unit_test(test_insert_or_retrieve),
		cmocka_unit_test(test_insert_or_retrieve_unseen),
		cmocka_unit_test(test_slabhash_api),
		cmocka_unit_test(test_grow_backoff),
		cmocka_unit_test(test_grow_once),
		cmocka_unit_test(test_split_populated),
	};
	int fails;
	log_init(NULL, 0, NULL);
	fails = cmocka_run_group_tests_name("start size 2", tests,
		NULL, NULL);
	test_start_size = 1;
	fails += cmocka_run_group_tests_name("start size 1", tests,
		NULL, NULL);
	return fails;
}
