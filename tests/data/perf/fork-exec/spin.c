
#include <stdlib.h>
__attribute__((noinline)) long leaf_work(long n) { volatile long s = 0; for (long i = 0; i < n; i++) s += i * i % 7; return s; }
__attribute__((noinline)) long middle(long n) { return leaf_work(n) + 1; }
int main(int argc, char **argv) { long t = 0; int k = argc > 1 ? atoi(argv[1]) : 40; for (int i = 0; i < k; i++) t += middle(2000000); return (int)(t & 1); }

