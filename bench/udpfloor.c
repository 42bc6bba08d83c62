/*
 * bench/udpfloor.c - the floor of a DNS server on this machine: a UDP
 * responder that does nothing but answer, for Unbound Steady's cache-hit
 * benchmark (bench/cache_hits.py).
 *
 * THREADS threads each bind a socket to 127.0.0.1:PORT with SO_REUSEPORT
 * (as unbound does with num-threads and so-reuseport) and, for every
 * datagram, set the QR bit and send it back: one recvfrom and one sendto
 * per query. What a resolver spends per cached answer on top of this is
 * its own userland work. Runs until killed.
 *
 * With -b BATCH (Linux), every thread reads with recvmmsg, up to BATCH
 * datagrams a call, and still sends each answer with sendto: what batched
 * receives would save a server in the kernel.
 *
 * usage: udpfloor -p PORT [-t THREADS] [-b BATCH]
 */
#ifdef __linux__
#define _GNU_SOURCE 1
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/** the port to answer on */
static int port;
/** datagrams read by one recvmmsg, 0 for a recvfrom per datagram */
static int batch;
/** the largest batch */
#define MAX_BATCH 64
/** the largest datagram answered */
#define DGRAM_SIZE 4096

#ifdef __linux__
/** answer the datagrams of fd, read batch at a time with recvmmsg */
static void
serve_batched(int fd)
{
	unsigned char (*buf)[DGRAM_SIZE] = malloc(MAX_BATCH * DGRAM_SIZE);
	struct mmsghdr msg[MAX_BATCH];
	struct iovec iov[MAX_BATCH];
	struct sockaddr_in from[MAX_BATCH];
	if(!buf) {
		perror("udpfloor: malloc");
		exit(1);
	}
	for(;;) {
		int i, n;
		for(i = 0; i < batch; i++) {
			iov[i].iov_base = buf[i];
			iov[i].iov_len = sizeof(buf[i]);
			memset(&msg[i].msg_hdr, 0, sizeof(msg[i].msg_hdr));
			msg[i].msg_hdr.msg_name = &from[i];
			msg[i].msg_hdr.msg_namelen = sizeof(from[i]);
			msg[i].msg_hdr.msg_iov = &iov[i];
			msg[i].msg_hdr.msg_iovlen = 1;
		}
		/* blocks for the first datagram, then takes what is queued */
		n = recvmmsg(fd, msg, (unsigned)batch, MSG_WAITFORONE, NULL);
		for(i = 0; i < n; i++) {
			if(msg[i].msg_len < 12)
				continue;
			buf[i][2] |= 0x80;	/* QR: a response */
			(void)sendto(fd, buf[i], msg[i].msg_len, 0,
				(struct sockaddr*)&from[i],
				msg[i].msg_hdr.msg_namelen);
		}
	}
}
#endif

/** answer every datagram on a socket of its own, until killed */
static void*
serve(void* arg)
{
	unsigned char buf[DGRAM_SIZE];
	struct sockaddr_in a;
	int one = 1, fd = socket(AF_INET, SOCK_DGRAM, 0);
	(void)arg;
	if(fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one,
		sizeof(one)) < 0) {
		perror("udpfloor: socket");
		exit(1);
	}
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if(bind(fd, (struct sockaddr*)&a, sizeof(a)) < 0) {
		perror("udpfloor: bind");
		exit(1);
	}
#ifdef __linux__
	if(batch > 0) {
		serve_batched(fd);
		return NULL;
	}
#endif
	for(;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0,
			(struct sockaddr*)&from, &fl);
		if(n < 12)
			continue;
		buf[2] |= 0x80;	/* QR: a response */
		(void)sendto(fd, buf, (size_t)n, 0, (struct sockaddr*)&from,
			fl);
	}
	return NULL;
}

int
main(int argc, char* argv[])
{
	int c, i, threads = 2;
	pthread_t t[64];
	while((c = getopt(argc, argv, "p:t:b:")) != -1) {
		if(c == 'p')
			port = atoi(optarg);
		else if(c == 't')
			threads = atoi(optarg);
		else if(c == 'b')
			batch = atoi(optarg);
		else
			break;
	}
	if(port <= 0 || threads < 1 || threads > 64 || batch < 0 ||
		batch > MAX_BATCH) {
		fprintf(stderr, "usage: udpfloor -p PORT [-t THREADS] [-b BATCH]"
			" (BATCH up to %d, Linux)\n", MAX_BATCH);
		return 2;
	}
#ifndef __linux__
	if(batch > 0) {
		fprintf(stderr, "udpfloor: -b needs recvmmsg (Linux)\n");
		return 2;
	}
#endif
	for(i = 1; i < threads; i++)
		pthread_create(&t[i], NULL, serve, NULL);
	serve(NULL);
	return 0;
}
