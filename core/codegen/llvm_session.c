/*
 * llvm_session.c: what lives once per process.  The host target machine is
 * built lazily from the host's CPU name and its feature string (LLVM 14
 * names a Zen 4 host znver3, so the features must always be passed); one
 * ORC LLJIT, created on first use, holds every JIT-compiled module under a
 * resource tracker of its own, resolves the runtime's symbols by address
 * and everything else (libm, libgomp, libc) from the process.  LLVM errors
 * become diagnostics here and every LLVM message is disposed.
 */
#include "llvm_int.h"
#include "runtime/runtime.h"

#include <llvm-c/ExecutionEngine.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/OrcEE.h>
#include <llvm-c/Target.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Runtime functions generated code calls, bound by address so that a static
   link keeps them and no -rdynamic is needed. */
#define RUNTIME_SYMBOLS(X)         \
	X(hgc_brgemm_f32)          \
	X(hgc_brgemm_f32_post)     \
	X(hgc_brgemm_u8s8_q)       \
	X(hgc_brgemm_f32_strd)     \
	X(hgc_brgemm_u8s8s32)      \
	X(hgc_brgemm_u8s8s32_strd) \
	X(hgc_brgemm_bf16)         \
	X(hgc_brgemm_bf16_strd)    \
	X(hgc_rt_parallel_for)     \
	X(hgc_rt_scratch_alloc)    \
	X(hgc_rt_scratch_free)     \
	X(hgc_rt_const_alloc)      \
	X(hgc_rt_const_free)

/* The process-wide state; lock guards all of it. */
static struct {
	bool target_ok;			/* the fields below up to tm are set */
	char *target_error;		/* why the target could not be set up */
	char *triple, *cpu, *features, *layout;
	LLVMTargetMachineRef tm;	/* passes and object files */
	LLVMOrcLLJITRef jit;		/* NULL until first used */
	unsigned long serial;		/* modules prefixed so far */
	long live;			/* modules and objects in the JIT */
	char *reported;			/* last message of the JIT's error reporter */
} S;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Record an LLVM error: "llvm backend: what: message", then dispose the message. */
int hgc_llvm_error(struct hgc_diag *d, LLVMErrorRef err, const char *what)
{
	char *msg = LLVMGetErrorMessage(err);
	int rc = hgc_error(d, NULL, "llvm backend: %s: %s", what, msg);

	LLVMDisposeErrorMessage(msg);
	return rc;
}

/* An LLVM-allocated string copied to malloc'ed memory, the original disposed. */
static char *take(char *llvm_msg)
{
	char *s = strdup(llvm_msg ? llvm_msg : "");

	LLVMDisposeMessage(llvm_msg);
	return s;
}

/* A target machine for the host: reloc PIC for object files, default for the JIT. */
static LLVMTargetMachineRef host_tm(LLVMTargetRef target, LLVMRelocMode reloc,
				    LLVMCodeModel model)
{
	return LLVMCreateTargetMachine(target, S.triple, S.cpu, S.features,
				       LLVMCodeGenLevelAggressive, reloc, model);
}

/* Initialize the native target and build the host target machine (under lock). */
static int target_init(void)
{
	LLVMTargetRef target;
	LLVMTargetDataRef td;
	char *err = NULL;

	if (LLVMInitializeNativeTarget() || LLVMInitializeNativeAsmPrinter()) {
		S.target_error = strdup("the native target is not available");
		return -1;
	}
	S.triple = take(LLVMGetDefaultTargetTriple());
	S.cpu = take(LLVMGetHostCPUName());
	S.features = take(LLVMGetHostCPUFeatures());
	if (LLVMGetTargetFromTriple(S.triple, &target, &err)) {
		S.target_error = take(err);
		return -1;
	}
	S.tm = host_tm(target, LLVMRelocPIC, LLVMCodeModelDefault);
	if (!S.tm) {
		S.target_error = strdup("cannot create a target machine for the host");
		return -1;
	}
	td = LLVMCreateTargetDataLayout(S.tm);
	S.layout = take(LLVMCopyStringRepOfTargetData(td));
	LLVMDisposeTargetData(td);
	S.target_ok = true;
	return 0;
}

/* The host target, set up on first call; -1 with the diag set when it cannot be. */
int hgc_llvm_target(struct hgc_diag *d)
{
	int rc = 0;

	pthread_mutex_lock(&lock);
	if (!S.target_ok && !S.target_error)
		rc = target_init();
	else if (!S.target_ok)
		rc = -1;
	if (rc)
		hgc_error(d, NULL, "llvm backend: cannot target the host: %s", S.target_error);
	pthread_mutex_unlock(&lock);
	return rc;
}

/* The host target machine, valid after hgc_llvm_target succeeded (and the same below). */
LLVMTargetMachineRef hgc_llvm_tm(void)
{
	return S.tm;
}

/* The host triple. */
const char *hgc_llvm_triple(void)
{
	return S.triple;
}

/* The host data layout string. */
const char *hgc_llvm_layout(void)
{
	return S.layout;
}

/* The host CPU name (znver3 on Zen 4 with LLVM 14). */
const char *hgc_llvm_cpu(void)
{
	return S.cpu;
}

/* The host feature string (+avx2,+avx512f,... as the CPU has them). */
const char *hgc_llvm_features(void)
{
	return S.features;
}

/* Whether the host feature string holds +name as a whole item ("avx512f" is not "avx512fp16"). */
bool hgc_llvm_has_feature(const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = S.features; p && (p = strstr(p, name)); p += n)
		if (p > S.features && p[-1] == '+' && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* "triple, cpu, features" of the host, for reports (empty before first use). */
const char *hgc_codegen_llvm_target(void)
{
	static char buf[4096];

	pthread_mutex_lock(&lock);
	if (S.target_ok)
		snprintf(buf, sizeof(buf), "%s, cpu %s, features %s", S.triple, S.cpu, S.features);
	pthread_mutex_unlock(&lock);
	return buf;
}

/* The JIT's reporter of errors no caller receives: keep the last message. */
static void report(void *ctx, LLVMErrorRef err)
{
	char *msg = LLVMGetErrorMessage(err);

	free(S.reported);
	S.reported = strdup(msg);
	LLVMDisposeErrorMessage(msg);
}

/* Define the runtime symbols in the JIT's main dylib by address. */
static LLVMErrorRef define_runtime(LLVMOrcJITDylibRef jd)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} syms[] = {
#define X(name) { #name, (void (*)(void))name },
		RUNTIME_SYMBOLS(X)
#undef X
	};
	LLVMJITCSymbolMapPair pairs[sizeof(syms) / sizeof(syms[0])];
	LLVMOrcMaterializationUnitRef mu;
	LLVMErrorRef err;
	size_t i, n = sizeof(syms) / sizeof(syms[0]);

	for (i = 0; i < n; i++) {
		pairs[i].Name = LLVMOrcLLJITMangleAndIntern(S.jit, syms[i].name);
		pairs[i].Sym.Address = (LLVMOrcExecutorAddress)(uintptr_t)syms[i].fn;
		pairs[i].Sym.Flags.GenericFlags =
			LLVMJITSymbolGenericFlagsExported | LLVMJITSymbolGenericFlagsCallable;
		pairs[i].Sym.Flags.TargetFlags = 0;
	}
	mu = LLVMOrcAbsoluteSymbols(pairs, n);	/* takes the interned names */
	err = LLVMOrcJITDylibDefine(jd, mu);
	if (err)
		LLVMOrcDisposeMaterializationUnit(mu);	/* still ours on failure */
	return err;
}

/* Let the JIT see the process's symbols (libm, libgomp, libc) and the runtime's. */
static LLVMErrorRef add_symbols(void)
{
	LLVMOrcJITDylibRef jd = LLVMOrcLLJITGetMainJITDylib(S.jit);
	LLVMOrcDefinitionGeneratorRef gen;
	LLVMErrorRef err;

	err = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
		&gen, LLVMOrcLLJITGetGlobalPrefix(S.jit), NULL, NULL);
	if (err)
		return err;
	LLVMOrcJITDylibAddGenerator(jd, gen);	/* the dylib owns gen now */
	return define_runtime(jd);
}

/*
 * The object layer when HGC_PERF is set: LLJIT's own RTDyld layer with
 * LLVM's perf listener, which writes jit-PID.dump for `perf inject --jit`,
 * so that `perf report` names the generated functions (docs/codegen.md).
 * The listener is NULL when LLVM was built without perf support; the
 * layer then works as without HGC_PERF.
 */
static LLVMOrcObjectLayerRef perf_layer(void *ctx, LLVMOrcExecutionSessionRef es,
					const char *triple)
{
	LLVMOrcObjectLayerRef layer =
		LLVMOrcCreateRTDyldObjectLinkingLayerWithSectionMemoryManager(es);
	LLVMJITEventListenerRef perf = LLVMCreatePerfJITEventListener();

	(void)ctx, (void)triple;
	if (perf)
		LLVMOrcRTDyldObjectLinkingLayerRegisterJITEventListener(layer, perf);
	return layer;
}

/* Create the LLJIT on a target machine of its own (under lock, after target_init). */
static int jit_init(struct hgc_diag *d)
{
	LLVMTargetRef target = LLVMGetTargetMachineTarget(S.tm);
	LLVMOrcLLJITBuilderRef builder = LLVMOrcCreateLLJITBuilder();
	LLVMOrcJITTargetMachineBuilderRef jtmb;
	LLVMErrorRef err;

	/* the JIT target machine builder takes ownership of its target machine */
	jtmb = LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(
		host_tm(target, LLVMRelocDefault, LLVMCodeModelJITDefault));
	LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(builder, jtmb);	/* builder owns jtmb */
	if (getenv("HGC_PERF") && *getenv("HGC_PERF") && strcmp(getenv("HGC_PERF"), "0"))
		LLVMOrcLLJITBuilderSetObjectLinkingLayerCreator(builder, perf_layer, NULL);
	err = LLVMOrcCreateLLJIT(&S.jit, builder);	/* consumes builder, even on failure */
	if (err) {
		S.jit = NULL;
		return hgc_llvm_error(d, err, "cannot create the JIT");
	}
	LLVMOrcExecutionSessionSetErrorReporter(LLVMOrcLLJITGetExecutionSession(S.jit), report,
						NULL);
	err = add_symbols();
	if (err) {
		hgc_llvm_error(d, err, "cannot bind the runtime in the JIT");
		LLVMConsumeError(LLVMOrcDisposeLLJIT(S.jit));
		S.jit = NULL;
		return -1;
	}
	return 0;
}

/* "hgcjitN_": a prefix no other module in the JIT has. */
char *hgc_llvm_jit_prefix(void)
{
	char buf[40];

	pthread_mutex_lock(&lock);
	snprintf(buf, sizeof(buf), "hgcjit%lu_", ++S.serial);
	pthread_mutex_unlock(&lock);
	return strdup(buf);
}

/* The JIT, created on first use (call with the lock held); -1 with d set. */
static int jit_ready(struct hgc_diag *d)
{
	if (S.jit)
		return 0;
	if (!S.target_ok)
		return hgc_error(d, NULL, "llvm backend: the host target is not set up");
	return jit_init(d);
}

/* A fresh resource tracker of the main dylib (lock held). */
static LLVMOrcResourceTrackerRef new_tracker(void)
{
	return LLVMOrcJITDylibCreateResourceTracker(LLVMOrcLLJITGetMainJITDylib(S.jit));
}

/* Keep rt when adding to it succeeded, else release it (lock held); what names the thing added. */
static LLVMOrcResourceTrackerRef added(LLVMOrcResourceTrackerRef rt, LLVMErrorRef err,
				       const char *what, struct hgc_diag *d)
{
	if (err) {
		hgc_llvm_error(d, err, what);
		LLVMOrcReleaseResourceTracker(rt);
		return NULL;
	}
	S.live++;
	return rt;
}

/* Add a module to the JIT under a fresh resource tracker. */
LLVMOrcResourceTrackerRef hgc_llvm_jit_add(LLVMModuleRef mod, LLVMOrcThreadSafeContextRef tsc,
					   struct hgc_diag *d)
{
	LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(mod, tsc);
	LLVMOrcResourceTrackerRef rt = NULL;

	pthread_mutex_lock(&lock);
	if (jit_ready(d) < 0) {
		LLVMOrcDisposeThreadSafeModule(tsm);	/* never handed over */
	} else {
		rt = new_tracker();
		rt = added(rt, LLVMOrcLLJITAddLLVMIRModuleWithRT(S.jit, rt, tsm),	/* takes tsm */
			   "cannot add the module to the JIT", d);
	}
	pthread_mutex_unlock(&lock);
	return rt;
}

/* Add an object file to the JIT under a fresh resource tracker (llvm_object.c:
   objects from the disk cache). */
LLVMOrcResourceTrackerRef hgc_llvm_jit_add_object(LLVMMemoryBufferRef obj, struct hgc_diag *d)
{
	LLVMOrcResourceTrackerRef rt = NULL;

	pthread_mutex_lock(&lock);
	if (jit_ready(d) < 0) {
		LLVMDisposeMemoryBuffer(obj);	/* never handed over */
	} else {
		rt = new_tracker();
		rt = added(rt, LLVMOrcLLJITAddObjectFileWithRT(S.jit, rt, obj),	/* takes obj */
			   "cannot add the object file to the JIT", d);
	}
	pthread_mutex_unlock(&lock);
	return rt;
}

/* Look a symbol up; the first lookup in a module compiles it. */
void *hgc_llvm_jit_lookup(const char *name, struct hgc_diag *d)
{
	LLVMOrcExecutorAddress addr = 0;
	LLVMErrorRef err;

	pthread_mutex_lock(&lock);
	free(S.reported);
	S.reported = NULL;
	err = S.jit ? LLVMOrcLLJITLookup(S.jit, &addr, name) : NULL;
	if (err) {
		hgc_llvm_error(d, err, "cannot compile the module");
		if (S.reported)
			hgc_note(d, NULL, "the JIT reported: %s", S.reported);
		addr = 0;
	} else if (!S.jit) {
		hgc_error(d, NULL, "llvm backend: the JIT is not running");
	}
	pthread_mutex_unlock(&lock);
	return (void *)(uintptr_t)addr;
}

/* Remove a module's code from the JIT and drop its tracker. */
void hgc_llvm_jit_remove(LLVMOrcResourceTrackerRef rt)
{
	if (!rt)
		return;
	pthread_mutex_lock(&lock);
	LLVMConsumeError(LLVMOrcResourceTrackerRemove(rt));
	LLVMOrcReleaseResourceTracker(rt);
	S.live--;
	pthread_mutex_unlock(&lock);
}

/* A module or object in the JIT: the common struct, its tracker, and fini. */
struct jit_compiled {
	struct hgc_compiled pub;
	LLVMOrcResourceTrackerRef rt;
	void (*fini)(void);	/* unmaps the heap constants init mapped, or NULL */
};

/* Give back the module's constants, then remove its code from the JIT. */
static void jit_release(struct hgc_compiled *pub)
{
	struct jit_compiled *c = (struct jit_compiled *)pub;

	if (c->fini)
		c->fini();
	hgc_llvm_jit_remove(c->rt);
	free(c);
}

/* The address of PREFIXrole; the first lookup in a module compiles it. */
static void *lookup(const char *prefix, const char *role, struct hgc_diag *d)
{
	char name[512];

	snprintf(name, sizeof(name), "%s%s", prefix, role);
	return hgc_llvm_jit_lookup(name, d);
}

/* The compiled module behind rt (NULL: adding it failed): PREFIXentry, and
   PREFIXinit and PREFIXfini when has_init; NULL, rt removed, when one is missing. */
struct hgc_compiled *hgc_llvm_jit_compiled(LLVMOrcResourceTrackerRef rt, const char *prefix,
					   int nargs, bool has_init, struct hgc_diag *d)
{
	struct jit_compiled *c;
	void *init = NULL, *fini = NULL, *entry = NULL;

	if (!rt)
		return NULL;
	if (has_init) {
		init = lookup(prefix, "init", d);
		fini = init ? lookup(prefix, "fini", d) : NULL;
	}
	if (!has_init || fini)
		entry = lookup(prefix, "entry", d);
	if (!entry) {
		hgc_llvm_jit_remove(rt);
		return NULL;
	}
	c = hgc_xcalloc(1, sizeof(*c));
	c->rt = rt;
	*(void **)&c->pub.init = init;
	*(void **)&c->pub.entry = entry;
	*(void **)&c->fini = fini;
	c->pub.nargs = nargs;
	c->pub.release = jit_release;
	return &c->pub;
}

/* Dispose the JIT and the target machine; the next use sets them up again.  While
   compiled modules are still in the JIT it does nothing: they keep working, and a
   later call, once they are released, disposes everything. */
void hgc_codegen_llvm_shutdown(void)
{
	pthread_mutex_lock(&lock);
	if (S.live > 0) {
		pthread_mutex_unlock(&lock);
		return;
	}
	if (S.jit)
		LLVMConsumeError(LLVMOrcDisposeLLJIT(S.jit));
	if (S.tm)
		LLVMDisposeTargetMachine(S.tm);
	free(S.target_error);
	free(S.triple);
	free(S.cpu);
	free(S.features);
	free(S.layout);
	free(S.reported);
	memset(&S, 0, sizeof(S));
	pthread_mutex_unlock(&lock);
}
