/*
 * bench/zonefile_write.c - time auth_zone_write_file(), the zonefile
 * writer that a secondary runs after every zone transfer, on a zone read
 * from a zonefile. Built against a build of stock or of the fork by
 * bench/zonefile_write.py, which runs both side by side.
 *
 * usage: zonefile_write ZONEFILE ORIGIN RUNS OUTFILE
 * Prints one line per run: ms=<milliseconds of the write>.
 */
#include "config.h"
#include "services/authzone.h"
#include "util/config_file.h"
#include "util/log.h"
#include "util/data/dname.h"
#include "sldns/str2wire.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/** milliseconds since some fixed point */
static double
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec*1000.0 + ts.tv_nsec/1e6;
}

/** read the zone, write it RUNS times */
int
main(int argc, char** argv)
{
	uint8_t nm[LDNS_MAX_DOMAINLEN+1];
	size_t nmlen = sizeof(nm);
	struct auth_zones* az;
	struct auth_zone* z;
	struct config_file* cfg;
	int i, runs;
	double t0;
	if(argc != 5) {
		fprintf(stderr, "usage: zonefile_write ZONEFILE ORIGIN RUNS "
			"OUTFILE\n");
		return 2;
	}
	log_init(NULL, 0, NULL);
	runs = atoi(argv[3]);
	if(sldns_str2wire_dname_buf(argv[2], nm, &nmlen) != 0) {
		fprintf(stderr, "bad origin %s\n", argv[2]);
		return 1;
	}
	az = auth_zones_create();
	cfg = config_create();
	if(!az || !cfg) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	z = auth_zone_create(az, nm, nmlen, LDNS_RR_CLASS_IN);
	if(!z) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	z->zonefile = strdup(argv[1]);
	if(!z->zonefile || !auth_zone_read_zonefile(z, cfg)) {
		fprintf(stderr, "cannot read %s\n", argv[1]);
		return 1;
	}
	for(i=0; i<runs; i++) {
		t0 = now_ms();
		if(!auth_zone_write_file(z, argv[4])) {
			fprintf(stderr, "write failed\n");
			return 1;
		}
		printf("ms=%.1f\n", now_ms() - t0);
		fflush(stdout);
	}
	lock_rw_unlock(&z->lock);
	auth_zones_delete(az);
	config_delete(cfg);
	return 0;
}
