/* placement OPS ADDRS: the driver of `heaplab fidelity --placement`.  Maps
 * the flat ops file OPS (fidelity/probes/placement_ops.h, written by the
 * fidelity library from a trace), performs each op with the C library's
 * malloc family — the real allocator, or heaplab's model when the preload
 * library is in LD_PRELOAD — and writes the address each op returned into
 * the file ADDRS (one word per op, 0 after a free), which it maps too.
 *
 * Nothing but the trace may allocate: the ops, the block table and the
 * addresses are mappings, there is no stdio, and errors are written with
 * write(2).  So the allocator's first block is the trace's first block, on
 * both sides, but for the ops marked model_only: what the real library
 * itself allocates when it loads, done first on the model side only. */
#include <fcntl.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "placement_ops.h"

static void die(const char *what)
{
	static const char head[] = "placement: ";
	if (write(2, head, sizeof head - 1) < 0 || write(2, what, strlen(what)) < 0 || write(2, "\n", 1) < 0)
		_exit(2);
	_exit(2);
}

static void *map_file(const char *path, int flags, int prot, size_t *len)
{
	int fd = open(path, flags);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size <= 0)
		die("cannot open a file");
	void *p = mmap(NULL, (size_t)st.st_size, prot, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		die("cannot map a file");
	*len = (size_t)st.st_size;
	return p;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		die("usage: placement OPS ADDRS");
	size_t ops_len, addrs_len;
	const pl_ops_t *ops = map_file(argv[1], O_RDONLY, PROT_READ, &ops_len);
	if (ops_len < sizeof *ops || ops->magic != PL_MAGIC || ops->nids < 0 ||
	    ops->nops > (ops_len - sizeof *ops) / sizeof(pl_op_t))
		die("the ops file is damaged");
	uintptr_t *addr = map_file(argv[2], O_RDWR, PROT_READ | PROT_WRITE, &addrs_len);
	if (addrs_len < ops->nops * sizeof *addr)
		die("the addresses file is too short");
	size_t table = (size_t)ops->nids * sizeof(void *);
	void **block = mmap(NULL, table ? table : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (block == MAP_FAILED)
		die("no room for the block table");
	const char *side = getenv("FIDELITY_SIDE");
	int model = side && !strcmp(side, "model");
	for (size_t i = 0; i < ops->nops; i++) {
		const pl_op_t *op = &ops->op[i];
		if (op->id < 0 || op->id >= ops->nids)
			die("an op names a block outside the table");
		if (op->model_only && !model)
			continue;
		void *p = NULL;
		switch (op->kind) {
		case 'a': p = malloc(op->size); break;
		case 'c': p = calloc(op->aux, op->size); break;
		case 'm': p = memalign(op->aux, op->size); break;
		case 'r': p = realloc(block[op->id], op->size); break;
		case 'f': free(block[op->id]); break;
		default: die("an op of unknown kind");
		}
		/* a program writes its blocks; a model that hands out a block it
		 * does not own faults here, as the program would */
		if (p)
			memset(p, 0xa5, op->size && op->kind != 'c' ? 1 : 0);
		block[op->id] = p;
		addr[i] = (uintptr_t)p;
	}
	return 0;
}
