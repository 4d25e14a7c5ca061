// cxxlib.cpp - libhookcxx.so for hook_demangle.sh: C++ functions in
// namespaces, overloaded, and a member function, as a C++ library exports
// them (mangled names). It takes a std::string, so it needs libstdc++,
// as real C++ libraries do.
#include "cxxlib.h"

namespace nn {

int scale(int x)
{
	return 2 * x;
}

double scale(double x)
{
	return 2.5 * x;
}

namespace inner {

long Acc::add(long v)
{
	total += v;
	return total;
}

} // namespace inner

int other(int x)
{
	return x + 1;
}

size_t length(const std::string &s)
{
	return s.size();
}

} // namespace nn
