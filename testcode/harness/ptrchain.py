"""DNS messages whose names are chains of compression pointers (issue 43,
CVE-2026-96405), in wire format, for test_parse_ptrs.py and
bench/parse_ptrs.py.

A chain of k pointers: a root label, then k pointers, each to the one
before it; a name that is a pointer to the chain's last pointer is the
root name reached in k+1 hops. Every pointer points backwards, as a
compressor writes them; only the number of hops is unusual."""

import struct

HEADER = 12
A, NS, CNAME, NULL, PTR, OPT, NSEC = 1, 2, 5, 10, 12, 41, 47


def chain(at, k, to=None):
    """The bytes of a chain of k pointers that starts at offset at, and
    the offset of its last pointer. The first pointer points to offset
    to, or to a root label at the chain's start when to is None."""
    data = b""
    last = to
    if to is None:
        data = b"\x00"
        last = at
    for _ in range(k):
        data += struct.pack("!H", 0xC000 | last)
        last = at + len(data) - 2
    return data, last


def answer(kind, size, k, qid=1, qname=b"\x01a\x00", qtype=A, flags=0x8400,
           rrs=None, to_qname=False, alternate=False):
    """The wire format of an answer to qname (wire format) of at most size
    bytes, and at most rrs records after the chain when rrs is given:
    - normal: A records of qname, each owner a pointer to it (one hop);
    - ns: NS records of qname, each rdata a new label and a pointer to
      qname, as a compressor writes a large NS set (two hops an RR);
    - owner-chain: a NULL record of qname whose rdata holds a chain of k
      pointers, then A records whose owner is a pointer to the chain's
      end (the root name, k+1 hops each; with to_qname the chain ends
      in qname instead, so the records are of qname); with alternate,
      every other owner is a pointer to qname, so that a parser that
      does not walk an owner that is the same pointer as the one before
      walks each;
    - ns-chain: the same chain, then NS records whose owner and rdata name
      both point to its end;
    - encoder-chain: k CNAME records as a compressor writes a chain of
      names that each add a label to the one before (qname CNAME x.qname,
      x.qname CNAME a.x.qname, ...): every owner a pointer to the name in
      the rdata before it, every rdata a label and a pointer to that name;
      then A records of the last name, each owner a pointer to it (k+1
      hops each; issue 66 finding 20);
    - ptr-labels: a NULL record of qname whose rdata is a name of k
      one-octet labels (k = 127 makes 255 octets), then PTR records of
      qname whose rdata is a pointer to that name: one hop to k labels
      (issue 66 finding 19);
    - ptr: PTR records of qname whose rdata is a pointer to qname."""
    q = qname + struct.pack("!HH", qtype, 1)
    body = b""
    count = 0
    target = HEADER
    rdname = HEADER
    if kind == "encoder-chain":
        for i in range(k):
            label = b"x" if i == 0 else bytes([ord("a") + (i - 1) % 26])
            rdata = bytes([len(label)]) + label + struct.pack("!H", 0xC000 | target)
            rr = struct.pack("!HHHIH", 0xC000 | target, CNAME, 1, 3600, len(rdata))
            target = HEADER + len(q) + len(body) + len(rr)
            body += rr + rdata
        count = k
    if kind == "ptr-labels":
        rdata = b"\x01a" * k + b"\x00"
        body += struct.pack("!HHHIH", 0xC000 | HEADER, NULL, 1, 3600, len(rdata))
        rdname = HEADER + len(q) + len(body)
        body += rdata
        count = 1
    if kind in ("owner-chain", "ns-chain"):
        rdata, target = chain(HEADER + len(q) + 2 + 10, k,
                              HEADER if to_qname else None)
        body += struct.pack("!HHHIH", 0xC000 | HEADER, NULL, 1, 3600,
                            len(rdata)) + rdata
        count = 1
    while True:
        if kind == "ns-chain":
            rr = struct.pack("!HHHIHH", 0xC000 | target, NS, 1, 3600, 2,
                             0xC000 | target)
        elif kind == "ns":
            label = b"ns%d" % count
            rr = struct.pack("!HHHIHB", 0xC000 | target, NS, 1, 3600,
                             len(label) + 3, len(label)) + label + \
                struct.pack("!H", 0xC000 | HEADER)
        elif kind in ("ptr-labels", "ptr"):
            rr = struct.pack("!HHHIHH", 0xC000 | HEADER, PTR, 1, 3600, 2,
                             0xC000 | rdname)
        else:
            owner = HEADER if alternate and count % 2 == 0 else target
            rr = struct.pack("!HHHIHI", 0xC000 | owner, A, 1, 3600, 4,
                             count & 0xffffffff)
        if HEADER + len(q) + len(body) + len(rr) > size or rrs == 0:
            break
        body += rr
        count += 1
        if rrs is not None:
            rrs -= 1
    return struct.pack("!HHHHHH", qid, flags, 1, count, 0, 0) + q + body


def nsec_drop_answer(size, k, qid=1, qname=b"\x01a\x00", qtype=A, flags=0x8400):
    """The wire format of an answer to qname of at most size bytes: in
    the answer section an NSEC record of qname and one of b.<qname>, and
    a NULL record of qname whose rdata holds a chain of k pointers that
    ends in qname; in the authority section as many NSEC records as fit,
    of qname and b.<qname> in turn (so that the rrset of each is looked
    up, which reads its next name), whose next name is a pointer to the
    chain's end (k+1 hops). Their rrsets are in the answer section, so a
    parser drops them without sizing their rdata (issue 66 finding 18)."""
    q = qname + struct.pack("!HH", qtype, 1)
    bitmap = b"\x00\x01\x40"  # window 0, one octet, A
    body = struct.pack("!HHHIH", 0xC000 | HEADER, NSEC, 1, 3600, 1 + len(bitmap)) + \
        b"\x00" + bitmap
    bname = HEADER + len(q) + len(body)
    body += b"\x01b" + struct.pack("!HHHIH", 0xC000 | HEADER, NSEC, 1, 3600,
                                   1 + len(bitmap)) + b"\x00" + bitmap
    rdata, target = chain(HEADER + len(q) + len(body) + 2 + 10, k, HEADER)
    body += struct.pack("!HHHIH", 0xC000 | HEADER, NULL, 1, 3600, len(rdata)) + rdata
    count = 0
    while True:
        owner = HEADER if count % 2 == 0 else bname
        rr = struct.pack("!HHHIHH", 0xC000 | owner, NSEC, 1, 3600, 2 + len(bitmap),
                         0xC000 | target) + bitmap
        if HEADER + len(q) + len(body) + len(rr) > size:
            break
        body += rr
        count += 1
    return struct.pack("!HHHHHH", qid, flags, 1, 3, count, 0) + q + body


def query(k, zone_wire, qid=1, qtype=A):
    """A query whose EDNS record's owner is a chain of k+1 hops to the
    root label (the OPT record's owner must be the root name). The chain
    lives in the first label of the query name, which is otherwise just
    binary label text, under zone_wire (a name in wire format)."""
    data, last = chain(HEADER + 1, k)
    if len(data) > 63:
        raise ValueError("a chain of %d pointers does not fit a label" % k)
    qname = bytes([len(data)]) + data + zone_wire
    opt = struct.pack("!HHHIH", 0xC000 | last, OPT, 1232, 0, 0)
    return (struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 1) + qname +
            struct.pack("!HH", qtype, 1) + opt)
