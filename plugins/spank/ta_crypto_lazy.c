/* SPDX-License-Identifier: GPL-2.0-or-later */
/* spank_topoaware.so loads libcrypto only when the core first needs it (SHA-256 of a topology
 * file, base64 forwarding tables), not when Slurm loads the plugin.
 *
 * Why: slurmd starts a `slurmstepd spank prolog` and a `slurmstepd spank epilog` for every node of
 * every job, and each one loads the plugin again. Loading libcrypto with it (mapping and relocating
 * it) was most of the CPU the plugin added to them, while the job prolog and epilog never hash
 * anything (bench/spank_prolog_cost.sh; bench/RESULTS.md). The task hooks of a layout step do, and
 * load it then, once per slurmstepd.
 *
 * The core calls these few OpenSSL functions; here they are defined with OpenSSL's own prototypes
 * (so a changed signature does not compile) and forward to the library's, found with dlopen by the
 * SONAME that configure read from the libcrypto the build links (TA_LIBCRYPTO_SONAME). The linker
 * version script keeps them local to the plugin. If the library cannot be loaded, every call fails
 * the way OpenSSL reports a failure (NULL, 0 or -1), which the core turns into an error: the tasks
 * get no hints and a warning, never a failed step. */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include <openssl/evp.h>
#include <slurm/spank.h>

#include "spank_topoaware.h"

#ifndef TA_LIBCRYPTO_SONAME
#error "TA_LIBCRYPTO_SONAME is not defined (configure finds it)"
#endif

/* The library's functions, all looked up once under pthread_once (task hooks may run in threads). */
static struct {
  const EVP_MD *(*sha256)(void);
  EVP_MD_CTX *(*ctx_new)(void);
  void (*ctx_free)(EVP_MD_CTX *);
  int (*init)(EVP_MD_CTX *, const EVP_MD *, ENGINE *);
  int (*update)(EVP_MD_CTX *, const void *, size_t);
  int (*final)(EVP_MD_CTX *, unsigned char *, unsigned int *);
  int (*encode)(unsigned char *, const unsigned char *, int);
  int (*decode)(unsigned char *, const unsigned char *, int);
} ta_crypto;
static pthread_once_t ta_crypto_once = PTHREAD_ONCE_INIT;

/* ISO C has no cast between object and function pointers; POSIX guarantees that dlsym's result
 * can be one (memcpy keeps -Wpedantic quiet). A missing name leaves the pointer NULL. */
static void ta_crypto_sym(void *h, const char *name, void *fn, size_t size) {
  void *p = dlsym(h, name);
  if (p && size == sizeof(p)) memcpy(fn, &p, size);
}

static void ta_crypto_open(void) {
  void *h = dlopen(TA_LIBCRYPTO_SONAME, RTLD_LAZY | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    slurm_error(TA ": cannot load %s: %s", TA_LIBCRYPTO_SONAME, e ? e : "unknown error");
    return;
  }
  ta_crypto_sym(h, "EVP_sha256", &ta_crypto.sha256, sizeof(ta_crypto.sha256));
  ta_crypto_sym(h, "EVP_MD_CTX_new", &ta_crypto.ctx_new, sizeof(ta_crypto.ctx_new));
  ta_crypto_sym(h, "EVP_MD_CTX_free", &ta_crypto.ctx_free, sizeof(ta_crypto.ctx_free));
  ta_crypto_sym(h, "EVP_DigestInit_ex", &ta_crypto.init, sizeof(ta_crypto.init));
  ta_crypto_sym(h, "EVP_DigestUpdate", &ta_crypto.update, sizeof(ta_crypto.update));
  ta_crypto_sym(h, "EVP_DigestFinal_ex", &ta_crypto.final, sizeof(ta_crypto.final));
  ta_crypto_sym(h, "EVP_EncodeBlock", &ta_crypto.encode, sizeof(ta_crypto.encode));
  ta_crypto_sym(h, "EVP_DecodeBlock", &ta_crypto.decode, sizeof(ta_crypto.decode));
  /* Kept loaded: the pointers above stay valid for the life of the process. */
}

#define TA_CRYPTO_LOAD() pthread_once(&ta_crypto_once, ta_crypto_open)

const EVP_MD *EVP_sha256(void) {
  TA_CRYPTO_LOAD();
  return ta_crypto.sha256 ? ta_crypto.sha256() : NULL;
}

EVP_MD_CTX *EVP_MD_CTX_new(void) {
  TA_CRYPTO_LOAD();
  return ta_crypto.ctx_new ? ta_crypto.ctx_new() : NULL;
}

void EVP_MD_CTX_free(EVP_MD_CTX *ctx) {
  TA_CRYPTO_LOAD();
  if (ta_crypto.ctx_free) ta_crypto.ctx_free(ctx); /* a ctx exists only if the library was loaded */
}

int EVP_DigestInit_ex(EVP_MD_CTX *ctx, const EVP_MD *type, ENGINE *impl) {
  TA_CRYPTO_LOAD();
  return ta_crypto.init ? ta_crypto.init(ctx, type, impl) : 0;
}

int EVP_DigestUpdate(EVP_MD_CTX *ctx, const void *d, size_t cnt) {
  TA_CRYPTO_LOAD();
  return ta_crypto.update ? ta_crypto.update(ctx, d, cnt) : 0;
}

int EVP_DigestFinal_ex(EVP_MD_CTX *ctx, unsigned char *md, unsigned int *s) {
  TA_CRYPTO_LOAD();
  return ta_crypto.final ? ta_crypto.final(ctx, md, s) : 0;
}

int EVP_EncodeBlock(unsigned char *t, const unsigned char *f, int n) {
  TA_CRYPTO_LOAD();
  return ta_crypto.encode ? ta_crypto.encode(t, f, n) : -1;
}

int EVP_DecodeBlock(unsigned char *t, const unsigned char *f, int n) {
  TA_CRYPTO_LOAD();
  return ta_crypto.decode ? ta_crypto.decode(t, f, n) : -1;
}
