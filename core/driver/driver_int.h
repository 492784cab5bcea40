/*
 * driver_int.h: what driver.c (the pipeline) and cache.c (the cache) share:
 * the process table of compiled graphs and the disk cache of object code.
 */
#ifndef HGC_DRIVER_INT_H
#define HGC_DRIVER_INT_H

#include "driver.h"

/* cache.c: the table */
/* The compiled graph of key, with one more reference, or NULL. */
struct hgc_driver_graph *hgc_driver_cache_find(const char *key);
/* A new compiled graph for code (taken) under key, kept in the table; the caller's
   reference is the one returned. */
struct hgc_driver_graph *hgc_driver_cache_add(const char *key, struct hgc_compiled *code,
					      enum hgc_driver_backend b, int nin, int nout,
					      char *plan, double seconds);

/* cache.c: the disk */
/* The symbol prefix of an object stored under key: "hgc" KEY "_". */
void hgc_driver_obj_prefix(const char *key, char buf[40]);
/*
 * The object of key loaded into the JIT, or NULL: no file (a miss), or a
 * file that is unreadable, truncated or corrupt (info->note says so; the
 * caller compiles and rewrites it).  nargs must match the stored count.
 */
struct hgc_compiled *hgc_driver_disk_load(const struct hgc_driver_opts *o, const char *key,
					  int nargs, char **plan, struct hgc_driver_info *info);
/* Store an object and its plan under key: a temporary file renamed into place.  A
   failure is only noted in info (the cache is an optimization). */
void hgc_driver_disk_store(const struct hgc_driver_opts *o, const char *key, const void *obj,
			   size_t size, const char *plan, int nargs, bool has_init,
			   struct hgc_driver_info *info);
/* Whether o wants the disk cache (and HGC_CACHE is not off) for its backend. */
bool hgc_driver_disk_on(const struct hgc_driver_opts *o);

#endif
