/*
 * cache.c: the compiled-graph cache.
 *
 * The key is a 128-bit FNV-1a hash of a text naming everything the code
 * depends on: the cache format, the compiler build (the GNU build ID of the
 * binary holding this code, which covers the hgc version and the templates
 * compiled into it), the backend, the CPU (LLVM's host triple, CPU and
 * features; the runtime ISA), the settings that change code (threads,
 * template rules, lowering options) and the graph as hgc_graph_print writes
 * it (dtypes, shapes, layouts, attributes, constness) plus the bytes of
 * constant data embedded in it.
 *
 * In memory, one process-wide table maps keys to compiled graphs, shared
 * and refcounted.  On disk, the JIT's object code lives in
 * DIR/<key>.hgc-obj: a header (magic, key, argument count, init flag, sizes,
 * hash of the rest), the plan (what the templates did, as text), then the
 * object.  Files are written to a temporary
 * name and renamed; a file that does not check out is ignored and
 * rewritten.
 */
#include "driver_int.h"
#include "heuristics/heuristics.h"
#include "runtime/runtime.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <omp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Bump when the key text or the file layout changes. */
#define FORMAT 2
/* Compiled graphs the table keeps when nobody else holds them. */
#define TABLE_CAP 256
/* Larger files are not ours. */
#define MAX_OBJECT (1L << 30)
/* The disk cache keeps at most this many files and bytes, dropping the least
   recently used (by modification time: a hit touches its file). */
#define DISK_FILES 1000
#define DISK_BYTES (1L << 30)
/* Temporary files older than this (seconds) are left over by a crash. */
#define STALE_TEMP 3600

__extension__ typedef unsigned __int128 u128;

/* A compiled graph in the table. */
struct entry {
	struct hgc_driver_graph pub;
	bool cached;		/* the table holds a reference */
	unsigned long used;	/* clock of the last find or add, for eviction */
};

/* Every live compiled graph (cached or still held by a caller). */
static struct {
	struct entry **v;
	size_t n, cap;
	unsigned long clock;
} table;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The disk file's header; the object follows. */
struct file_header {
	char magic[8];
	char key[32];
	uint32_t nargs;
	uint32_t has_init;
	uint64_t size;		/* of the object */
	uint64_t plan;		/* bytes of plan text before it */
	uint64_t sum[2];	/* FNV-1a 128 of the plan and the object */
};

static const char magic[8] = { 'H', 'G', 'C', 'O', 'B', 'J', 0, FORMAT };

/* FNV-1a, 128 bits, over n bytes from h. */
static u128 fnv(u128 h, const void *p, size_t n)
{
	const u128 prime = ((u128)1 << 88) | 0x13b;
	const unsigned char *s = p;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= prime;
	}
	return h;
}

/* The FNV-1a 128 offset basis. */
static u128 fnv_init(void)
{
	return ((u128)0x6c62272e07bb0142 << 64) | 0x62b821756295c58d;
}

/* 32 lower-case hex digits. */
static void hex128(u128 h, char out[33])
{
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)(h >> 64),
		 (unsigned long long)h);
}

/* dl_iterate_phdr state: the address to find, the build ID found. */
struct find_id {
	uintptr_t addr;
	char id[2 * 64 + 1];
};

/* The GNU build ID in the notes of one loaded object, as hex into f->id. */
static void scan_notes(const char *p, size_t len, struct find_id *f)
{
	const ElfW(Nhdr) *n;
	size_t off = 0, name, desc;

	while (off + sizeof(*n) <= len) {
		n = (const ElfW(Nhdr) *)(p + off);
		name = (n->n_namesz + 3) & ~(size_t)3;
		desc = (n->n_descsz + 3) & ~(size_t)3;
		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
		    !memcmp(p + off + sizeof(*n), "GNU", 4) && n->n_descsz <= 64) {
			const unsigned char *b = (const unsigned char *)(p + off + sizeof(*n) + name);

			for (size_t i = 0; i < n->n_descsz; i++)
				snprintf(f->id + 2 * i, 3, "%02x", b[i]);
			return;
		}
		off += sizeof(*n) + name + desc;
	}
}

/* For the loaded object whose segments hold f->addr: its build ID. */
static int phdr_cb(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct find_id *f = ctx;
	bool mine = false;

	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && f->addr >= lo && f->addr < lo + ph->p_memsz)
			mine = true;
	}
	if (!mine)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_NOTE && !f->id[0])
			scan_notes((const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr),
				   info->dlpi_phdr[i].p_memsz, f);
	return 1;
}

/* The compiler build, for keys: filled once by find_build. */
static char build[4200];
static pthread_once_t build_once = PTHREAD_ONCE_INIT;

/* The build ID of the binary holding this code; without one, its path, size and
   modification time. */
static void find_build(void)
{
	struct find_id f = { (uintptr_t)(void *)hgc_driver_key, "" };
	Dl_info dl;
	struct stat st;

	dl_iterate_phdr(phdr_cb, &f);
	if (f.id[0]) {
		snprintf(build, sizeof(build), "build-id %s", f.id);
		return;
	}
	if (dladdr((void *)hgc_driver_key, &dl) && dl.dli_fname && !stat(dl.dli_fname, &st))
		snprintf(build, sizeof(build), "file %s %lld %lld.%09ld", dl.dli_fname,
			 (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	else
		snprintf(build, sizeof(build), "unknown build %s %s", __DATE__, __TIME__);
}

/* The compiler build, computed on first use. */
static const char *build_id(void)
{
	pthread_once(&build_once, find_build);
	return build;
}

/* The settings of o that change code, the CPU and the compiler build, as text. */
static int key_settings(FILE *f, const struct hgc_driver_opts *o, struct hgc_diag *d)
{
	enum hgc_isa isa = hgc_rt_isa();
	const char *host, *cc = getenv("CC");
	struct hgc_heur_machine mc;

	fprintf(f, "hgc cache format %d\n%s\nbackend %s\n", FORMAT, build_id(),
		hgc_driver_backend_name(o->backend));
	if (o->backend == HGC_DRIVER_JIT) {
		if (!(host = hgc_codegen_llvm_host(d)))
			return -1;
		fprintf(f, "llvm host %s\n", host);
	} else {
		fprintf(f, "cc %s\n", cc && *cc ? cc : "cc");
	}
	fprintf(f, "runtime isa %s vnni %d bf16 %d\n", hgc_rt_isa_name(isa), hgc_rt_has_vnni(),
		hgc_rt_has_bf16());
	hgc_heur_machine_host(&mc, 8);	/* the machine the plans were made for (HGC_MACHINE) */
	fprintf(f, "model %s l1 %lld l2 %lld\n", mc.vendor, (long long)mc.l1, (long long)mc.l2);
	fprintf(f, "threads %d serial %d parallel_min %lld\n",
		o->threads > 0 ? o->threads : omp_get_max_threads(), o->serial,
		(long long)o->parallel_min);
	for (int i = 0; i < o->nrules; i++)
		fprintf(f, "rule %s %s = %s\n", o->rules[i].kind, o->rules[i].key,
			o->rules[i].value);
	return 0;
}

/* The constant data embedded in g (the printed graph does not show it). */
static u128 key_data(u128 h, const struct hgc_graph *g)
{
	for (size_t i = 0; i < g->tensors.len; i++) {
		const struct hgc_tensor *t = HGC_VEC_AT(&g->tensors, struct hgc_tensor *, i);
		uint64_t head[2] = { (uint64_t)t->id, hgc_tensor_nbytes(t) };

		if (!t->data)
			continue;
		h = fnv(h, head, sizeof(head));
		h = fnv(h, t->data, hgc_tensor_nbytes(t));
	}
	return h;
}

/* The cache key of g under o (see the top of the file). */
int hgc_driver_key(const struct hgc_graph *g, const struct hgc_driver_opts *o, char hex[33],
		   struct hgc_diag *d)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc;

	if (!f)
		hgc_bug("open_memstream: out of memory");
	rc = key_settings(f, o, d);
	hgc_graph_print(f, g);
	if (fclose(f))
		hgc_bug("open_memstream: out of memory");
	if (!rc)
		hex128(key_data(fnv(fnv_init(), text, len), g), hex);
	free(text);
	return rc;
}

/* "miss", "memory" or "disk". */
const char *hgc_driver_source_name(enum hgc_driver_source s)
{
	return s == HGC_DRIVER_MEMORY ? "memory" : s == HGC_DRIVER_DISK ? "disk" : "miss";
}

/* ---- the table ---- */

/* The live entry of key, or -1 (under lock). */
static long find(const char *key)
{
	for (size_t i = 0; i < table.n; i++)
		if (!strcmp(table.v[i]->pub.key, key))
			return (long)i;
	return -1;
}

/* The compiled graph of key with one more reference (the table's again if a
   clear had dropped it), or NULL. */
struct hgc_driver_graph *hgc_driver_cache_find(const char *key)
{
	struct entry *e = NULL;
	long i;

	pthread_mutex_lock(&lock);
	if ((i = find(key)) >= 0) {
		e = table.v[i];
		e->pub.refs += e->cached ? 1 : 2;
		e->cached = true;
		e->used = ++table.clock;
	}
	pthread_mutex_unlock(&lock);
	return e ? &e->pub : NULL;
}

/* The least recently used cached entry nobody else holds, or -1 (under lock). */
static long victim(void)
{
	long best = -1;
	size_t ncached = 0;

	for (size_t i = 0; i < table.n; i++) {
		ncached += table.v[i]->cached;
		if (table.v[i]->cached && table.v[i]->pub.refs == 1 &&
		    (best < 0 || table.v[i]->used < table.v[best]->used))
			best = (long)i;
	}
	return ncached > TABLE_CAP ? best : -1;
}

/* Remove entry i from the live list (under lock). */
static void unlink_entry(size_t i)
{
	table.v[i] = table.v[--table.n];
}

/* Free an entry nobody references any more. */
static void entry_free(struct entry *e)
{
	hgc_codegen_free(e->pub.code);
	free(e->pub.plan);
	free(e->pub.is_const);
	free(e->pub.init_in);
	free(e);
}

/* Add a compiled graph to the table; it holds one reference, the caller another. */
struct hgc_driver_graph *hgc_driver_cache_add(const char *key, struct hgc_compiled *code,
					      enum hgc_driver_backend b, int nin, int nout,
					      char *plan, double seconds)
{
	struct entry *e = hgc_xcalloc(1, sizeof(*e)), *old = NULL;
	long v;

	e->pub.code = code;
	e->pub.backend = b;
	e->pub.nin = nin;
	e->pub.nout = nout;
	e->pub.compile_time = seconds;
	e->pub.plan = plan ? plan : strdup("");
	e->pub.refs = 2;
	snprintf(e->pub.key, sizeof(e->pub.key), "%s", key);
	e->cached = true;
	pthread_mutex_lock(&lock);
	e->used = ++table.clock;
	if (table.n == table.cap) {
		table.cap = table.cap ? 2 * table.cap : 16;
		table.v = hgc_xrealloc(table.v, table.cap * sizeof(*table.v));
	}
	table.v[table.n++] = e;
	if ((v = victim()) >= 0) {
		old = table.v[v];
		unlink_entry((size_t)v);
	}
	pthread_mutex_unlock(&lock);
	if (old)
		entry_free(old);
	return &e->pub;
}

/* One more reference. */
struct hgc_driver_graph *hgc_driver_retain(struct hgc_driver_graph *h)
{
	pthread_mutex_lock(&lock);
	h->refs++;
	pthread_mutex_unlock(&lock);
	return h;
}

/* Drop a reference (under lock); the entry to free when it was the last, or NULL. */
static struct entry *drop(struct entry *e)
{
	long i;

	if (--e->pub.refs > 0)
		return NULL;
	for (i = 0; (size_t)i < table.n && table.v[i] != e; i++)
		;
	if ((size_t)i == table.n)
		hgc_bug("compiled graph %s is not in the table", e->pub.key);
	unlink_entry((size_t)i);
	return e;
}

/* Drop a reference; the last one frees the code. */
void hgc_driver_release(struct hgc_driver_graph *h)
{
	struct entry *dead;

	if (!h)
		return;
	pthread_mutex_lock(&lock);
	dead = drop((struct entry *)h);
	pthread_mutex_unlock(&lock);
	if (dead)
		entry_free(dead);
}

/* Drop the table's reference of every entry. */
void hgc_driver_cache_clear(void)
{
	struct hgc_vec dead;

	hgc_vec_init(&dead, sizeof(struct entry *));
	pthread_mutex_lock(&lock);
	for (size_t i = table.n; i-- > 0;) {
		struct entry *e = table.v[i], *gone;

		if (!e->cached)
			continue;
		e->cached = false;
		if ((gone = drop(e)))
			*(struct entry **)hgc_vec_push(&dead) = gone;
	}
	pthread_mutex_unlock(&lock);
	for (size_t i = 0; i < dead.len; i++)
		entry_free(HGC_VEC_AT(&dead, struct entry *, i));
	hgc_vec_release(&dead);
}

/* ---- the disk ---- */

/* Whether the disk cache is on: the JIT, the option, and HGC_CACHE not off. */
bool hgc_driver_disk_on(const struct hgc_driver_opts *o)
{
	const char *env = getenv("HGC_CACHE");

	if (o->backend != HGC_DRIVER_JIT || !o->disk_cache)
		return false;
	return !env || (strcmp(env, "off") && strcmp(env, "0") && strcmp(env, "no"));
}

/* The directory: o->cache_dir, $XDG_CACHE_HOME/hgc (an absolute path), ~/.cache/hgc. */
const char *hgc_driver_cache_dir(const struct hgc_driver_opts *o, char *buf, size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (o && o->cache_dir && *o->cache_dir)
		n = snprintf(buf, size, "%s", o->cache_dir);
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/hgc", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.cache/hgc", home);
	else
		n = snprintf(buf, size, "%s", "");
	if (n < 0 || (size_t)n >= size)
		buf[0] = 0;
	return buf;
}

/* The symbol prefix of key's object. */
void hgc_driver_obj_prefix(const char *key, char buf[40])
{
	snprintf(buf, 40, "hgc%s_", key);
}

/* DIR/<key>.hgc-obj into info->path; -1 when there is no directory. */
static int file_path(const struct hgc_driver_opts *o, const char *key,
		     struct hgc_driver_info *info)
{
	char dir[4000];
	int n;

	info->path[0] = 0;
	if (!*hgc_driver_cache_dir(o, dir, sizeof(dir)))
		return -1;
	n = snprintf(info->path, sizeof(info->path), "%s/%s.hgc-obj", dir, key);
	if (n < 0 || (size_t)n >= sizeof(info->path)) {
		info->path[0] = 0;
		return -1;
	}
	return 0;
}

/* Set info's note (the first one wins). */
static void note(struct hgc_driver_info *info, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct hgc_driver_info *info, const char *fmt, ...)
{
	va_list ap;

	if (info->note[0])
		return;
	va_start(ap, fmt);
	vsnprintf(info->note, sizeof(info->note), fmt, ap);
	va_end(ap);
}

/* Read all of a regular file into a malloc'ed buffer; NULL with errno set. */
static char *read_all(int fd, size_t *len)
{
	struct stat st;
	char *buf;
	size_t got = 0;
	ssize_t r;

	if (fstat(fd, &st))
		return NULL;
	if (!S_ISREG(st.st_mode) || st.st_size > MAX_OBJECT) {
		errno = S_ISDIR(st.st_mode) ? EISDIR : S_ISREG(st.st_mode) ? EFBIG : EINVAL;
		return NULL;
	}
	buf = hgc_xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size && (r = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)r;
	*len = got;
	return buf;
}

/* Why the file's bytes are not a stored object of key with nargs, or NULL. */
static const char *check_file(const char *buf, size_t len, const char *key, int nargs)
{
	struct file_header h;
	u128 sum;

	if (len < sizeof(h))
		return "shorter than its header";
	memcpy(&h, buf, sizeof(h));
	if (memcmp(h.magic, magic, sizeof(magic)))
		return "not an hgc object of this format";
	if (memcmp(h.key, key, 32))
		return "stored under another key";
	if (h.plan > len - sizeof(h) || h.size != len - sizeof(h) - h.plan)
		return "truncated or padded";
	if ((int)h.nargs != nargs)
		return "with another argument count";
	sum = fnv(fnv_init(), buf + sizeof(h), len - sizeof(h));
	if (h.sum[0] != (uint64_t)(sum >> 64) || h.sum[1] != (uint64_t)sum)
		return "corrupt (its hash does not match)";
	return NULL;
}

/* n bytes of s as a malloc'ed string. */
static char *dupn(const char *s, size_t n)
{
	char *p = hgc_xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

/* Load a checked object into the JIT; its plan into *plan. */
static struct hgc_compiled *load(const char *buf, const char *key, char **plan,
				 struct hgc_driver_info *info)
{
	struct file_header h;
	struct hgc_compiled *c;
	struct hgc_diag d;
	char prefix[40];

	memcpy(&h, buf, sizeof(h));
	hgc_driver_obj_prefix(key, prefix);
	hgc_diag_init(&d);
	c = hgc_codegen_llvm_load_object(buf + sizeof(h) + h.plan, (size_t)h.size, prefix,
					 (int)h.nargs, h.has_init != 0, &d);
	if (!c)
		note(info, "cache file %s did not load, compiled again: %s", info->path,
		     hgc_diag_text(&d));
	else
		*plan = dupn(buf + sizeof(h), (size_t)h.plan);
	hgc_diag_release(&d);
	return c;
}

/* The stored object of key, loaded into the JIT, or NULL (see driver_int.h). */
struct hgc_compiled *hgc_driver_disk_load(const struct hgc_driver_opts *o, const char *key,
					  int nargs, char **plan, struct hgc_driver_info *info)
{
	struct hgc_compiled *c = NULL;
	const char *why;
	size_t len = 0;
	char *buf;
	int fd;

	if (file_path(o, key, info) < 0) {
		note(info, "no disk cache: no directory (set XDG_CACHE_HOME or HOME)");
		return NULL;
	}
	if ((fd = open(info->path, O_RDONLY | O_CLOEXEC)) < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			note(info, "cannot read cache file %s: %s", info->path, strerror(errno));
		return NULL;
	}
	buf = read_all(fd, &len);
	close(fd);
	if (!buf)
		note(info, "cannot read cache file %s: %s", info->path, strerror(errno));
	else if ((why = check_file(buf, len, key, nargs)))
		note(info, "cache file %s is %s: ignored, compiled again", info->path, why);
	else if ((c = load(buf, key, plan, info)))
		utimensat(AT_FDCWD, info->path, NULL, 0);	/* recently used */
	free(buf);
	return c;
}

/* mkdir -p path, private to the user. */
static int mkdirs(const char *path)
{
	char p[4096];
	size_t n = strlen(path);

	if (n >= sizeof(p))
		return -1;
	memcpy(p, path, n + 1);
	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, 0700) && errno != EEXIST)
			return -1;
		*s = '/';
	}
	return mkdir(p, 0700) && errno != EEXIST ? -1 : 0;
}

/* Write all of buf to fd. */
static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	ssize_t w;

	while (n > 0) {
		if ((w = write(fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Header and object into a fresh temporary file in dir (its name into tmp); -1 with
   errno set. */
static int write_temp(const char *dir, char *tmp, size_t size, const char *key,
		      const void *obj, size_t n, const char *plan, int nargs, bool has_init)
{
	size_t np = strlen(plan);
	struct file_header h = { .nargs = (uint32_t)nargs, .has_init = has_init, .size = n,
				 .plan = np };
	u128 sum = fnv(fnv(fnv_init(), plan, np), obj, n);
	bool ok;
	int fd, e;

	memcpy(h.magic, magic, sizeof(magic));
	memcpy(h.key, key, 32);
	h.sum[0] = (uint64_t)(sum >> 64);
	h.sum[1] = (uint64_t)sum;
	snprintf(tmp, size, "%s/.%s.XXXXXX", dir, key);
	if ((fd = mkstemp(tmp)) < 0)
		return -1;
	ok = !write_all(fd, &h, sizeof(h)) && !write_all(fd, plan, np) && !write_all(fd, obj, n);
	e = errno;
	if (close(fd) && ok) {
		ok = false;
		e = errno;
	}
	if (!ok) {
		unlink(tmp);
		errno = e;
		return -1;
	}
	return 0;
}

/* A file of the cache directory, for pruning. */
struct file {
	char name[48];
	struct timespec mtime;
	off_t size;
};

/* Oldest first. */
static int by_age(const void *a, const void *b)
{
	const struct timespec *x = &((const struct file *)a)->mtime;
	const struct timespec *y = &((const struct file *)b)->mtime;

	if (x->tv_sec != y->tv_sec)
		return x->tv_sec < y->tv_sec ? -1 : 1;
	return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* The cache files of dir (stale temporaries removed on the way). */
static void list_files(DIR *dp, struct hgc_vec *files, off_t *bytes)
{
	time_t now = time(NULL);
	struct dirent *de;
	struct stat st;

	while ((de = readdir(dp))) {
		size_t n = strlen(de->d_name);
		struct file *f;

		if (n >= sizeof(f->name) || fstatat(dirfd(dp), de->d_name, &st, 0) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (de->d_name[0] == '.' && now - st.st_mtime > STALE_TEMP)
			unlinkat(dirfd(dp), de->d_name, 0);
		if (n < 8 || strcmp(de->d_name + n - 8, ".hgc-obj"))
			continue;
		f = hgc_vec_push(files);
		memcpy(f->name, de->d_name, n + 1);
		f->mtime = st.st_mtim;
		f->size = st.st_size;
		*bytes += st.st_size;
	}
}

/* Keep the directory within DISK_FILES and DISK_BYTES: drop the oldest files. */
static void prune(const char *dir)
{
	DIR *dp = opendir(dir);
	struct hgc_vec files;
	off_t bytes = 0;
	size_t i, n;

	if (!dp)
		return;
	hgc_vec_init(&files, sizeof(struct file));
	list_files(dp, &files, &bytes);
	n = files.len;
	if (n > 1)
		qsort(files.data, n, sizeof(struct file), by_age);
	for (i = 0; i + 1 < files.len && (n > DISK_FILES || bytes > DISK_BYTES); i++) {
		const struct file *f = &HGC_VEC_AT(&files, struct file, i);

		if (!unlinkat(dirfd(dp), f->name, 0)) {
			n--;
			bytes -= f->size;
		}
	}
	hgc_vec_release(&files);
	closedir(dp);
}

/* Store an object: write a temporary file, then rename it over DIR/<key>.hgc-obj. */
void hgc_driver_disk_store(const struct hgc_driver_opts *o, const char *key, const void *obj,
			   size_t size, const char *plan, int nargs, bool has_init,
			   struct hgc_driver_info *info)
{
	char dir[4000], tmp[4200];

	if (file_path(o, key, info) < 0) {
		note(info, "no disk cache: no directory (set XDG_CACHE_HOME or HOME)");
		return;
	}
	hgc_driver_cache_dir(o, dir, sizeof(dir));
	if (mkdirs(dir) ||
	    write_temp(dir, tmp, sizeof(tmp), key, obj, size, plan ? plan : "", nargs, has_init)) {
		note(info, "cannot write the disk cache in %s: %s", dir, strerror(errno));
		info->path[0] = 0;
		return;
	}
	if (rename(tmp, info->path)) {
		note(info, "cannot write cache file %s: %s", info->path, strerror(errno));
		unlink(tmp);
		info->path[0] = 0;
		return;
	}
	prune(dir);
}
