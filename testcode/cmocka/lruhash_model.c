/*
 * testcode/cmocka/lruhash_model.c - model-based test of Unbound's lruhash.
 *
 * Random sequences of operations run against a real table and against a
 * reference model: a list of keys in lru order (front first), the value
 * and the lru_referenced flag of each, and the replacement policy that
 * util/storage/lruhash.h documents for reclaim_space. After every step
 * the table must equal the model: the number of entries, the lru list
 * (keys, order, flags, values), and the keys in the bins (traverse).
 *
 * Operations: insert, lookup, remove, insert_or_retrieve, lru_demote,
 * clear, status/get_mem (must not change anything), with tables that
 * start at 1, 2 or 1024 bins, room for 1 to 100 entries or unlimited
 * (growth through many doublings), and good or colliding hash values.
 *
 * Each sequence runs in a child process, so that a crash (a sanitizer
 * report, an abort) counts as a failure like a divergence. A failing
 * sequence is shrunk, one operation at a time, to one that still fails,
 * and printed.
 *
 * usage: lruhash_model [-s FIRST_SEED] [-n SEEDS] [-l OPS] [-x KIND]
 *        lruhash_model -f FILE   (libFuzzer-style input: one sequence)
 * -x KIND leaves out one kind of operation (0 insert ... 6 status), to
 * look for a second bug when a first one is known.
 */
#include "config.h"
#include <sys/types.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>
#include "util/log.h"
#include "util/storage/lruhash.h"
#include "util/storage/slabhash.h"

#ifndef LRUHASH_MAX_SECOND_CHANCE
/** older trees keep the chance budget in lruhash.c */
#define LRUHASH_MAX_SECOND_CHANCE 32
#endif
#ifndef lru_referenced_get
/** older trees read the flag directly */
#define lru_referenced_get(e) ((e)->lru_referenced)
#endif

/** the most keys a sequence uses */
#define MAXKEY 512
/** the most operations in a sequence */
#define MAXOPS 20000

/** one operation */
struct op {
	/** what: 0 insert, 1 lookup, 2 remove, 3 insert_or_retrieve,
	 * 4 demote, 5 clear, 6 status and get_mem */
	int what;
	/** the key */
	int key;
	/** the value, for inserts */
	int val;
};

/** one test: the table's parameters and its operations */
struct seq {
	/** start size of the table */
	size_t start;
	/** room, in entries; 0 for unlimited */
	int room;
	/** hash values collide: key % 7 */
	int collide;
	/** number of operations */
	int n;
	/** the operations */
	struct op ops[MAXOPS];
};

/** the model */
struct model {
	/** keys in lru order, front first */
	int order[MAXKEY];
	/** number of entries */
	int num;
	/** present, value and flag of each key */
	int present[MAXKEY], val[MAXKEY], ref[MAXKEY];
};

/** hash value of a key */
static hashvalue_type
khash(const struct seq* s, int k)
{
	if(s->collide)
		return (hashvalue_type)(k % 7) * 0x9e3779b9u;
	return (hashvalue_type)k * 2654435761u;
}

/** position of key k in the model's lru order, or -1 */
static int
mpos(struct model* m, int k)
{
	int i;
	for(i=0; i<m->num; i++)
		if(m->order[i] == k)
			return i;
	return -1;
}

/** take key k out of the lru order */
static void
mtake(struct model* m, int k)
{
	int i = mpos(m, k);
	memmove(&m->order[i], &m->order[i+1], sizeof(int)*(m->num-1-i));
	m->num--;
}

/** put key k at the front */
static void
mfront(struct model* m, int k)
{
	memmove(&m->order[1], &m->order[0], sizeof(int)*m->num);
	m->order[0] = k;
	m->num++;
}

/** a new key at the front, not read yet, as an insert adds it */
static void
madd(struct model* m, int k, int v)
{
	mfront(m, k);
	m->present[k] = 1;
	m->ref[k] = 0;
	m->val[k] = v;
}

/** the documented replacement policy (reclaim_space in lruhash.h) */
static void
mreclaim(struct model* m, int room)
{
	int mru, chances = 0;
	if(m->num == 0)
		return;
	mru = m->order[0];
	while(room && m->num > 1 && m->num > room) {
		int d = m->order[m->num-1];
		if(d == mru) {
			mtake(m, d);
			mfront(m, d);
			continue;
		}
		if(m->ref[d] && chances < LRUHASH_MAX_SECOND_CHANCE) {
			m->ref[d] = 0;
			mtake(m, d);
			mfront(m, d);
			chances++;
			continue;
		}
		mtake(m, d);
		m->present[d] = 0;
	}
}

/** a new key and data for the table */
static struct slabhash_testkey*
newentry(const struct seq* s, int k, int v)
{
	struct slabhash_testkey* key = calloc(1, sizeof(*key));
	struct slabhash_testdata* d = calloc(1, sizeof(*d));
	if(!key || !d)
		fatal_exit("out of memory");
	key->id = k;
	key->entry.hash = khash(s, k);
	key->entry.key = key;
	key->entry.data = d;
	d->data = v;
	lock_rw_init(&key->entry.lock);
	return key;
}

/** a lookup key, to be freed by the caller */
static struct slabhash_testkey*
lookupkey(const struct seq* s, int k)
{
	struct slabhash_testkey* key = calloc(1, sizeof(*key));
	if(!key)
		fatal_exit("out of memory");
	key->id = k;
	key->entry.hash = khash(s, k);
	key->entry.key = key;
	return key;
}

/** keys seen by traverse */
static int seen[MAXKEY];

/** traverse callback: note the key */
static void
note(struct lruhash_entry* e, void* arg)
{
	(void)arg;
	seen[((struct slabhash_testkey*)e->key)->id]++;
}

/** compare table and model; print the difference and return 0 if they
 * differ */
static int
same(struct lruhash* t, struct model* m, int step)
{
	struct lruhash_entry* e = t->lru_start;
	int i = 0, k;
	if((int)t->num != m->num) {
		printf("step %d: table has %d entries, model %d\n", step,
			(int)t->num, m->num);
		return 0;
	}
	for(; e; e = e->lru_next, i++) {
		k = ((struct slabhash_testkey*)e->key)->id;
		if(i >= m->num || m->order[i] != k) {
			printf("step %d: lru position %d holds key %d, model "
				"%d\n", step, i, k, i < m->num?m->order[i]:-1);
			return 0;
		}
		if(lru_referenced_get(e) != m->ref[k]) {
			printf("step %d: key %d referenced %d, model %d\n",
				step, k, lru_referenced_get(e), m->ref[k]);
			return 0;
		}
		if(((struct slabhash_testdata*)e->data)->data != m->val[k]) {
			printf("step %d: key %d value %d, model %d\n", step,
				k, ((struct slabhash_testdata*)e->data)->data,
				m->val[k]);
			return 0;
		}
	}
	memset(seen, 0, sizeof(seen));
	lruhash_traverse(t, 0, &note, NULL);
	for(k=0; k<MAXKEY; k++)
		if(seen[k] != m->present[k]) {
			printf("step %d: key %d is %d times in the bins, model "
				"%d\n", step, k, seen[k], m->present[k]);
			return 0;
		}
	return 1;
}

/** run a sequence; returns the step that diverged, or -1 */
static int
run(const struct seq* s, int verbose_ops)
{
	size_t esize = test_slabhash_sizefunc(NULL, NULL);
	struct lruhash* t = lruhash_create(s->start, s->room?
		(size_t)s->room*esize : (size_t)1<<40,
		test_slabhash_sizefunc, test_slabhash_compfunc,
		test_slabhash_delkey, test_slabhash_deldata, NULL);
	struct model* m = calloc(1, sizeof(*m));
	int i, fail = -1;
	if(!t || !m)
		fatal_exit("out of memory");
	for(i=0; i<s->n && fail < 0; i++) {
		const struct op* o = &s->ops[i];
		struct slabhash_testkey* key;
		struct lruhash_entry* e;
		if(verbose_ops)
			printf("  %d: %s %d\n", i, (const char*[]){"insert",
				"lookup", "remove", "insert_or_retrieve",
				"demote", "clear", "status"}[o->what], o->key);
		switch(o->what) {
		case 0:
			key = newentry(s, o->key, o->val);
			lruhash_insert(t, key->entry.hash, &key->entry,
				key->entry.data, NULL);
			if(m->present[o->key]) {
				/* updated: to the front, the flag kept */
				mtake(m, o->key);
				mfront(m, o->key);
				m->val[o->key] = o->val;
			} else	madd(m, o->key, o->val);
			mreclaim(m, s->room);
			break;
		case 1:
			key = lookupkey(s, o->key);
			e = lruhash_lookup(t, key->entry.hash, key, 0);
			if((e != NULL) != m->present[o->key] || (e &&
				((struct slabhash_testdata*)e->data)->data !=
				m->val[o->key])) {
				printf("step %d: lookup of key %d %s, model "
					"%s\n", i, o->key, e?"found":"missed",
					m->present[o->key]?"has it":"not");
				fail = i;
			}
			if(e)
				lock_rw_unlock(&e->lock);
			free(key);
			if(m->present[o->key])
				m->ref[o->key] = 1;
			break;
		case 2:
			key = lookupkey(s, o->key);
			lruhash_remove(t, key->entry.hash, key);
			free(key);
			if(m->present[o->key]) {
				mtake(m, o->key);
				m->present[o->key] = 0;
			}
			break;
		case 3:
			key = newentry(s, o->key, o->val);
			e = lruhash_insert_or_retrieve(t, key->entry.hash,
				&key->entry, key->entry.data, NULL);
			if(m->present[o->key]) {
				/* the existing entry, not moved */
				if(!e || e == &key->entry ||
					((struct slabhash_testdata*)e->data)
					->data != m->val[o->key]) {
					printf("step %d: insert_or_retrieve of "
						"present key %d did not return "
						"it\n", i, o->key);
					fail = i;
				}
				if(e)
					lock_rw_unlock(&e->lock);
				test_slabhash_deldata(key->entry.data, NULL);
				test_slabhash_delkey(key, NULL);
			} else {
				if(e != &key->entry) {
					printf("step %d: insert_or_retrieve of "
						"new key %d did not return it\n",
						i, o->key);
					fail = i;
				}
				/* reads the entry it returned: freed if it
				 * was evicted, which the sanitizer reports */
				if(e && ((struct slabhash_testkey*)e->key)->id
					!= o->key) {
					printf("step %d: insert_or_retrieve "
						"returned another key\n", i);
					fail = i;
				}
				if(e)
					lock_rw_unlock(&e->lock);
				madd(m, o->key, o->val);
				mreclaim(m, s->room);
			}
			break;
		case 4:
			if(!m->present[o->key])
				break;
			for(e = t->lru_start; e; e = e->lru_next)
				if(((struct slabhash_testkey*)e->key)->id ==
					o->key)
					break;
			if(!e) {
				printf("step %d: key %d not in the lru list\n",
					i, o->key);
				fail = i;
				break;
			}
			lock_quick_lock(&t->lock);
			lru_demote(t, e);
			lock_quick_unlock(&t->lock);
			m->ref[o->key] = 0;
			mtake(m, o->key);
			m->order[m->num++] = o->key;
			break;
		case 5:
			lruhash_clear(t);
			memset(m, 0, sizeof(*m));
			break;
		case 6:
			lruhash_status(t, "model", 0);
			(void)lruhash_get_mem(t);
			break;
		}
		if(fail < 0 && !same(t, m, i))
			fail = i;
	}
	lruhash_delete(t);
	free(m);
	return fail;
}

/** run in a child: returns true if the sequence passes */
static int
passes(const struct seq* s)
{
	pid_t p;
	int st;
	fflush(stdout);
	p = fork();
	if(p < 0)
		fatal_exit("fork failed");
	if(p == 0) {
		int devnull = open("/dev/null", O_WRONLY);
		if(devnull >= 0) {
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		_exit(run(s, 0) < 0 ? 0 : 1);
	}
	if(waitpid(p, &st, 0) < 0)
		fatal_exit("waitpid failed");
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

/** the kind of operation that make_seq leaves out, or -1 */
static int excluded = -1;

/** a random sequence from a seed */
static void
make_seq(struct seq* s, unsigned seed, int len)
{
	static const size_t starts[] = { 1, 2, 1024 };
	static const int rooms[] = { 1, 2, 4, 33, 100, 0 };
	static const int keyranges[] = { 8, 64, 512 };
	int i, keys;
	srandom(seed);
	s->start = starts[random() % 3];
	s->room = rooms[random() % 6];
	s->collide = (random() % 4) == 0;
	keys = keyranges[random() % 3];
	s->n = len;
	for(i=0; i<len; i++) {
		int r = (int)(random() % 100);
		s->ops[i].key = (int)(random() % keys);
		s->ops[i].val = (int)(random() % 1000);
		s->ops[i].what = r < 35 ? 0 : r < 75 ? 1 : r < 85 ? 2 :
			r < 93 ? 3 : r < 97 ? 4 : r < 98 ? 5 : 6;
		if(s->ops[i].what == excluded)
			s->ops[i].what = 1;
	}
}

/** shrink a failing sequence: drop operations while it still fails */
static void
shrink(struct seq* s)
{
	struct seq* t = malloc(sizeof(*t));
	int i, changed = 1;
	if(!t)
		fatal_exit("out of memory");
	while(changed) {
		changed = 0;
		for(i=s->n-1; i>=0; i--) {
			*t = *s;
			memmove(&t->ops[i], &t->ops[i+1],
				sizeof(struct op)*(t->n-1-i));
			t->n--;
			if(!passes(t)) {
				*s = *t;
				changed = 1;
			}
		}
	}
	free(t);
}

/** print a failing sequence and what it does */
static void
report(struct seq* s, unsigned seed)
{
	printf("seed %u fails: start %d bins, room %d, %s hashes; shrinking "
		"the %d operations\n", seed, (int)s->start, s->room,
		s->collide?"colliding":"spread", s->n);
	shrink(s);
	printf("shortest failing sequence (%d operations):\n", s->n);
	fflush(stdout);
	if(fork() == 0) {
		run(s, 1);
		fflush(stdout);
		_exit(0);
	}
	wait(NULL);
}

/** read a sequence from fuzz input bytes */
static void
seq_from_bytes(struct seq* s, const uint8_t* b, size_t len)
{
	static const size_t starts[] = { 1, 2, 1024 };
	static const int rooms[] = { 1, 2, 4, 33, 100, 0 };
	size_t i;
	memset(s, 0, sizeof(*s));
	s->start = len > 0 ? starts[b[0] % 3] : 2;
	s->room = len > 1 ? rooms[b[1] % 6] : 4;
	s->collide = len > 2 ? b[2] & 1 : 0;
	for(i=3; i+1 < len && s->n < MAXOPS; i += 2) {
		struct op* o = &s->ops[s->n++];
		o->what = b[i] % 7;
		o->key = b[i+1] % 64;
		o->val = (int)i;
	}
}

#ifdef LRUHASH_MODEL_FUZZ
/** libFuzzer entry: a sequence from the input, must not diverge */
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
	static struct seq s;
	seq_from_bytes(&s, data, size);
	if(run(&s, 0) >= 0) {
		/* the divergence is printed to stdout, abort loses a buffer */
		fflush(stdout);
		abort();
	}
	return 0;
}
#else
int
main(int argc, char* argv[])
{
	unsigned first = 1, n = 200, seed;
	int c, len = 2000, failed = 0;
	const char* file = NULL;
	struct seq* s = malloc(sizeof(*s));
	if(!s)
		fatal_exit("out of memory");
	log_init(NULL, 0, NULL);
	while((c = getopt(argc, argv, "s:n:l:f:x:")) != -1) {
		switch(c) {
		case 's': first = (unsigned)atoi(optarg); break;
		case 'n': n = (unsigned)atoi(optarg); break;
		case 'l': len = atoi(optarg); break;
		case 'f': file = optarg; break;
		case 'x': excluded = atoi(optarg); break;
		default:
			printf("usage: lruhash_model [-s FIRST_SEED] [-n SEEDS] "
				"[-l OPS] [-x KIND] | -f FILE\n");
			return 2;
		}
	}
	if(len < 1 || len > MAXOPS)
		len = 2000;
	if(file) {
		uint8_t buf[2*MAXOPS+3];
		size_t got;
		FILE* f = fopen(file, "rb");
		if(!f) {
			perror(file);
			return 2;
		}
		got = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		seq_from_bytes(s, buf, got);
		if(passes(s)) {
			printf("lruhash model: %s passes\n", file);
			return 0;
		}
		report(s, 0);
		return 1;
	}
	for(seed = first; seed < first + n; seed++) {
		make_seq(s, seed, len);
		if(!passes(s)) {
			report(s, seed);
			failed++;
			break;
		}
	}
	printf("lruhash model: %u passed, %d failed\n",
		failed ? seed - first : n, failed);
	free(s);
	return failed ? 1 : 0;
}
#endif
