/*
 * testcode/harness/spincount.c - an LD_PRELOAD library that counts how often each
 * pthread spinlock of a process is taken, and which function initialised
 * it, for Unbound Steady's cache-hit benchmark (bench/cache_hits.py):
 * unbound's lock_quick locks are pthread spinlocks, and a table lock is
 * the one that lruhash_create() initialises.
 *
 * While the process runs, creating the file $SPINCOUNT_OUT.req makes it
 * write a snapshot to $SPINCOUNT_OUT.N (N counts from 1) and remove the
 * request: one line "OFFSET COUNT" per initialising call site, where
 * OFFSET is the return address of the pthread_spin_init() call in its
 * object, in hex (addr2line -f -e BINARY OFFSET names the function), and
 * COUNT the pthread_spin_lock() calls on the locks that site made.
 *
 * build: cc -O2 -shared -fPIC -o spincount.so spincount.c -ldl -lpthread
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/** slots of the open addressed table of locks */
#define NSLOT (1u << 22)

/** one lock: its address, its initialiser's return address, its count */
struct slot {
	/** the lock, 0 if the slot is free */
	uintptr_t lock;
	/** return address of the pthread_spin_init that made it */
	uintptr_t init_ra;
	/** pthread_spin_lock calls on it */
	unsigned long count;
};

/** the locks seen */
static struct slot* tab;
/** libc's functions */
static int (*real_init)(pthread_spinlock_t*, int);
/** libc's functions */
static int (*real_lock)(pthread_spinlock_t*);

/** the slot of lock l, made if new (lock-free insert by CAS) */
static struct slot*
find(uintptr_t l)
{
	uint64_t h = (uint64_t)l * 0x9E3779B97F4A7C15ULL;
	size_t i = (size_t)(h >> 40) & (NSLOT - 1), n;
	for(n = 0; n < NSLOT; n++, i = (i + 1) & (NSLOT - 1)) {
		uintptr_t cur = __atomic_load_n(&tab[i].lock, __ATOMIC_ACQUIRE);
		if(cur == l)
			return &tab[i];
		if(cur == 0) {
			uintptr_t zero = 0;
			if(__atomic_compare_exchange_n(&tab[i].lock, &zero, l,
				0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
				return &tab[i];
			if(zero == l)
				return &tab[i];
		}
	}
	return NULL;
}

int
pthread_spin_init(pthread_spinlock_t* l, int pshared)
{
	struct slot* s;
	if(!real_init)
		real_init = dlsym(RTLD_NEXT, "pthread_spin_init");
	if(tab && (s = find((uintptr_t)l)) != NULL)
		__atomic_store_n(&s->init_ra,
			(uintptr_t)__builtin_return_address(0),
			__ATOMIC_RELAXED);
	return real_init(l, pshared);
}

int
pthread_spin_lock(pthread_spinlock_t* l)
{
	struct slot* s;
	if(!real_lock)
		real_lock = dlsym(RTLD_NEXT, "pthread_spin_lock");
	if(tab && (s = find((uintptr_t)l)) != NULL)
		__atomic_fetch_add(&s->count, 1, __ATOMIC_RELAXED);
	return real_lock(l);
}

/** write the counts per initialising call site to file name */
static void
dump(const char* name)
{
	FILE* f = fopen(name, "w");
	size_t i;
	if(!f)
		return;
	for(i = 0; i < NSLOT; i++) {
		Dl_info info;
		uintptr_t ra = __atomic_load_n(&tab[i].init_ra,
			__ATOMIC_RELAXED);
		unsigned long c = __atomic_load_n(&tab[i].count,
			__ATOMIC_RELAXED);
		if(!tab[i].lock || !c)
			continue;
		if(ra && dladdr((void*)ra, &info) && info.dli_fbase)
			ra -= (uintptr_t)info.dli_fbase;
		fprintf(f, "%lx %lu\n", (unsigned long)ra, c);
	}
	fclose(f);
}

/** write a snapshot whenever $SPINCOUNT_OUT.req appears */
static void*
watch(void* arg)
{
	const char* out = arg;
	char req[4096], snap[4096];
	int n = 0;
	snprintf(req, sizeof(req), "%s.req", out);
	for(;;) {
		usleep(20000);
		if(access(req, F_OK) != 0)
			continue;
		snprintf(snap, sizeof(snap), "%s.%d", out, ++n);
		dump(snap);
		unlink(req);
	}
	return NULL;
}

/** set up the table and the watcher when $SPINCOUNT_OUT is set */
__attribute__((constructor)) static void
start(void)
{
	pthread_t t;
	const char* out = getenv("SPINCOUNT_OUT");
	if(!out)
		return;
	tab = calloc(NSLOT, sizeof(*tab));
	if(tab)
		pthread_create(&t, NULL, watch, (void*)out);
}
