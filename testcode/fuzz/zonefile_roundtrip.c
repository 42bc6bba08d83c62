/*
 * testcode/fuzz/zonefile_roundtrip.c - libFuzzer target: a zone built
 * from the fuzz input is written with auth_zone_write_file() and read
 * back with auth_zone_read_zonefile(); the two zones must be equal.
 *
 * The input is read as a stream of bytes (zero when it runs out). It
 * gives RRs one after the other: the owner name (the apex, the previous
 * owner, or new labels of arbitrary bytes: dots, backslashes, quotes,
 * spaces, '$', '@', NUL, upper case), the type (every type that sldns has
 * a descriptor for, or any 16-bit type), the TTL, and the rdata: built
 * field by field from the type's descriptor (names, integers, strings,
 * addresses, base64/hex blobs, type bitmaps), or raw bytes, or a pattern
 * repeated to a large length (up to 65000 octets, whose text form is far
 * over 64 KB), and how often the owner and type repeat with new rdata,
 * so rrsets get many RRs. The RRs are inserted with az_insert_rr(), as
 * the zonefile reader and zone transfers do (duplicates dropped, RRSIGs
 * with the rrset they cover).
 *
 * Every RR goes in the zone, also rdata that sldns prints in its type's
 * format and then does not read back (doc/fuzzing.md lists what was
 * found): the writer must notice and write such an RR in the RFC 3597
 * unknown format. Only rdata that the reader does not read back in that
 * format either (SVCB, HTTPS with SvcParams out of order) is left out;
 * with the first such RR of an input a zone of that RR alone is written,
 * and that write must fail.
 *
 * Equal means: the same owner names (exact bytes, case too), and at each
 * the same multiset of (type, TTL, rdata), the RRSIGs counted with type
 * RRSIG wherever the zone keeps them. A write that fails, a read that
 * fails, or any difference aborts, after printing the first difference.
 *
 * Built with the fork's objects by testcode/fuzz/build.sh; this file
 * includes services/authzone.c for its static functions.
 */
#include "services/authzone.c"
#include "sldns/rrdef.h"
#include <unistd.h>

/** the most RRs one input makes */
#define RT_MAX_RRS 3000
/** the largest rdata made, so the RR fits the reader's 64k RR buffer
 * with the longest owner name */
#define RT_MAX_RDATA 65000

/** fuzz input stream */
struct rt_in {
	/** next byte */
	const uint8_t* p;
	/** bytes left */
	size_t n;
};

/** the types sldns has a descriptor for */
static uint16_t rt_known[512];
/** number of known types */
static size_t rt_num_known = 0;
/** config, for the reader */
static struct config_file* rt_cfg = NULL;
/** the zonefile that is written and read */
static char rt_file[256];

/** next byte, 0 at the end */
static uint8_t
rt_get8(struct rt_in* in)
{
	if(in->n == 0)
		return 0;
	in->n--;
	return *in->p++;
}

/** next 16 bits */
static uint16_t
rt_get16(struct rt_in* in)
{
	uint16_t v = rt_get8(in);
	return (uint16_t)((v<<8) | rt_get8(in));
}

/** append bytes to the rdata, if they fit */
static void
rt_put(uint8_t* rd, size_t* len, const uint8_t* d, size_t n)
{
	if(*len + n > RT_MAX_RDATA)
		return;
	memmove(rd + *len, d, n);
	*len += n;
}

/** append n bytes from the input */
static void
rt_put_input(struct rt_in* in, uint8_t* rd, size_t* len, size_t n)
{
	size_t i;
	if(*len + n > RT_MAX_RDATA)
		n = RT_MAX_RDATA - *len;
	for(i=0; i<n; i++)
		rd[(*len)++] = rt_get8(in);
}

/** make a domain name of random labels under the apex (or absolute, if
 * apex is NULL); returns its length */
static size_t
rt_make_name(struct rt_in* in, uint8_t* nm, const uint8_t* apex,
	size_t apexlen)
{
	int labs = rt_get8(in) % 4 + (apex?0:1), i;
	size_t len = 0;
	for(i=0; i<labs; i++) {
		uint8_t b = rt_get8(in), ll, j;
		/* mostly short printable labels, some arbitrary */
		ll = (uint8_t)((b & 0x80) ? (b & 0x3f) % 63 + 1 : (b & 0x7) + 1);
		if(len + 1 + ll + apexlen + 1 > LDNS_MAX_DOMAINLEN)
			break;
		nm[len++] = ll;
		for(j=0; j<ll; j++) {
			uint8_t c = rt_get8(in);
			if(!(b & 0x40)) {
				/* a letter, digit, or one special char */
				static const char special[] =
					".\\\"() ;$@*-_\t\n";
				if(c < 200)
					c = (uint8_t)("abcdefghijklmnopqrstuvwxyz"
					"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
					)[c % 62];
				else c = (uint8_t)special[c %
					(sizeof(special)-1)];
			}
			nm[len++] = c;
		}
	}
	if(apex) {
		memmove(nm + len, apex, apexlen);
		len += apexlen;
	} else	nm[len++] = 0;
	return len;
}

/** make a type bitmap (NSEC, NSEC3, CSYNC): windows in increasing order,
 * each with a nonzero last octet, as the text form gives them back */
static void
rt_make_bitmap(struct rt_in* in, uint8_t* rd, size_t* len)
{
	int nwin = rt_get8(in) % 4, w, win = -1;
	for(w=0; w<nwin; w++) {
		uint8_t bm[34];
		int bl = rt_get8(in) % 32 + 1, i;
		win += rt_get8(in) % 64 + 1;
		if(win > 255)
			break;
		bm[0] = (uint8_t)win;
		bm[1] = (uint8_t)bl;
		for(i=0; i<bl; i++)
			bm[2+i] = rt_get8(in);
		if(bm[1+bl] == 0)
			bm[1+bl] = 1;
		rt_put(rd, len, bm, (size_t)bl+2);
	}
}

/** make one field of the rdata */
static void
rt_make_field(struct rt_in* in, sldns_rdf_type f, uint8_t* rd, size_t* len)
{
	uint8_t b[LDNS_MAX_DOMAINLEN+1];
	size_t n;
	switch(f) {
	case LDNS_RDF_TYPE_DNAME:
		n = rt_make_name(in, b, NULL, 0);
		rt_put(rd, len, b, n);
		break;
	case LDNS_RDF_TYPE_INT8: case LDNS_RDF_TYPE_ALG:
		rt_put_input(in, rd, len, 1);
		break;
	case LDNS_RDF_TYPE_INT16: case LDNS_RDF_TYPE_TYPE:
	case LDNS_RDF_TYPE_CLASS: case LDNS_RDF_TYPE_CERT_ALG:
	case LDNS_RDF_TYPE_TSIGERROR:
		rt_put_input(in, rd, len, 2);
		break;
	case LDNS_RDF_TYPE_INT32: case LDNS_RDF_TYPE_A:
	case LDNS_RDF_TYPE_TIME: case LDNS_RDF_TYPE_PERIOD:
		rt_put_input(in, rd, len, 4);
		break;
	case LDNS_RDF_TYPE_TSIGTIME: case LDNS_RDF_TYPE_EUI48:
		rt_put_input(in, rd, len, 6);
		break;
	case LDNS_RDF_TYPE_ILNP64: case LDNS_RDF_TYPE_EUI64:
		rt_put_input(in, rd, len, 8);
		break;
	case LDNS_RDF_TYPE_AAAA:
		rt_put_input(in, rd, len, 16);
		break;
	case LDNS_RDF_TYPE_STR:
	case LDNS_RDF_TYPE_NSEC3_SALT:
	case LDNS_RDF_TYPE_B32_EXT:
		/* length octet and data */
		n = rt_get8(in);
		if(f == LDNS_RDF_TYPE_B32_EXT && n == 0)
			n = 1;
		b[0] = (uint8_t)n;
		rt_put(rd, len, b, 1);
		rt_put_input(in, rd, len, n);
		break;
	case LDNS_RDF_TYPE_NSEC:
		rt_make_bitmap(in, rd, len);
		break;
	case LDNS_RDF_TYPE_B64: case LDNS_RDF_TYPE_HEX:
		/* to the end of the rdata: at least one octet */
		rt_put_input(in, rd, len, (size_t)(rt_get8(in) % 64) + 1);
		break;
	default:
		/* the rest (APL, LOC, WKS, HIP, SVCPARAM, ...): arbitrary
		 * octets, printed in the type's form if they parse as
		 * one, else in the RFC 3597 unknown form */
		rt_put_input(in, rd, len, rt_get8(in) % 24);
		break;
	}
}

/** make the rdata of an RR of type t */
static size_t
rt_make_rdata(struct rt_in* in, uint16_t t, uint8_t* rd)
{
	const sldns_rr_descriptor* d = sldns_rr_descript(t);
	uint8_t mode = rt_get8(in);
	size_t len = 0, i;
	if(mode < 160 && d && d->_name && d->_type == t) {
		/* field by field */
		size_t nf = d->_maximum;
		if(d->_variable != LDNS_RDF_TYPE_NONE)
			nf += rt_get8(in) % 4;
		for(i=0; i<nf; i++)
			rt_make_field(in, sldns_rr_descriptor_field_type(d, i),
				rd, &len);
		if(t == LDNS_RR_TYPE_RRSIG && len >= 2 && (mode & 1)) {
			/* cover a type in this zone */
			rd[0] = 0;
			rd[1] = LDNS_RR_TYPE_A;
		}
	} else if(mode < 230) {
		/* raw bytes */
		rt_put_input(in, rd, &len, rt_get8(in));
	} else {
		/* a pattern of 1 to 4 octets repeated to a large length:
		 * a text form of up to 4 times that */
		uint8_t pat[4];
		size_t pl = (size_t)(mode % 4) + 1, want;
		for(i=0; i<pl; i++)
			pat[i] = rt_get8(in);
		want = (size_t)rt_get16(in) % RT_MAX_RDATA;
		if(t == LDNS_RR_TYPE_TXT || t == LDNS_RR_TYPE_SPF) {
			/* character-strings of 255 */
			while(len + 256 <= want) {
				rd[len++] = 255;
				for(i=0; i<255; i++)
					rd[len++] = pat[i%pl];
			}
		} else {
			for(i=0; i<want; i++)
				rd[len++] = pat[i%pl];
		}
	}
	return len;
}

/**
 * Whether the zonefile reader reads this rdata in the RFC 3597 unknown
 * format, \# length hex, to the same octets. SVCB and HTTPS with
 * SvcParams that are not in order, for example, are refused or read
 * sorted; an RR with such rdata cannot be written so that it reads back,
 * and the write must fail.
 * @param t: type.
 * @param rd: rdata.
 * @param len: its length.
 * @return true if it reads.
 */
static int
rt_generic_reads(uint16_t t, uint8_t* rd, size_t len)
{
	static uint8_t wire[LDNS_RR_BUF_SIZE];
	size_t wlen = sizeof(wire), dnamelen = 0, i;
	char* txt = malloc(len*2 + 64), tp[32];
	int st, hdr;
	if(!txt)
		fatal_exit("out of memory");
	sldns_wire2str_type_buf(t, tp, sizeof(tp));
	hdr = snprintf(txt, 64, "r. 0 IN %s \\# %u ", tp, (unsigned)len);
	for(i=0; i<len; i++)
		snprintf(txt+hdr+i*2, 3, "%02x", rd[i]);
	st = sldns_str2wire_rr_buf(txt, wire, &wlen, &dnamelen, 0, NULL, 0,
		NULL, 0);
	free(txt);
	/* SvcParams are read in sorted order, so check the octets */
	return st == 0 && wlen == dnamelen + 10 + len &&
		memcmp(wire + dnamelen + 10, rd, len) == 0;
}

/**
 * A zone with only this RR, whose rdata the reader does not read in any
 * format: its write must fail (an RR that no zone can hold is skipped).
 * @param apex: the zone's name, the owner of the RR.
 * @param apexlen: its length.
 * @param t: type.
 * @param rd: rdata.
 * @param len: its length.
 */
static void
rt_check_unwritable(const uint8_t* apex, size_t apexlen, uint16_t t,
	uint8_t* rd, size_t len);

/** insert one RR in the zone; returns 0 for an RR that no zone can hold */
static int
rt_insert(struct auth_zone* z, const uint8_t* nm, size_t nmlen, uint16_t t,
	uint32_t ttl, const uint8_t* rd, size_t rdlen)
{
	static uint8_t rr[LDNS_RR_BUF_SIZE];
	int dup = 0;
	if(nmlen + 10 + rdlen > sizeof(rr))
		return 0;
	/* az_insert_rr refuses these since 1.26 (malformed A, AAAA), so
	 * no zone can hold them */
	if((t == LDNS_RR_TYPE_A && rdlen != 4) ||
		(t == LDNS_RR_TYPE_AAAA && rdlen != 16))
		return 0;
	memmove(rr, nm, nmlen);
	sldns_write_uint16(rr+nmlen, t);
	sldns_write_uint16(rr+nmlen+2, LDNS_RR_CLASS_IN);
	sldns_write_uint32(rr+nmlen+4, ttl);
	sldns_write_uint16(rr+nmlen+8, (uint16_t)rdlen);
	memmove(rr+nmlen+10, rd, rdlen);
	if(!az_insert_rr(z, rr, nmlen+10+rdlen, nmlen, &dup, NULL, NULL))
		fatal_exit("az_insert_rr failed");
	return 1;
}

/** one RR as the zone holds it, for the comparison */
struct rt_rr {
	/** type, RRSIG for a signature */
	uint16_t type;
	/** ttl */
	uint32_t ttl;
	/** rdata with its length */
	uint8_t* rd;
	/** length of rd */
	size_t len;
};

/** order of RRs */
static int
rt_rr_cmp(const void* a, const void* b)
{
	const struct rt_rr* x = a, *y = b;
	if(x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if(x->ttl != y->ttl)
		return x->ttl < y->ttl ? -1 : 1;
	if(x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->rd, y->rd, x->len);
}

/** the RRs of a domain, sorted; returns the number */
static size_t
rt_domain_rrs(struct auth_data* n, struct rt_rr** list)
{
	struct auth_rrset* r;
	size_t num = 0, i, k = 0;
	for(r = n->rrsets; r; r = r->next)
		num += r->data->count + r->data->rrsig_count;
	*list = calloc(num+1, sizeof(**list));
	if(!*list)
		fatal_exit("out of memory");
	for(r = n->rrsets; r; r = r->next) {
		for(i=0; i<r->data->count + r->data->rrsig_count; i++) {
			(*list)[k].type = i<r->data->count ? r->type :
				LDNS_RR_TYPE_RRSIG;
			(*list)[k].ttl = (uint32_t)r->data->rr_ttl[i];
			(*list)[k].rd = r->data->rr_data[i];
			(*list)[k].len = r->data->rr_len[i];
			k++;
		}
	}
	qsort(*list, num, sizeof(**list), rt_rr_cmp);
	return num;
}

/** print a difference and abort */
static void
rt_differ(struct auth_data* n, const char* what, struct rt_rr* rr)
{
	char nm[LDNS_MAX_DOMAINLEN*4+1], tp[32];
	sldns_wire2str_dname_buf(n->name, n->namelen, nm, sizeof(nm));
	if(rr) {
		sldns_wire2str_type_buf(rr->type, tp, sizeof(tp));
		printf("zonefile round trip: %s %s: %s (ttl %u, rdata %d "
			"octets)\n", nm, tp, what, (unsigned)rr->ttl,
			(int)rr->len);
	} else printf("zonefile round trip: %s: %s\n", nm, what);
	printf("zonefile: %s\n", rt_file);
	fflush(stdout);
	abort();
}

/** compare two zones, abort on a difference */
static void
rt_compare(struct auth_zone* a, struct auth_zone* b)
{
	struct auth_data* x = (struct auth_data*)rbtree_first(&a->data);
	struct auth_data* y = (struct auth_data*)rbtree_first(&b->data);
	while((rbnode_type*)x != RBTREE_NULL ||
		(rbnode_type*)y != RBTREE_NULL) {
		struct rt_rr* lx, *ly;
		size_t nx, ny, i;
		if((rbnode_type*)x == RBTREE_NULL)
			rt_differ(y, "name only in the zone read back", NULL);
		if((rbnode_type*)y == RBTREE_NULL)
			rt_differ(x, "name lost in the round trip", NULL);
		if(x->namelen != y->namelen || memcmp(x->name, y->name,
			x->namelen) != 0) {
			/* an empty node (its RRs all were duplicates of
			 * none) is not written */
			rt_differ(x, "name differs from the one read back",
				NULL);
		}
		nx = rt_domain_rrs(x, &lx);
		ny = rt_domain_rrs(y, &ly);
		for(i=0; i<nx && i<ny; i++) {
			if(rt_rr_cmp(&lx[i], &ly[i]) != 0)
				rt_differ(x, "RR differs after the round trip",
					&lx[i]);
		}
		if(nx != ny)
			rt_differ(x, nx > ny ? "RR lost in the round trip" :
				"RR only in the zone read back",
				nx > ny ? &lx[ny] : &ly[nx]);
		free(lx);
		free(ly);
		x = (struct auth_data*)rbtree_next(&x->node);
		y = (struct auth_data*)rbtree_next(&y->node);
	}
}

/** a zone to put RRs in */
static struct auth_zone*
rt_zone(struct auth_zones* az, const uint8_t* apex, size_t apexlen)
{
	struct auth_zone* z = auth_zone_create(az, (uint8_t*)apex, apexlen,
		LDNS_RR_CLASS_IN);
	if(!z)
		fatal_exit("auth_zone_create failed");
	lock_rw_unlock(&z->lock);
	return z;
}

static void
rt_check_unwritable(const uint8_t* apex, size_t apexlen, uint16_t t,
	uint8_t* rd, size_t len)
{
	struct auth_zones* az = auth_zones_create();
	struct auth_zone* z;
	if(!az)
		fatal_exit("out of memory");
	z = rt_zone(az, apex, apexlen);
	(void)unlink(rt_file);
	if(rt_insert(z, apex, apexlen, t, 3600, rd, len) &&
		auth_zone_write_file(z, rt_file)) {
		printf("zonefile round trip: an RR that the reader refuses "
			"in every format was written\n");
		fflush(stdout);
		abort();
	}
	auth_zones_delete(az);
}

/** remove the zonefile at exit */
static void
rt_cleanup(void)
{
	(void)unlink(rt_file);
}

/** libFuzzer start: the known types, config, the file name */
int LLVMFuzzerInitialize(int* argc, char*** argv);
int
LLVMFuzzerInitialize(int* ATTR_UNUSED(argc), char*** ATTR_UNUSED(argv))
{
	int t;
	const char* dir = getenv("TMPDIR");
	for(t=1; t<65536 && rt_num_known < sizeof(rt_known)/
		sizeof(rt_known[0]); t++) {
		const sldns_rr_descriptor* d = sldns_rr_descript((uint16_t)t);
		if(d && d->_name && d->_type == t)
			rt_known[rt_num_known++] = (uint16_t)t;
	}
	rt_cfg = config_create();
	if(!rt_cfg)
		fatal_exit("out of memory");
	snprintf(rt_file, sizeof(rt_file), "%s/zonefile-roundtrip.%d.zone",
		dir?dir:"/tmp", (int)getpid());
	atexit(rt_cleanup);
	log_init(NULL, 0, NULL);
	verbosity = 0;
	return 0;
}

/** libFuzzer entry: build, write, read back, compare */
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int
LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
	static uint8_t rd[RT_MAX_RDATA+256];
	/* apex: a name with an escaped dot and upper case */
	static const uint8_t apex[] = "\003z.Q\007example\000";
	size_t apexlen = sizeof(apex)-1;
	struct rt_in in;
	struct auth_zones* az1 = auth_zones_create();
	struct auth_zones* az2 = auth_zones_create();
	struct auth_zone* z1, *z2;
	uint8_t nm[LDNS_MAX_DOMAINLEN+1];
	size_t nmlen = apexlen;
	int rrs = 0, unwritable = 0;
	if(!az1 || !az2)
		fatal_exit("out of memory");
	in.p = data;
	in.n = size;
	z1 = rt_zone(az1, apex, apexlen);
	z2 = rt_zone(az2, apex, apexlen);
	memmove(nm, apex, apexlen);
	while(in.n > 0 && rrs < RT_MAX_RRS) {
		uint8_t o = rt_get8(&in), rep, r;
		uint16_t t;
		uint32_t ttl;
		if(o < 64) {
			memmove(nm, apex, apexlen);
			nmlen = apexlen;
		} else if(o >= 128)
			nmlen = rt_make_name(&in, nm, apex, apexlen);
		/* else the previous owner */
		t = rt_get16(&in);
		if(t < 0xc000 && rt_num_known)
			t = rt_known[t % rt_num_known];
		ttl = (o & 1) ? rt_get16(&in) : 3600;
		if(o & 2)
			ttl |= (uint32_t)rt_get16(&in) << 16;
		/* many RRs in the rrset */
		rep = (uint8_t)(o & 4 ? rt_get8(&in) % 64 + 1 : 1);
		for(r=0; r<rep && rrs < RT_MAX_RRS; r++) {
			size_t len = rt_make_rdata(&in, t, rd);
			if(rt_generic_reads(t, rd, len))
				(void)rt_insert(z1, nm, nmlen, t, ttl, rd, len);
			else if(!unwritable) {
				rt_check_unwritable(apex, apexlen, t, rd, len);
				unwritable = 1;
			}
			rrs++;
		}
	}
	if(!auth_zone_write_file(z1, rt_file)) {
		printf("zonefile round trip: write failed\n");
		abort();
	}
	z2->zonefile = strdup(rt_file);
	if(!z2->zonefile)
		fatal_exit("out of memory");
	if(!auth_zone_read_zonefile(z2, rt_cfg)) {
		printf("zonefile round trip: the written zonefile %s does "
			"not read\n", rt_file);
		fflush(stdout);
		abort();
	}
	rt_compare(z1, z2);
	auth_zones_delete(az1);
	auth_zones_delete(az2);
	return 0;
}
