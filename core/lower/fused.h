/*
 * fused.h: lowering fused ops (core/graph/fused.h) through the templates.
 * hgc_fused_lower_graph is hgc_tmpl_lower_graph with a fusion plan: the
 * anchor op of each fused op is instantiated through its template and its
 * member ops are lowered at the post-op anchor the template's cost
 * formulas rate best, over views on the anchor's slice; the members are
 * then skipped by the graph lowering.  Ops outside fused ops go through
 * hgc_tmpl_lower_tunable as before.  A region of fusible ops (no anchor)
 * is lowered at its first op as one loop over blocks of rows.  See
 * docs/fusion.md.
 */
#ifndef HGC_LOWER_FUSED_H
#define HGC_LOWER_FUSED_H

#include "../graph/fused.h"
#include "tmpl.h"

/*
 * hgc_lower_graph of g with templates (o) and the fusion plan f (NULL or
 * empty: no fusion).  base gives the other lowering options (its hooks are
 * replaced).  What was fused where is logged into o->log.
 */
struct hgc_tir_module *hgc_fused_lower_graph(const struct hgc_graph *g,
					     const struct hgc_lower_opts *base,
					     struct hgc_tmpl_opts *o, const struct hgc_fusion *f,
					     struct hgc_diag *d);

/* Whether the rules switch pass NAME off (`pass NAME = off;`). */
bool hgc_fused_pass_off(const struct hgc_tmpl_rule *r, int n, const char *name);

#endif
