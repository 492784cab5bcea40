/*
 * onednn_int.h: what onednn.c shares with onednn_graph.c (the process's
 * engine and stream, status checks, one-off reorders).  Only bench/ files
 * that link oneDNN include it.
 */
#ifndef HGC_BENCH_ONEDNN_INT_H
#define HGC_BENCH_ONEDNN_INT_H

#include <oneapi/dnnl/dnnl.h>

#include "bench/bench.h"

/* onednn.c */
/* A failed call as a diagnostic: 0, HGC_BENCH_NA for "unimplemented", else -1. */
int hgc_bench_dnnl_check(dnnl_status_t s, const char *what, struct hgc_diag *d);
/* The engine and stream, created on first use. */
int hgc_bench_dnnl_start(dnnl_engine_t *engine, dnnl_stream_t *stream, struct hgc_diag *d);
/* Copy from one memory into another of any layout, now. */
int hgc_bench_dnnl_reorder(dnnl_memory_t from, dnnl_memory_t to, struct hgc_diag *d);

#endif
