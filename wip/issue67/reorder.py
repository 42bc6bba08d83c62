#!/usr/bin/python3
"""git rebase -i sequence editor: the two rpz-scale patches that end the
full transfer of an RPZ after 5 IXFRs go before the authzone-io topic,
so that the thread never counts IXFRs for a rule that goes.

usage: GIT_SEQUENCE_EDITOR="reorder.py" git rebase -i base
"""
import sys
p = sys.argv[1]
l = open(p).read().split('\n')
def find(sub):
    r = [x for x in l if x.startswith('pick ') and sub in x]
    assert len(r) == 1, (sub, r)
    return r[0]
a = find('rpz: free the address triggers that an IXFR removes')
b = find('authzone: no full transfer of an RPZ after every 5 IXFRs')
l.remove(a); l.remove(b)
k = l.index(find('authzone: statistics of zonefile writes'))
l[k:k] = [a, b]
open(p, 'w').write('\n'.join(l))
