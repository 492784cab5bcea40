/*
 * 111-cache: the compiled-graph cache.  Keys change with everything that
 * changes code and only with it; a second compile is a memory hit that
 * returns the same object quickly; after clearing the memory cache the JIT
 * loads the object code from disk ($XDG_CACHE_HOME/hgc, a fresh temporary
 * directory here); truncated, corrupt, foreign or unreadable cache files
 * are ignored and rewritten; the disk cache can be turned off (option,
 * HGC_CACHE=off) and an unwritable one only costs a note; a full cache
 * drops its oldest files.  Every compiled graph is also run against the
 * interpreter.
 */
#include "t/driver_check.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char tmp[64];		/* the test's XDG_CACHE_HOME */

/* JIT options with the disk cache on (in tmp). */
static struct hgc_driver_opts jit_opts(void)
{
	struct hgc_driver_opts o;

	hgc_driver_opts_init(&o);
	return o;
}

/* Compile g, check where it came from, run it against the interpreter. */
static struct hgc_driver_graph *compile(const struct hgc_graph *g,
					const struct hgc_driver_opts *o,
					enum hgc_driver_source want, struct hgc_driver_info *info,
					const char *what)
{
	struct hgc_driver_graph *h;
	struct dc_bufs b;
	struct hgc_diag d;
	char why[512] = "";

	hgc_diag_init(&d);
	h = hgc_driver_compile(g, o, info, &d);
	if (!ok(h && info->source == want, "%s: %s", what, hgc_driver_source_name(want))) {
		diag("got %s; %s", h ? hgc_driver_source_name(info->source) : "nothing",
		     hgc_diag_text(&d));
		diag("note: %s", info->note);
	}
	if (h) {
		dc_alloc(&b, g);
		dc_fill(&b, g, 3);
		if (!ok(dc_check(h, g, NULL, &b, why, sizeof(why)), "%s: runs right", what))
			diag("%s", why);
		dc_release(&b);
	}
	hgc_diag_release(&d);
	return h;
}

/* The key of g under o. */
static const char *key(const struct hgc_graph *g, const struct hgc_driver_opts *o)
{
	static char hex[4][33];
	static int turn;
	struct hgc_diag d;
	char *k = hex[turn++ % 4];

	hgc_diag_init(&d);
	if (hgc_driver_key(g, o, k, &d) < 0)
		hgc_bug("%s", hgc_diag_text(&d));
	hgc_diag_release(&d);
	return k;
}

/* Keys: equal for equal graphs and settings, different when anything changes. */
static void test_keys(void)
{
	struct hgc_graph *a = dc_matmul(8, 16, 4, true), *b = dc_matmul(8, 16, 4, true);
	struct hgc_graph *c = dc_matmul(8, 16, 5, true), *r = dc_matmul(8, 16, 4, false);
	struct hgc_driver_opts o = jit_opts(), p;
	struct hgc_tmpl_rule rule = { "pin", "matmul_core.MB", "8", { NULL, 0, 0 } };
	float data[128] = { 0 };
	char k[33];

	snprintf(k, sizeof(k), "%s", key(a, &o));

	is_int(strlen(k), 32, "a key is 128 bits in hex");
	is_str(key(b, &o), k, "the same graph built twice: the same key");
	ok(strcmp(key(c, &o), k), "another shape: another key");
	ok(strcmp(key(r, &o), k), "another op list: another key");
	HGC_GRAPH_INPUT(b, 1)->prop = HGC_PROP_VARIABLE;
	ok(strcmp(key(b, &o), k), "another constness: another key");
	HGC_GRAPH_INPUT(b, 1)->prop = HGC_PROP_CONSTANT;
	HGC_GRAPH_INPUT(b, 0)->data = data;
	ok(strcmp(key(b, &o), k), "embedded constant data: another key");
	data[3] = 1;
	ok(strcmp(key(b, &o), key(b, &o)) == 0 && strcmp(key(b, &o), k),
	   "the data's bytes count");
	HGC_GRAPH_INPUT(b, 0)->data = NULL;
	is_str(key(b, &o), k, "back to the same key");
	p = o;
	p.threads = o.threads + 3;
	ok(strcmp(key(a, &p), k), "another thread count: another key");
	p = o;
	p.rules = &rule;
	p.nrules = 1;
	ok(strcmp(key(a, &p), k), "a template rule: another key");
	p = o;
	p.backend = HGC_DRIVER_C;
	ok(strcmp(key(a, &p), k), "another backend: another key");
	p = o;
	p.disk_cache = false;
	p.cache_dir = "/elsewhere";
	is_str(key(a, &p), k, "where the cache lives is not in the key");
	hgc_graph_free(a);
	hgc_graph_free(b);
	hgc_graph_free(c);
	hgc_graph_free(r);
}

/* The directory: the option, then XDG_CACHE_HOME (absolute), then HOME. */
static void test_dir(void)
{
	struct hgc_driver_opts o = jit_opts();
	char buf[4096], want[128];

	snprintf(want, sizeof(want), "%s/hgc", tmp);
	is_str(hgc_driver_cache_dir(&o, buf, sizeof(buf)), want, "$XDG_CACHE_HOME/hgc");
	setenv("XDG_CACHE_HOME", "relative", 1);
	setenv("HOME", "/home/someone", 1);
	is_str(hgc_driver_cache_dir(&o, buf, sizeof(buf)), "/home/someone/.cache/hgc",
	       "a relative XDG_CACHE_HOME is ignored: ~/.cache/hgc");
	o.cache_dir = "/var/cache/x";
	is_str(hgc_driver_cache_dir(&o, buf, sizeof(buf)), "/var/cache/x", "the option first");
	setenv("XDG_CACHE_HOME", tmp, 1);
}

/* The cache file of a compiled graph. */
static const char *file_of(const struct hgc_driver_graph *h)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/hgc/%s.hgc-obj", tmp, h->key);
	return path;
}

/* Cold, memory hit, disk hit: the same results, the same object from memory. */
static void test_hits(void)
{
	struct hgc_graph *g = dc_matmul(64, 64, 64, false);
	struct hgc_driver_opts o = jit_opts();
	struct hgc_driver_info i1, i2, i3;
	struct hgc_driver_graph *h1, *h2, *h3;
	struct stat st;
	char path[256];

	h1 = compile(g, &o, HGC_DRIVER_MISS, &i1, "cold");
	if (!h1)
		return;
	snprintf(path, sizeof(path), "%s", file_of(h1));
	is_str(i1.path, path, "the object code is stored under the key");
	ok(stat(path, &st) == 0 && st.st_size > 100, "the cache file exists");
	is_str(i1.note, "", "no note");
	h2 = compile(g, &o, HGC_DRIVER_MEMORY, &i2, "again");
	ok(h2 == h1, "a memory hit is the same object");
	is_int(h1->refs, 3, "shared: the table and two callers");
	ok(i2.seconds < 0.02 && i2.seconds < i1.seconds / 10, "a memory hit is quick");
	hgc_driver_release(h2);
	hgc_driver_release(h1);
	hgc_driver_cache_clear();
	h3 = compile(g, &o, HGC_DRIVER_DISK, &i3, "after clearing the memory cache");
	is_str(i3.path, path, "loaded from the cache file");
	diag("single MatMul 64x64x64 through the jit: cold %.3f ms, memory hit %.3f ms, "
	     "disk hit %.3f ms", i1.seconds * 1e3, i2.seconds * 1e3, i3.seconds * 1e3);
	ok(i3.seconds < i1.seconds, "a disk hit is quicker than compiling");
	hgc_driver_release(h3);
	hgc_driver_cache_clear();
	hgc_graph_free(g);
}

/*
 * Constant weights are packed once by init, but the code is shared by every
 * holder of the key: a run with other constant buffers, or a new holder from
 * the cache, must pack its own weights, never reuse another's.
 */
static void test_constants(void)
{
	struct hgc_graph *g = dc_matmul(24, 40, 56, false);
	struct hgc_driver_opts o = jit_opts();
	struct hgc_driver_graph *h, *h2;
	struct hgc_driver_info i1, i2;
	struct dc_bufs a, b;
	char why[256] = "";

	dc_alloc(&a, g);
	dc_alloc(&b, g);
	dc_fill(&a, g, 1);
	dc_fill(&b, g, 2);
	memcpy(b.in[0], a.in[0], hgc_tensor_nbytes(HGC_GRAPH_INPUT(g, 0)));
	h = compile(g, &o, HGC_DRIVER_MISS, &i1, "constants: cold");
	if (h) {
		ok(dc_check(h, g, NULL, &a, why, sizeof(why)), "weights a %s", why);
		ok(dc_check(h, g, NULL, &b, why, sizeof(why)), "then weights b: init packs b %s",
		   why);
		ok(dc_check(h, g, NULL, &a, why, sizeof(why)), "then a again %s", why);
		h2 = compile(g, &o, HGC_DRIVER_MEMORY, &i2, "constants: a second holder");
		if (h2) {
			memcpy(a.in[1], b.in[1], hgc_tensor_nbytes(HGC_GRAPH_INPUT(g, 1)));
			ok(dc_check(h2, g, NULL, &a, why, sizeof(why)),
			   "a second holder, new weights in a buffer init packed before %s", why);
			hgc_driver_release(h2);
		}
		hgc_driver_release(h);
	}
	dc_release(&a);
	dc_release(&b);
	hgc_driver_cache_clear();
	hgc_graph_free(g);
}

/* Overwrite a cache file with n bytes of text (NULL: truncate to n bytes). */
static void spoil(const char *path, const char *text, off_t n)
{
	int fd;

	if (!text) {
		if (truncate(path, n))
			hgc_bug("truncate %s", path);
		return;
	}
	fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0600);
	if (fd < 0 || write(fd, text, (size_t)n) != (ssize_t)n || close(fd))
		hgc_bug("cannot write %s", path);
}

/* Flip one byte at offset off of a file. */
static void flip(const char *path, off_t off)
{
	int fd = open(path, O_RDWR);
	unsigned char c;

	if (fd < 0 || pread(fd, &c, 1, off) != 1)
		hgc_bug("cannot read %s", path);
	c ^= 0x5a;
	if (pwrite(fd, &c, 1, off) != 1 || close(fd))
		hgc_bug("cannot write %s", path);
}

/* One kind of damage: ignored with the reason noted, compiled, rewritten, then a
   disk hit again. */
static void damaged(const struct hgc_graph *g, const char *what, const char *reason,
		    void (*damage)(const char *path))
{
	struct hgc_driver_opts o = jit_opts();
	struct hgc_driver_info info;
	struct hgc_driver_graph *h;
	char path[256];

	h = compile(g, &o, HGC_DRIVER_MEMORY, &info, what);
	if (!h)
		return;
	snprintf(path, sizeof(path), "%s", file_of(h));
	hgc_driver_release(h);
	hgc_driver_cache_clear();
	damage(path);
	h = compile(g, &o, HGC_DRIVER_MISS, &info, what);
	if (!ok(strstr(info.note, reason) && strstr(info.note, "ignored, compiled again"),
		"%s: noted as %s", what, reason))
		diag("note: %s", info.note);
	hgc_driver_release(h);
	hgc_driver_cache_clear();
	hgc_driver_release(compile(g, &o, HGC_DRIVER_DISK, &info, "rewritten"));
}

/* The kinds of damage: half the file, */
static void cut_half(const char *p)
{
	struct stat st;

	stat(p, &st);
	spoil(p, NULL, st.st_size / 2);
}

/* part of the header, */
static void cut_header(const char *p)
{
	spoil(p, NULL, 20);
}

/* nothing, */
static void empty(const char *p)
{
	spoil(p, "", 0);
}

/* something else, */
static void garbage(const char *p)
{
	spoil(p, "\177ELF not really an object file, but long enough to have a header"
		 " ........................................", 100);
}

/* a bad byte in the object, */
static void flip_object(const char *p)
{
	struct stat st;

	stat(p, &st);
	flip(p, st.st_size - 200);
}

/* in the magic, */
static void flip_magic(const char *p)
{
	flip(p, 2);
}

/* in the argument count. */
static void flip_nargs(const char *p)
{
	flip(p, 40);
}

/* Every kind of damage to a cache file. */
static void test_damage(void)
{
	struct hgc_graph *g = dc_matmul(16, 32, 8, true);
	struct hgc_driver_opts o = jit_opts();
	struct hgc_driver_info info;

	hgc_driver_release(compile(g, &o, HGC_DRIVER_MISS, &info, "a graph to spoil"));
	damaged(g, "truncated to half", "truncated or padded", cut_half);
	damaged(g, "truncated in the header", "shorter than its header", cut_header);
	damaged(g, "empty", "shorter than its header", empty);
	damaged(g, "garbage", "not an hgc object of this format", garbage);
	damaged(g, "a byte of the object flipped", "corrupt (its hash does not match)",
		flip_object);
	damaged(g, "a byte of the magic flipped", "not an hgc object", flip_magic);
	damaged(g, "the argument count changed", "with another argument count", flip_nargs);
	hgc_driver_cache_clear();
	hgc_graph_free(g);
}

/* A file copied under another key's name; a directory where the file should be. */
static void test_foreign(void)
{
	struct hgc_graph *a = dc_matmul(4, 4, 4, false), *b = dc_matmul(4, 4, 8, false);
	struct hgc_driver_opts o = jit_opts();
	struct hgc_driver_info info;
	struct hgc_driver_graph *ha, *hb;
	char pa[256], pb[256];

	ha = compile(a, &o, HGC_DRIVER_MISS, &info, "graph a");
	hb = compile(b, &o, HGC_DRIVER_MISS, &info, "graph b");
	if (!ha || !hb)
		return;
	snprintf(pa, sizeof(pa), "%s", file_of(ha));
	snprintf(pb, sizeof(pb), "%s", file_of(hb));
	hgc_driver_release(ha);
	hgc_driver_release(hb);
	hgc_driver_cache_clear();
	ok(rename(pa, pb) == 0, "a's file renamed to b's");
	hgc_driver_release(compile(b, &o, HGC_DRIVER_MISS, &info, "b from a's file"));
	ok(strstr(info.note, "stored under another key") != NULL, "noted: another key");
	hgc_driver_cache_clear();
	ok(mkdir(pa, 0700) == 0, "a directory where a's file goes");
	hgc_driver_release(compile(a, &o, HGC_DRIVER_MISS, &info, "a over a directory"));
	ok(strstr(info.note, "cannot read cache file") || strstr(info.note, "cannot write"),
	   "noted: %s", info.note);
	rmdir(pa);
	hgc_driver_cache_clear();
	hgc_graph_free(a);
	hgc_graph_free(b);
}

/* Off by option, off by HGC_CACHE=off, and an unwritable directory. */
static void test_off(void)
{
	struct hgc_graph *g = dc_matmul(3, 5, 7, false);
	struct hgc_driver_opts o = jit_opts();
	struct hgc_driver_info info;
	struct hgc_driver_graph *h;
	char path[256], file[128];
	struct stat st;

	o.disk_cache = false;
	h = compile(g, &o, HGC_DRIVER_MISS, &info, "disk cache off");
	snprintf(path, sizeof(path), "%s", h ? file_of(h) : "");
	ok(h && stat(path, &st) < 0 && !info.path[0], "no file written");
	hgc_driver_release(h);
	hgc_driver_cache_clear();
	setenv("HGC_CACHE", "off", 1);
	o.disk_cache = true;
	hgc_driver_release(compile(g, &o, HGC_DRIVER_MISS, &info, "HGC_CACHE=off"));
	ok(stat(path, &st) < 0, "no file written");
	hgc_driver_cache_clear();
	unsetenv("HGC_CACHE");
	snprintf(file, sizeof(file), "%s/plain-file", tmp);
	spoil(file, "x", 1);
	setenv("XDG_CACHE_HOME", file, 1);
	hgc_driver_release(compile(g, &o, HGC_DRIVER_MISS, &info, "an unwritable cache"));
	ok(strstr(info.note, "cannot write the disk cache in") != NULL && !info.path[0],
	   "noted: %s", info.note);
	setenv("XDG_CACHE_HOME", tmp, 1);
	hgc_driver_cache_clear();
	hgc_driver_release(compile(g, &o, HGC_DRIVER_MISS, &info, "cache back on"));
	ok(stat(path, &st) == 0, "the file is written");
	hgc_driver_cache_clear();
	hgc_graph_free(g);
}

/* A graph still held across a clear stays the one compiles return. */
static void test_held(void)
{
	struct hgc_graph *g = dc_matmul(6, 6, 6, true);
	struct hgc_driver_opts o = jit_opts();
	struct hgc_driver_info info;
	struct hgc_driver_graph *h1, *h2;

	h1 = compile(g, &o, HGC_DRIVER_MISS, &info, "held");
	hgc_driver_cache_clear();
	h2 = compile(g, &o, HGC_DRIVER_MEMORY, &info, "held across a clear");
	ok(h1 && h1 == h2, "the same object (its code is still in the JIT)");
	hgc_driver_release(h1);
	hgc_driver_release(h2);
	hgc_driver_cache_clear();
	hgc_graph_free(g);
}

/* The C backend: shared in memory, never on disk. */
static void test_c(void)
{
	struct hgc_graph *g = dc_matmul(5, 3, 2, true);
	struct hgc_driver_opts o = jit_opts();
	struct hgc_driver_info info;
	struct hgc_driver_graph *h1, *h2;
	struct stat st;
	char path[256];

	o.backend = HGC_DRIVER_C;
	h1 = compile(g, &o, HGC_DRIVER_MISS, &info, "c backend");
	h2 = compile(g, &o, HGC_DRIVER_MEMORY, &info, "c backend again");
	ok(h1 && h1 == h2, "the same object");
	snprintf(path, sizeof(path), "%s", h1 ? file_of(h1) : "");
	ok(stat(path, &st) < 0 && !info.path[0], "nothing on disk");
	hgc_driver_release(h1);
	hgc_driver_release(h2);
	hgc_driver_cache_clear();
	hgc_graph_free(g);
}

/* An empty file at dir/name, modified age seconds ago. */
static void old_file(const char *dir, const char *name, long age)
{
	char path[256];
	struct timespec t[2];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	spoil(path, "", 0);
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age;
	t[1] = t[0];
	if (utimensat(AT_FDCWD, path, t, 0))
		hgc_bug("utimensat %s", path);
}

/* Files in dir whose names end in suffix. */
static int count_files(const char *dir, const char *suffix)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (dp && (de = readdir(dp)))
		n += strlen(de->d_name) > strlen(suffix) &&
		     !strcmp(de->d_name + strlen(de->d_name) - strlen(suffix), suffix);
	if (dp)
		closedir(dp);
	return n;
}

/* Over 1000 files, a store drops the oldest; stale temporaries go too. */
static void test_prune(void)
{
	struct hgc_graph *g = dc_matmul(9, 2, 9, false);
	struct hgc_driver_opts o = jit_opts();
	struct hgc_driver_info info;
	char dir[128], name[64], path[256];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/hgc", tmp);
	for (int i = 0; i < 1010; i++) {
		snprintf(name, sizeof(name), "%032d.hgc-obj", i);
		old_file(dir, name, 100000 - i);
	}
	old_file(dir, ".stale.XXXXXX", 7200);
	old_file(dir, ".fresh.XXXXXX", 10);
	hgc_driver_release(compile(g, &o, HGC_DRIVER_MISS, &info, "a store in a full cache"));
	is_int(count_files(dir, ".hgc-obj"), 1000, "pruned to 1000 files");
	ok(stat(info.path, &st) == 0, "the new file stays");
	snprintf(path, sizeof(path), "%s/%032d.hgc-obj", dir, 0);
	ok(stat(path, &st) < 0, "the oldest is gone");
	snprintf(path, sizeof(path), "%s/%032d.hgc-obj", dir, 1009);
	ok(stat(path, &st) == 0, "the newest old one stays");
	snprintf(path, sizeof(path), "%s/.stale.XXXXXX", dir);
	ok(stat(path, &st) < 0, "a stale temporary file is removed");
	snprintf(path, sizeof(path), "%s/.fresh.XXXXXX", dir);
	ok(stat(path, &st) == 0, "a fresh one (another writer's) is not");
	hgc_driver_cache_clear();
	hgc_graph_free(g);
}

/* Everything in a fresh cache directory, removed at the end. */
int main(void)
{
	char cmd[128];

	snprintf(tmp, sizeof(tmp), "/tmp/hgc-t111-XXXXXX");
	if (!mkdtemp(tmp))
		hgc_bug("mkdtemp");
	setenv("XDG_CACHE_HOME", tmp, 1);
	unsetenv("HGC_CACHE");
	test_keys();
	test_dir();
	test_hits();
	test_constants();
	test_damage();
	test_foreign();
	test_off();
	test_held();
	test_c();
	test_prune();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd))
		diag("cannot remove %s", tmp);
	return done_testing();
}
