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
 * usage: udpfloor -p PORT [-t THREADS]
 */
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

/** answer every datagram on a socket of its own, until killed */
static void*
serve(void* arg)
{
	unsigned char buf[4096];
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
	while((c = getopt(argc, argv, "p:t:")) != -1) {
		if(c == 'p')
			port = atoi(optarg);
		else if(c == 't')
			threads = atoi(optarg);
		else
			break;
	}
	if(port <= 0 || threads < 1 || threads > 64) {
		fprintf(stderr, "usage: udpfloor -p PORT [-t THREADS]\n");
		return 2;
	}
	for(i = 1; i < threads; i++)
		pthread_create(&t[i], NULL, serve, NULL);
	serve(NULL);
	return 0;
}
