/*
 * perf_aggregate.c: a "perf script --dlfilter" shared object that hands profdiff each
 * sample's resolved callchain without perf printing ~3 KB of text per sample.
 *
 * Why: perf script spends most of its time formatting callchains (address, symbol,
 * DSO, one line per frame) and profdiff then spends as long splitting them again.  Here
 * perf still reads the file, tracks the threads and their maps and resolves every
 * address with its own symbol tables (resolve_address: the same symbol and DSO names
 * perf script prints), but each sample is filtered out before perf formats it; this
 * filter interns the (symbol, DSO) frames and the callchains and writes compact tables
 * that parsers/perf_dlfilter.py reads with numpy.
 *
 * The structures below follow the documented dlfilter ABI (perf-dlfilter(1)): every
 * struct starts with its size and perf copies only what both sides know, so this file
 * does not need perf's header.  Build: cc -O2 -shared -fPIC -o X.so perf_aggregate.c
 *
 * Arguments (--dlarg, in order): output prefix; "1" if the samples carry callchains;
 * the most frames kept per sample (perf script's --max-stack default); optionally the
 * first and last sample time (ns) of this run's slice.
 * Output (little-endian, native):
 *   PREFIX.samples  per sample: u32 stack, u32 shape, u64 time, u64 period
 *   PREFIX.stacks   u32 count of stacks, u32 length per stack, then all frame ids
 *                   (each stack root first; perf records them leaf first)
 *   PREFIX.frames   per frame: "address\0symbol\0dso\0" (address in hex, symbol or DSO
 *                   empty when perf could not resolve it)
 *   PREFIX.shapes   per (event, comm, pid, tid): "pid\0tid\0event\0comm\0"
 *   PREFIX.done     written last: the tables are complete
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct perf_dlfilter_sample {
	uint32_t size;
	uint16_t ins_lat;
	uint16_t p_stage_cyc;
	uint64_t ip;
	int32_t pid;
	int32_t tid;
	uint64_t time;
	uint64_t addr;
	uint64_t id;
	uint64_t stream_id;
	uint64_t period;
	uint64_t weight;
	uint64_t transaction;
	uint64_t insn_cnt;
	uint64_t cyc_cnt;
	int32_t cpu;
	uint32_t flags;
	uint64_t data_src;
	uint64_t phys_addr;
	uint64_t data_page_size;
	uint64_t code_page_size;
	uint64_t cgroup;
	uint8_t cpumode;
	uint8_t addr_correlates_sym;
	uint16_t misc;
	uint32_t raw_size;
	const void *raw_data;
	uint64_t brstack_nr;
	const void *brstack;
	uint64_t raw_callchain_nr;
	const uint64_t *raw_callchain;
	const char *event;
};

struct perf_dlfilter_al {
	uint32_t size;
	uint32_t symoff;
	const char *sym;
	uint64_t addr;
	uint64_t sym_start;
	uint64_t sym_end;
	const char *dso;
	uint8_t sym_binding;
	uint8_t is_64_bit;
	uint8_t is_kernel_ip;
	uint32_t buildid_size;
	uint8_t *buildid;
	uint8_t filtered;
	const char *comm;
};

struct perf_dlfilter_fns {
	const struct perf_dlfilter_al *(*resolve_ip)(void *ctx);
	const struct perf_dlfilter_al *(*resolve_addr)(void *ctx);
	char **(*args)(void *ctx, int *dlargc);
	int32_t (*resolve_address)(void *ctx, uint64_t address, struct perf_dlfilter_al *al);
	const uint8_t *(*insn)(void *ctx, uint32_t *length);
	const char *(*srcline)(void *ctx, uint32_t *line_number);
	void *(*attr)(void *ctx);
	int32_t (*object_code)(void *ctx, uint64_t ip, void *buf, uint32_t len);
	void *(*reserved[120])(void *);
};

struct perf_dlfilter_fns perf_dlfilter_fns; /* filled in by perf */

#define CONTEXT_MARKERS ((uint64_t)-4095) /* PERF_CONTEXT_MAX: kernel/user markers */
#define MAX_FRAMES 65536

/* Frames: one per distinct (symbol, DSO, kernel half).  perf's name strings are looked
 * up by pointer, and each hit is checked against a copy: perf may free them before
 * stop() (with its session) or, rarely, reuse one for another name (BPF symbols). */
struct frame {
	const char *sym, *dso;   /* perf's strings, only compared as pointers */
	char *sym_copy, *dso_copy;
	uint64_t addr;
	uint32_t kernel;
};

/* Shapes: one per distinct (event, comm, pid, tid) */
struct shape {
	const char *event;
	char *event_copy, *comm;
	int32_t pid, tid;
};

struct table { /* open addressing: slot -> id + 1 (0 = free) */
	uint32_t *slot;
	uint64_t *hash;
	size_t cap;
};

static struct frame *frames;
static size_t n_frames, frames_cap;
static struct shape *shapes;
static size_t n_shapes, shapes_cap;
static uint32_t *stack_ids;  /* all stacks' frame ids, one after the other */
static size_t stack_ids_len, stack_ids_cap;
static uint64_t *stack_off;  /* stack s: stack_ids[stack_off[s] .. stack_off[s + 1]) */
static size_t n_stacks, stack_off_cap;
static struct table frame_tab, stack_tab, shape_tab;
static FILE *samples_out;
static char *prefix;
static int with_callchain = 1;
static size_t max_stack = 127;
static uint64_t time_lo, time_hi = UINT64_MAX; /* this run's slice, both ends included */
static uint32_t chain[MAX_FRAMES];
static int failed;

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdULL;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = mix(h, (unsigned char)*s);
	return h;
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap : 1024;
	while (c < need)
		c *= 2;
	void *q = realloc(p, c * elem);
	if (!q) {
		failed = 1;
		return p;
	}
	*cap = c;
	return q;
}

static int table_init(struct table *t, size_t cap)
{
	t->cap = cap;
	t->slot = calloc(cap, sizeof *t->slot);
	t->hash = calloc(cap, sizeof *t->hash);
	return t->slot && t->hash ? 0 : -1;
}

/* Double the table when half full (ids are kept, slots recomputed from the hashes). */
static void table_grow(struct table *t, size_t used)
{
	if (2 * (used + 1) < t->cap)
		return;
	struct table n;
	if (table_init(&n, t->cap * 2)) {
		failed = 1;
		return;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slot[i])
			continue;
		size_t j = t->hash[i] & (n.cap - 1);
		while (n.slot[j])
			j = (j + 1) & (n.cap - 1);
		n.slot[j] = t->slot[i];
		n.hash[j] = t->hash[i];
	}
	free(t->slot);
	free(t->hash);
	*t = n;
}

static int same_text(const char *copy, const char *now)
{
	return copy == now || (copy && now && !strcmp(copy, now));
}

static char *copy_text(const char *s)
{
	char *c = s ? strdup(s) : NULL;
	if (s && !c)
		failed = 1;
	return c;
}

static uint32_t frame_id(const char *sym, const char *dso, uint64_t addr)
{
	uint32_t kernel = (addr >> 48) == 0xffff; /* the test the text reader makes */
	uint64_t h = mix(mix(mix(1, (uintptr_t)sym), (uintptr_t)dso), kernel);
	size_t m = frame_tab.cap - 1, j = h & m;
	for (; frame_tab.slot[j]; j = (j + 1) & m) {
		struct frame *f = &frames[frame_tab.slot[j] - 1];
		if (frame_tab.hash[j] == h && f->sym == sym && f->dso == dso && f->kernel == kernel
		    && same_text(f->sym_copy, sym) && same_text(f->dso_copy, dso))
			return frame_tab.slot[j] - 1;
	}
	frames = grow(frames, &frames_cap, n_frames + 1, sizeof *frames);
	if (failed)
		return 0;
	frames[n_frames] = (struct frame){ sym, dso, copy_text(sym), copy_text(dso), addr, kernel };
	frame_tab.slot[j] = (uint32_t)++n_frames;
	frame_tab.hash[j] = h;
	table_grow(&frame_tab, n_frames);
	return (uint32_t)(n_frames - 1);
}

static uint32_t stack_id(const uint32_t *ids, size_t n)
{
	uint64_t h = mix(2, n);
	for (size_t i = 0; i < n; i++)
		h = mix(h, ids[i]);
	size_t m = stack_tab.cap - 1, j = h & m;
	for (; stack_tab.slot[j]; j = (j + 1) & m) {
		size_t s = stack_tab.slot[j] - 1;
		if (stack_tab.hash[j] == h && stack_off[s + 1] - stack_off[s] == n
		    && !memcmp(stack_ids + stack_off[s], ids, n * sizeof *ids))
			return (uint32_t)s;
	}
	stack_ids = grow(stack_ids, &stack_ids_cap, stack_ids_len + n, sizeof *stack_ids);
	stack_off = grow(stack_off, &stack_off_cap, n_stacks + 2, sizeof *stack_off);
	if (failed)
		return 0;
	memcpy(stack_ids + stack_ids_len, ids, n * sizeof *ids);
	stack_ids_len += n;
	stack_off[++n_stacks] = stack_ids_len;
	stack_tab.slot[j] = (uint32_t)n_stacks;
	stack_tab.hash[j] = h;
	table_grow(&stack_tab, n_stacks);
	return (uint32_t)(n_stacks - 1);
}

static uint32_t shape_id(const char *event, const char *comm, int32_t pid, int32_t tid)
{
	uint64_t h = mix_str(mix(mix(mix(3, (uintptr_t)event), (uint32_t)pid), (uint32_t)tid), comm);
	size_t m = shape_tab.cap - 1, j = h & m;
	for (; shape_tab.slot[j]; j = (j + 1) & m) {
		struct shape *s = &shapes[shape_tab.slot[j] - 1];
		if (shape_tab.hash[j] == h && s->event == event && s->pid == pid && s->tid == tid
		    && same_text(s->event_copy, event) && !strcmp(s->comm, comm))
			return shape_tab.slot[j] - 1;
	}
	shapes = grow(shapes, &shapes_cap, n_shapes + 1, sizeof *shapes);
	char *copy = copy_text(comm); /* a thread's comm string can change later (exec) */
	char *ev = copy_text(event);
	if (failed)
		return 0;
	shapes[n_shapes] = (struct shape){ event, ev, copy, pid, tid };
	shape_tab.slot[j] = (uint32_t)++n_shapes;
	shape_tab.hash[j] = h;
	table_grow(&shape_tab, n_shapes);
	return (uint32_t)(n_shapes - 1);
}

static FILE *open_part(const char *ext)
{
	size_t n = strlen(prefix) + strlen(ext) + 1;
	char *name = malloc(n);
	if (!name)
		return NULL;
	snprintf(name, n, "%s%s", prefix, ext);
	FILE *f = fopen(name, "wb");
	free(name);
	return f;
}

int start(void **data, void *ctx)
{
	int argc = 0;
	char **argv = perf_dlfilter_fns.args ? perf_dlfilter_fns.args(ctx, &argc) : NULL;
	(void)data;
	if (argc < 1 || !perf_dlfilter_fns.resolve_address || !perf_dlfilter_fns.resolve_ip)
		return -1;
	prefix = strdup(argv[0]);
	if (argc > 1)
		with_callchain = argv[1][0] == '1';
	if (argc > 2 && atol(argv[2]) > 0 && atol(argv[2]) < MAX_FRAMES)
		max_stack = (size_t)atol(argv[2]);
	if (argc > 4) { /* perf calls this filter before it applies --time */
		time_lo = strtoull(argv[3], NULL, 10);
		time_hi = strtoull(argv[4], NULL, 10);
	}
	stack_off = grow(NULL, &stack_off_cap, 2, sizeof *stack_off);
	if (!prefix || failed || table_init(&frame_tab, 1 << 12) || table_init(&stack_tab, 1 << 14)
	    || table_init(&shape_tab, 1 << 8))
		return -1;
	stack_off[0] = 0;
	samples_out = open_part(".samples");
	return samples_out ? 0 : -1;
}

static uint32_t resolved_frame(void *ctx, uint64_t addr)
{
	struct perf_dlfilter_al al;
	memset(&al, 0, sizeof al);
	al.size = sizeof al;
	if (perf_dlfilter_fns.resolve_address(ctx, addr, &al))
		al.sym = al.dso = NULL;
	return frame_id(al.sym, al.dso, addr);
}

/* Called for every sample before perf formats it: record it, then drop it (return 1)
 * so perf prints nothing.  Samples perf script would skip are skipped here too: those
 * whose thread perf cannot resolve, and those its own filters drop. */
int filter_event_early(void *data, const struct perf_dlfilter_sample *s, void *ctx)
{
	(void)data;
	if (failed)
		return -1;
	if (s->time < time_lo || s->time > time_hi)
		return 1;
	const struct perf_dlfilter_al *ip = perf_dlfilter_fns.resolve_ip(ctx);
	if (!ip || ip->filtered)
		return 1;
	size_t n = 0;
	if (with_callchain) {
		for (uint64_t i = 0; i < s->raw_callchain_nr && n < max_stack; i++) {
			uint64_t a = s->raw_callchain[i];
			if (a < CONTEXT_MARKERS)
				chain[n++] = resolved_frame(ctx, a);
		}
	} else {
		chain[n++] = frame_id(ip->sym, ip->dso, s->ip);
	}
	uint32_t rec32[2] = { stack_id(chain, n),
			      shape_id(s->event, ip->comm ? ip->comm : "", s->pid, s->tid) };
	uint64_t rec64[2] = { s->time, s->period };
	if (failed || fwrite(rec32, sizeof rec32, 1, samples_out) != 1
	    || fwrite(rec64, sizeof rec64, 1, samples_out) != 1) {
		failed = 1;
		return -1;
	}
	return 1;
}

static int write_tables(void)
{
	FILE *f = open_part(".stacks");
	if (!f)
		return -1;
	uint32_t count = (uint32_t)n_stacks;
	int bad = fwrite(&count, sizeof count, 1, f) != 1;
	for (size_t s = 0; s < n_stacks && !bad; s++) {
		uint32_t len = (uint32_t)(stack_off[s + 1] - stack_off[s]);
		bad = fwrite(&len, sizeof len, 1, f) != 1;
	}
	for (size_t s = 0; s < n_stacks && !bad; s++) { /* root first, as the tree wants */
		size_t lo = stack_off[s], hi = stack_off[s + 1];
		for (size_t k = 0; k < (hi - lo) / 2; k++) {
			uint32_t t = stack_ids[lo + k];
			stack_ids[lo + k] = stack_ids[hi - 1 - k];
			stack_ids[hi - 1 - k] = t;
		}
		bad = hi > lo && fwrite(stack_ids + lo, sizeof *stack_ids, hi - lo, f) != hi - lo;
	}
	bad |= fclose(f) != 0;
	if (bad || !(f = open_part(".frames")))
		return -1;
	for (size_t i = 0; i < n_frames; i++) {
		struct frame *fr = &frames[i];
		fprintf(f, "%llx%c%s%c%s%c", (unsigned long long)fr->addr, 0,
			fr->sym_copy ? fr->sym_copy : "", 0, fr->dso_copy ? fr->dso_copy : "", 0);
	}
	if (fclose(f) != 0 || !(f = open_part(".shapes")))
		return -1;
	for (size_t i = 0; i < n_shapes; i++) {
		struct shape *sh = &shapes[i];
		fprintf(f, "%d%c%d%c%s%c%s%c", sh->pid, 0, sh->tid, 0,
			sh->event_copy ? sh->event_copy : "", 0, sh->comm, 0);
	}
	if (fclose(f) != 0 || !(f = open_part(".done")))
		return -1;
	return fclose(f) != 0 ? -1 : 0;
}

int stop(void *data, void *ctx)
{
	(void)data;
	(void)ctx;
	int bad = fclose(samples_out) != 0;
	if (bad || failed)
		return -1;
	return write_tables();
}

const char *filter_description(const char **long_description)
{
	if (long_description)
		*long_description = "Writes interned frames, callchains and samples for profdiff.";
	return "profdiff: samples as compact tables";
}
