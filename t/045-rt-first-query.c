/*
 * t/045-rt-first-query.c: the runtime's capability queries give the same
 * answer when they are a process's first runtime call as after the ISA has
 * been chosen.  hgc_rt_has_amx() read its switch before the first-use setup
 * had run and said "no AMX" to a program that asked it first (session 24,
 * bench/amx_probe).  Each query runs in a fresh child process, first.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "runtime/runtime_int.h"
#include "tap.h"

/* What query() returns as the first runtime call of a fresh process, or -1. */
static int first_call(int (*query)(void))
{
	int fds[2], status;
	char c = 0;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		c = (char)('0' + (query() != 0));
		_exit(write(fds[1], &c, 1) == 1 ? 0 : 1);
	}
	close(fds[1]);
	if (read(fds[0], &c, 1) != 1)
		c = 0;
	close(fds[0]);
	waitpid(pid, &status, 0);
	return c ? c - '0' : -1;
}

int main(void)
{
	/* the children fork before this process has made any runtime call */
	int amx_first = first_call(hgc_rt_has_amx), vnni_first = first_call(hgc_rt_has_vnni);
	int bf16_first = first_call(hgc_rt_has_bf16);
	const struct hgc_rt_cpu *cpu = hgc_rt_cpu();
	const char *env = getenv("HGC_AMX");
	int avx512 = hgc_rt_isa() == HGC_ISA_AVX512;
	int amx = avx512 && (cpu->amx_int8 || cpu->amx_bf16) && !(env && !strcmp(env, "off"));

	plan(4);
	is_int(amx_first, amx, "has_amx as the first call: %s", amx ? "yes" : "no");
	is_int(hgc_rt_has_amx(), amx, "has_amx after the ISA is chosen agrees");
	is_int(vnni_first, hgc_rt_has_vnni() != 0, "has_vnni first agrees");
	is_int(bf16_first, hgc_rt_has_bf16() != 0, "has_bf16 first agrees");
	return done_testing();
}
