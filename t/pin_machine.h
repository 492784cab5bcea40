/*
 * pin_machine.h: the machine the plans a test checks were made for, a Zen 3
 * core (AVX2; 32 KiB of L1 and 512 KiB of L2 data cache), so that the test
 * checks the same plans on any host: HGC_ISA and HGC_MACHINE
 * (heuristics/model.c) stand for the host's.  Call first thing in main,
 * before anything probes the CPU; commands the test runs inherit it.
 */
#ifndef HGC_T_PIN_MACHINE_H
#define HGC_T_PIN_MACHINE_H

#include <stdlib.h>

static inline void pin_machine(void)
{
	setenv("HGC_ISA", "avx2", 1);
	setenv("HGC_MACHINE", "amd,32K,512K", 1);
}

#endif
