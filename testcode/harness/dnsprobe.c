/*
 * testcode/harness/dnsprobe.c - a DNS latency probe for Unbound Steady's zone
 * transfer tests and benchmarks.
 *
 * Sends A queries for one name to a server at a fixed rate, spread over
 * many UDP source ports (so that SO_REUSEPORT spreads them over the
 * server's threads), for a fixed time, and measures every answer. A
 * query that has no answer after the timeout is lost. Prints a summary
 * line of key=value pairs; with -o it also writes one line per query,
 * "send_time_us latency_us socket", with the send time on the
 * CLOCK_MONOTONIC clock (the clock of Python's time.monotonic()) and
 * latency -1 for a lost query, so that windows of time can be analysed.
 *
 * A NAME that starts with "%r." gets a new random first label for every
 * query (a cache miss each, as dnsperf's udp-random). With -w N the
 * first label cycles through N labels instead, the same in every run (a
 * warm set of N names for cache hits): label i is the 12 hex digits of
 * i, least significant first (harness.load.warm_names writes them).
 *
 * SIGTERM ends the run early, as if SECONDS were over: the outstanding
 * queries get their timeout, then the summary and FILE are written.
 *
 * usage: dnsprobe -p PORT -q NAME [-s ADDR] [-r RATE] [-n SOCKETS]
 *                 [-d SECONDS] [-t TIMEOUT_MS] [-o FILE] [-w N]
 */
#define _GNU_SOURCE /* ppoll */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/** the most source ports */
#define MAX_SOCKS 128

/** set by SIGTERM: end the run now */
static volatile sig_atomic_t stop_now = 0;

/** SIGTERM handler */
static void
on_sigterm(int sig)
{
	(void)sig;
	stop_now = 1;
}

/** one query */
struct query {
	/** send time, ns */
	int64_t sent;
	/** latency, ns, or -1 if lost, or -2 while outstanding */
	int64_t lat;
	/** socket index */
	int sock;
};

/** CLOCK_MONOTONIC now in ns */
static int64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/** write a query for name with id into buf, return its length, or 0 */
static size_t
make_query(uint8_t* buf, size_t max, const char* name)
{
	size_t pos = 12;
	const char* p = name, *dot;
	memset(buf, 0, 12);
	buf[2] = 0x01; /* RD */
	buf[5] = 1; /* QDCOUNT */
	while(*p) {
		size_t len;
		dot = strchr(p, '.');
		len = dot ? (size_t)(dot - p) : strlen(p);
		if(len == 0 || len > 63 || pos + len + 1 + 5 > max)
			return 0;
		buf[pos++] = (uint8_t)len;
		memcpy(buf + pos, p, len);
		pos += len;
		p += len;
		if(*p == '.')
			p++;
	}
	buf[pos++] = 0;
	buf[pos++] = 0; buf[pos++] = 1; /* A */
	buf[pos++] = 0; buf[pos++] = 1; /* IN */
	return pos;
}

/** compare for qsort */
static int
cmp64(const void* a, const void* b)
{
	int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
	return (x > y) - (x < y);
}

int
main(int argc, char** argv)
{
	const char* addr = "127.0.0.1", *name = NULL, *outfile = NULL;
	int port = 0, nsock = 32, c, i, s;
	double rate = 1000, seconds = 10;
	int64_t timeout = 1000 * 1000000LL;
	int socks[MAX_SOCKS];
	struct pollfd pfd[MAX_SOCKS];
	struct sockaddr_in to;
	uint8_t pkt[512], rbuf[4096];
	size_t plen, nq, maxq, i2;
	struct query* q;
	int32_t* slot; /* per socket and id: query index + 1, or 0 */
	int64_t start, interval, next, end, t, *lats;
	size_t nlat = 0, lost = 0, answered = 0;
	uint16_t* ids;
	int random_label;
	/* with -w: the number of names of the warm set, else 0 */
	long warm = 0;
	char rname[300];
	uint64_t rstate = (uint64_t)now_ns() ^ ((uint64_t)getpid() << 32);

	while((c = getopt(argc, argv, "s:p:q:r:n:d:t:o:w:")) != -1) {
		switch(c) {
		case 's': addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'q': name = optarg; break;
		case 'r': rate = atof(optarg); break;
		case 'n': nsock = atoi(optarg); break;
		case 'd': seconds = atof(optarg); break;
		case 't': timeout = (int64_t)atoi(optarg) * 1000000LL; break;
		case 'o': outfile = optarg; break;
		case 'w': warm = atol(optarg); break;
		default: goto usage;
		}
	}
	if(!port || !name || nsock < 1 || nsock > MAX_SOCKS || rate <= 0 ||
		seconds <= 0 || warm < 0) {
	usage:
		fprintf(stderr, "usage: dnsprobe -p PORT -q NAME [-s ADDR] "
			"[-r RATE] [-n SOCKETS] [-d SECONDS] [-t TIMEOUT_MS] "
			"[-o FILE] [-w N]\n");
		return 2;
	}
	random_label = (strncmp(name, "%r.", 3) == 0);
	if(random_label) {
		/* 12 hex digits, replaced for every query */
		snprintf(rname, sizeof(rname), "xxxxxxxxxxxx%s", name+2);
		name = rname;
	}
	plen = make_query(pkt, sizeof(pkt), name);
	if(!plen) {
		fprintf(stderr, "dnsprobe: bad name %s\n", name);
		return 2;
	}
	memset(&to, 0, sizeof(to));
	to.sin_family = AF_INET;
	to.sin_port = htons((uint16_t)port);
	if(inet_pton(AF_INET, addr, &to.sin_addr) != 1) {
		fprintf(stderr, "dnsprobe: bad address %s\n", addr);
		return 2;
	}
	for(i = 0; i < nsock; i++) {
		struct sockaddr_in from;
		socks[i] = socket(AF_INET, SOCK_DGRAM, 0);
		if(socks[i] == -1) {
			perror("socket");
			return 1;
		}
		memset(&from, 0, sizeof(from));
		from.sin_family = AF_INET;
		from.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if(bind(socks[i], (struct sockaddr*)&from, sizeof(from)) != 0) {
			perror("bind");
			return 1;
		}
		pfd[i].fd = socks[i];
		pfd[i].events = POLLIN;
	}
	maxq = (size_t)(rate * seconds) + 16;
	q = calloc(maxq, sizeof(*q));
	lats = calloc(maxq, sizeof(*lats));
	slot = calloc((size_t)nsock * 65536, sizeof(*slot));
	ids = calloc((size_t)nsock, sizeof(*ids));
	if(!q || !lats || !slot || !ids) {
		fprintf(stderr, "dnsprobe: out of memory\n");
		return 1;
	}
	interval = (int64_t)(1e9 / rate);
	signal(SIGTERM, on_sigterm);
	start = now_ns();
	end = start + (int64_t)(seconds * 1e9);
	next = start;
	nq = 0;
	while(1) {
		int64_t wait;
		struct timespec wts;
		t = now_ns();
		if(stop_now && t < end)
			end = t;
		while(t < end && next <= t && nq < maxq) {
			s = (int)(nq % (size_t)nsock);
			ids[s]++;
			/* an id still outstanding after 65536 queries on this
			 * socket is lost */
			if(slot[(size_t)s*65536 + ids[s]]) {
				size_t o = (size_t)slot[(size_t)s*65536 + ids[s]] - 1;
				q[o].lat = -1;
			}
			if(random_label) {
				/* a new first label: 12 hex digits at offset 13 */
				static const char hex[] = "0123456789abcdef";
				uint64_t z;
				int k;
				if(warm) {
					z = (uint64_t)(nq % (size_t)warm);
				} else {
					rstate += 0x9e3779b97f4a7c15ULL;
					z = rstate;
					z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
					z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
					z ^= z >> 31;
				}
				for(k = 0; k < 12; k++)
					pkt[13+k] = (uint8_t)hex[(z >> (4*k)) & 15];
			}
			pkt[0] = (uint8_t)(ids[s] >> 8);
			pkt[1] = (uint8_t)(ids[s] & 0xff);
			q[nq].sent = now_ns();
			q[nq].sock = s;
			q[nq].lat = -2;
			if(sendto(socks[s], pkt, plen, MSG_DONTWAIT,
				(struct sockaddr*)&to, sizeof(to)) < 0)
				q[nq].lat = -1; /* the socket buffer is full */
			else	slot[(size_t)s*65536 + ids[s]] = (int32_t)(nq + 1);
			nq++;
			next += interval;
		}
		if(t >= end + timeout)
			break;
		wait = (t < end ? next - t : end + timeout - t);
		if(wait < 0)
			wait = 0;
		/* ppoll: poll()'s millisecond timeout is 0 for the waits under
		 * 1 ms between queries at rates over 1000/s, and the probe
		 * would spin on a CPU the server under test needs */
		wts.tv_sec = (time_t)(wait / 1000000000);
		wts.tv_nsec = (long)(wait % 1000000000);
		if(ppoll(pfd, (nfds_t)nsock, &wts, NULL) < 0 &&
			errno != EINTR) {
			perror("ppoll");
			return 1;
		}
		for(i = 0; i < nsock; i++) {
			if(!(pfd[i].revents & POLLIN))
				continue;
			while(1) {
				ssize_t r = recv(socks[i], rbuf, sizeof(rbuf),
					MSG_DONTWAIT);
				uint16_t id;
				int32_t o;
				if(r < 12)
					break;
				t = now_ns();
				id = (uint16_t)((rbuf[0] << 8) | rbuf[1]);
				o = slot[(size_t)i*65536 + id];
				if(!o)
					continue;
				slot[(size_t)i*65536 + id] = 0;
				if(q[o-1].lat == -2 && t - q[o-1].sent <= timeout)
					q[o-1].lat = t - q[o-1].sent;
				else if(q[o-1].lat == -2)
					q[o-1].lat = -1;
			}
		}
	}
	for(i2 = 0; i2 < nq; i2++) {
		if(q[i2].lat < 0) {
			lost++;
		} else {
			answered++;
			lats[nlat++] = q[i2].lat;
		}
	}
	qsort(lats, nlat, sizeof(*lats), cmp64);
	printf("sent=%zu answered=%zu lost=%zu", nq, answered, lost);
	if(nlat) {
		printf(" p50_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f",
			lats[nlat/2]/1e3, lats[(size_t)(nlat*0.99)]/1e3,
			lats[(size_t)(nlat*0.999)]/1e3, lats[nlat-1]/1e3);
	}
	printf(" start_us=%lld end_us=%lld\n", (long long)(start/1000),
		(long long)(end/1000));
	if(outfile) {
		FILE* f = fopen(outfile, "w");
		if(!f) {
			perror(outfile);
			return 1;
		}
		for(i2 = 0; i2 < nq; i2++)
			fprintf(f, "%lld %lld %d\n", (long long)(q[i2].sent/1000),
				(long long)(q[i2].lat < 0 ? -1 : q[i2].lat/1000),
				q[i2].sock);
		fclose(f);
	}
	for(i = 0; i < nsock; i++)
		close(socks[i]);
	free(q);
	free(lats);
	free(slot);
	free(ids);
	return 0;
}
