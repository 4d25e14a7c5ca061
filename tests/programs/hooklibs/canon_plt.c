/* canon_plt.c - a non-PIE program that takes strcmp's address: the
 * dynamic linker makes the program's strcmp@plt the function's canonical
 * address. Calls strcmp N times directly and through the pointer, and
 * prints a checksum of the results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int (*volatile cmp)(const char *, const char *) = strcmp;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	static const char *const w[] = {"apple", "banana", "apple", "cherry"};
	long sum = 0;

	for (long i = 0; i < n; i++) {
		int a = strcmp(w[i & 3], w[(i + 1) & 3]);
		int b = cmp(w[(i + 2) & 3], w[i & 3]);
		sum += (a > 0) - (a < 0) + 3 * ((b > 0) - (b < 0));
	}
	printf("%ld calls, sum %ld, same %d\n", 2 * n, sum,
	       cmp == (int (*)(const char *, const char *))strcmp);
	return 0;
}
