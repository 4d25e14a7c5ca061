// hook_cxx.cpp - C++ exceptions through hooked calls. ht_call (in the C
// library libhookt.so, hooked) calls back into C++ code that throws; the
// exception unwinds through ht_call's frame, whose return address mxprof
// replaced. Also: an exception thrown and caught inside the callback (the
// hooked frame survives), a rethrow, and hooked calls after each catch.
//
//   hook_cxx N   prints the same lines with and without mxprof; calls
//                ht_call 3N times and ht_add 2N times.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

extern "C" int ht_add(int a, int b);
extern "C" int ht_call(int (*cb)(int), int x);

static int throw_cb(int x)
{
	throw std::runtime_error("boom " + std::to_string(x));
}

static int inner_catch_cb(int x)
{
	try {
		throw x;
	} catch (int v) {
		return ht_add(v, 1);
	}
}

static int rethrow_cb(int x)
{
	try {
		throw std::logic_error("again");
	} catch (...) {
		if (x >= 0) {
			throw;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	long s = 0;

	for (int i = 0; i < n; i++) {
		try {
			s += ht_call(throw_cb, i);
		} catch (const std::exception &e) {
			s += ht_add(i, 0);
			if (i == 0) {
				std::printf("caught %s\n", e.what());
			}
		}
		s += ht_call(inner_catch_cb, i);
		try {
			s += ht_call(rethrow_cb, i);
		} catch (const std::logic_error &e) {
			s += 1;
		}
	}
	std::printf("sum %ld\n", s);
	return 0;
}
