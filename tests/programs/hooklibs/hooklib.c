/*
 * hooklib.c - libhookt.so, the library the hook tests time. Each function
 * exercises one part of the trampolines' contract: integer and SSE
 * arguments, varargs with doubles, long double and struct returns, errno,
 * callbacks into the program, and longjmp out of a call.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>

int ht_add(int a, int b)
{
	return a + b;
}

/* A printf-like function: %al carries the vector-register count. */
int ht_fmt(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(buf, n, fmt, ap);
	va_end(ap);
	return r;
}

double ht_dbl8(double a, double b, double c, double d, double e, double f,
	       double g, double h)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h;
}

long double ht_ld(long double x)
{
	return x * 2.5L + 1e-30L;
}

struct ht_big {
	long v[5];
};

struct ht_big ht_big(long x)
{
	struct ht_big b = {{x, x + 1, x + 2, x + 3, x + 4}};
	return b;
}

struct ht_pair {
	double x;
	long y;
};

struct ht_pair ht_pair(double x, long y)
{
	struct ht_pair p = {x * 3, y * 3};
	return p;
}

int ht_errno(int e)
{
	errno = e;
	return -1;
}

int ht_call(int (*cb)(int), int x)
{
	return cb(x) + 1;
}

void ht_jump(jmp_buf *jb, int v)
{
	longjmp(*jb, v);
}
