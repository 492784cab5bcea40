/* npyio.c: --io and --inputs: tensors as DIR/<spec>.<tensor>.npy files. */
#include "tools/tools.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* DIR/<spec>.<tensor>.npy, malloc'ed (unnamed tensors: t<id>); '/' in names becomes '_'. */
static char *npy_path(const char *dir, const struct hgc_spec *sp, const struct hgc_tensor *t)
{
	char id[32];
	const char *tn = t->name;
	size_t len, base;
	char *p;

	if (!tn) {
		snprintf(id, sizeof(id), "t%d", t->id);
		tn = id;
	}
	len = strlen(dir) + strlen(sp->name) + strlen(tn) + 8;
	p = hgc_xmalloc(len);
	base = (size_t)snprintf(p, len, "%s/", dir);
	snprintf(p + base, len - base, "%s.%s.npy", sp->name, tn);
	for (char *q = p + base; *q; q++)
		if (*q == '/')
			*q = '_';
	return p;
}

/* Create dir and its parents, like mkdir -p; -1 with d set. */
int hgc_tool_mkdirs(const char *dir, struct hgc_diag *d)
{
	size_t n = strlen(dir);
	char *p = hgc_xmalloc(n + 1);
	struct stat st;
	int rc = 0;

	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n && !rc; i++) {
		if (p[i] != '/' && p[i])
			continue;
		p[i] = 0;
		if (mkdir(p, 0777) && errno != EEXIST)
			rc = hgc_error(d, NULL, "cannot create directory %s: %s", p, strerror(errno));
		p[i] = i < n ? '/' : 0;
	}
	if (!rc && (stat(dir, &st) || !S_ISDIR(st.st_mode)))
		rc = hgc_error(d, NULL, "%s is not a directory", dir);
	free(p);
	return rc;
}

/* Write t's dense buffer as DIR/<spec>.<tensor>.npy. */
int hgc_tool_npy_save(const char *dir, const struct hgc_spec *sp, const struct hgc_tensor *t,
		      const void *buf, struct hgc_diag *d)
{
	char *path = npy_path(dir, sp, t);
	int rc = hgc_npy_write(path, t->dtype, t->ndims, t->dims, buf, d);

	free(path);
	return rc;
}

/* Format a dtype and shape as "f32[2, 3]". */
static void shape_str(char *buf, size_t n, enum hgc_dtype dt, int ndims, const int64_t *dims)
{
	size_t len = (size_t)snprintf(buf, n, "%s[", hgc_dtype_name(dt));

	for (int i = 0; i < ndims && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? ", " : "",
					(long long)dims[i]);
	if (len < n)
		snprintf(buf + len, n - len, "]");
}

/* Does a file's dtype and shape match t? */
static bool same_type(const struct hgc_tensor *t, enum hgc_dtype dt, int ndims,
		      const int64_t *dims)
{
	if (dt != t->dtype || ndims != t->ndims)
		return false;
	for (int i = 0; i < ndims; i++)
		if (dims[i] != t->dims[i])
			return false;
	return true;
}

/* Read DIR/<spec>.<tensor>.npy into t's dense buffer; its type and shape must match. */
int hgc_tool_npy_load(const char *dir, const struct hgc_spec *sp, const struct hgc_tensor *t,
		      void *buf, struct hgc_diag *d)
{
	char *path = npy_path(dir, sp, t), want[256], got[256];
	int64_t dims[HGC_MAX_DIMS];
	enum hgc_dtype dt = HGC_DT_UNDEF;
	int ndims = 0, rc = 0;
	void *data = hgc_npy_read(path, &dt, &ndims, dims, d);

	if (!data) {
		rc = hgc_error(d, NULL, "--inputs: cannot use %s for input '%s' of spec '%s'",
			       path, t->name ? t->name : "?", sp->name);
	} else if (!same_type(t, dt, ndims, dims)) {
		shape_str(want, sizeof(want), t->dtype, t->ndims, t->dims);
		shape_str(got, sizeof(got), dt, ndims, dims);
		rc = hgc_error(d, NULL, "--inputs: %s holds %s, but input '%s' of spec '%s' is %s",
			       path, got, t->name ? t->name : "?", sp->name, want);
	} else {
		memcpy(buf, data, hgc_tensor_nbytes(t));
	}
	free(data);
	free(path);
	return rc;
}
