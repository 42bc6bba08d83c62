/*
 * testcode/fuzz/zonefile_read.c - libFuzzer target: arbitrary bytes as a
 * zonefile for auth_zone_read_zonefile(). It must not crash, leak (the
 * fuzzer's leak check) or hang; whether it accepts the file does not
 * matter. A zone that was read is also written out again with
 * auth_zone_write_file(), the fork's writer.
 *
 * The file is written in a directory of its own, which is the current
 * directory: $INCLUDE of a relative name reaches only that directory (the
 * zonefile itself: recursion to the depth limit), and an $INCLUDE line
 * that names another directory is blanked, so that the fuzzer does not
 * read /dev/zero or a fifo. Built with the fork's objects by
 * testcode/fuzz/build.sh; includes services/authzone.c.
 */
#include "services/authzone.c"
#include <sys/stat.h>
#include <unistd.h>

/** config, for the reader */
static struct config_file* zr_cfg = NULL;
/** the zonefile, in the current directory */
static const char* zr_file = "zonefile-read.zone";
/** the file written back */
static const char* zr_out = "zonefile-read.out";

/** libFuzzer start: a directory of our own, the config */
int LLVMFuzzerInitialize(int* argc, char*** argv);
int
LLVMFuzzerInitialize(int* ATTR_UNUSED(argc), char*** ATTR_UNUSED(argv))
{
	char dir[256];
	const char* tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/zonefile-read.%d", tmp?tmp:"/tmp",
		(int)getpid());
	if(mkdir(dir, 0700) != 0 && errno != EEXIST)
		fatal_exit("mkdir %s: %s", dir, strerror(errno));
	if(chdir(dir) != 0)
		fatal_exit("chdir %s: %s", dir, strerror(errno));
	zr_cfg = config_create();
	if(!zr_cfg)
		fatal_exit("out of memory");
	log_init(NULL, 0, NULL);
	verbosity = 0;
	return 0;
}

/** blank $INCLUDE lines that name a file outside the directory */
static void
zr_blank_includes(uint8_t* d, size_t n)
{
	size_t i, j;
	for(i=0; i+8 <= n; i++) {
		if(memcmp(d+i, "$INCLUDE", 8) != 0)
			continue;
		for(j=i; j<n && d[j] != '\n'; j++)
			if(d[j] == '/' || (d[j] == '.' && j+1<n &&
				d[j+1] == '.'))
				break;
		if(j<n && d[j] != '\n')
			d[i] = ';';
	}
}

/** libFuzzer entry: read the bytes as a zonefile */
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
	/* apex: "example." */
	static uint8_t apex[] = "\007example\000";
	struct auth_zones* az = auth_zones_create();
	struct auth_zone* z;
	uint8_t* copy = malloc(size+1);
	FILE* f;
	if(!az || !copy)
		fatal_exit("out of memory");
	memcpy(copy, data, size);
	zr_blank_includes(copy, size);
	f = fopen(zr_file, "w");
	if(!f || fwrite(copy, 1, size, f) != size || fclose(f) != 0)
		fatal_exit("cannot write %s", zr_file);
	free(copy);
	z = auth_zone_create(az, apex, sizeof(apex)-1, LDNS_RR_CLASS_IN);
	if(!z)
		fatal_exit("auth_zone_create failed");
	lock_rw_unlock(&z->lock);
	z->zonefile = strdup(zr_file);
	if(!z->zonefile)
		fatal_exit("out of memory");
	if(auth_zone_read_zonefile(z, zr_cfg)) {
		/* what was read can be written */
		if(!auth_zone_write_file(z, zr_out)) {
			printf("zonefile read: a zone that was read cannot be "
				"written\n");
			abort();
		}
	}
	auth_zones_delete(az);
	return 0;
}
