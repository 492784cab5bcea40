/*
 * main.c: hgc-bench, the harness behind `make bench`.  For every workload
 * and thread count it prepares each column (hgc, oneDNN with plain layouts,
 * oneDNN with its preferred weight layout, for conv oneDNN with every
 * layout its own, OpenBLAS) in this one process, times the OpenMP columns
 * together in interleaved rounds (measure.c) and OpenBLAS apart, checks
 * each result on sampled outputs, prints a table row and collects it for
 * the JSON file.
 */
#include "bench/bench.h"

#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The columns, in table and JSON order. */
static const struct hgc_bench_peer *const peers[] = {
	&hgc_bench_peer_hgc, &hgc_bench_peer_hgc_nofusion, &hgc_bench_peer_onednn,
	&hgc_bench_peer_onednn_packed, &hgc_bench_peer_onednn_blocked, &hgc_bench_peer_openblas,
};
enum { COL_HGC, COL_NOFUSION, COL_ONEDNN, COL_PACKED, COL_BLOCKED, COL_OPENBLAS, NCOLS };

/* What became of one cell. */
enum cell { CELL_MEASURED, CELL_NA, CELL_WRONG, CELL_ERROR };

/* One row of the table: a workload at one thread count. */
struct row {
	const struct hgc_bench_work *w;
	int threads;
	double ms[NCOLS];		/* median ms when measured */
	enum cell cell[NCOLS];
	const char *impl[NCOLS];	/* implementation name when measured */
	double compile_ms;		/* hgc's compile time, < 0 when none */
	double gflops, peak_frac;	/* < 0 when there is nothing to compute them from */
};

/* Everything one run of the harness keeps. */
struct bench {
	struct hgc_bench_opts o;
	struct hgc_bench_peak peak;
	struct hgc_arena a;
	struct hgc_vec work;		/* of struct hgc_bench_work */
	struct hgc_vec rows;		/* of struct row */
	struct hgc_vec reasons;		/* of const char *: why cells read "n/a" */
	int failed;			/* a wrong result or an error happened */
};

static const char usage[] =
	"usage: hgc-bench [--filter SUBSTR] [--threads 1,2] [--quick] [--json PATH]\n"
	"                 [--conv-mb N] [--time SEC] [--fastest] [--list] [--openblas-pinned]\n"
	"Measures hgc, oneDNN (plain, packed weights, blocked conv) and OpenBLAS in one process.\n"
	"  --filter SUBSTR  only rows whose name contains SUBSTR\n"
	"  --threads LIST   thread counts, comma-separated (default 1,2)\n"
	"  --quick          a small subset with shorter timing\n"
	"  --json PATH      write the rows as JSON\n"
	"  --conv-mb N      run convolutions at batch N (default 4; the files say 50)\n"
	"  --time SEC       timed seconds per measurement (default 0.3, quick 0.1)\n"
	"  --fastest        report each cell's fastest run instead of the median (for\n"
	"                   A/B comparisons on a busy machine: preemption only adds time)\n"
	"  --list           list the workloads and exit\n"
	"  --openblas-pinned  leave OpenBLAS on the pinned main thread (its threads then\n"
	"                   share one core: shows why the harness unpins it)\n"
	"Shape files come from $HGC_ANCHORS or ../shared/anchors beside the repository\n"
	"(or beside the one a local clone came from).\n";

/* "1,2" into o->threads. */
static int parse_threads(struct hgc_bench_opts *o, const char *s)
{
	char *end;
	long v;

	o->nthreads = 0;
	do {
		v = strtol(s, &end, 10);
		if (end == s || v < 1 || v > 1024 || o->nthreads == 4 || (*end && *end != ','))
			return -1;
		o->threads[o->nthreads++] = (int)v;
		s = end + (*end == ',');
	} while (*end);
	return 0;
}

/* Options into b->o; 1 for --list, -1 on a usage error. */
static int parse_args(struct bench *b, int argc, char **argv)
{
	static const struct option longs[] = {
		{"filter", 1, 0, 'f'}, {"threads", 1, 0, 't'}, {"quick", 0, 0, 'q'},
		{"json", 1, 0, 'j'}, {"conv-mb", 1, 0, 'm'}, {"time", 1, 0, 's'},
		{"list", 0, 0, 'l'}, {"help", 0, 0, 'h'}, {"openblas-pinned", 0, 0, 'p'},
		{"fastest", 0, 0, 'F'},
		{0, 0, 0, 0},
	};
	struct hgc_bench_opts *o = &b->o;
	int c, list = 0;

	*o = (struct hgc_bench_opts){.threads = {1, 2}, .nthreads = 2, .conv_mb = 4,
				     .budget = -1, .min_iters = 5, .max_iters = 50};
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		if (c == 'f')
			o->filter = optarg;
		else if (c == 't' && parse_threads(o, optarg) < 0)
			return fprintf(stderr, "hgc-bench: bad --threads '%s'\n", optarg), -1;
		else if (c == 'q')
			o->quick = 1;
		else if (c == 'j')
			o->json = optarg;
		else if (c == 'm' && (o->conv_mb = atol(optarg)) < 1)
			return fprintf(stderr, "hgc-bench: bad --conv-mb '%s'\n", optarg), -1;
		else if (c == 's' && (o->budget = atof(optarg)) <= 0)
			return fprintf(stderr, "hgc-bench: bad --time '%s'\n", optarg), -1;
		else if (c == 'l')
			list = 1;
		else if (c == 'F')
			o->fastest = 1;
		else if (c == 'p')
			hgc_bench_openblas_keep_pinned(1);
		else if (c == 'h')
			return fputs(usage, stdout), 2;
		else if (c == '?')
			return fputs(usage, stderr), -1;
	}
	if (optind < argc)
		return fprintf(stderr, "hgc-bench: unexpected argument '%s'\n", argv[optind]), -1;
	if (o->budget < 0)
		o->budget = o->quick ? 0.1 : 0.3;
	return list;
}

/* Remember why a cell is not available (each reason once). */
static void add_reason(struct bench *b, const char *text)
{
	size_t i, n;

	if (!strncmp(text, "hgc: error: ", 12))
		text += 12;
	n = strcspn(text, "\n");

	for (i = 0; i < b->reasons.len; i++)
		if (!strncmp(HGC_VEC_AT(&b->reasons, const char *, i), text, n) &&
		    !HGC_VEC_AT(&b->reasons, const char *, i)[n])
			return;
	*(const char **)hgc_vec_push(&b->reasons) = hgc_arena_strndup(&b->a, text, n);
}

/* tm's final run on a poisoned dst (so a column that writes nothing fails),
   and its result checked into row r's column col. */
static void final_run_and_check(struct bench *b, struct hgc_bench_timing *tm,
				struct hgc_bench_io *io, struct row *r, int col)
{
	const struct hgc_bench_kernel *k = tm->k;
	struct hgc_diag d;

	hgc_diag_init(&d);
	hgc_bench_io_poison(io);
	hgc_bench_final_run(tm, &b->o);
	r->ms[col] = tm->ms;
	r->cell[col] = CELL_MEASURED;
	if ((k->fetch && k->fetch(k->ctx, io, &d)) || hgc_bench_io_check(io, r->w, &d)) {
		fprintf(stderr, "hgc-bench: %s, threads %d, %s: wrong result\n%s", r->w->name,
			r->threads, peers[col]->name, hgc_diag_text(&d));
		r->cell[col] = CELL_WRONG;
		b->failed = 1;
	}
	hgc_diag_release(&d);
}

/* Prepare column col of row r into *k (call inside the peer's begin/end);
   0 when it is ready to time, else the cell is settled (n/a, or an error). */
static int prepare(struct bench *b, struct hgc_bench_io *io, struct row *r, int col,
		   struct hgc_bench_kernel *k)
{
	const struct hgc_bench_peer *p = peers[col];
	struct hgc_diag d;
	int rc;

	r->cell[col] = CELL_NA;
	if (!p->prepare[r->w->shape.kind])
		return -1;
	hgc_diag_init(&d);
	hgc_bench_io_poison(io);
	*k = (struct hgc_bench_kernel){0};
	rc = p->prepare[r->w->shape.kind](r->w, io, k, &d);
	if (rc == HGC_BENCH_NA) {
		add_reason(b, hgc_diag_text(&d));
	} else if (rc) {
		fprintf(stderr, "hgc-bench: %s, threads %d, %s:\n%s", r->w->name, r->threads,
			p->name, hgc_diag_text(&d));
		r->cell[col] = CELL_ERROR;
		b->failed = 1;
	}
	hgc_diag_release(&d);
	if (rc)
		return -1;
	r->impl[col] = hgc_arena_strdup(&b->a, k->impl ? k->impl : "");
	if (col == COL_HGC)
		r->compile_ms = k->compile_ms;
	return 0;
}

/* A timed column's final run, its figure and check into the row, and its release. */
static void settle(struct bench *b, struct hgc_bench_io *io, struct row *r, int col,
		   struct hgc_bench_timing *tm, struct hgc_bench_kernel *k)
{
	final_run_and_check(b, tm, io, r, col);
	hgc_bench_timing_release(tm);
	k->release(k->ctx);
}

/* A column with threads of its own (OpenBLAS): timed alone, by the same
   rule, inside one begin/end of its peer. */
static void apart_cell(struct bench *b, struct hgc_bench_io *io, struct row *r, int col)
{
	const struct hgc_bench_peer *p = peers[col];
	struct hgc_bench_kernel k;
	struct hgc_bench_timing tm = {.k = &k};

	r->cell[col] = CELL_NA;
	if (!p->prepare[r->w->shape.kind])
		return;		/* no begin: OpenBLAS's end sleeps */
	p->begin(r->threads);
	if (prepare(b, io, r, col, &k) == 0) {
		hgc_bench_warm_up(&tm, &b->o);
		hgc_bench_rounds(&tm, 1, &b->o);
		settle(b, io, r, col, &tm, &k);
	}
	if (p->end)
		p->end();
}

/*
 * The cells of row r: every OpenMP column prepared (all their buffers live
 * at once) and warmed up, timed together in interleaved rounds (measure.c)
 * and checked; then each column that is timed apart.
 */
static void row_cells(struct bench *b, struct hgc_bench_io *io, struct row *r)
{
	struct hgc_bench_kernel k[NCOLS];
	struct hgc_bench_timing tm[NCOLS];
	int col, of[NCOLS], n = 0, i;

	for (col = 0; col < NCOLS; col++) {
		const struct hgc_bench_peer *p = peers[col];

		if (p->apart)
			continue;
		p->begin(r->threads);
		if (prepare(b, io, r, col, &k[n]) == 0) {
			tm[n] = (struct hgc_bench_timing){.k = &k[n], .enter = p->begin,
							  .leave = p->end, .threads = r->threads};
			of[n++] = col;
		}
		if (p->end)
			p->end();
	}
	for (i = 0; i < n; i++)
		hgc_bench_warm_up(&tm[i], &b->o);
	if (n)
		hgc_bench_rounds(tm, n, &b->o);
	for (i = 0; i < n; i++) {
		peers[of[i]]->begin(r->threads);
		settle(b, io, r, of[i], &tm[i], &k[i]);
		if (peers[of[i]]->end)
			peers[of[i]]->end();
	}
	for (col = 0; col < NCOLS; col++)
		if (peers[col]->apart)
			apart_cell(b, io, r, col);
}

/* GFLOP/s (from hgc when measured, else oneDNN packed) and the fraction of peak. */
static void rates(const struct bench *b, struct row *r)
{
	int col = r->cell[COL_HGC] == CELL_MEASURED ? COL_HGC : COL_PACKED;
	double core = r->w->dt == HGC_BENCH_INT8 ? b->peak.i8_core : b->peak.f32_core;

	r->gflops = r->peak_frac = -1;
	if (r->cell[col] != CELL_MEASURED || r->ms[col] <= 0 || r->w->flops <= 0)
		return;
	r->gflops = r->w->flops / (r->ms[col] * 1e-3) * 1e-9;
	if (core > 0)
		r->peak_frac = r->gflops / (core * r->threads);
}

/* A time for the table: "-" when not available. */
static const char *fmt_ms(char *buf, const struct row *r, int col)
{
	static const char *const what[] = {"", "-", "WRONG", "error"};
	double ms = r->ms[col];

	if (r->cell[col] != CELL_MEASURED)
		return what[r->cell[col]];
	snprintf(buf, 16, ms < 1 ? "%.4f" : ms < 100 ? "%.3f" : "%.1f", ms);
	return buf;
}

/* The table's header. */
static void print_header(void)
{
	printf("\n%-40s %3s %10s %10s %10s %10s %10s %10s %8s %6s %8s  %s\n", "name", "thr",
	       "hgc ms", "nofus ms", "onednn ms", "packed ms", "blocked ms", "oblas ms", "GFLOP/s",
	       "%peak", "hgc/dnnl", "onednn impl (plain / packed / blocked)");
}

/* The fastest measured oneDNN column of r (COL_ONEDNN when none is). */
static int best_onednn(const struct row *r)
{
	int i, bc = COL_ONEDNN;

	for (i = COL_PACKED; i <= COL_BLOCKED; i++)
		if (r->cell[i] == CELL_MEASURED &&
		    (r->cell[bc] != CELL_MEASURED || r->ms[i] < r->ms[bc]))
			bc = i;
	return bc;
}

/* One table row. */
static void print_row(const struct row *r)
{
	char c[NCOLS][16], g[16] = "-", f[16] = "-", s[16] = "-";
	int bc = best_onednn(r);
	double best = r->cell[bc] == CELL_MEASURED ? r->ms[bc] : -1;

	if (r->gflops >= 0)
		snprintf(g, sizeof(g), "%.1f", r->gflops);
	if (r->peak_frac >= 0)
		snprintf(f, sizeof(f), "%.1f", 100 * r->peak_frac);
	if (r->cell[COL_HGC] == CELL_MEASURED && best > 0)
		snprintf(s, sizeof(s), "%.2fx", best / r->ms[COL_HGC]);
	printf("%-40s %3d %10s %10s %10s %10s %10s %10s %8s %6s %8s  %s / %s / %s\n", r->w->name,
	       r->threads, fmt_ms(c[0], r, 0), fmt_ms(c[1], r, 1), fmt_ms(c[2], r, 2),
	       fmt_ms(c[3], r, 3), fmt_ms(c[4], r, 4), fmt_ms(c[5], r, 5), g, f, s,
	       r->impl[COL_ONEDNN] ? r->impl[COL_ONEDNN] : "-",
	       r->impl[COL_PACKED] ? r->impl[COL_PACKED] : "-",
	       r->impl[COL_BLOCKED] ? r->impl[COL_BLOCKED] : "-");
	fflush(stdout);
}

/* The largest thread count asked for. */
static int max_threads(const struct hgc_bench_opts *o)
{
	int i, m = 1;

	for (i = 0; i < o->nthreads; i++)
		if (o->threads[i] > m)
			m = o->threads[i];
	return m;
}

/* The reference samples from oneDNN's op-by-op result (f32 against f32: twice
   the spec's tolerance), for graphs the interpreter would take minutes on. */
static int onednn_ref(struct hgc_bench_io *io, const struct hgc_bench_work *w,
		      struct hgc_diag *d)
{
	struct hgc_bench_kernel k = {0};

	if (hgc_bench_onednn_graph(w, io, 0, &k, d))
		return -1;
	k.run(k.ctx);
	hgc_bench_io_take_samples(io, w, io->dst, 2);
	k.release(k.ctx);
	io->ref_from = "onednn";
	return 0;
}

/* A graph's reference samples (interpreter, or oneDNN beyond its reach), with
   the most threads asked for. */
static int graph_ref(struct bench *b, struct hgc_bench_io *io, const struct hgc_bench_work *w)
{
	struct hgc_diag d;
	int r;

	hgc_diag_init(&d);
	hgc_bench_omp_threads(max_threads(&b->o));
	r = hgc_bench_io_graph_ref(io, w, &d);
	if (r == 1)
		r = onednn_ref(io, w, &d);
	if (r < 0) {
		fprintf(stderr, "hgc-bench: %s: no reference:\n%s", w->name, hgc_diag_text(&d));
		b->failed = 1;
	}
	hgc_diag_release(&d);
	return r;
}

/* Every thread count of one workload. */
static void workload(struct bench *b, const struct hgc_bench_work *w)
{
	struct hgc_bench_io io;
	struct row *r;
	int t;

	hgc_bench_io_init(&io, w);
	if (w->shape.kind == HGC_BENCH_GRAPH && graph_ref(b, &io, w) < 0) {
		hgc_bench_io_release(&io);
		return;
	}
	for (t = 0; t < b->o.nthreads; t++) {
		r = hgc_vec_push(&b->rows);
		r->w = w;
		r->threads = b->o.threads[t];
		r->compile_ms = -1;
		row_cells(b, &io, r);
		rates(b, r);
		print_row(r);
	}
	hgc_bench_io_release(&io);
}

/* A number, or null when negative (not measured). */
static json_t *num_or_null(double v)
{
	return v < 0 ? json_null() : json_real(v);
}

/* One row as a JSON object (a wrong result counts as not measured). */
static json_t *row_json(const struct row *r)
{
	static const char *const keys[NCOLS] = {"hgc_ms", "hgc_nofusion_ms", "onednn_ms",
						"onednn_packed_ms", "onednn_blocked_ms",
						"openblas_ms"};
	json_t *o = json_object();
	int i;

	json_object_set_new(o, "name", json_string(r->w->name));
	json_object_set_new(o, "threads", json_integer(r->threads));
	for (i = 0; i < NCOLS; i++)
		json_object_set_new(o, keys[i],
				    num_or_null(r->cell[i] == CELL_MEASURED ? r->ms[i] : -1));
	json_object_set_new(o, "gflops", num_or_null(r->gflops));
	json_object_set_new(o, "peak_frac", num_or_null(r->peak_frac));
	json_object_set_new(o, "compile_ms", num_or_null(r->compile_ms));
	json_object_set_new(o, "shape", json_string(r->w->shape_text));
	json_object_set_new(o, "set", json_string(r->w->set));
	return o;
}

/* Write every row to o.json. */
static int write_json(const struct bench *b)
{
	json_t *list = json_array();
	size_t i;
	int r;

	for (i = 0; i < b->rows.len; i++)
		json_array_append_new(list, row_json(&HGC_VEC_AT(&b->rows, struct row, i)));
	r = json_dump_file(list, b->o.json, JSON_INDENT(1) | JSON_REAL_PRECISION(6));
	json_decref(list);
	if (r)
		fprintf(stderr, "hgc-bench: cannot write %s\n", b->o.json);
	else
		printf("wrote %zu rows to %s\n", b->rows.len, b->o.json);
	return r ? -1 : 0;
}

/* An environment variable for the header. */
static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v ? v : "(unset)";
}

/* The 1-minute load average: other work on the machine skews every figure. */
static double loadavg(void)
{
	FILE *f = fopen("/proc/loadavg", "r");
	double l = -1;

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

/* Say at which batch the convolutions run, when it is not the shape file's. */
static void conv_note(const struct bench *b)
{
	const struct hgc_bench_work *w;
	size_t i;

	for (i = 0; i < b->work.len; i++) {
		w = &HGC_VEC_AT(&b->work, struct hgc_bench_work, i);
		if (w->shape.kind == HGC_BENCH_CONV && w->shape.conv.mb != w->file_mb) {
			printf("  conv rows run at mb %lld (the shape file says mb %lld)\n",
			       (long long)w->shape.conv.mb, (long long)w->file_mb);
			return;
		}
	}
}

/* hgc's counterpart of oneDNN's creation figures: the same MLP as a spec graph. */
static void print_hgc_create(struct bench *b)
{
	const struct hgc_spec *sp;
	struct hgc_diag d;
	double ms[3];

	if (!b->o.root)
		return;
	hgc_diag_init(&d);
	sp = hgc_bench_find_spec(hgc_arena_printf(&b->a, "%s/bench/specs/mlp_large.hgc", b->o.root),
				 "mlp_dlrm_top_b128", &d);
	if (sp && hgc_bench_hgc_create_ms(sp->graph, b->o.threads[0], ms, &d) == 0)
		printf("  hgc compile of that MLP (spec mlp_dlrm_top_b128, bias+ReLU fused), threads %d:"
		       " %.1f ms cold, %.2f ms from the disk cache, %.3f ms from memory\n",
		       b->o.threads[0], ms[0], ms[1], ms[2]);
	else
		printf("  hgc MLP compile timing failed:\n%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
}

/* What was measured with what, and the machine's limit. */
static void print_intro(struct bench *b)
{
	struct hgc_bench_peak *p = &b->peak;
	struct hgc_diag d;
	double cold, cached;
	int i;

	printf("hgc-bench: hgc against its peers in one process, %s of repeated runs\n",
	       b->o.fastest ? "fastest" : "median");
	printf("  %s\n  %s\n", hgc_bench_onednn_version(&b->a), hgc_bench_openblas_config());
	printf("  OMP_PROC_BIND=%s OMP_PLACES=%s; threads", env("OMP_PROC_BIND"), env("OMP_PLACES"));
	for (i = 0; i < b->o.nthreads; i++)
		printf("%c%d", i ? ',' : ' ', b->o.threads[i]);
	printf("; timing: per column a warm-up, then at least %d runs until %.2f s (at most %d),\n"
	       "  the OpenMP columns of a row interleaved in up to %d rotating rounds, OpenBLAS"
	       " apart; %s\n", b->o.min_iters, b->o.budget, b->o.max_iters, HGC_BENCH_ROUNDS,
	       b->o.fastest ? "fastest" : "median");
	printf("  load average before the run: %.2f (other processes skew the figures)\n",
	       loadavg());
	if (getenv("OPENBLAS_CORETYPE") || getenv("OPENBLAS_L2_SIZE"))
		printf("  warning: OPENBLAS_CORETYPE or OPENBLAS_L2_SIZE is set: OpenBLAS slows down\n");
	hgc_bench_peak_measure(p, max_threads(&b->o), b->o.quick ? 0.1 : 0.25);
	printf("  peak per core: %.1f GFLOP/s fp32 (%s), %.1f GOP/s int8 (%s)\n", p->f32_core,
	       p->f32_how, p->i8_core, p->i8_how);
	if (p->all_threads > 1)
		printf("  peak with %d threads: %.1f GFLOP/s fp32, %.1f GOP/s int8\n",
		       p->all_threads, p->f32_all, p->i8_all);
	hgc_diag_init(&d);
	hgc_bench_omp_threads(b->o.threads[0]);
	if (hgc_bench_onednn_mlp_create_ms(&cold, &cached, &d) == 0)
		printf("  oneDNN creation of the 5 primitives of MLP 479-1024-1024-512-256-1 (batch 128,"
		       " bias+ReLU fused), threads %d: %.2f ms cold, %.3f ms cached\n",
		       b->o.threads[0], cold, cached);
	else
		printf("  oneDNN MLP creation failed:\n%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	print_hgc_create(b);
	conv_note(b);
	printf("  GFLOP/s and %%peak come from hgc when measured, else from oneDNN packed;"
	       " %%peak = GFLOP/s / (per-core peak x threads);\n  hgc/dnnl = best oneDNN ms /"
	       " hgc ms; '-' = not available (reasons at the end)\n");
	printf("  mlp_/mha_/layernorm_ rows: spec graphs; nofus = hgc with `pass fuse = off`; oneDNN op by"
	       " op; checked on sampled outputs\n  against the interpreter, or against oneDNN plain"
	       " above %.0f GFLOP\n", HGC_BENCH_INTERP_MAX_FLOPS * 1e-9);
}

/* Print the workloads and what they run. */
static void list_work(const struct bench *b)
{
	size_t i;
	const struct hgc_bench_work *w;

	for (i = 0; i < b->work.len; i++) {
		w = &HGC_VEC_AT(&b->work, struct hgc_bench_work, i);
		printf("%-40s %-5s %8.3f GFLOP  %s\n", w->name,
		       w->dt == HGC_BENCH_INT8 ? "int8" : "f32", w->flops * 1e-9, w->shape_text);
	}
}

/* Running geometric mean of ratios. */
struct gmean {
	double log_sum;
	int n;
};

/* Add num / den to m when both cells were measured. */
static void gm_add(struct gmean *m, const struct row *r, int num, int den)
{
	if (r->cell[num] == CELL_MEASURED && r->cell[den] == CELL_MEASURED && r->ms[num] > 0 &&
	    r->ms[den] > 0) {
		m->log_sum += log(r->ms[num] / r->ms[den]);
		m->n++;
	}
}

/* "1.23x (n)" or "-". */
static const char *gm_fmt(char *buf, const struct gmean *m)
{
	if (!m->n)
		return "-";
	snprintf(buf, 24, "%.3fx (%d)", exp(m->log_sum / m->n), m->n);
	return buf;
}

/* The geometric means of one set at one thread count. */
static void summary_line(const struct bench *b, const char *set, int threads)
{
	struct gmean plain = {0}, packed = {0}, blocked = {0}, best = {0}, fusion = {0};
	char t[5][24];
	size_t i;
	int n = 0, slower = 0;

	for (i = 0; i < b->rows.len; i++) {
		const struct row *r = &HGC_VEC_AT(&b->rows, struct row, i);
		int bc = best_onednn(r);

		if (strcmp(r->w->set, set) || r->threads != threads)
			continue;
		n++;
		gm_add(&plain, r, COL_ONEDNN, COL_HGC);
		gm_add(&packed, r, COL_PACKED, COL_HGC);
		gm_add(&blocked, r, COL_BLOCKED, COL_HGC);
		gm_add(&best, r, bc, COL_HGC);
		gm_add(&fusion, r, COL_NOFUSION, COL_HGC);
		slower += r->cell[bc] == CELL_MEASURED && r->cell[COL_HGC] == CELL_MEASURED &&
			  r->ms[bc] < r->ms[COL_HGC];
	}
	printf("%-26s %3d %4d  %-14s %-14s %-14s %-14s %-14s %d\n", set, threads, n,
	       gm_fmt(t[0], &plain), gm_fmt(t[1], &packed), gm_fmt(t[2], &blocked),
	       gm_fmt(t[3], &best), gm_fmt(t[4], &fusion), slower);
}

/* Geometric-mean speedups of hgc per set and thread count (the issues' targets). */
static void print_summary(const struct bench *b)
{
	size_t i, j;
	int t;

	printf("\ngeometric means of speedups (other ms / hgc ms: above 1, hgc is faster;"
	       " (n) = rows with both measured)\n");
	printf("%-26s %3s %4s  %-14s %-14s %-14s %-14s %-14s %s\n", "set", "thr", "rows",
	       "onednn/hgc", "packed/hgc", "blocked/hgc", "best/hgc", "nofusion/hgc", "hgc slower");
	for (i = 0; i < b->work.len; i++) {
		const char *set = HGC_VEC_AT(&b->work, struct hgc_bench_work, i).set;

		for (j = 0; j < i; j++)
			if (!strcmp(HGC_VEC_AT(&b->work, struct hgc_bench_work, j).set, set))
				break;
		if (j < i)
			continue;
		for (t = 0; t < b->o.nthreads; t++)
			summary_line(b, set, b->o.threads[t]);
	}
}

/*
 * Measure the per-core peaks again after the rows: other work only ever
 * slows a timing, so the larger of the two is the better estimate of what
 * the core can do.  A peak loop slowed at the start made every row's %peak
 * too high (one run here measured 214 GFLOP/s where the machine reaches
 * 240, and 1024^3 showed "103.7%").  When the end's peak is larger, the
 * rows' GFLOP/s fractions in build/bench.json are computed from it, and a
 * line says so (the table printed as the rows ran keeps the first).
 */
static void remeasure_peak(struct bench *b)
{
	struct hgc_bench_peak end;
	double f = b->peak.f32_core, q = b->peak.i8_core;
	size_t i;

	hgc_bench_peak_measure(&end, 1, b->o.quick ? 0.1 : 0.25);
	if (end.f32_core <= f * 1.01 && end.i8_core <= q * 1.01)
		return;
	if (end.f32_core > f)
		b->peak.f32_core = end.f32_core;
	if (end.i8_core > q)
		b->peak.i8_core = end.i8_core;
	printf("peak per core at the end of the run: %.1f GFLOP/s fp32, %.1f GOP/s int8 (start:"
	       " %.1f, %.1f): build/bench.json's peak_frac uses the larger\n", end.f32_core,
	       end.i8_core, f, q);
	for (i = 0; i < b->rows.len; i++)
		rates(b, &HGC_VEC_AT(&b->rows, struct row, i));
}

/* Run every workload, then the summary and the JSON file. */
static int run_all(struct bench *b)
{
	size_t i;

	print_intro(b);
	print_header();
	for (i = 0; i < b->work.len; i++)
		workload(b, &HGC_VEC_AT(&b->work, struct hgc_bench_work, i));
	remeasure_peak(b);
	print_summary(b);
	for (i = 0; i < b->reasons.len; i++)
		printf("%s %s\n", i ? "      " : "n/a:", HGC_VEC_AT(&b->reasons, const char *, i));
	printf("load average after the run: %.2f\n", loadavg());
	if (b->o.json && write_json(b) < 0)
		return -1;
	return b->failed ? -1 : 0;
}

/* Load the workloads named by the options. */
static int load(struct bench *b)
{
	struct hgc_diag d;
	int r;

	b->o.anchors = hgc_bench_find_anchors(&b->a);
	if (!b->o.anchors) {
		fprintf(stderr, "hgc-bench: cannot find ../shared/anchors; set HGC_ANCHORS\n");
		return -1;
	}
	b->o.root = hgc_bench_find_root(&b->a);
	hgc_diag_init(&d);
	r = hgc_bench_workloads(&b->o, &b->a, &b->work, &d);
	if (r < 0)
		fprintf(stderr, "%s", hgc_diag_text(&d));
	else if (!b->work.len)
		r = -1, fprintf(stderr, "hgc-bench: no workload matches\n");
	hgc_diag_release(&d);
	return r;
}

int main(int argc, char **argv)
{
	struct bench b;
	int r;

	memset(&b, 0, sizeof(b));
	hgc_arena_init(&b.a);
	hgc_vec_init(&b.work, sizeof(struct hgc_bench_work));
	hgc_vec_init(&b.rows, sizeof(struct row));
	hgc_vec_init(&b.reasons, sizeof(const char *));
	r = parse_args(&b, argc, argv);
	if (r >= 0 && r != 2)
		r = load(&b) < 0 ? -1 : r;
	if (r == 1)
		list_work(&b);
	else if (r == 0)
		r = run_all(&b);
	hgc_bench_onednn_shutdown();
	hgc_bench_specs_release();
	hgc_vec_release(&b.reasons);
	hgc_vec_release(&b.rows);
	hgc_vec_release(&b.work);
	hgc_arena_release(&b.a);
	return r < 0 ? 1 : 0;
}
