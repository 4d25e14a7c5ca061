// cxxlib.h - the interface of libhookt's C++ sibling, libhookcxx.so.
#ifndef CXXLIB_H
#define CXXLIB_H

#include <string>

namespace nn
{
int scale(int x);
double scale(double x);
int other(int x);
size_t length(const std::string &s);
namespace inner
{
struct Acc {
	long total = 0;
	long add(long v);
};
} // namespace inner
} // namespace nn

#endif
