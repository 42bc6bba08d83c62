/*
 * testcode/libunbound/hashcheck.c - libunbound's caches check the hash
 * value of what they store, as the daemon's do (hash-integrity-check).
 *
 * A context resolves "localhost" (a default local zone: no network) so
 * that it is finalized, and then its message and rrset caches must have
 * the hash check function set; with hash-integrity-check: no, neither
 * has it. Built against a build directory's libunbound and its internal
 * headers (the struct fields are read, no internal function is called).
 *
 * usage: hashcheck   (exit 0 when both cases hold)
 */
#include "config.h"
#include <stdio.h>
#include "libunbound/unbound.h"
#include "libunbound/context.h"
#include "util/module.h"
#include "util/storage/slabhash.h"
#include "services/cache/rrset.h"

/** one context with the option set to val; returns the number of
 * caches that have the check, -1 on error */
static int
checked_caches(const char* val)
{
	struct ub_ctx* ctx = ub_ctx_create();
	struct ub_result* res = NULL;
	int n = 0;
	if(!ctx || ub_ctx_set_option(ctx, "hash-integrity-check:", val) != 0 ||
		ub_resolve(ctx, "localhost", 1, 1, &res) != 0) {
		printf("libunbound setup failed\n");
		return -1;
	}
	ub_resolve_free(res);
	if(ctx->env->msg_cache->hashcheckfunc) {
		printf("hash-integrity-check: %s: the message cache checks\n",
			val);
		n++;
	} else printf("hash-integrity-check: %s: the message cache does "
		"not check\n", val);
	if(ctx->env->rrset_cache->table.hashcheckfunc) {
		printf("hash-integrity-check: %s: the rrset cache checks\n",
			val);
		n++;
	} else printf("hash-integrity-check: %s: the rrset cache does not "
		"check\n", val);
	ub_ctx_delete(ctx);
	return n;
}

int
main(void)
{
	int on = checked_caches("yes"), off = checked_caches("no");
	printf("libunbound hash check: %s\n", on == 2 && off == 0 ? "OK" :
		"FAIL");
	return on == 2 && off == 0 ? 0 : 1;
}
