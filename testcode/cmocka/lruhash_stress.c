/*
 * Multithreaded stress test of util/storage/lruhash.c and slabhash.c for
 * Unbound Steady: THREADS threads (more than the 2 cores) insert (also
 * with lruhash_insert_or_retrieve, which returns the entry write locked),
 * look up, remove, clear, traverse, read statistics and set the space
 * limit again (lruhash_update_space_max) on tables that
 * start with 1 or 2 bins (so they grow, incrementally, many times) and
 * are small enough to evict all the time, with a hash check that repairs
 * the wrong hash value of some inserts; and threads look up keys that
 * are present while another grows the table. Bounded in time; checks the invariants at the end
 * and, during the run, that every lookup returns the entry of its own key
 * with the data value that key always gets. Meant to run under
 * ThreadSanitizer and AddressSanitizer too (testcode/cmocka/run.sh).
 * usage: lruhash_stress [seconds]
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>
#include "util/storage/lruhash.h"
#include "util/storage/slabhash.h"
#include "util/log.h"
#include "util/locks.h"

/** number of threads */
#define THREADS 8
/** key space */
#define KEYS 20000
/** keys present during test_stress_present */
#define PRESENT 64
/** keys inserted while test_stress_present looks up the present ones */
#define PRESENT_GROWTH 400000

/** test duration in seconds */
static double duration = 2.0;

/** per thread state */
struct worker {
	/** the table */
	struct slabhash* sh;
	/** thread number */
	int num;
	/** thread id */
	ub_thread_type tid;
	/** operations done */
	long ops;
	/** lookups that found their key */
	long hits;
	/** errors seen: a lookup or lruhash_insert_or_retrieve returning
	 * a wrong entry or value */
	long errors;
	/** keys are 0 .. keys-1 */
	int keys;
	/** inserts made with a wrong hash value, for the hash check */
	long wrong;
	/** the space limit of each slab's table, that the threads set again
	 * with lruhash_update_space_max */
	size_t table_max;
};

/** the data value that key id always gets */
static int value_of(int id) { return id * 7 + 1; }

/** monotonic seconds */
static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/** set by test_stress_hashcheck: the hash of a key is its id, as
 * test_slabhash_hashcheck, the table's hash check there, has it */
static int id_hashes = 0;

/** hash of a key id; two ids share the low bits to make chains */
static hashvalue_type
hash_of(int id)
{
	if(id_hashes)
		return (hashvalue_type)id;
	return (hashvalue_type)(id / 2) * 2654435761u;
}

/** traverse callback */
static void
visit(struct lruhash_entry* e, void* arg)
{
	(void)e;
	(*(long*)arg)++;
}

/** make a test key for id, with its hash */
static struct slabhash_testkey*
make_key(int id)
{
	struct slabhash_testkey* k = calloc(1, sizeof(*k));
	if(!k) abort();
	k->id = id;
	k->entry.hash = hash_of(id);
	k->entry.key = k;
	lock_rw_init(&k->entry.lock);
	return k;
}

/** thread main */
static void*
work(void* arg)
{
	struct worker* w = (struct worker*)arg;
	unsigned int seed = (unsigned)w->num * 7919u + 1;
	double end = now() + duration;
	while(w->ops % 256 != 0 || now() < end) {
		int id = (int)(rand_r(&seed) % (unsigned)w->keys);
		int op = (int)(rand_r(&seed) % 1000);
		struct slabhash_testkey* k = make_key(id);
		w->ops++;
		if(op < 350) {
			struct slabhash_testdata* d = calloc(1, sizeof(*d));
			if(!d) abort();
			d->data = value_of(id);
			k->entry.data = d;
			/* with the hash check, one insert in 50 has a
			 * wrong hash, which the insert repairs under the
			 * entry's lock while other threads look it up */
			if(id_hashes && op % 50 == 0) {
				k->entry.hash = hash_of(id) + 1;
				w->wrong++;
			}
			slabhash_insert(w->sh, k->entry.hash, &k->entry, d, NULL);
			continue;
		} else if(op < 400) {
			/* it holds the entry's write lock when it returns:
			 * what it does after taking that lock (reclaim, split,
			 * grow) must not wait for a lookup that waits for it */
			struct slabhash_testdata* d = calloc(1, sizeof(*d));
			struct lruhash_entry* e;
			if(!d) abort();
			d->data = value_of(id);
			k->entry.data = d;
			e = lruhash_insert_or_retrieve(slabhash_gettable(w->sh,
				k->entry.hash), k->entry.hash, &k->entry, d,
				NULL);
			if(e != &k->entry) {
				/* the key was there: its entry, not ours */
				struct slabhash_testkey* ek =
					(struct slabhash_testkey*)e->key;
				if(ek->id != id || ((struct slabhash_testdata*)
					e->data)->data != value_of(id))
					w->errors++;
				lock_rw_unlock(&e->lock);
				test_slabhash_deldata(d, NULL);
				test_slabhash_delkey(k, NULL);
			} else	lock_rw_unlock(&e->lock);
			continue;
		} else if(op < 950) {
			struct lruhash_entry* e = slabhash_lookup(w->sh,
				k->entry.hash, k, op & 1);
			if(e) {
				struct slabhash_testkey* ek =
					(struct slabhash_testkey*)e->key;
				w->hits++;
				if(ek->id != id || ((struct slabhash_testdata*)
					e->data)->data != value_of(id))
					w->errors++;
				lock_rw_unlock(&e->lock);
			}
		} else if(op < 995) {
			slabhash_remove(w->sh, k->entry.hash, k);
		} else if(op < 997) {
			long n = 0;
			slabhash_traverse(w->sh, 0, &visit, &n);
		} else if(op < 999) {
			long long a, b, c;
			slabhash_get_collisions(w->sh, op & 1, &a, &b, &c, NULL);
			(void)slabhash_get_mem(w->sh);
			(void)count_slabhash_entries(w->sh);
		} else if(rand_r(&seed) % 20 == 0) {
			slabhash_clear(w->sh);
		} else {
			/* as fast_reload sets the cache size again */
			lruhash_update_space_max(slabhash_gettable(w->sh,
				k->entry.hash), NULL, w->table_max);
		}
		test_slabhash_delkey(k, NULL);
	}
	return NULL;
}

/** check one table's invariants after the run */
static void
check_lruhash(struct lruhash* t)
{
	struct lruhash_entry* p;
	size_t c = 0;
	lock_quick_lock(&t->lock);
	for(p = t->lru_start; p; p = p->lru_next) {
		if(p->lru_next)
			assert_ptr_equal(p->lru_next->lru_prev, p);
		else	assert_ptr_equal(t->lru_end, p);
		c++;
	}
	assert_int_equal(c, t->num);
	assert_int_equal(t->space_used, t->num *
		test_slabhash_sizefunc(NULL, NULL));
	assert_true(t->space_used <= t->space_max);
	lock_quick_unlock(&t->lock);
}

/** run the threads on one table configuration, keys 0 .. keys-1, with
 * tables that start with start_size bins */
static void
stress(size_t slabs, size_t maxentries, int keys, size_t start_size)
{
	struct worker w[THREADS];
	struct slabhash* sh = slabhash_create(slabs, start_size,
		maxentries * test_slabhash_sizefunc(NULL, NULL),
		test_slabhash_sizefunc, test_slabhash_compfunc,
		test_slabhash_delkey, test_slabhash_deldata, NULL);
	long ops = 0, hits = 0, errors = 0, seen = 0, wrong = 0;
	size_t i;
	int t;
	assert_non_null(sh);
	if(id_hashes)
		slabhash_set_hashcheck(sh, &test_slabhash_hashcheck);
	for(t = 0; t < THREADS; t++) {
		memset(&w[t], 0, sizeof(w[t]));
		w[t].sh = sh;
		w[t].num = t;
		w[t].keys = keys;
		w[t].table_max = maxentries *
			test_slabhash_sizefunc(NULL, NULL) / slabs;
		ub_thread_create(&w[t].tid, work, &w[t]);
	}
	for(t = 0; t < THREADS; t++) {
		ub_thread_join(w[t].tid);
		ops += w[t].ops;
		hits += w[t].hits;
		errors += w[t].errors;
		wrong += w[t].wrong;
	}
	for(i = 0; i < sh->size; i++)
		check_lruhash(sh->array[i]);
	slabhash_traverse(sh, 1, &visit, &seen);
	assert_int_equal((size_t)seen, count_slabhash_entries(sh));
	printf("# stress slabs=%d max=%d: %ld ops, %ld hits, %ld entries at end\n",
		(int)slabs, (int)maxentries, ops, hits, seen);
	assert_int_equal(errors, 0);
	assert_true(hits > 0);
	if(id_hashes) {
		/* the repair count itself is reset by the statistics reads
		 * of the other threads */
		assert_true(wrong > 0);
	}
	slabhash_delete(sh);
}

/** one slab, room for all keys: many doublings, few evictions */
static void
test_stress_grow(void** state)
{
	(void)state;
	stress(1, KEYS * 2, KEYS, 2);
}

/** growth-heavy, from a table of one bin */
static void
test_stress_grow_one(void** state)
{
	(void)state;
	stress(1, KEYS * 2, KEYS, 1);
}

/** four slabs, small: eviction all the time while tables grow */
static void
test_stress_evict(void** state) { (void)state; stress(4, 3000, KEYS, 2); }

/** as test_stress_evict, with the table's hash check, which repairs the
 * wrong hash value of some inserts */
static void
test_stress_hashcheck(void** state)
{
	(void)state;
	id_hashes = 1;
	stress(4, 3000, KEYS, 2);
	id_hashes = 0;
}

/** few hot keys in a table that holds most of them: the entries that are
 * evicted are the ones being read, so eviction and lookups meet */
static void
test_stress_hot(void** state)
{
	(void)state;
	stress(1, 200, 300, 2);
}

/** state of the threads of test_stress_present */
struct present_worker {
	/** the table */
	struct lruhash* table;
	/** thread number; 0 inserts, the others look up */
	int num;
	/** thread id */
	ub_thread_type tid;
	/** lookups done */
	long lookups;
	/** lookups that did not find a key that was present */
	long misses;
	/** set by the inserting thread when it is done */
	volatile int* done;
};

/** insert keys PRESENT.. onward, or look up keys 0..PRESENT-1 (inserted
 * before the threads start, never removed) until the inserter is done */
static void*
present_work(void* arg)
{
	struct present_worker* w = (struct present_worker*)arg;
	unsigned int seed = (unsigned)w->num * 7919u + 1;
	int id;
	if(w->num == 0) {
		for(id = PRESENT; id < PRESENT + PRESENT_GROWTH; id++) {
			struct slabhash_testkey* k = make_key(id);
			struct slabhash_testdata* d = calloc(1, sizeof(*d));
			if(!d) abort();
			d->data = value_of(id);
			k->entry.data = d;
			lruhash_insert(w->table, k->entry.hash, &k->entry, d,
				NULL);
		}
		__atomic_store_n(w->done, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	while(!__atomic_load_n(w->done, __ATOMIC_ACQUIRE)) {
		struct slabhash_testkey* k = make_key(
			(int)(rand_r(&seed) % PRESENT));
		struct lruhash_entry* e = lruhash_lookup(w->table,
			k->entry.hash, k, 0);
		w->lookups++;
		if(!e)
			w->misses++;
		else	lock_rw_unlock(&e->lock);
		test_slabhash_delkey(k, NULL);
	}
	return NULL;
}

/** lookups of keys that are present always find them while another
 * thread grows the table through many doublings: a lookup that finds its
 * bin without the table lock must never scan a bin that no longer (or not
 * yet) holds its key */
static void
test_stress_present(void** state)
{
	struct present_worker w[THREADS];
	struct lruhash* table = lruhash_create(1, (size_t)(PRESENT +
		PRESENT_GROWTH) * 2 * test_slabhash_sizefunc(NULL, NULL),
		test_slabhash_sizefunc, test_slabhash_compfunc,
		test_slabhash_delkey, test_slabhash_deldata, NULL);
	volatile int done = 0;
	long lookups = 0, misses = 0;
	int t, id;
	(void)state;
	assert_non_null(table);
	for(id = 0; id < PRESENT; id++) {
		struct slabhash_testkey* k = make_key(id);
		struct slabhash_testdata* d = calloc(1, sizeof(*d));
		assert_non_null(d);
		d->data = value_of(id);
		k->entry.data = d;
		lruhash_insert(table, k->entry.hash, &k->entry, d, NULL);
	}
	for(t = 0; t < THREADS; t++) {
		memset(&w[t], 0, sizeof(w[t]));
		w[t].table = table;
		w[t].num = t;
		w[t].done = &done;
		ub_thread_create(&w[t].tid, present_work, &w[t]);
	}
	for(t = 0; t < THREADS; t++) {
		ub_thread_join(w[t].tid);
		lookups += w[t].lookups;
		misses += w[t].misses;
	}
	check_lruhash(table);
	printf("# present: %ld lookups while growing to %d bins, %ld misses\n",
		lookups, (int)table->size, misses);
	assert_int_equal(table->num, PRESENT + PRESENT_GROWTH);
	assert_true(lookups > 0);
	assert_int_equal(misses, 0);
	lruhash_delete(table);
}

int
main(int argc, char* argv[])
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stress_grow),
		cmocka_unit_test(test_stress_grow_one),
		cmocka_unit_test(test_stress_evict),
		cmocka_unit_test(test_stress_hashcheck),
		cmocka_unit_test(test_stress_hot),
		cmocka_unit_test(test_stress_present),
	};
	if(argc > 1)
		duration = atof(argv[1]);
	log_init(NULL, 0, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
