/*
 * Benchmark harness for util/storage/lruhash.c, compiled once against the
 * stock tree and once against the fork (bench/lruhash_bench.sh). Uses only
 * the lruhash API, so both builds run the same code here.
 *
 * usage: lruhash_bench MODE [ARGS]
 *   grow N             one thread inserts N keys into one table that starts
 *                      at 1024 bins: max and p99.99 insert latency (us),
 *                      and the number of the slowest insert
 *   reader N           a thread inserts N keys (the table grows) while
 *                      another looks up keys already present: reader max (us),
 *                      and when the slowest lookup and insert happened
 *   lookup N T SECS    table pre-filled with N keys, T threads look up
 *                      present keys for SECS: total lookups/s, max (us)
 *   mixed N SECS       2 threads, 90% lookups / 10% inserts of new keys
 *                      into a table growing from N/8: ops/s, max (us)
 *   zipf CACHE KEYS OPS  Zipf(0.9) key stream, lookup and insert on miss,
 *                      table holding CACHE entries: hit ratio
 *   floor N T SECS     as lookup, but each timed operation reads one random
 *                      word of an N-word array instead: the largest time a
 *                      thread loses to the scheduler (and the clock) with T
 *                      threads on this machine, the floor of the max_us
 *                      values above: floor_max_us
 *   touchfloor MB      the floor of reader mode: a thread writes a byte
 *                      to each page of MB megabytes of new memory while
 *                      another times a memory read: both maxima, and when
 * Prints one line of name=value results.
 */
#include "config.h"
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include "util/storage/lruhash.h"
#include "util/storage/slabhash.h"
#include "util/log.h"

/** nanoseconds, monotonic */
static uint64_t
nsec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** hash of a key id: multiplicative, spreads low and high bits */
static hashvalue_type
hash_of(long id)
{
	return (hashvalue_type)((uint64_t)id * 2654435761u);
}

/** a new key and data for id */
static struct slabhash_testkey*
mkkey(long id)
{
	struct slabhash_testkey* k = calloc(1, sizeof(*k));
	struct slabhash_testdata* d = calloc(1, sizeof(*d));
	if(!k || !d) { perror("calloc"); exit(1); }
	k->id = (int)id;
	k->entry.hash = hash_of(id);
	k->entry.key = k;
	k->entry.data = d;
	d->data = (int)id;
	lock_rw_init(&k->entry.lock);
	return k;
}

/** new table, start 1024 bins, room for maxnum entries */
static struct lruhash*
mktable(size_t maxnum)
{
	return lruhash_create(1024, maxnum * test_slabhash_sizefunc(NULL, NULL),
		test_slabhash_sizefunc, test_slabhash_compfunc,
		test_slabhash_delkey, test_slabhash_deldata, NULL);
}

/** insert id */
static void
put(struct lruhash* t, long id)
{
	struct slabhash_testkey* k = mkkey(id);
	lruhash_insert(t, k->entry.hash, &k->entry, k->entry.data, NULL);
}

/** look up id with a key on the stack; returns 1 if found */
static int
get(struct lruhash* t, long id)
{
	struct slabhash_testkey k;
	struct lruhash_entry* e;
	memset(&k, 0, sizeof(k));
	k.id = (int)id;
	e = lruhash_lookup(t, hash_of(id), &k, 0);
	if(!e)
		return 0;
	lock_rw_unlock(&e->lock);
	return 1;
}

/** compare for qsort */
static int
cmp_u64(const void* a, const void* b)
{
	uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
	return x < y ? -1 : x > y;
}

/** peak RSS in MB */
static double
maxrss_mb(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024.0;
}

/** grow mode */
static void
bench_grow(long n)
{
	struct lruhash* t = mktable((size_t)n * 2);
	uint64_t* lat = malloc(sizeof(uint64_t) * (size_t)n);
	uint64_t start = nsec(), t0, t1;
	long i, max_at = 0;
	if(!lat) { perror("malloc"); exit(1); }
	for(i = 0; i < n; i++) {
		t0 = nsec();
		put(t, i);
		t1 = nsec();
		lat[i] = t1 - t0;
		if(lat[i] > lat[max_at])
			max_at = i;
	}
	/* which insert was the slowest: a doubling starts at a power of 2 */
	printf("total_s=%.3f max_at=%ld ", (nsec() - start) / 1e9, max_at);
	qsort(lat, (size_t)n, sizeof(uint64_t), cmp_u64);
	printf("max_us=%.1f p9999_us=%.2f p50_us=%.3f rss_mb=%.0f\n",
		lat[n-1] / 1e3, lat[(size_t)(n * 0.9999)] / 1e3,
		lat[n/2] / 1e3, maxrss_mb());
	free(lat);
}

/** shared state of the threaded modes */
struct shared {
	/** the table */
	struct lruhash* t;
	/** keys below this are present */
	long present;
	/** next new key to insert */
	long next;
	/** stop flag, written once by the main thread */
	volatile int stop;
	/** run time for timed modes */
	double secs;
	/** insert count for the reader mode */
	long n;
	/** when the reader mode's concurrent part began, ns */
	uint64_t start;
};

/** per thread result */
struct result {
	/** the shared state */
	struct shared* s;
	/** thread number */
	int num;
	/** operations done */
	long ops;
	/** slowest operation, ns */
	uint64_t max;
	/** when the slowest operation started, ns since the run began */
	uint64_t max_at;
};

/** reader: look up present keys until stopped */
static void*
reader_main(void* arg)
{
	struct result* r = (struct result*)arg;
	unsigned seed = 12345u + (unsigned)r->num;
	while(!__atomic_load_n(&r->s->stop, __ATOMIC_RELAXED)) {
		long id = (long)(rand_r(&seed) % (unsigned)r->s->present);
		uint64_t t0 = nsec(), d;
		if(!get(r->s->t, id)) { fprintf(stderr, "key %ld lost\n", id); exit(1); }
		d = nsec() - t0;
		if(d > r->max) {
			r->max = d;
			r->max_at = t0 - r->s->start;
		}
		r->ops++;
	}
	return NULL;
}

/** reader mode: a thread inserts while another looks up */
static void
bench_reader(long n)
{
	struct shared s;
	struct result r;
	pthread_t th;
	long i, wmax_i = 0;
	uint64_t wmax = 0, wmax_at = 0;
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	s.t = mktable((size_t)n * 2);
	for(i = 0; i < 100000; i++)
		put(s.t, i);
	s.present = 100000;
	r.s = &s;
	s.start = nsec();
	pthread_create(&th, NULL, reader_main, &r);
	for(i = 100000; i < n; i++) {
		uint64_t t0 = nsec(), d;
		put(s.t, i);
		d = nsec() - t0;
		if(d > wmax) {
			wmax = d;
			wmax_at = t0 - s.start;
			wmax_i = i;
		}
	}
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	/* when, and at which insert (a doubling starts at a power of 2):
	 * a stall that both threads see at once shows as equal times */
	printf("reader_max_us=%.1f reader_ops=%ld reader_max_at_ms=%.1f "
		"writer_max_us=%.1f writer_max_at_ms=%.1f writer_max_i=%ld\n",
		r.max / 1e3, r.ops, r.max_at / 1e6, wmax / 1e3,
		wmax_at / 1e6, wmax_i);
}

/** timed lookups */
static void*
lookup_main(void* arg)
{
	struct result* r = (struct result*)arg;
	unsigned seed = 777u * (unsigned)(r->num + 1);
	uint64_t end = nsec() + (uint64_t)(r->s->secs * 1e9);
	while(1) {
		int k;
		for(k = 0; k < 64; k++) {
			long id = (long)(rand_r(&seed) % (unsigned)r->s->present);
			uint64_t t0 = nsec(), d;
			if(!get(r->s->t, id)) { fprintf(stderr, "lost\n"); exit(1); }
			d = nsec() - t0;
			if(d > r->max) r->max = d;
		}
		r->ops += 64;
		if(nsec() > end)
			break;
	}
	return NULL;
}

/** lookup mode */
static void
bench_lookup(long n, int threads, double secs)
{
	struct shared s;
	struct result r[64];
	pthread_t th[64];
	long i, ops = 0;
	uint64_t max = 0;
	memset(&s, 0, sizeof(s));
	s.t = mktable((size_t)n * 2);
	for(i = 0; i < n; i++)
		put(s.t, i);
	s.present = n;
	s.secs = secs;
	for(i = 0; i < threads; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].s = &s;
		r[i].num = (int)i;
		pthread_create(&th[i], NULL, lookup_main, &r[i]);
	}
	for(i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		ops += r[i].ops;
		if(r[i].max > max) max = r[i].max;
	}
	printf("lookups_per_s=%.0f max_us=%.1f\n", ops / secs, max / 1e3);
}

/** the array that floor mode reads */
static volatile long* floor_words;

/** timed reads of random words, timed as lookup_main times lookups: the
 * same loop on purpose, with the lookup replaced, so that what the two
 * measure differs only by the lookup */
static void*
floor_main(void* arg)
{
	struct result* r = (struct result*)arg;
	unsigned seed = 777u * (unsigned)(r->num + 1);
	uint64_t end = nsec() + (uint64_t)(r->s->secs * 1e9);
	long sum = 0;
	while(1) {
		int k;
		for(k = 0; k < 64; k++) {
			long id = (long)(rand_r(&seed) % (unsigned)r->s->present);
			uint64_t t0 = nsec(), d;
			sum += floor_words[id];
			d = nsec() - t0;
			if(d > r->max) r->max = d;
		}
		r->ops += 64;
		if(nsec() > end)
			break;
	}
	r->s->next += sum & 1; /* keep the reads */
	return NULL;
}

/** floor mode: the scheduling noise under the threads of lookup mode */
static void
bench_floor(long n, int threads, double secs)
{
	struct shared s;
	struct result r[64];
	pthread_t th[64];
	long i;
	uint64_t max = 0;
	memset(&s, 0, sizeof(s));
	floor_words = calloc((size_t)n, sizeof(long));
	if(!floor_words) { perror("calloc"); exit(1); }
	for(i = 0; i < n; i++)
		floor_words[i] = i;
	s.present = n;
	s.secs = secs;
	for(i = 0; i < threads; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].s = &s;
		r[i].num = (int)i;
		pthread_create(&th[i], NULL, floor_main, &r[i]);
	}
	for(i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		if(r[i].max > max) max = r[i].max;
	}
	printf("floor_max_us=%.1f\n", max / 1e3);
}

/** touchfloor: the other thread's loop, timing one memory read */
static void*
touch_reader_main(void* arg)
{
	struct result* r = (struct result*)arg;
	volatile long word = 0;
	while(!__atomic_load_n(&r->s->stop, __ATOMIC_RELAXED)) {
		uint64_t t0 = nsec(), d;
		word++;
		d = nsec() - t0;
		if(d > r->max) {
			r->max = d;
			r->max_at = t0 - r->s->start;
		}
		r->ops++;
	}
	return NULL;
}

/** touchfloor mode: the floor of the reader mode, without a table: a
 * thread writes the first byte of every page of mb megabytes of new
 * memory (what a growing table's segments and entries cost the
 * machine), while another times a memory read. A delay that both see
 * at the same moment is the machine's, not a lock's. */
static void
bench_touchfloor(long mb)
{
	struct shared s;
	struct result r;
	pthread_t th;
	size_t i, part = (size_t)mb / 8 * 1024 * 1024;
	uint64_t max = 0, max_at = 0;
	int k;
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	r.s = &s;
	s.start = nsec();
	pthread_create(&th, NULL, touch_reader_main, &r);
	for(k = 0; k < 8; k++) {
		/* eight allocations, as a table's doublings are */
		volatile char* p = malloc(part);
		if(!p) { perror("malloc"); exit(1); }
		for(i = 0; i < part; i += 4096) {
			uint64_t t0 = nsec(), d;
			p[i] = 1;
			d = nsec() - t0;
			if(d > max) {
				max = d;
				max_at = t0 - s.start;
			}
		}
	}
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	printf("reader_max_us=%.1f reader_max_at_ms=%.1f "
		"toucher_max_us=%.1f toucher_max_at_ms=%.1f total_s=%.3f\n",
		r.max / 1e3, r.max_at / 1e6, max / 1e3, max_at / 1e6,
		(nsec() - s.start) / 1e9);
}

/** mixed: 90% lookups, 10% inserts of new keys */
static void*
mixed_main(void* arg)
{
	struct result* r = (struct result*)arg;
	unsigned seed = 99u * (unsigned)(r->num + 1);
	uint64_t end = nsec() + (uint64_t)(r->s->secs * 1e9);
	while(nsec() < end) {
		uint64_t t0 = nsec(), d;
		if(rand_r(&seed) % 10 == 0) {
			long id = __atomic_fetch_add(&r->s->next, 1, __ATOMIC_RELAXED);
			put(r->s->t, id);
		} else {
			long id = (long)(rand_r(&seed) % (unsigned)r->s->present);
			(void)get(r->s->t, id);
		}
		d = nsec() - t0;
		if(d > r->max) {
			r->max = d;
			r->max_at = t0 - r->s->start;
		}
		r->ops++;
	}
	return NULL;
}

/** mixed mode */
static void
bench_mixed(long n, double secs)
{
	struct shared s;
	struct result r[2];
	pthread_t th[2];
	long i, ops = 0;
	uint64_t max = 0;
	memset(&s, 0, sizeof(s));
	s.t = mktable((size_t)n * 8);
	for(i = 0; i < n / 8; i++)
		put(s.t, i);
	s.present = n / 8;
	s.next = n / 8;
	s.secs = secs;
	for(i = 0; i < 2; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].s = &s;
		r[i].num = (int)i;
		pthread_create(&th[i], NULL, mixed_main, &r[i]);
	}
	for(i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		ops += r[i].ops;
		if(r[i].max > max) max = r[i].max;
	}
	printf("ops_per_s=%.0f max_us=%.1f entries=%ld\n", ops / secs,
		max / 1e3, s.next);
}

/** zipf mode: hit ratio of a cache of `cache` entries */
static void
bench_zipf(long cache, long keys, long ops)
{
	struct lruhash* t = mktable((size_t)cache);
	double* cdf = malloc(sizeof(double) * (size_t)keys), sum = 0;
	long i, hits = 0;
	unsigned seed = 4242u;
	if(!cdf) { perror("malloc"); exit(1); }
	for(i = 0; i < keys; i++)
		sum += 1.0 / pow((double)(i + 1), 0.9);
	cdf[0] = 1.0 / sum;
	for(i = 1; i < keys; i++)
		cdf[i] = cdf[i-1] + 1.0 / pow((double)(i + 1), 0.9) / sum;
	for(i = 0; i < ops; i++) {
		double u = (double)rand_r(&seed) / ((double)RAND_MAX + 1.0);
		long lo = 0, hi = keys - 1, id;
		while(lo < hi) {
			long mid = (lo + hi) / 2;
			if(cdf[mid] < u) lo = mid + 1;
			else hi = mid;
		}
		/* scatter ranks over ids so popularity is not in id order */
		id = (long)(((uint64_t)lo * 2654435761u) % (uint64_t)keys);
		if(get(t, id))
			hits++;
		else	put(t, id);
	}
	printf("hit_ratio=%.4f\n", (double)hits / (double)ops);
	free(cdf);
}

int
main(int argc, char* argv[])
{
	log_init(NULL, 0, NULL);
	if(argc >= 3 && strcmp(argv[1], "grow") == 0)
		bench_grow(atol(argv[2]));
	else if(argc >= 3 && strcmp(argv[1], "reader") == 0)
		bench_reader(atol(argv[2]));
	else if(argc >= 5 && strcmp(argv[1], "lookup") == 0)
		bench_lookup(atol(argv[2]), atoi(argv[3]), atof(argv[4]));
	else if(argc >= 4 && strcmp(argv[1], "mixed") == 0)
		bench_mixed(atol(argv[2]), atof(argv[3]));
	else if(argc >= 5 && strcmp(argv[1], "zipf") == 0)
		bench_zipf(atol(argv[2]), atol(argv[3]), atol(argv[4]));
	else if(argc >= 5 && strcmp(argv[1], "floor") == 0)
		bench_floor(atol(argv[2]), atoi(argv[3]), atof(argv[4]));
	else if(argc >= 3 && strcmp(argv[1], "touchfloor") == 0)
		bench_touchfloor(atol(argv[2]));
	else {
		fprintf(stderr, "usage: lruhash_bench grow N | reader N | "
			"lookup N THREADS SECS | mixed N SECS | "
			"zipf CACHE KEYS OPS | floor N THREADS SECS | "
			"touchfloor MB\n");
		return 2;
	}
	return 0;
}
