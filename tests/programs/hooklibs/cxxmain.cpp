// cxxmain.cpp - calls libhookcxx.so's functions a known number of times:
//   cxxmain N   nn::scale(int) N, nn::scale(double) 2N,
//               nn::inner::Acc::add(long) 3N, nn::other(int) 4N,
//               nn::length(std::string const&) 5N times.
#include <cstdio>
#include <cstdlib>

#include "cxxlib.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	nn::inner::Acc acc;
	long s = 0;
	double d = 0;

	for (int i = 0; i < n; i++) {
		s += nn::scale(i);
		d += nn::scale(0.5 * i) + nn::scale(1.0 * i);
		for (int k = 0; k < 3; k++) {
			acc.add(i + k);
		}
		for (int k = 0; k < 4; k++) {
			s += nn::other(k);
		}
		for (int k = 0; k < 5; k++) {
			s += (long)nn::length(std::to_string(i * k));
		}
	}
	printf("%ld %.3f %ld\n", s, d, acc.total);
	return 0;
}
