/* npy.c: reading and writing NumPy .npy files (versions 1.0 and 2.0, little-endian, C order). */
#include "graph_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char magic[6] = "\x93NUMPY";

/* Our dtypes in numpy's spelling; bf16 travels as raw uint16 bits. */
static const struct {
	enum hgc_dtype dt;
	const char *descr;
} descrs[] = {
	{HGC_DT_F32, "<f4"}, {HGC_DT_BF16, "<u2"}, {HGC_DT_S32, "<i4"}, {HGC_DT_S8, "|i1"},
	{HGC_DT_U8, "|u1"},  {HGC_DT_BOOL, "|b1"}, {HGC_DT_S8, "<i1"},  {HGC_DT_U8, "<u1"},
	{HGC_DT_BOOL, "<b1"},
};

/* The numpy descr of dt, or NULL. */
static const char *descr_of(enum hgc_dtype dt)
{
	size_t i;

	for (i = 0; i < sizeof(descrs) / sizeof(descrs[0]); i++)
		if (descrs[i].dt == dt)
			return descrs[i].descr;
	return NULL;
}

/* The dict numpy expects, padded with spaces so the data starts 64-byte aligned. */
static char *make_header(enum hgc_dtype dt, int ndims, const int64_t *dims, size_t *len,
			 int *version)
{
	char *h = hgc_xmalloc(256 + (size_t)ndims * 24);
	size_t n, prefix;
	int i;

	n = (size_t)sprintf(h, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr_of(dt));
	for (i = 0; i < ndims; i++)
		n += (size_t)sprintf(h + n, "%s%lld", i ? ", " : "", (long long)dims[i]);
	n += (size_t)sprintf(h + n, "%s), }", ndims == 1 ? "," : "");
	*version = n + 11 > 65535 ? 2 : 1;
	prefix = *version == 1 ? 10 : 12;
	while ((prefix + n + 1) % 64)
		h[n++] = ' ';
	h[n++] = '\n';
	*len = n;
	return h;
}

/* Write data (dense, row-major) as a .npy file. */
int hgc_npy_write(const char *path, enum hgc_dtype dt, int ndims, const int64_t *dims,
		  const void *data, struct hgc_diag *d)
{
	unsigned char pre[12];
	size_t hlen, nbytes = (size_t)hgc_dims_prod(ndims, dims) * hgc_dtype_size(dt);
	int version, ok;
	char *h;
	FILE *f;

	if (!descr_of(dt) || ndims < 0 || ndims > HGC_MAX_DIMS)
		return hgc_error(d, NULL, "%s: cannot store %s tensors with %d dims in npy", path,
				 hgc_dtype_name(dt), ndims);
	f = fopen(path, "wb");
	if (!f)
		return hgc_error(d, NULL, "cannot open %s for writing: %s", path, strerror(errno));
	h = make_header(dt, ndims, dims, &hlen, &version);
	memcpy(pre, magic, 6);
	pre[6] = (unsigned char)version;
	pre[7] = 0;
	pre[8] = hlen & 0xff, pre[9] = (hlen >> 8) & 0xff;
	pre[10] = (hlen >> 16) & 0xff, pre[11] = (hlen >> 24) & 0xff;
	ok = fwrite(pre, 1, version == 1 ? 10 : 12, f) == (version == 1 ? 10u : 12u) &&
	     fwrite(h, 1, hlen, f) == hlen && (!nbytes || fwrite(data, 1, nbytes, f) == nbytes);
	free(h);
	if (fclose(f) || !ok)
		return hgc_error(d, NULL, "cannot write %s: %s", path, strerror(errno));
	return 0;
}

/* A cursor over the header dict. */
struct hparse {
	const char *p;
	char descr[16];
	int fortran;		/* -1 until seen */
	int ndims;		/* -1 until seen */
	int64_t dims[HGC_MAX_DIMS + 1];
};

/* Skip blanks. */
static void skip(struct hparse *h)
{
	while (*h->p == ' ' || *h->p == '\t' || *h->p == '\n')
		h->p++;
}

/* A quoted string into out (size n); -1 if malformed. */
static int parse_str(struct hparse *h, char *out, size_t n)
{
	char q = *h->p;
	size_t k = 0;

	if (q != '\'' && q != '"')
		return -1;
	for (h->p++; *h->p && *h->p != q; h->p++)
		if (k + 1 < n)
			out[k++] = *h->p;
	if (*h->p != q)
		return -1;
	h->p++;
	out[k] = 0;
	return 0;
}

/* A shape tuple "(2, 3)", "(5,)" or "()"; -1 if malformed or too deep. */
static int parse_shape(struct hparse *h)
{
	long long v;
	char *end;

	if (*h->p++ != '(')
		return -1;
	for (h->ndims = 0;; h->ndims++) {
		skip(h);
		if (*h->p == ')')
			break;
		v = strtoll(h->p, &end, 10);
		if (end == h->p || v < 0)
			return -1;
		h->dims[h->ndims < HGC_MAX_DIMS ? h->ndims : HGC_MAX_DIMS] = v;
		h->p = end;
		skip(h);
		if (*h->p == ',')
			h->p++;
		else if (*h->p != ')')
			return -1;
	}
	h->p++;
	return 0;
}

/* One "key: value" of the dict. */
static int parse_item(struct hparse *h)
{
	char key[32], junk[64];

	if (parse_str(h, key, sizeof(key)))
		return -1;
	skip(h);
	if (*h->p++ != ':')
		return -1;
	skip(h);
	if (!strcmp(key, "descr"))
		return parse_str(h, h->descr, sizeof(h->descr));
	if (!strcmp(key, "shape"))
		return parse_shape(h);
	if (!strncmp(h->p, "True", 4) || !strncmp(h->p, "False", 5)) {
		if (!strcmp(key, "fortran_order"))
			h->fortran = *h->p == 'T';
		h->p += *h->p == 'T' ? 4 : 5;
		return 0;
	}
	return parse_str(h, junk, sizeof(junk));
}

/* The whole dict "{...}". */
static int parse_dict(struct hparse *h)
{
	skip(h);
	if (*h->p++ != '{')
		return -1;
	for (;;) {
		skip(h);
		if (*h->p == '}')
			return 0;
		if (parse_item(h))
			return -1;
		skip(h);
		if (*h->p == ',')
			h->p++;
		else if (*h->p != '}')
			return -1;
	}
}

/* Check the parsed header and find its dtype. */
static int check_header(const char *path, struct hparse *h, enum hgc_dtype *dt,
			struct hgc_diag *d)
{
	size_t i;

	if (h->ndims < 0 || h->fortran < 0 || !h->descr[0])
		return hgc_error(d, NULL, "%s: malformed npy header", path);
	if (h->ndims > HGC_MAX_DIMS)
		return hgc_error(d, NULL, "%s: too many dims (at most %d)", path, HGC_MAX_DIMS);
	if (h->fortran)
		return hgc_error(d, NULL, "%s: fortran_order arrays are not supported", path);
	for (i = 0; i < sizeof(descrs) / sizeof(descrs[0]); i++) {
		if (!strcmp(descrs[i].descr, h->descr)) {
			*dt = descrs[i].dt;
			return 0;
		}
	}
	return hgc_error(d, NULL, "%s: unsupported dtype '%s'", path, h->descr);
}

/* The header's length and offset after the magic and version; -1 with d set. */
static int read_prefix(const char *path, const unsigned char *b, size_t len, size_t *hlen,
		       size_t *off, struct hgc_diag *d)
{
	if (len < 10 || memcmp(b, magic, 6))
		return hgc_error(d, NULL, "%s: not a NumPy file (bad magic)", path);
	if (b[6] == 1) {
		*hlen = b[8] | (size_t)b[9] << 8;
		*off = 10;
	} else if (b[6] == 2 || b[6] == 3) {
		if (len < 12)
			return hgc_error(d, NULL, "%s: truncated header", path);
		*hlen = b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
		*off = 12;
	} else {
		return hgc_error(d, NULL, "%s: unsupported npy version %d.%d", path, b[6], b[7]);
	}
	if (*hlen > len - *off)
		return hgc_error(d, NULL, "%s: truncated header", path);
	return 0;
}

/* Parse the header at b + off into h and the dtype; -1 with d set. */
static int read_header(const char *path, const char *b, size_t hlen, struct hparse *h,
		       enum hgc_dtype *dt, struct hgc_diag *d)
{
	char *text = hgc_xmalloc(hlen + 1);
	int r;

	memcpy(text, b, hlen);
	text[hlen] = 0;
	memset(h, 0, sizeof(*h));
	h->p = text;
	h->fortran = h->ndims = -1;
	r = parse_dict(h) ? hgc_error(d, NULL, "%s: malformed npy header", path)
			  : check_header(path, h, dt, d);
	free(text);
	return r;
}

/* Bytes of data the shape needs; SIZE_MAX if that overflows. */
static size_t data_size(const struct hparse *h, enum hgc_dtype dt)
{
	size_t n = hgc_dtype_size(dt);
	int i;

	for (i = 0; i < h->ndims; i++) {
		if (h->dims[i] && n > SIZE_MAX / 2 / (size_t)h->dims[i])
			return SIZE_MAX;
		n *= (size_t)h->dims[i];
	}
	return n;
}

/* Read a .npy file into a malloc'ed dense buffer; its dtype and shape into dt, ndims, dims. */
void *hgc_npy_read(const char *path, enum hgc_dtype *dt, int *ndims, int64_t *dims,
		   struct hgc_diag *d)
{
	size_t len, hlen = 0, off = 0, need;
	struct hparse h;
	char *buf = hgc_read_file(path, &len, d);
	void *data = NULL;

	if (!buf)
		return NULL;
	if (read_prefix(path, (unsigned char *)buf, len, &hlen, &off, d) ||
	    read_header(path, buf + off, hlen, &h, dt, d))
		goto free_buf;
	need = data_size(&h, *dt);
	if (len - off - hlen < need) {
		if (need == SIZE_MAX)
			hgc_error(d, NULL, "%s: the shape is too large", path);
		else
			hgc_error(d, NULL, "%s: truncated data (expected %zu bytes, got %zu)", path,
				  need, len - off - hlen);
		goto free_buf;
	}
	data = hgc_xmalloc(need ? need : 1);
	memcpy(data, buf + off + hlen, need);
	*ndims = h.ndims;
	memcpy(dims, h.dims, (size_t)h.ndims * sizeof(*dims));
free_buf:
	free(buf);
	return data;
}
