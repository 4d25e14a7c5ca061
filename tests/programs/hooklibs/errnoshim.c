/*
 * errnoshim.c - liberrnoshim.so, preloaded before libmxprof by
 * hook_errno.sh: mmap and mprotect that succeed, as the kernel says, and
 * then leave errno set to ESTALE, as POSIX allows any successful call to
 * do. Nothing in the test program calls them; libmxprof's calls reach
 * them, so any path of mxprof that does not keep the program's errno
 * shows.
 */
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);

	if (r == -1) {
		return MAP_FAILED;
	}
	errno = ESTALE;
	return (void *)r;
}

int mprotect(void *addr, size_t len, int prot)
{
	long r = syscall(SYS_mprotect, addr, len, prot);

	if (r == 0) {
		errno = ESTALE;
	}
	return (int)r;
}
