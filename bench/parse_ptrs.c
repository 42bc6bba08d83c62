/*
 * bench/parse_ptrs.c - time the parse of one DNS answer, as a resolver
 * parses an upstream's answer (reply_info_parse: parse_packet, the EDNS
 * record, the reply_info), for issue 43 (CVE-2026-96405: name
 * decompression work). Built against a build of stock or of the fork by
 * bench/parse_ptrs.py, which makes the messages and runs both.
 *
 * usage: parse_ptrs MSGFILE RUNS
 * Prints: rcode=<parse result, 0 is parsed> bytes=<message size>
 * us=<microseconds per parse, the median of RUNS batches>
 */
#include "config.h"
#include "util/data/msgreply.h"
#include "util/data/msgparse.h"
#include "util/alloc.h"
#include "util/regional.h"
#include "sldns/sbuffer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/** microseconds since some fixed point */
static double
now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec*1e6 + ts.tv_nsec/1e3;
}

/** sort doubles */
static int
cmp_double(const void* a, const void* b)
{
	double x = *(const double*)a, y = *(const double*)b;
	return (x > y) - (x < y);
}

/** parse the message once; the parse result */
static int
parse_once(sldns_buffer* pkt, struct alloc_cache* alloc,
	struct regional* region)
{
	struct query_info qinf;
	struct reply_info* rep = NULL;
	struct edns_data edns;
	int r;
	memset(&edns, 0, sizeof(edns));
	r = reply_info_parse(pkt, alloc, &qinf, &rep, region, &edns);
	reply_info_parsedelete(rep, alloc);
	regional_free_all(region);
	return r;
}

/** read the message, time RUNS batches of parses */
int
main(int argc, char** argv)
{
	static uint8_t data[65536];
	double* batch;
	struct alloc_cache alloc;
	struct regional* region;
	sldns_buffer* pkt;
	size_t len, per;
	int runs, i, r;
	FILE* f;
	if(argc != 3) {
		fprintf(stderr, "usage: parse_ptrs MSGFILE RUNS\n");
		return 2;
	}
	runs = atoi(argv[2]);
	if(runs < 1 || !(f = fopen(argv[1], "rb")))
		return 2;
	len = fread(data, 1, sizeof(data), f);
	fclose(f);
	pkt = sldns_buffer_new(len);
	region = regional_create();
	batch = calloc((size_t)runs, sizeof(double));
	if(!pkt || !region || !batch)
		return 1;
	sldns_buffer_write(pkt, data, len);
	sldns_buffer_flip(pkt);
	alloc_init(&alloc, NULL, 1);
	r = parse_once(pkt, &alloc, region);
	/* a batch takes about 20 ms, so the clock's steps do not count */
	{
		double t0 = now_us();
		per = 0;
		while(now_us() - t0 < 20000.0 && per < 1000000) {
			(void)parse_once(pkt, &alloc, region);
			per++;
		}
	}
	for(i = 0; i < runs; i++) {
		size_t n;
		double t0 = now_us();
		for(n = 0; n < per; n++)
			(void)parse_once(pkt, &alloc, region);
		batch[i] = (now_us() - t0) / (double)per;
	}
	qsort(batch, (size_t)runs, sizeof(double), cmp_double);
	printf("rcode=%d bytes=%u us=%.3f\n", r, (unsigned)len,
		batch[runs/2]);
	alloc_clear(&alloc);
	regional_destroy(region);
	sldns_buffer_free(pkt);
	free(batch);
	return 0;
}
