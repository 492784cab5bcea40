/*
 * cpu.c: which instruction set the microkernels use.  The CPU is probed
 * once with CPUID, and the OS's support of the register state with xgetbv
 * (a kernel or hypervisor may hide zmm state the CPU has); HGC_ISA may
 * then force a lower ISA.  AMX's tile data is asked of Linux once
 * (arch_prctl); HGC_AMX=off leaves it unused.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime_int.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define HAVE_CPUID 1
#endif
#if defined(__x86_64__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#define HAVE_AMX_PERM 1
#endif

/* XCR0 bits: SSE and AVX state; opmask, upper zmm0-15 and zmm16-31 state. */
#define XCR0_YMM 0x06u
#define XCR0_ZMM 0xe0u
/* XCR0 bits of AMX: the tile configuration and the tile data. */
#define XCR0_TILE 0x60000u

static struct hgc_rt_cpu cpu;
static atomic_int isa_now;
static atomic_int amx_on;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static const char *const isa_names[] = {"generic", "avx2", "avx512"};

#ifdef HAVE_CPUID
/* The OS-enabled state components (XCR0); 0 when xgetbv is not allowed. */
static unsigned xcr0(unsigned leaf1_ecx)
{
	unsigned lo, hi;

	if (!(leaf1_ecx & (1u << 27)))	/* OSXSAVE */
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	(void)hi;
	return lo;
}

/* Whether Linux lets this process use AMX's tile data (asked once: a
   process that uses it without asking dies of SIGILL). */
static int amx_permitted(void)
{
#ifdef HAVE_AMX_PERM
	return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */,
		       18 /* XFEATURE_XTILEDATA */) == 0;
#else
	return 0;
#endif
}

/* Fill cpu from CPUID leaves 1 and 7 and from XCR0. */
static void probe(struct hgc_rt_cpu *p)
{
	unsigned a, b, c, d, max, ecx1, b7 = 0, c7 = 0, d7 = 0, a71 = 0, x;

	memset(p, 0, sizeof(*p));
	max = __get_cpuid_max(0, NULL);
	if (max < 1 || !__get_cpuid(1, &a, &b, &ecx1, &d))
		return;
	if (max >= 7) {
		__cpuid_count(7, 0, a, b7, c7, d7);
		if (a >= 1)
			__cpuid_count(7, 1, a71, b, c, d);
	}
	x = xcr0(ecx1);
	if ((x & XCR0_YMM) != XCR0_YMM || !(ecx1 & (1u << 28)))	/* AVX */
		return;
	p->avx2 = (b7 & (1u << 5)) && (ecx1 & (1u << 12));	/* AVX2, FMA */
	p->avx_vnni = p->avx2 && (a71 & (1u << 4));
	if ((x & XCR0_ZMM) != XCR0_ZMM || !p->avx2)
		return;
	/* F (16), DQ (17), BW (30), VL (31) */
	p->avx512 = (b7 & 0xc0030000u) == 0xc0030000u;
	p->avx512_vnni = p->avx512 && (c7 & (1u << 11));
	p->avx512_bf16 = p->avx512 && (a71 & (1u << 5));
	/* AMX-TILE (24) with AMX-INT8 (25) or AMX-BF16 (22), the tile state enabled,
	   and Linux's leave */
	if ((d7 & (1u << 24)) && (x & XCR0_TILE) == XCR0_TILE &&
	    (d7 & (1u << 25 | 1u << 22)) && amx_permitted()) {
		p->amx_int8 = p->avx512_vnni && (d7 & (1u << 25));
		p->amx_bf16 = p->avx512_bf16 && (d7 & (1u << 22));
	}
}
#else
/* Not x86: only the portable kernels. */
static void probe(struct hgc_rt_cpu *p)
{
	memset(p, 0, sizeof(*p));
}
#endif

/* The best ISA the probed CPU runs. */
enum hgc_isa hgc_rt_best_isa(const struct hgc_rt_cpu *p)
{
	if (p->avx512)
		return HGC_ISA_AVX512;
	return p->avx2 ? HGC_ISA_AVX2 : HGC_ISA_GENERIC;
}

/*
 * The ISA to use given HGC_ISA's value (NULL or "" when unset) and the
 * best one the CPU has; an unknown name or an ISA the CPU lacks is
 * reported on warn and replaced by the best available.
 */
enum hgc_isa hgc_rt_isa_choose(const char *env, enum hgc_isa best, FILE *warn)
{
	int i;

	if (!env || !*env)
		return best;
	for (i = 0; i <= (int)HGC_ISA_AVX512; i++)
		if (!strcmp(env, isa_names[i]))
			break;
	if (i > (int)HGC_ISA_AVX512) {
		if (warn)
			fprintf(warn, "hgc: warning: unknown HGC_ISA '%s' (want avx512, avx2 or generic), using %s\n",
				env, isa_names[best]);
		return best;
	}
	if (i > (int)best) {
		if (warn)
			fprintf(warn, "hgc: warning: HGC_ISA=%s is not supported by this CPU, using %s\n",
				env, isa_names[best]);
		return best;
	}
	return (enum hgc_isa)i;
}

/* Probe once and apply HGC_ISA (its warning is printed this one time). */
static void init(void)
{
	const char *amx = getenv("HGC_AMX");

	probe(&cpu);
	atomic_store(&isa_now, (int)hgc_rt_isa_choose(getenv("HGC_ISA"), hgc_rt_best_isa(&cpu),
						      stderr));
	atomic_store(&amx_on, !(amx && !strcmp(amx, "off")));
}

/* The probed CPU features. */
const struct hgc_rt_cpu *hgc_rt_cpu(void)
{
	pthread_once(&once, init);
	return &cpu;
}

/* The ISA in use. */
enum hgc_isa hgc_rt_isa(void)
{
	pthread_once(&once, init);
	return (enum hgc_isa)atomic_load_explicit(&isa_now, memory_order_relaxed);
}

/* Force an ISA, clamped down to the best the CPU has. */
enum hgc_isa hgc_rt_set_isa(enum hgc_isa isa)
{
	enum hgc_isa best = hgc_rt_best_isa(hgc_rt_cpu());

	if ((int)isa < 0 || isa > best)
		isa = best;
	atomic_store(&isa_now, (int)isa);
	return isa;
}

/* The name HGC_ISA uses for isa. */
const char *hgc_rt_isa_name(enum hgc_isa isa)
{
	if ((int)isa < 0 || isa > HGC_ISA_AVX512)
		return "unknown";
	return isa_names[isa];
}

/* u8 x s8 dot-product instructions at the ISA in use (AVX512-VNNI). */
int hgc_rt_has_vnni(void)
{
	return hgc_rt_isa() == HGC_ISA_AVX512 && hgc_rt_cpu()->avx512_vnni;
}

/* AMX for int8 and bf16 where the CPU has it: at the ISA avx512, unless
   HGC_AMX=off or hgc_rt_set_amx(0). */
int hgc_rt_has_amx(void)
{
	/* hgc_rt_isa() first: it runs init, which sets amx_on */
	return hgc_rt_isa() == HGC_ISA_AVX512 &&
	       atomic_load_explicit(&amx_on, memory_order_relaxed) &&
	       (hgc_rt_cpu()->amx_int8 || hgc_rt_cpu()->amx_bf16);
}

/* Allow AMX (on) or not, for tests and benchmarks; whether it is now in use. */
int hgc_rt_set_amx(int on)
{
	pthread_once(&once, init);
	atomic_store(&amx_on, on != 0);
	return hgc_rt_has_amx();
}

/* vdpbf16ps at the ISA in use. */
int hgc_rt_has_bf16(void)
{
	return hgc_rt_isa() == HGC_ISA_AVX512 && hgc_rt_cpu()->avx512_bf16;
}
