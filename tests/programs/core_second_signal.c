/*
 * core_second_signal - a second signal that ends the process comes while
 * mxprof writes the final dump of the first.
 *
 * usage: core_second_signal
 * Records 100 tasks "step" in the domain "second" (when mxprof is
 * loaded), then writes to a page with no access: SIGSEGV. The program
 * defines write() (linked with -rdynamic, so that mxprof's calls reach it
 * first): the first write made after the fault, by another thread (under
 * mxprof, the drain thread writing the final dump), sends the process
 * SIGTERM first. Without mxprof nothing writes after the fault, and the
 * process ends by SIGSEGV; under mxprof it must end so too.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mxprof_dl.h"

static int faulting, sent;
static pid_t main_tid;

ssize_t write(int fd, const void *buf, size_t n)
{
	if (__atomic_load_n(&faulting, __ATOMIC_ACQUIRE) &&
	    (pid_t)syscall(SYS_gettid) != main_tid &&
	    !__atomic_exchange_n(&sent, 1, __ATOMIC_ACQ_REL)) {
		kill(getpid(), SIGTERM);
	}
	return syscall(SYS_write, fd, buf, n);
}

int main(void)
{
	main_tid = (pid_t)syscall(SYS_gettid);
	mxprof_dl_load();
	mxprof_domain *dom = MXPROF(domain_create)("second");
	mxprof_task *step = MXPROF(task_create)(dom, "step");

	for (int i = 0; i < 100; i++) {
		MXPROF(task_start)(step);
		MXPROF(task_stop)(step);
	}
	volatile char *p =
		mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		return 69;
	}
	__atomic_store_n(&faulting, 1, __ATOMIC_RELEASE);
	p[0] = 1;
	return 3;
}
