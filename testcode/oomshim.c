/*
 * oomshim.c: LD_PRELOAD shim for testcode/test_zone_oom.py and the other
 * allocation-failure tests. It makes chosen allocations fail, and holds a
 * zonefile write half way, both only
 * while a trigger file exists, so that the test decides when.
 *
 * Built by the test: cc -shared -fPIC -o oomshim.so oomshim.c -ldl
 * Under AddressSanitizer it goes first in LD_PRELOAD, before ASan's
 * runtime (ASAN_OPTIONS=verify_asan_link_order=0), so that its calloc,
 * strdup and fwrite are the ones the program calls; they call ASan's.
 *
 * Environment:
 *   STEADY_OOM_CALLOC_TRIGGER  a path: while it exists, calloc() of
 *                       exactly STEADY_OOM_SIZE bytes returns NULL (ENOMEM)
 *   STEADY_OOM_SIZE     the size (nmemb*size) of the callocs to fail
 *   STEADY_OOM_MALLOC   if set, malloc()s of STEADY_OOM_SIZE fail too,
 *                       counted with the callocs: a compiler may make
 *                       malloc and memset one calloc, or not (ASan)
 *   STEADY_OOM_STRDUP_TRIGGER  a path: while it exists, strdup() of the
 *                       string STEADY_OOM_STRDUP returns NULL (ENOMEM)
 *   STEADY_OOM_STRDUP   the string whose strdups fail
 *   STEADY_OOM_SKIP     the first this many matching allocations after
 *                       a trigger appeared succeed (fail the Nth: N-1)
 *   STEADY_OOM_TIMES    only this many matching allocations fail after
 *                       those skipped (default: all of them)
 *   STEADY_HOLD         a path: while it exists, the fwrite() number
 *                       STEADY_HOLD_AT to a file whose name contains
 *                       ".tmp" waits (the writer is half way its file)
 *   STEADY_HOLD_AT      default 1000
 *   STEADY_HOLD_CALLOC  a path: while it exists, a calloc() of exactly
 *                       STEADY_HOLD_SIZE bytes waits until it is removed
 *                       (the caller is held in the middle of its work)
 *   STEADY_HOLD_SIZE    the size (nmemb*size) of the callocs to hold
 *   STEADY_HOLD_DIGEST  a path: while it exists, an EVP_DigestUpdate() of
 *                       exactly STEADY_HOLD_DIGEST_LEN bytes waits until
 *                       it is removed (a ZONEMD hash is held at the rrset
 *                       of that canonical length)
 *   STEADY_HOLD_DIGEST_LEN  the length of the digest updates to hold
 *   STEADY_OOM_NTH_TRIGGER  a path: while it exists, every malloc() and
 *                       calloc() is counted, in all threads, and the one
 *                       numbered STEADY_OOM_NTH (from 1) returns NULL:
 *                       the allocation-failure sweep of
 *                       test_zone_alloc_sweep.py. The failure is logged
 *                       as "fail nth N malloc|calloc SIZE" (under ASan
 *                       its stack goes to stderr), and the count as
 *                       "count nth C" when the process exits
 *   STEADY_OOM_NTH      the number of the allocation to fail
 *   STEADY_OOM_LOG      a file; a line is appended for every failed
 *                       allocation ("fail calloc 392", "fail strdup S")
 *                       and for a write that is held ("hold PATH") and
 *                       goes on ("release PATH"), likewise for a calloc
 *                       ("hold calloc N", "release calloc N") and a
 *                       digest update ("hold digest N", "release digest N")
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void* (*real_calloc)(size_t, size_t);
static void* (*real_malloc)(size_t);
static void (*real_free)(void*);
static char* (*real_strdup)(const char*);
static size_t (*real_fwrite)(const void*, size_t, size_t, FILE*);

/* dlsym may allocate before real_calloc is known; that memory is never
 * freed, it is not ASan's */
static char boot[65536];
static size_t boot_used;
static int resolving;

/* matching allocations seen while the trigger existed */
static unsigned long matched_calloc, matched_strdup;

static int
exists(const char* env)
{
	const char* p = getenv(env);
	struct stat st;
	return p && *p && stat(p, &st) == 0;
}

static void
note(const char* what, const char* arg)
{
	const char* p = getenv("STEADY_OOM_LOG");
	char line[1200];
	int fd, n;
	if(!p || !*p)
		return;
	n = snprintf(line, sizeof(line), "%s %s\n", what, arg);
	if(n < 0 || (size_t)n >= sizeof(line))
		return;
	fd = open(p, O_WRONLY|O_APPEND|O_CREAT, 0644);
	if(fd == -1)
		return;
	if(write(fd, line, (size_t)n) < 0) {
		/* nothing to do */
	}
	close(fd);
}

/* wait while the trigger file named by env exists; logged as "hold KIND
 * ARG" and "release KIND ARG" (KIND empty for a write: "hold PATH") */
static void
hold_while(const char* env, const char* kind, const char* arg)
{
	char what[32];
	snprintf(what, sizeof(what), "hold%s", kind);
	note(what, arg);
	while(exists(env))
		usleep(10000);
	snprintf(what, sizeof(what), "release%s", kind);
	note(what, arg);
}

/* allocations counted while STEADY_OOM_NTH_TRIGGER existed */
static unsigned long nth_count;

/* AddressSanitizer's stack printer, when it is loaded; its unwinder does
 * not allocate, as backtrace() does (it loads libgcc) */
extern void __sanitizer_print_stack_trace(void) __attribute__((weak));

/* true if this allocation is number STEADY_OOM_NTH of those made while
 * STEADY_OOM_NTH_TRIGGER exists; then it is logged, and under ASan its
 * stack is printed to stderr */
static int
nth_fail(const char* kind, size_t size)
{
	const char* s = getenv("STEADY_OOM_NTH");
	unsigned long n;
	char b[64];
	if(!s || !*s || !exists("STEADY_OOM_NTH_TRIGGER"))
		return 0;
	n = __atomic_add_fetch(&nth_count, 1, __ATOMIC_SEQ_CST);
	if(n != strtoul(s, NULL, 10))
		return 0;
	snprintf(b, sizeof(b), "%lu %s %lu", n, kind, (unsigned long)size);
	note("fail nth", b);
	if(__sanitizer_print_stack_trace) {
		fprintf(stderr, "oomshim: fail nth %s, at:\n", b);
		__sanitizer_print_stack_trace();
	}
	return 1;
}

/* the count of the sweep, when the process exits */
static void __attribute__((destructor))
nth_report(void)
{
	char b[32];
	const char* s = getenv("STEADY_OOM_NTH");
	if(!s || !*s)
		return;
	snprintf(b, sizeof(b), "%lu", __atomic_load_n(&nth_count,
		__ATOMIC_SEQ_CST));
	note("count nth", b);
}

/* true if this matching allocation is to fail */
static int
fail_now(const char* trigger, unsigned long* matched)
{
	const char* s = getenv("STEADY_OOM_SKIP");
	const char* t = getenv("STEADY_OOM_TIMES");
	unsigned long skip = s ? strtoul(s, NULL, 10) : 0, n;
	if(!exists(trigger)) {
		__atomic_store_n(matched, 0, __ATOMIC_SEQ_CST);
		return 0;
	}
	n = __atomic_fetch_add(matched, 1, __ATOMIC_SEQ_CST);
	return n >= skip && (!t || !*t || n - skip < strtoul(t, NULL, 10));
}

void*
calloc(size_t nmemb, size_t size)
{
	const char* s;
	if(!real_calloc) {
		void* p;
		size_t n = (nmemb*size + 15) & ~(size_t)15;
		if(!resolving) {
			resolving = 1;
			real_calloc = (void*(*)(size_t, size_t))dlsym(
				RTLD_NEXT, "calloc");
			resolving = 0;
		}
		if(!real_calloc) {
			/* called by dlsym */
			if(boot_used + n > sizeof(boot))
				return NULL;
			p = boot + boot_used;
			boot_used += n;
			return p; /* static memory is zero */
		}
	}
	s = getenv("STEADY_HOLD_SIZE");
	if(s && *s && nmemb*size == strtoul(s, NULL, 10) &&
		exists("STEADY_HOLD_CALLOC")) {
		char b[32];
		snprintf(b, sizeof(b), "%lu", (unsigned long)(nmemb*size));
		hold_while("STEADY_HOLD_CALLOC", " calloc", b);
	}
	s = getenv("STEADY_OOM_SIZE");
	if(s && *s && nmemb*size == strtoul(s, NULL, 10) &&
		fail_now("STEADY_OOM_CALLOC_TRIGGER", &matched_calloc)) {
		char b[32];
		snprintf(b, sizeof(b), "%lu", (unsigned long)(nmemb*size));
		note("fail calloc", b);
		errno = ENOMEM;
		return NULL;
	}
	if(nth_fail("calloc", nmemb*size)) {
		errno = ENOMEM;
		return NULL;
	}
	return real_calloc(nmemb, size);
}

/* AddressSanitizer's allocator, when it is loaded: found without dlsym,
 * which allocates and frees while ASan starts */
extern void* __interceptor_malloc(size_t) __attribute__((weak));
extern void __interceptor_free(void*) __attribute__((weak));

/* true if p is of the memory handed out while dlsym was resolving */
static int
is_boot(void* p)
{
	return (char*)p >= boot && (char*)p < boot + sizeof(boot);
}

void*
malloc(size_t size)
{
	/* initial-exec: the general model's __tls_get_addr does not work
	 * yet when the dynamic loader calls malloc at start-up */
	static __thread int inside __attribute__((tls_model("initial-exec")));
	const char* s;
	void* p;
	if(!real_malloc && __interceptor_malloc)
		real_malloc = __interceptor_malloc;
	if(!real_malloc && !resolving && !inside) {
		resolving = 1;
		real_malloc = (void*(*)(size_t))dlsym(RTLD_NEXT, "malloc");
		resolving = 0;
	}
	if(!real_malloc) {
		/* called by dlsym, or before the next malloc can be found
		 * (ASan's start); free() leaves this memory alone */
		size_t n = (size + 15) & ~(size_t)15;
		if(boot_used + n > sizeof(boot))
			return NULL;
		p = boot + boot_used;
		boot_used += n;
		return p;
	}
	if(inside)
		return real_malloc(size);
	inside = 1;
	s = getenv("STEADY_OOM_SIZE");
	if(s && *s && getenv("STEADY_OOM_MALLOC") && size == strtoul(s, NULL,
		10) && fail_now("STEADY_OOM_CALLOC_TRIGGER", &matched_calloc)) {
		char b[32];
		snprintf(b, sizeof(b), "%lu", (unsigned long)size);
		note("fail malloc", b);
		inside = 0;
		errno = ENOMEM;
		return NULL;
	}
	if(nth_fail("malloc", size)) {
		inside = 0;
		errno = ENOMEM;
		return NULL;
	}
	p = real_malloc(size);
	inside = 0;
	return p;
}

void
free(void* p)
{
	/* what dlsym frees while it finds free (an old dlerror string),
	 * freed after it */
	static void* pending[8];
	static int finding;
	int i;
	if(!p || is_boot(p))
		return;
	if(!real_free && __interceptor_free)
		real_free = __interceptor_free;
	if(!real_free) {
		if(finding) {
			for(i = 0; i < 8; i++) {
				if(!pending[i]) {
					pending[i] = p;
					break;
				}
			}
			return;
		}
		finding = 1;
		real_free = (void(*)(void*))dlsym(RTLD_NEXT, "free");
		finding = 0;
		for(i = 0; i < 8 && real_free; i++) {
			if(pending[i])
				real_free(pending[i]);
			pending[i] = NULL;
		}
		if(!real_free)
			return;
	}
	real_free(p);
}

char*
strdup(const char* str)
{
	const char* s = getenv("STEADY_OOM_STRDUP");
	if(!real_strdup)
		real_strdup = (char*(*)(const char*))dlsym(RTLD_NEXT, "strdup");
	if(s && *s && strcmp(str, s) == 0 &&
		fail_now("STEADY_OOM_STRDUP_TRIGGER", &matched_strdup)) {
		note("fail strdup", str);
		errno = ENOMEM;
		return NULL;
	}
	return real_strdup(str);
}

/* the file a writer thread writes to now, and how many fwrites it had;
 * the zonefile writer creates its file with open and fdopen */
static __thread FILE* cur;
static __thread int cur_tmp;
static __thread unsigned long cur_count;
static __thread char cur_name[1024];

/* a FILE of a new file may have the address of one that was closed */
FILE*
fdopen(int fd, const char* mode)
{
	static FILE* (*real_fdopen)(int, const char*);
	if(!real_fdopen)
		real_fdopen = (FILE*(*)(int, const char*))dlsym(RTLD_NEXT,
			"fdopen");
	cur = NULL;
	return real_fdopen(fd, mode);
}

size_t
fwrite(const void* ptr, size_t size, size_t nmemb, FILE* f)
{
	if(!real_fwrite)
		real_fwrite = (size_t(*)(const void*, size_t, size_t, FILE*))
			dlsym(RTLD_NEXT, "fwrite");
	if(f != cur) {
		char proc[64];
		ssize_t n;
		cur = f;
		cur_count = 0;
		cur_tmp = 0;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fileno(f));
		n = readlink(proc, cur_name, sizeof(cur_name)-1);
		if(n > 0) {
			cur_name[n] = 0;
			cur_tmp = (strstr(cur_name, ".tmp") != NULL);
		}
	}
	if(cur_tmp) {
		const char* at = getenv("STEADY_HOLD_AT");
		if(++cur_count == (at ? strtoul(at, NULL, 10) : 1000) &&
			exists("STEADY_HOLD")) {
			hold_while("STEADY_HOLD", "", cur_name);
		}
	}
	return real_fwrite(ptr, size, nmemb, f);
}

/* declared here, not from openssl's headers, so that the shim builds
 * without them; the program's calls to libcrypto's come here first */
int
EVP_DigestUpdate(void* ctx, const void* d, size_t cnt)
{
	static int (*real_update)(void*, const void*, size_t);
	const char* s = getenv("STEADY_HOLD_DIGEST_LEN");
	if(!real_update)
		real_update = (int(*)(void*, const void*, size_t))dlsym(
			RTLD_NEXT, "EVP_DigestUpdate");
	if(s && *s && cnt == strtoul(s, NULL, 10) &&
		exists("STEADY_HOLD_DIGEST")) {
		char b[32];
		snprintf(b, sizeof(b), "%lu", (unsigned long)cnt);
		hold_while("STEADY_HOLD_DIGEST", " digest", b);
	}
	return real_update(ctx, d, cnt);
}
