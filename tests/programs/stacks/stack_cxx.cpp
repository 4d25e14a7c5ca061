// stack_cxx.cpp - a hooked zlib call inside C++ methods whose callers
// throw and catch, for the call-stack tests: the frames come out
// demangled, and the stacks after each exception are still right.
//
//   main -> shapes::Grid::fill(int) -> shapes::checksum<int>(int) -> crc32
//   then fill throws std::runtime_error past main's catch, 3 times.
#include <cstdio>
#include <stdexcept>
#include <zlib.h>

namespace shapes {

static const char data[] = "thrown and caught";

template <typename T> __attribute__((noinline)) unsigned long checksum(T n)
{
	unsigned long c = crc32(0L, reinterpret_cast<const Bytef *>(data),
				static_cast<uInt>(sizeof(data) - 1 - n));
	__asm__ volatile("" ::: "memory");
	return c;
}

struct Grid {
	__attribute__((noinline)) unsigned long fill(int n)
	{
		unsigned long c = checksum<int>(n);
		if (n >= 0) {
			throw std::runtime_error("grid full");
		}
		return c;
	}
};

} // namespace shapes

int main()
{
	shapes::Grid g;
	int caught = 0;

	for (int i = 0; i < 3; i++) {
		try {
			g.fill(i);
		} catch (const std::runtime_error &e) {
			caught++;
		}
	}
	std::printf("%d caught %lx\n", caught, shapes::checksum<int>(0));
	return 0;
}
