/*
 * testcode/unit_hash.c - cmocka tests of the cache hash functions of
 * Unbound Steady (cache-hash: lookup3 or xxh3).
 *
 * Built against the objects of a build directory by test_hash.sh, which
 * links the build's libunbound.a, so the functions under test are the
 * ones the daemon runs: dname_query_hash, dname_pkt_hash,
 * query_info_hash (msg cache), rrset_key_hash and pkt_hash_rrset (rrset
 * cache), msgreply_hashcheck.
 *
 * For each function:
 *  - names that differ in case only hash the same, compressed or not,
 *    and every byte value hashes as its tolower() (C locale);
 *  - other seeds give other hash values (also seeds that differ only in
 *    the high 32 bits, for XXH3's 64-bit seed);
 *  - the distribution over slabs (top bits, as slabhash picks them) and
 *    over bins (low bits, as lruhash picks them), separately and jointly
 *    as a slabhash does, for 1M random-label names under one suffix,
 *    1M real-looking names, 1M sequential names and 1M sequential
 *    reverse (in-addr.arpa) names: a chi-square test of the occupancy
 *    (upper tail, p = 1e-6) and the longest chain against the Poisson
 *    bound for the same load (p = 1e-6 over the whole table).
 *  - cache_hash_init selects the function once per process.
 */
#include "config.h"
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <math.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "util/log.h"
#include "util/random.h"
#include "util/net_help.h"
#include "util/data/dname.h"
#include "util/data/msgreply.h"
#include "util/data/msgparse.h"
#include "util/data/packed_rrset.h"
#include "util/storage/cachehash.h"
#include "sldns/sbuffer.h"
#include "sldns/rrdef.h"

/** number of elements of an array */
#define NUM(a) (sizeof(a)/sizeof((a)[0]))

/** number of names in a distribution test */
#define NNAMES 1000000

/** a set of names in wire format */
struct nameset {
	/** label of the set, for messages */
	const char* label;
	/** all names, one after the other */
	uint8_t* arena;
	/** bytes used in the arena */
	size_t used;
	/** offset of every name in the arena */
	size_t* off;
	/** number of names */
	size_t n;
};

/** the four name sets, made once */
static struct nameset sets[4];

/** splitmix64 random numbers, deterministic */
static uint64_t rng_state = 0x5eed5eed12345678ULL;

/** next random number */
static uint64_t
rng(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/** text name to wire format in buf, returns the length */
static size_t
str2wire(const char* s, uint8_t* buf)
{
	size_t len = 0;
	while(*s) {
		const char* dot = strchr(s, '.');
		size_t l = dot ? (size_t)(dot - s) : strlen(s);
		buf[len++] = (uint8_t)l;
		memcpy(buf + len, s, l);
		len += l;
		s += l;
		if(*s == '.')
			s++;
	}
	buf[len++] = 0;
	return len;
}

/** FNV-1a 64, only for the duplicate check while making the sets */
static uint64_t
fnv(const uint8_t* p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	while(n--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/** duplicate check table, open addressing, of name index + 1 */
static uint32_t* dup_tab;
/** size of dup_tab, power of 2 */
#define DUP_SIZE (1u<<22)

/** add a text name to the set unless it is in it already */
static int
set_add(struct nameset* s, const char* name)
{
	uint8_t buf[256];
	size_t len = str2wire(name, buf);
	uint64_t h = fnv(buf, len);
	size_t i = (size_t)h & (DUP_SIZE-1);
	assert_true(len <= 255);
	while(dup_tab[i]) {
		size_t o = s->off[dup_tab[i]-1];
		if(memcmp(s->arena + o, buf, len) == 0 &&
			dname_valid(s->arena + o, 256) == len)
			return 0;
		i = (i+1) & (DUP_SIZE-1);
	}
	dup_tab[i] = (uint32_t)s->n + 1;
	s->off[s->n++] = s->used;
	memcpy(s->arena + s->used, buf, len);
	s->used += len;
	return 1;
}

/** start a set */
static void
set_init(struct nameset* s, const char* label)
{
	s->label = label;
	s->arena = malloc((size_t)NNAMES * 100);
	s->off = malloc(sizeof(size_t) * NNAMES);
	s->used = 0;
	s->n = 0;
	assert_non_null(s->arena);
	assert_non_null(s->off);
	memset(dup_tab, 0, sizeof(uint32_t) * DUP_SIZE);
}

/** words for real-looking names */
static const char* words[] = { "www", "mail", "api", "cdn", "static",
	"img", "login", "auth", "shop", "blog", "news", "m", "app", "edge",
	"smtp", "mx1", "mx2", "ns1", "ns2", "vpn", "portal", "docs", "dev",
	"test", "assets", "media", "video", "video-eu", "eu-west-1",
	"us-east-1", "prod", "staging", "cache", "gw", "node", "db", "s3",
	"photos", "support", "help", "status", "track", "ads", "metrics",
	"telemetry", "update", "download", "secure", "accounts", "my" };
/** second level names */
static const char* slds[] = { "google", "example", "amazonaws",
	"cloudfront", "akamaiedge", "facebook", "microsoft", "apple",
	"wikipedia", "nlnetlabs", "debian", "github", "bbc", "spiegel",
	"rakuten", "bank-of-x", "shop24", "my-company", "heise", "lemonde" };
/** suffixes */
static const char* tlds[] = { "com", "net", "org", "de", "nl", "co.uk",
	"com.au", "fr", "io", "jp", "co.jp", "eu", "info", "ru", "br" };

/** a syllable-made word of 2 to 4 syllables */
static void
mkword(char* out)
{
	static const char* syl[] = { "ka", "lo", "mi", "ne", "ro", "ta",
		"vu", "zen", "dor", "bel", "fin", "gra", "hu", "jo", "pix",
		"qu", "sto", "tri", "wex", "yo" };
	int i, n = 2 + (int)(rng() % 3);
	out[0] = 0;
	for(i=0; i<n; i++)
		strcat(out, syl[rng() % NUM(syl)]);
}

/** make the name sets */
static int
setup_sets(void** state)
{
	char name[300], w[40];
	uint64_t i;
	(void)state;
	dup_tab = malloc(sizeof(uint32_t) * DUP_SIZE);
	if(!dup_tab)
		return -1;
	/* (a) random labels under one suffix, as in a random-subdomain
	 * attack on a wildcard */
	set_init(&sets[0], "random-label");
	while(sets[0].n < NNAMES) {
		snprintf(name, sizeof(name), "%012llx.example.test",
			(unsigned long long)(rng() & 0xffffffffffffULL));
		(void)set_add(&sets[0], name);
	}
	/* (b) real-looking: 1 to 4 labels of words, numbers, hyphens,
	 * under common second level names and suffixes, and reverse
	 * names of random addresses */
	set_init(&sets[1], "real-looking");
	while(sets[1].n < NNAMES) {
		uint64_t r = rng();
		int nl = 1 + (int)(r % 4), j;
		name[0] = 0;
		if(r % 10 == 0) {
			snprintf(name, sizeof(name), "%u.%u.%u.%u.in-addr.arpa",
				(unsigned)(rng()%256), (unsigned)(rng()%256),
				(unsigned)(rng()%256), (unsigned)(rng()%224));
		} else {
			for(j=0; j<nl; j++) {
				uint64_t k = rng();
				if(k % 5 == 0) {
					mkword(w);
				} else if(k % 7 == 0) {
					snprintf(w, sizeof(w), "%s%u",
						words[rng() % NUM(words)],
						(unsigned)(rng() % 100));
				} else if(k % 11 == 0) {
					snprintf(w, sizeof(w), "ip-%u-%u-%u-%u",
						(unsigned)(rng()%256),
						(unsigned)(rng()%256),
						(unsigned)(rng()%256),
						(unsigned)(rng()%256));
				} else {
					snprintf(w, sizeof(w), "%s",
						words[rng() % NUM(words)]);
				}
				strcat(name, w);
				strcat(name, ".");
			}
			if(r % 3 == 0) {
				mkword(w);
				strcat(name, w);
			} else {
				strcat(name, slds[rng() % NUM(slds)]);
			}
			strcat(name, ".");
			strcat(name, tlds[rng() % NUM(tlds)]);
		}
		(void)set_add(&sets[1], name);
	}
	/* (c) sequential: decimal counter labels */
	set_init(&sets[2], "sequential");
	for(i=0; i<NNAMES; i++) {
		snprintf(name, sizeof(name), "host%llu.example.com",
			(unsigned long long)i);
		assert_true(set_add(&sets[2], name));
	}
	/* (d) sequential addresses, reverse names: 10.0.0.0 and up */
	set_init(&sets[3], "sequential-ptr");
	for(i=0; i<NNAMES; i++) {
		uint32_t a = 0x0a000000u + (uint32_t)i;
		snprintf(name, sizeof(name), "%u.%u.%u.%u.in-addr.arpa",
			a&0xff, (a>>8)&0xff, (a>>16)&0xff, a>>24);
		assert_true(set_add(&sets[3], name));
	}
	free(dup_tab);
	dup_tab = NULL;
	return 0;
}

/** free the sets */
static int
teardown_sets(void** state)
{
	int i;
	(void)state;
	for(i=0; i<4; i++) {
		free(sets[i].arena);
		free(sets[i].off);
	}
	return 0;
}

/** the cache hash values a name gets: msg cache and rrset cache keys */
static void
name_hashes(uint8_t* name, size_t len, hashvalue_type* msg,
	hashvalue_type* rrset)
{
	struct query_info q;
	struct packed_rrset_key k;
	memset(&q, 0, sizeof(q));
	q.qname = name;
	q.qname_len = len;
	q.qtype = LDNS_RR_TYPE_A;
	q.qclass = LDNS_RR_CLASS_IN;
	*msg = query_info_hash(&q, 0);
	memset(&k, 0, sizeof(k));
	k.dname = name;
	k.dname_len = len;
	k.type = htons(LDNS_RR_TYPE_A);
	k.rrset_class = htons(LDNS_RR_CLASS_IN);
	*rrset = rrset_key_hash(&k);
}

/** select a function for a test, skip if not in this build */
static void
use(enum cache_hash_type t, uint64_t seed)
{
	if(!cache_hash_set(t, seed))
		skip();
	assert_int_equal(cache_hash_in_use, t);
}

/** copy of a name with a random mix of upper and lower case */
static void
randcase(uint8_t* dst, const uint8_t* src, size_t len)
{
	size_t i;
	for(i=0; i<len; i++) {
		if(isalpha(src[i]) && (rng() & 1))
			dst[i] = (uint8_t)toupper(src[i]);
		else	dst[i] = src[i];
	}
}

/** the name, compressed into a packet: the last two labels (or the
 * whole name) at offset 12, and the name as its first labels and a
 * pointer. Returns offset of the compressed name. */
static size_t
compress_into(sldns_buffer* pkt, const uint8_t* name, size_t len)
{
	size_t nlab = 0, i = 0, tail, head, start;
	uint8_t* p;
	sldns_buffer_clear(pkt);
	p = sldns_buffer_begin(pkt);
	memset(p, 0, 12);
	while(name[i]) {
		nlab++;
		i += name[i] + 1;
	}
	/* head: all labels but the last two */
	head = 0;
	for(i=0; nlab > 2 && i < nlab-2; i++)
		head += name[head] + 1;
	tail = len - head;
	memcpy(p + 12, name + head, tail);
	start = 12 + tail;
	memcpy(p + start, name, head);
	p[start + head] = 0xc0;
	p[start + head + 1] = 12;
	sldns_buffer_set_position(pkt, start + head + 2);
	sldns_buffer_flip(pkt);
	return start;
}

/** case and compression do not change the hash values */
static void
check_case(enum cache_hash_type t)
{
	sldns_buffer* pkt = sldns_buffer_new(1024);
	uint8_t mixed[256];
	int s, i;
	assert_non_null(pkt);
	use(t, 0x1122334455667788ULL);
	for(s=0; s<4; s++) {
		for(i=0; i<20000; i++) {
			size_t j = (size_t)(rng() % sets[s].n);
			uint8_t* nm = sets[s].arena + sets[s].off[j];
			size_t len = dname_valid(nm, 256);
			hashvalue_type m1, r1, m2, r2;
			size_t off;
			assert_true(len > 0);
			name_hashes(nm, len, &m1, &r1);
			randcase(mixed, nm, len);
			name_hashes(mixed, len, &m2, &r2);
			assert_int_equal(m1, m2);
			assert_int_equal(r1, r2);
			assert_int_equal(dname_query_hash(nm, 0xab),
				dname_query_hash(mixed, 0xab));
			/* the rrset hash of a packet, compressed, mixed
			 * case, is the same as of the name */
			off = compress_into(pkt, mixed, len);
			assert_int_equal(dname_pkt_hash(pkt,
				sldns_buffer_at(pkt, off), 0xab),
				dname_query_hash(nm, 0xab));
			assert_int_equal(pkt_hash_rrset(pkt,
				sldns_buffer_at(pkt, off),
				LDNS_RR_TYPE_A, htons(LDNS_RR_CLASS_IN), 0), r1);
		}
	}
	sldns_buffer_free(pkt);
}

/** test case insensitivity with lookup3 */
static void
test_case_lookup3(void** state)
{
	(void)state;
	check_case(cache_hash_lookup3);
}

/** test case insensitivity with xxh3 */
static void
test_case_xxh3(void** state)
{
	(void)state;
	check_case(cache_hash_xxh3);
}

/** every byte value, at every place of labels of 1 to 24 bytes (names
 * shorter and longer than the eight bytes the lowercasing takes at a
 * time): the hash is that of tolower() of the byte, in the C locale, and
 * differs for a byte that tolower() keeps apart */
static void
check_bytes(enum cache_hash_type t)
{
	uint8_t a[32], b[32];
	int c, p, l;
	use(t, 0x77);
	for(l=1; l<=24; l++) {
		memset(a, 'x', sizeof(a));
		a[0] = (uint8_t)l;
		a[l+1] = 0;
		for(p=1; p<=l; p++) {
			for(c=0; c<256; c++) {
				memcpy(b, a, sizeof(a));
				a[p] = (uint8_t)c;
				b[p] = (uint8_t)tolower(c);
				assert_int_equal(dname_query_hash(a, 0xab),
					dname_query_hash(b, 0xab));
				/* a byte that is not the same letter */
				b[p] = (uint8_t)(tolower(c) ^ 0x01);
				assert_int_not_equal(dname_query_hash(a, 0xab),
					dname_query_hash(b, 0xab));
			}
			a[p] = 'x';
		}
	}
}

/** test every byte value with lookup3 */
static void
test_bytes_lookup3(void** state)
{
	(void)state;
	check_bytes(cache_hash_lookup3);
}

/** test every byte value with xxh3 */
static void
test_bytes_xxh3(void** state)
{
	(void)state;
	check_bytes(cache_hash_xxh3);
}

/** count hash values that are the same with two seeds */
static size_t
same_with_seeds(enum cache_hash_type t, uint64_t s1, uint64_t s2)
{
	static hashvalue_type v[10000];
	size_t i, same = 0;
	hashvalue_type m, r;
	struct nameset* s = &sets[1];
	use(t, s1);
	for(i=0; i<10000; i++) {
		uint8_t* nm = s->arena + s->off[i];
		name_hashes(nm, dname_valid(nm, 256), &v[i], &r);
	}
	use(t, s2);
	for(i=0; i<10000; i++) {
		uint8_t* nm = s->arena + s->off[i];
		name_hashes(nm, dname_valid(nm, 256), &m, &r);
		if(m == v[i])
			same++;
	}
	return same;
}

/** test that seeds change the values, lookup3 (a 32-bit seed) */
static void
test_seeds_lookup3(void** state)
{
	(void)state;
	/* chance of one equal value in 10000 is 2.3e-6 */
	assert_true(same_with_seeds(cache_hash_lookup3, 1, 2) <= 1);
	assert_true(same_with_seeds(cache_hash_lookup3, 0x12345678,
		0x92345678) <= 1);
}

/** test that seeds change the values, xxh3 (a 64-bit seed) */
static void
test_seeds_xxh3(void** state)
{
	(void)state;
	assert_true(same_with_seeds(cache_hash_xxh3, 1, 2) <= 1);
	/* the high 32 bits of the seed are used too */
	assert_true(same_with_seeds(cache_hash_xxh3, 0x12345678,
		0x8000000012345678ULL) <= 1);
	assert_true(same_with_seeds(cache_hash_xxh3, 0x12345678,
		0x0000000112345678ULL) <= 1);
}

/** upper critical value of chi-square, p = 1e-6, Wilson-Hilferty */
static double
chi2_crit(double df)
{
	const double z = 4.7534; /* one-sided p = 1e-6 */
	double a = 2.0 / (9.0 * df);
	double c = 1.0 - a + z * sqrt(a);
	return df * c * c * c;
}

/** smallest chain length k with m * P(Poisson(lambda) >= k) < 1e-6 */
static unsigned
chain_bound(double lambda, double m)
{
	unsigned k;
	for(k = (unsigned)lambda + 1; ; k++) {
		double tail = 0, t;
		unsigned i;
		for(i=k; i<k+2000; i++) {
			t = exp(-lambda + i*log(lambda) - lgamma(i+1.0));
			tail += t;
			if(t < tail*1e-12)
				break;
		}
		if(m * tail < 1e-6)
			return k;
	}
}

/** counts for the occupancy tests */
static uint32_t* counts;

/** chi-square and longest chain of the counts in m cells, n values;
 * prints them and checks them against the bounds */
static void
check_counts(const char* what, const char* setname, const char* func,
	size_t m, size_t n)
{
	double e = (double)n / (double)m, x2 = 0;
	uint32_t maxc = 0;
	size_t i;
	double crit = chi2_crit((double)m - 1.0);
	unsigned bound = chain_bound(e, (double)m);
	for(i=0; i<m; i++) {
		double d = (double)counts[i] - e;
		x2 += d*d/e;
		if(counts[i] > maxc)
			maxc = counts[i];
	}
	printf("%-7s %-14s %-22s chi2/df %.3f (limit %.3f) max chain %u "
		"(limit %u, mean %.2f)\n", func, setname, what,
		x2/(double)(m-1), crit/(double)(m-1), (unsigned)maxc,
		bound, e);
	assert_true(x2 <= crit);
	assert_true(maxc <= bound);
}

/** distribution of one set with one function: slabs by top bits, bins
 * by low bits, and slab then bin as a slabhash of 4 slabs does */
static void
check_dist(enum cache_hash_type t, struct nameset* s)
{
	static const int slabbits[] = { 2, 4, 8 };
	static const int binbits[] = { 10, 16, 20 };
	const char* fn = cache_hash_type2name(t);
	hashvalue_type* hm = malloc(sizeof(hashvalue_type) * s->n);
	hashvalue_type* hr = malloc(sizeof(hashvalue_type) * s->n);
	size_t i, j;
	char what[64];
	assert_non_null(hm);
	assert_non_null(hr);
	counts = malloc(sizeof(uint32_t) << 20);
	assert_non_null(counts);
	use(t, 0x0123456789abcdefULL);
	for(i=0; i<s->n; i++) {
		uint8_t* nm = s->arena + s->off[i];
		name_hashes(nm, dname_valid(nm, 256), &hm[i], &hr[i]);
	}
	for(j=0; j<2; j++) {
		hashvalue_type* h = j?hr:hm;
		const char* cache = j?"rrset":"msg";
		int b;
		for(b=0; b<3; b++) {
			/* slabhash: (hash & mask) >> shift, top bits */
			int k = slabbits[b];
			memset(counts, 0, sizeof(uint32_t) << k);
			for(i=0; i<s->n; i++)
				counts[h[i] >> (32-k)]++;
			snprintf(what, sizeof(what), "%s slab, top %d", cache, k);
			check_counts(what, s->label, fn, (size_t)1<<k, s->n);
		}
		for(b=0; b<3; b++) {
			/* lruhash: hash & size_mask, low bits */
			int k = binbits[b];
			memset(counts, 0, sizeof(uint32_t) << k);
			for(i=0; i<s->n; i++)
				counts[h[i] & ((1u<<k)-1)]++;
			snprintf(what, sizeof(what), "%s bin, low %d", cache, k);
			check_counts(what, s->label, fn, (size_t)1<<k, s->n);
		}
		/* 4 slabs of 2^18 bins: the chains as a slabhash has them */
		memset(counts, 0, sizeof(uint32_t) << 20);
		for(i=0; i<s->n; i++)
			counts[((h[i] >> 30) << 18) | (h[i] & 0x3ffff)]++;
		snprintf(what, sizeof(what), "%s 4 slabs x 2^18 bins", cache);
		check_counts(what, s->label, fn, (size_t)1<<20, s->n);
	}
	free(counts);
	counts = NULL;
	free(hm);
	free(hr);
}

/** distribution tests, one per function and set */
#define DIST_TEST(name, t, s) static void name(void** state) \
	{ (void)state; check_dist(t, &sets[s]); }
DIST_TEST(test_dist_random_lookup3, cache_hash_lookup3, 0)
DIST_TEST(test_dist_real_lookup3, cache_hash_lookup3, 1)
DIST_TEST(test_dist_seq_lookup3, cache_hash_lookup3, 2)
DIST_TEST(test_dist_seqptr_lookup3, cache_hash_lookup3, 3)
DIST_TEST(test_dist_random_xxh3, cache_hash_xxh3, 0)
DIST_TEST(test_dist_real_xxh3, cache_hash_xxh3, 1)
DIST_TEST(test_dist_seq_xxh3, cache_hash_xxh3, 2)
DIST_TEST(test_dist_seqptr_xxh3, cache_hash_xxh3, 3)

/** AAAA with CD has a hash of its own, accepted by the msg hash check */
static void
check_aaaa_cd(enum cache_hash_type t)
{
	struct msgreply_entry e;
	hashvalue_type h0, hcd, correct;
	char buf[512];
	use(t, 0x42);
	memset(&e, 0, sizeof(e));
	e.key.qname = (uint8_t*)"\003www\007example\003com";
	e.key.qname_len = 17;
	e.key.qtype = LDNS_RR_TYPE_AAAA;
	e.key.qclass = LDNS_RR_CLASS_IN;
	h0 = query_info_hash(&e.key, 0);
	hcd = query_info_hash(&e.key, BIT_CD);
	assert_int_not_equal(h0, hcd);
	assert_true(msgreply_hashcheck(&e, h0, &correct, buf, sizeof(buf)));
	assert_true(msgreply_hashcheck(&e, hcd, &correct, buf, sizeof(buf)));
	assert_false(msgreply_hashcheck(&e, h0^1, &correct, buf,
		sizeof(buf)));
	assert_int_equal(correct, h0);
}

/** AAAA+CD with lookup3 */
static void
test_aaaa_cd_lookup3(void** state)
{
	(void)state;
	check_aaaa_cd(cache_hash_lookup3);
}

/** AAAA+CD with xxh3 */
static void
test_aaaa_cd_xxh3(void** state)
{
	(void)state;
	check_aaaa_cd(cache_hash_xxh3);
}

/** cache_hash_init selects once; a later call does not change the
 * function or the seed */
static void
test_init_once(void** state)
{
	struct ub_randstate* rnd = ub_initstate(NULL);
	uint8_t* nm = (uint8_t*)"\003www\007example\003com";
	enum cache_hash_type first, other;
	hashvalue_type h;
	(void)state;
	assert_non_null(rnd);
	/* the build default first, then the other one */
	assert_true(cache_hash_name2type(cache_hash_default_name(), &first));
	other = (first == cache_hash_lookup3) ? cache_hash_xxh3 :
		cache_hash_lookup3;
	cache_hash_init(NULL, rnd);
	assert_int_equal(cache_hash_in_use, first);
	h = dname_query_hash(nm, 0xab);
	cache_hash_init(cache_hash_type2name(other), rnd);
	assert_int_equal(cache_hash_in_use, first);
	assert_int_equal(dname_query_hash(nm, 0xab), h);
	cache_hash_init(cache_hash_type2name(first), rnd);
	assert_int_equal(dname_query_hash(nm, 0xab), h);
	ub_randfree(rnd);
}

/** run the tests */
int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_once),
		cmocka_unit_test(test_case_lookup3),
		cmocka_unit_test(test_case_xxh3),
		cmocka_unit_test(test_bytes_lookup3),
		cmocka_unit_test(test_bytes_xxh3),
		cmocka_unit_test(test_seeds_lookup3),
		cmocka_unit_test(test_seeds_xxh3),
		cmocka_unit_test(test_aaaa_cd_lookup3),
		cmocka_unit_test(test_aaaa_cd_xxh3),
		cmocka_unit_test(test_dist_random_lookup3),
		cmocka_unit_test(test_dist_real_lookup3),
		cmocka_unit_test(test_dist_seq_lookup3),
		cmocka_unit_test(test_dist_seqptr_lookup3),
		cmocka_unit_test(test_dist_random_xxh3),
		cmocka_unit_test(test_dist_real_xxh3),
		cmocka_unit_test(test_dist_seq_xxh3),
		cmocka_unit_test(test_dist_seqptr_xxh3),
	};
	log_init(NULL, 0, NULL);
	return cmocka_run_group_tests_name("cache hash", tests, setup_sets,
		teardown_sets);
}
