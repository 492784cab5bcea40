/*
 * c_backend.c: the C backend.  A verified module is emitted as C into a
 * fresh temporary directory, compiled by the system compiler ($CC or cc)
 * into a shared object, loaded with dlopen and bound to the runtime.
 * Compiler and loader failures become diagnostics carrying the compiler's
 * own messages; the temporary files are removed unless asked to keep them.
 */
#include "c_int.h"
#include "runtime/runtime.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The runtime functions, in HGC_CODEGEN_C_RUNTIME order, for hgc_bind. */
static void (*const runtime_fns[])(void) = {
#define X(name, params) (void (*)(void))name,
	HGC_CODEGEN_C_RUNTIME(X)
#undef X
};

/* What the C backend keeps beside the common struct. */
struct c_compiled {
	struct hgc_compiled pub;
	void *dl;		/* dlopen handle */
	char *dir;		/* the temporary directory when kept, else NULL */
};

/* dlclose and free. */
static void release(struct hgc_compiled *pub)
{
	struct c_compiled *c = (struct c_compiled *)pub;

	if (c->dl)
		dlclose(c->dl);
	free(c->dir);
	free(c);
}

/* dir/name as a malloc'ed string. */
static char *path_in(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = hgc_xmalloc(n);

	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

/* Make a fresh private directory under $TMPDIR (or /tmp). */
static char *make_dir(struct hgc_diag *d)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = path_in(tmp && *tmp ? tmp : "/tmp", "hgc-c-XXXXXX");

	if (strchr(dir, '\'') || !mkdtemp(dir)) {
		hgc_error(d, NULL, "c backend: cannot make a temporary directory %s", dir);
		free(dir);
		return NULL;
	}
	return dir;
}

/* Write the emitted module to path. */
static int write_source(const char *path, const struct hgc_tir_module *m, struct hgc_diag *d)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (!f)
		return hgc_error(d, NULL, "c backend: cannot write %s", path);
	rc = hgc_codegen_c_emit(f, m, d);
	if (fclose(f) && !rc)
		rc = hgc_error(d, NULL, "c backend: cannot write %s", path);
	return rc;
}

/* Append the compiler's messages (up to a few KiB) to the diag as a note. */
static void compiler_output(const char *log, struct hgc_diag *d)
{
	struct hgc_diag tmp;
	char *text;
	size_t len = 0;

	hgc_diag_init(&tmp);
	text = hgc_read_file(log, &len, &tmp);
	if (text && len)
		hgc_note(d, NULL, "compiler output:\n%.*s", len > 4000 ? 4000 : (int)len, text);
	free(text);
	hgc_diag_release(&tmp);
}

/* Run the compiler on dir/module.c into dir/module.so, messages into dir/cc.log. */
static int compile(const char *dir, const struct hgc_codegen_c_opts *opts, struct hgc_diag *d)
{
	const char *cc = opts && opts->cc ? opts->cc : getenv("CC");
	const char *flags = opts && opts->cflags ? opts->cflags : "";
	char *cmd, *log = path_in(dir, "cc.log");
	size_t n;
	int status, rc = 0;

	if (!cc || !*cc)
		cc = "cc";
	n = strlen(cc) + strlen(flags) + 3 * strlen(dir) + 200;
	cmd = hgc_xmalloc(n);
	snprintf(cmd, n, "%s -O2 -fPIC -shared -fopenmp %s -o '%s/module.so' '%s/module.c' -lm "
		 "2>'%s/cc.log' >&2", cc, flags, dir, dir, dir);
	status = system(cmd);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		rc = hgc_error(d, NULL, "c backend: the C compiler failed (%s %d): %s",
			       status != -1 && WIFEXITED(status) ? "exit status" : "status",
			       status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : status, cc);
		compiler_output(log, d);
	}
	free(cmd);
	free(log);
	return rc;
}

/* Load dir/module.so and find its entry points; bind the runtime. */
static int load(struct c_compiled *c, const char *dir, const struct hgc_tir_module *m,
		struct hgc_diag *d)
{
	char *so = path_in(dir, "module.so");
	void (*bind)(void (*const *)(void));

	c->dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	free(so);
	if (!c->dl)
		return hgc_error(d, NULL, "c backend: cannot load the compiled module: %s", dlerror());
	*(void **)&bind = dlsym(c->dl, "hgc_bind");
	*(void **)&c->pub.entry = dlsym(c->dl, "hgc_entry");
	if (m->init)
		*(void **)&c->pub.init = dlsym(c->dl, "hgc_init");
	if (!bind || !c->pub.entry || (m->init && !c->pub.init))
		return hgc_error(d, NULL, "c backend: the compiled module lacks its entry points");
	bind(runtime_fns);
	return 0;
}

/* Remove the temporary files and the directory. */
static void cleanup(const char *dir)
{
	static const char *const files[] = { "module.c", "module.so", "cc.log" };
	char *p;
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		p = path_in(dir, files[i]);
		unlink(p);
		free(p);
	}
	rmdir(dir);
}

/* Verify, emit, compile and load a module; NULL with the diag set on failure. */
struct hgc_compiled *hgc_codegen_c_compile(const struct hgc_tir_module *m,
					   const struct hgc_codegen_c_opts *opts,
					   struct hgc_diag *d)
{
	struct c_compiled *c;
	char *dir, *src;
	int rc;

	if (hgc_tir_verify(m, d) < 0)
		return NULL;
	dir = make_dir(d);
	if (!dir)
		return NULL;
	c = hgc_xcalloc(1, sizeof(*c));
	c->pub.release = release;
	c->pub.nargs = m->entry->nparams;
	src = path_in(dir, "module.c");
	rc = write_source(src, m, d);
	free(src);
	if (!rc)
		rc = compile(dir, opts, d);
	if (!rc)
		rc = load(c, dir, m, d);
	if (opts && opts->keep) {
		c->dir = dir;
		c->pub.dir = dir;
	} else {
		cleanup(dir);
		free(dir);
	}
	if (rc) {
		if (c->dir)
			hgc_note(d, NULL, "the generated C is kept in %s", c->dir);
		release(&c->pub);
		return NULL;
	}
	return &c->pub;
}
