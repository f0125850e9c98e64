/* profdiff's inline probe: perf prints "(inlined)" frames for this program's samples
 * only if it expands inlined functions (libbfd, or an addr2line/libdw that does). */
#include <stdlib.h>
static inline __attribute__((always_inline)) double step(double x)
{
	for (int i = 0; i < 200; i++)
		x = x * 1.0000001 + 0.5 / (x + 1);
	return x;
}
__attribute__((noinline)) double work(double x) { return step(x) + step(x + 1); }
int main(int argc, char **argv)
{
	double s = 0;
	long n = argc > 1 ? atol(argv[1]) : 20000;
	for (long i = 0; i < n; i++)
		s += work((double)i);
	return s < 0;
}
