/*
 * slowshim.c: LD_PRELOAD shim for testcode/test_zone_reload.py. While a
 * trigger file exists, it slows down every zonefile write of unbound (the
 * fwrite()s to a file whose name contains ".tmp"), so that writes stay
 * queued on the auth-zone I/O thread for as long as the test needs, the
 * way writes of large zones on a slow disk do.
 *
 * Built by the test: cc -shared -fPIC -o slowshim.so slowshim.c -ldl
 *
 * Environment:
 *   STEADY_SLOW        a path: while it exists, writes are slowed
 *   STEADY_SLOW_USEC   sleep this many microseconds (default 10000) ...
 *   STEADY_SLOW_EVERY  ... every this many fwrite()s to the file (100)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t (*real_fwrite)(const void*, size_t, size_t, FILE*);

/* the file this thread writes to now, whether it is a temp file, and how
 * many fwrites it had */
static __thread FILE* cur;
static __thread int cur_tmp;
static __thread unsigned long cur_count;

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
	const char* trig;
	struct stat st;
	if(!real_fwrite)
		real_fwrite = (size_t(*)(const void*, size_t, size_t, FILE*))
			dlsym(RTLD_NEXT, "fwrite");
	if(f != cur) {
		char proc[64], name[1024];
		ssize_t n;
		cur = f;
		cur_count = 0;
		cur_tmp = 0;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fileno(f));
		n = readlink(proc, name, sizeof(name)-1);
		if(n > 0) {
			name[n] = 0;
			cur_tmp = (strstr(name, ".tmp") != NULL);
		}
	}
	trig = getenv("STEADY_SLOW");
	if(cur_tmp && trig && *trig) {
		const char* e = getenv("STEADY_SLOW_EVERY");
		const char* u = getenv("STEADY_SLOW_USEC");
		unsigned long every = e ? strtoul(e, NULL, 10) : 100;
		if(every == 0)
			every = 1;
		if(++cur_count % every == 0 && stat(trig, &st) == 0)
			usleep((useconds_t)(u ? strtoul(u, NULL, 10) : 10000));
	}
	return real_fwrite(ptr, size, nmemb, f);
}
