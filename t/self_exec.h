/*
 * self_exec.h: run this test binary again under an environment prefix, for
 * tests of what a process reads once at start-up (HGC_ISA, HGC_MACHINE).
 */
#ifndef HGC_T_SELF_EXEC_H
#define HGC_T_SELF_EXEC_H

#include <stdio.h>
#include <unistd.h>

/* `ENV 'self' ARG 2>&1` (env a shell prefix: "HGC_ISA=avx2", "env -u X"); its
   output, stderr included, in out. */
static void run_self(const char *env, const char *arg, char *out, size_t n)
{
	char cmd[4400], self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	FILE *p;
	size_t got;

	self[len > 0 ? len : 0] = 0;
	snprintf(cmd, sizeof(cmd), "%s '%s' %s 2>&1", env, self, arg);
	fflush(stdout);
	p = popen(cmd, "r");
	got = p ? fread(out, 1, n - 1, p) : 0;
	out[got] = 0;
	if (p)
		pclose(p);
}

#endif
