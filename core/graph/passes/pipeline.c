/*
 * pipeline.c: the graph passes before fusion, in order, each behind its
 * switch, each followed by a check of the graph and the dump hooks.
 * hgc_graph_passes_run reads as the pipeline.
 */
#include "passes_int.h"

#include <string.h>

/* One row per pass: its name, default and function. */
static const struct {
	const char *name;
	bool on;
	int (*fn)(struct hgc_graph *, const struct hgc_pass_switches *, struct hgc_diag *);
	const char *what;
} passes[HGC_PASS_COUNT] = {
#define X(e, n, on, f, what) [HGC_PASS_##e] = {n, on, f, what},
	HGC_PASS_LIST(X)
#undef X
};

/* The defaults: every pass on except the opt-in channels_last; no dump. */
void hgc_pass_switches_init(struct hgc_pass_switches *sw)
{
	int i;

	memset(sw, 0, sizeof(*sw));
	for (i = 0; i < HGC_PASS_COUNT; i++)
		sw->on[i] = passes[i].on;
}

/* The pass's name, as configs spell it. */
const char *hgc_pass_name(enum hgc_pass p)
{
	return (unsigned)p < HGC_PASS_COUNT ? passes[p].name : "?";
}

/* One line on what the pass does. */
const char *hgc_pass_what(enum hgc_pass p)
{
	return (unsigned)p < HGC_PASS_COUNT ? passes[p].what : "?";
}

/* The pass called name, HGC_PASS_COUNT if none is. */
enum hgc_pass hgc_pass_find(const char *name)
{
	int i;

	for (i = 0; i < HGC_PASS_COUNT; i++)
		if (!strcmp(passes[i].name, name))
			return (enum hgc_pass)i;
	return HGC_PASS_COUNT;
}

/* `pass NAME = on|off;` from a config entry. */
int hgc_pass_switches_set(struct hgc_pass_switches *sw, const char *name, const char *value,
			  const struct hgc_loc *loc, struct hgc_diag *d)
{
	enum hgc_pass p = hgc_pass_find(name);
	char list[512] = "";
	size_t n = 0;
	int i;

	if (p == HGC_PASS_COUNT) {
		for (i = 0; i < HGC_PASS_COUNT; i++)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
					      passes[i].name);
		return hgc_error(d, loc, "unknown pass '%s' (passes: %s)", name, list);
	}
	if (strcmp(value, "on") && strcmp(value, "off"))
		return hgc_error(d, loc, "pass '%s' must be on or off, not '%s'", name, value);
	sw->on[p] = !strcmp(value, "on");
	return 0;
}

/* A pipeline run: the graph, the switches, where errors go. */
struct run {
	struct hgc_graph *g;
	const struct hgc_pass_switches *sw;
	struct hgc_diag *d;
	int failed;
};

/* Run pass p if it is on (and nothing failed yet); check what it changed; dump and count. */
static void step(struct run *r, enum hgc_pass p)
{
	const struct hgc_pass_switches *sw = r->sw;
	double t0 = hgc_now();
	int changes;

	if (r->failed || !sw->on[p])
		return;
	changes = passes[p].fn(r->g, sw, r->d);
	if (changes < 0 || (changes > 0 && hgc_graph_check(r->g, r->d))) {
		hgc_note(r->d, NULL, "in graph pass '%s'", passes[p].name);
		r->failed = 1;
		return;
	}
	if (sw->stats) {
		sw->stats->runs[p]++;
		sw->stats->changes[p] += changes;
		sw->stats->seconds[p] += hgc_now() - t0;
	}
	if (sw->dump) {
		fprintf(sw->dump, "# after %s: %d change%s\n", passes[p].name, changes,
			changes == 1 ? "" : "s");
		hgc_graph_print(sw->dump, r->g);
	}
	if (sw->hook)
		sw->hook(sw->user, p, changes, r->g);
}

/* The graph passes before fusion, in order. */
int hgc_graph_passes_run(struct hgc_graph *g, const struct hgc_pass_switches *sw,
			 struct hgc_diag *d)
{
	struct hgc_pass_switches defaults;
	struct run r = {g, sw, d, 0};

	if (!sw) {
		hgc_pass_switches_init(&defaults);
		r.sw = &defaults;
	}
	if (hgc_graph_check(g, d))
		return -1;
	step(&r, HGC_PASS_DECOMPOSE);
	step(&r, HGC_PASS_CSE);
	step(&r, HGC_PASS_DCE);
	step(&r, HGC_PASS_CONSTFOLD);
	step(&r, HGC_PASS_LOWPREC);
	step(&r, HGC_PASS_DCE);
	step(&r, HGC_PASS_DECOMPOSE_QUANT);
	step(&r, HGC_PASS_CHANNELS_LAST);
	step(&r, HGC_PASS_TRANSPOSE);
	step(&r, HGC_PASS_CSE);
	step(&r, HGC_PASS_CONSTFOLD);
	step(&r, HGC_PASS_DCE);
	return r.failed ? -1 : 0;
}
