/*
 * crashshim.c: LD_PRELOAD shim for testcode/test_zone_crash_points.py.
 * It counts the operations that change what is on disk under one
 * directory (the zonefiles and their journals) and ends the process with
 * _exit(), as a crash would, just before the k-th of them; the test runs
 * the daemon once for every k and checks what a restart finds on disk.
 *
 * The operations counted, each on a file whose path (for a descriptor:
 * /proc/self/fd) starts with the directory, or on the directory itself:
 *   open     an open() or openat() for writing (O_WRONLY, O_RDWR, O_CREAT)
 *   fwrite   the first fwrite() to a stream: the data of a stream is in
 *            its buffer, not on disk, until fflush(), so one crash before
 *            any of them stands for a crash before each
 *   fflush, fclose, write, fsync, fdatasync, ftruncate, close (of a
 *            descriptor opened for writing, or of the directory),
 *   rename   (the target, or the source, under the directory), unlink.
 *
 * Built by the test: cc -shared -fPIC -o crashshim.so crashshim.c -ldl
 *
 * Environment:
 *   STEADY_CRASH_DIR   the directory (an absolute path, no trailing /)
 *   STEADY_CRASH_AT    end the process before this operation (1 is the
 *                      first); 0 or unset: count only
 *   STEADY_CRASH_LOG   append "N OP PATH" for every operation counted
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/** operations counted so far, under the lock */
static unsigned long count;
/** the count and the log are shared by the daemon's threads */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/** the stream that had its first fwrite() last */
static FILE* written;

/** the path of a descriptor, or "" */
static void
fd_path(int fd, char* buf, size_t len)
{
	char proc[64];
	ssize_t n;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, buf, len-1);
	buf[n > 0 ? n : 0] = 0;
}

/** whether path is the directory or under it */
static int
watched(const char* path)
{
	const char* dir = getenv("STEADY_CRASH_DIR");
	size_t n;
	if(!dir || !*dir || !path)
		return 0;
	n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == 0 || path[n] == '/');
}

/** count an operation on path; ends the process when it is the one */
static void
op(const char* what, const char* path)
{
	const char* at = getenv("STEADY_CRASH_AT");
	const char* logname = getenv("STEADY_CRASH_LOG");
	unsigned long n;
	if(!watched(path))
		return;
	pthread_mutex_lock(&lock);
	n = ++count;
	if(logname) {
		FILE* (*real_fopen)(const char*, const char*) =
			(FILE*(*)(const char*, const char*))dlsym(RTLD_NEXT,
			"fopen");
		size_t (*real_fwrite)(const void*, size_t, size_t, FILE*) =
			(size_t(*)(const void*, size_t, size_t, FILE*))dlsym(
			RTLD_NEXT, "fwrite");
		int (*real_fclose)(FILE*) = (int(*)(FILE*))dlsym(RTLD_NEXT,
			"fclose");
		FILE* f = real_fopen(logname, "a");
		if(f) {
			char line[1200];
			int len = snprintf(line, sizeof(line), "%lu %s %s\n",
				n, what, path);
			if(len > 0)
				real_fwrite(line, 1, (size_t)len, f);
			real_fclose(f);
		}
	}
	if(at && atol(at) > 0 && (unsigned long)atol(at) == n)
		_exit(75);
	pthread_mutex_unlock(&lock);
}

/** count an operation on a descriptor */
static void
fd_op(const char* what, int fd)
{
	char path[1024];
	fd_path(fd, path, sizeof(path));
	op(what, path);
}

/** whether a descriptor is open for writing, or is a directory */
static int
fd_written(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	struct stat st;
	if(fl != -1 && (fl & O_ACCMODE) != O_RDONLY)
		return 1;
	return fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
}

/** open() and open64(): an open for writing is counted; the mode is
 * passed on when O_CREAT has one */
static int
open_counted(const char* sym, const char* path, int flags, va_list ap)
{
	int (*real)(const char*, int, ...) = (int(*)(const char*, int, ...))
		dlsym(RTLD_NEXT, sym);
	mode_t mode = 0;
	if(flags & O_CREAT)
		mode = (mode_t)va_arg(ap, int);
	if((flags & (O_WRONLY|O_RDWR|O_CREAT)))
		op("open", path);
	return real(path, flags, mode);
}

int
open(const char* path, int flags, ...)
{
	va_list ap;
	int r;
	va_start(ap, flags);
	r = open_counted("open", path, flags, ap);
	va_end(ap);
	return r;
}

int
open64(const char* path, int flags, ...)
{
	va_list ap;
	int r;
	va_start(ap, flags);
	r = open_counted("open64", path, flags, ap);
	va_end(ap);
	return r;
}

size_t
fwrite(const void* ptr, size_t size, size_t nmemb, FILE* f)
{
	static size_t (*real)(const void*, size_t, size_t, FILE*);
	if(!real)
		real = (size_t(*)(const void*, size_t, size_t, FILE*))dlsym(
			RTLD_NEXT, "fwrite");
	if(f != written) {
		written = f;
		fd_op("fwrite", fileno(f));
	}
	return real(ptr, size, nmemb, f);
}

int
fflush(FILE* f)
{
	static int (*real)(FILE*);
	if(!real)
		real = (int(*)(FILE*))dlsym(RTLD_NEXT, "fflush");
	if(f)
		fd_op("fflush", fileno(f));
	return real(f);
}

int
fclose(FILE* f)
{
	static int (*real)(FILE*);
	if(!real)
		real = (int(*)(FILE*))dlsym(RTLD_NEXT, "fclose");
	if(f == written)
		written = NULL;
	if(fd_written(fileno(f)))
		fd_op("fclose", fileno(f));
	return real(f);
}

ssize_t
write(int fd, const void* buf, size_t len)
{
	static ssize_t (*real)(int, const void*, size_t);
	if(!real)
		real = (ssize_t(*)(int, const void*, size_t))dlsym(RTLD_NEXT,
			"write");
	fd_op("write", fd);
	return real(fd, buf, len);
}

int
fsync(int fd)
{
	static int (*real)(int);
	if(!real)
		real = (int(*)(int))dlsym(RTLD_NEXT, "fsync");
	fd_op("fsync", fd);
	return real(fd);
}

int
fdatasync(int fd)
{
	static int (*real)(int);
	if(!real)
		real = (int(*)(int))dlsym(RTLD_NEXT, "fdatasync");
	fd_op("fdatasync", fd);
	return real(fd);
}

int
ftruncate(int fd, off_t len)
{
	static int (*real)(int, off_t);
	if(!real)
		real = (int(*)(int, off_t))dlsym(RTLD_NEXT, "ftruncate");
	fd_op("ftruncate", fd);
	return real(fd, len);
}

int
close(int fd)
{
	static int (*real)(int);
	if(!real)
		real = (int(*)(int))dlsym(RTLD_NEXT, "close");
	if(fd >= 0 && fd_written(fd))
		fd_op("close", fd);
	return real(fd);
}

int
rename(const char* from, const char* to)
{
	static int (*real)(const char*, const char*);
	if(!real)
		real = (int(*)(const char*, const char*))dlsym(RTLD_NEXT,
			"rename");
	op("rename", watched(to)?to:from);
	return real(from, to);
}

int
unlink(const char* path)
{
	static int (*real)(const char*);
	if(!real)
		real = (int(*)(const char*))dlsym(RTLD_NEXT, "unlink");
	op("unlink", path);
	return real(path);
}
