/*
 * bench/hash_speed.c - nanoseconds per cache hash, lookup3 against XXH3,
 * for domain names of 8 to 255 bytes (wire format).
 *
 * Built against a build directory (libunbound.a, config.h, source tree)
 * by bench/hash_speed.sh. Measures, for every length:
 *  - a name alone, dname_query_hash() with cache-hash: lookup3 (label
 *    by label, each label lowercased into a copy) and xxh3 (the labels
 *    walked for the length, then the whole name in one call, lowercased
 *    into a copy only if it has upper case letters), for lowercase names
 *    and for mixed case names; the infra and ratelimit caches hash names
 *    this way;
 *  - the hash functions alone on a lowercase name already in a buffer:
 *    lookup3 hashlittle, XXH3 64-bit folded to 32 bits (what xxh3 uses),
 *    XXH3 64-bit truncated to its low 32 bits, and XXH32 (xxHash's
 *    32-bit function);
 * and the whole key hashes of the msg cache (query_info_hash) and of the
 * rrset cache (rrset_key_hash), which take the name length from the key,
 * for every length.
 * Every figure is the median of REPS runs over 1024 different names of
 * the length (min and max shown), independent hashes (throughput).
 */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <arpa/inet.h>
#define XXH_INLINE_ALL
#include <xxhash.h>
#include "util/data/dname.h"
#include "util/data/msgreply.h"
#include "util/data/packed_rrset.h"
#include "util/storage/cachehash.h"
#include "util/storage/lookup3.h"
#include "sldns/rrdef.h"

/** names per length */
#define NAMES 1024
/** repetitions of a measurement */
#define REPS 7
/** hashes per repetition */
#define ITERS (1<<21)

/** the names of one length, wire format, and lowercased */
static uint8_t names[NAMES][256], lower[NAMES][256];
/** sink, so the compiler keeps the hashing */
static volatile uint32_t sink;

/** monotonic time in ns */
static double
now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/** simple deterministic random numbers */
static uint64_t
rnd(void)
{
	static uint64_t s = 0x9e3779b97f4a7c15ULL;
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

/** make NAMES names of wire length len: labels of 3 to 12 characters,
 * letters, digits and hyphens, like host names; in lowercase, or with
 * mixed case (one letter in five upper case) */
static void
make_names(size_t len, int mixed)
{
	static const char ch[] = "abcdefghijklmnopqrstuvwxyz0123456789-"
		"ABCDEFGHIJ";
	size_t nch = mixed ? 47 : 37;
	int n;
	for(n=0; n<NAMES; n++) {
		size_t pos = 0, i;
		/* len includes the final zero label */
		while(pos < len-1) {
			size_t left = len-1-pos, l;
			if(left <= 13)
				l = left - 1;
			else {
				l = 3 + (size_t)(rnd() % 10);
				if(left - (l+1) < 2)
					l = left - 3;
			}
			if(l > 63) l = 63;
			names[n][pos++] = (uint8_t)l;
			for(i=0; i<l; i++)
				names[n][pos++] = (uint8_t)ch[rnd() % nch];
		}
		names[n][pos] = 0;
		for(i=0; i<=pos; i++) {
			uint8_t c = names[n][i];
			lower[n][i] = (c >= 'A' && c <= 'Z') ? c + 32 : c;
		}
	}
}

/** a measured figure: median, min, max ns per hash */
struct fig {
	/** median */
	double med;
	/** minimum */
	double min;
	/** maximum */
	double max;
};

/** compare doubles for qsort */
static int
cmpd(const void* a, const void* b)
{
	double x = *(const double*)a, y = *(const double*)b;
	return (x > y) - (x < y);
}

/** the hash variants */
enum variant { V_DNAME_L3, V_DNAME_XXH3, V_RAW_L3, V_RAW_XXH3_FOLD,
	V_RAW_XXH3_LOW32, V_RAW_XXH32, V_MSG_L3, V_MSG_XXH3, V_RRSET_L3,
	V_RRSET_XXH3, V_NUM };

/** names of the variants */
static const char* vname[V_NUM] = { "dname_query_hash lookup3",
	"dname_query_hash xxh3", "hashlittle", "XXH3-64 folded",
	"XXH3-64 low 32", "XXH32", "query_info_hash lookup3",
	"query_info_hash xxh3", "rrset_key_hash lookup3",
	"rrset_key_hash xxh3" };

/** run one variant over the names of length len */
static struct fig
measure(enum variant v, size_t len)
{
	double t[REPS];
	int r;
	struct fig f;
	struct query_info q;
	struct packed_rrset_key k;
	uint64_t seed = 0x0123456789abcdefULL;
	memset(&q, 0, sizeof(q));
	memset(&k, 0, sizeof(k));
	q.qtype = LDNS_RR_TYPE_A;
	q.qclass = LDNS_RR_CLASS_IN;
	q.qname_len = len;
	k.type = htons(LDNS_RR_TYPE_A);
	k.rrset_class = htons(LDNS_RR_CLASS_IN);
	k.dname_len = len;
	switch(v) {
	case V_DNAME_XXH3: case V_MSG_XXH3: case V_RRSET_XXH3:
		if(!cache_hash_set(cache_hash_xxh3, seed)) {
			fprintf(stderr, "this build has no xxh3\n");
			exit(1);
		}
		break;
	default:
		cache_hash_set(cache_hash_lookup3, seed);
	}
	for(r=0; r<REPS; r++) {
		uint32_t acc = 0;
		int i;
		double t0 = now_ns();
		for(i=0; i<ITERS; i++) {
			int n = i & (NAMES-1);
			switch(v) {
			case V_DNAME_L3: case V_DNAME_XXH3:
				acc += dname_query_hash(names[n], 0xab);
				break;
			case V_RAW_L3:
				acc += hashlittle(lower[n], len-1, 0xab);
				break;
			case V_RAW_XXH3_FOLD: {
				XXH64_hash_t x = XXH3_64bits_withSeed(lower[n],
					len-1, seed ^ 0xab);
				acc += (uint32_t)(x ^ (x >> 32));
				break; }
			case V_RAW_XXH3_LOW32:
				acc += (uint32_t)XXH3_64bits_withSeed(lower[n],
					len-1, seed ^ 0xab);
				break;
			case V_RAW_XXH32:
				acc += XXH32(lower[n], len-1, (uint32_t)seed);
				break;
			case V_MSG_L3: case V_MSG_XXH3:
				q.qname = names[n];
				acc += query_info_hash(&q, 0);
				break;
			case V_RRSET_L3: case V_RRSET_XXH3:
				k.dname = names[n];
				acc += rrset_key_hash(&k);
				break;
			default:
				break;
			}
		}
		t[r] = (now_ns() - t0) / ITERS;
		sink = acc;
	}
	qsort(t, REPS, sizeof(double), cmpd);
	f.med = t[REPS/2];
	f.min = t[0];
	f.max = t[REPS-1];
	return f;
}

/** print a figure */
static void
pfig(struct fig f)
{
	printf(" %.1f (%.1f–%.1f) |", f.med, f.min, f.max);
}

/** run the benchmark */
int
main(int argc, char** argv)
{
	static const size_t lens[] = { 8, 12, 16, 20, 24, 32, 48, 64, 96,
		128, 192, 255 };
	size_t li;
	int v, mixed;
	(void)argc; (void)argv;
	printf("Every figure: median of %d runs of %d hashes over %d "
		"names of the length (min–max), ns per hash; XXH3 inlined "
		"from xxhash.h %d.%d.%d, the way cache-hash: xxh3 uses it.\n\n",
		REPS, ITERS, NAMES, XXH_VERSION_MAJOR, XXH_VERSION_MINOR,
		XXH_VERSION_RELEASE);
	printf("### A name alone: dname_query_hash() (as the infra and "
		"ratelimit caches hash names)\n\n");
	printf("xxh3 walks the labels for the length, then hashes "
		"lowercase names where they are; mixed case names (one "
		"letter in five upper case) are lowercased into a copy "
		"first. lookup3 lowercases every label into a copy and "
		"hashes label by label.\n\n");
	printf("| length | labels | lookup3, lowercase | xxh3, lowercase | "
		"speed-up | lookup3, mixed case | xxh3, mixed case | "
		"speed-up |\n|---|---|---|---|---|---|---|---|\n");
	for(li=0; li<sizeof(lens)/sizeof(lens[0]); li++) {
		struct fig f[4];
		for(mixed=0; mixed<2; mixed++) {
			make_names(lens[li], mixed);
			f[mixed*2] = measure(V_DNAME_L3, lens[li]);
			f[mixed*2+1] = measure(V_DNAME_XXH3, lens[li]);
		}
		printf("| %zu | %d |", lens[li], dname_count_labels(names[0])-1);
		pfig(f[0]); pfig(f[1]);
		printf(" %.2fx |", f[0].med / f[1].med);
		pfig(f[2]); pfig(f[3]);
		printf(" %.2fx |\n", f[2].med / f[3].med);
		fflush(stdout);
	}
	printf("\n### The hash functions alone, on a lowercase name in a "
		"buffer, in one call\n\n");
	printf("| length |");
	for(v=V_RAW_L3; v<=V_RAW_XXH32; v++)
		printf(" %s |", vname[v]);
	printf(" hashlittle / XXH3-64 folded |\n|---|---|---|---|---|---|\n");
	for(li=0; li<sizeof(lens)/sizeof(lens[0]); li++) {
		struct fig f[V_NUM];
		make_names(lens[li], 0);
		printf("| %zu |", lens[li]);
		for(v=V_RAW_L3; v<=V_RAW_XXH32; v++) {
			f[v] = measure((enum variant)v, lens[li]);
			pfig(f[v]);
		}
		printf(" %.2fx |\n", f[V_RAW_L3].med / f[V_RAW_XXH3_FOLD].med);
		fflush(stdout);
	}
	printf("\n### Whole cache keys, type A class IN, lowercase names: "
		"query_info_hash() (msg cache), rrset_key_hash() (rrset "
		"cache)\n\n");
	printf("With xxh3 these take the name length from the key (no "
		"walk over the labels) and hash the name in one call; the "
		"rrset key adds one more call for type, class and flags.\n\n");
	printf("| length | query_info_hash lookup3 | query_info_hash xxh3 | "
		"speed-up | rrset_key_hash lookup3 | rrset_key_hash xxh3 | "
		"speed-up |\n|---|---|---|---|---|---|---|\n");
	for(li=0; li<sizeof(lens)/sizeof(lens[0]); li++) {
		struct fig a, b, c, d;
		make_names(lens[li], 0);
		a = measure(V_MSG_L3, lens[li]);
		b = measure(V_MSG_XXH3, lens[li]);
		c = measure(V_RRSET_L3, lens[li]);
		d = measure(V_RRSET_XXH3, lens[li]);
		printf("| %zu |", lens[li]);
		pfig(a); pfig(b);
		printf(" %.2fx |", a.med / b.med);
		pfig(c); pfig(d);
		printf(" %.2fx |\n", c.med / d.med);
		fflush(stdout);
	}
	return 0;
}
