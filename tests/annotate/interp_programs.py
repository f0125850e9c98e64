"""Two tiny bytecode interpreters in C: threaded dispatch vs one shared dispatch block.

Both run the same program (a counted loop of arithmetic ops) in a function called
``interp``.  ``THREADED`` uses GCC's computed ``goto *labels[op]`` after every handler, so
each handler ends in its own indirect jump.  ``SHARED`` jumps from every handler back to
one ``switch`` at the loop head (``-fno-jump-tables`` is not used: the switch is a table
jump), so the dispatch block is the jump target of every handler.
"""

COMMON = r"""
#include <stdio.h>
#include <stdlib.h>
enum { OP_INC, OP_ADD, OP_XOR, OP_SHL, OP_MUL, OP_SUB, OP_ROT, OP_LOOP, OP_HALT };
static const unsigned char code[] = {
    OP_INC, OP_ADD, OP_XOR, OP_SHL, OP_MUL, OP_SUB, OP_ROT, OP_ADD, OP_XOR, OP_LOOP, OP_HALT };
"""

THREADED = COMMON + r"""
__attribute__((noinline)) unsigned long interp(const unsigned char *pc0, long n) {
    static void *labels[] = { &&inc, &&add, &&xor, &&shl, &&mul, &&sub, &&rot, &&loop, &&halt };
    const unsigned char *pc = pc0;
    unsigned long a = 1, b = 7;
#define NEXT goto *labels[*pc++]
    NEXT;
inc:  a += 1; NEXT;
add:  a += b; NEXT;
xor:  a ^= b << 3; NEXT;
shl:  b = (b << 1) | (a & 1); NEXT;
mul:  a *= 2654435761u; NEXT;
sub:  b -= a >> 7; NEXT;
rot:  a = (a >> 13) | (a << 51); NEXT;
loop: if (--n > 0) pc = pc0; NEXT;
halt: return a ^ b;
}
"""

SHARED = COMMON + r"""
__attribute__((noinline)) unsigned long interp(const unsigned char *pc0, long n) {
    const unsigned char *pc = pc0;
    unsigned long a = 1, b = 7;
    for (;;) {
        switch (*pc++) {
        case OP_INC:  a += 1; break;
        case OP_ADD:  a += b; break;
        case OP_XOR:  a ^= b << 3; break;
        case OP_SHL:  b = (b << 1) | (a & 1); break;
        case OP_MUL:  a *= 2654435761u; break;
        case OP_SUB:  b -= a >> 7; break;
        case OP_ROT:  a = (a >> 13) | (a << 51); break;
        case OP_LOOP: if (--n > 0) pc = pc0; break;
        case OP_HALT: return a ^ b;
        default: abort();
        }
    }
}
"""

MAIN = r"""
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 3000000;
    printf("%lu\n", interp(code, n));
    return 0;
}
"""

HANDLERS = 9  # labels / cases: inc add xor shl mul sub rot loop halt
