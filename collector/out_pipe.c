/*
 * out_pipe.c - a big output written by other threads while the writer
 * formats the next megabyte.
 *
 * A dump of a big run formats a gigabyte of JSON and, one megabyte at a
 * time, either copies it into the page cache (write()) or compresses it.
 * Done on the formatting thread, the three costs add up; here they overlap.
 * The formatter fills a chunk (struct out's buf points into one), hands it
 * over and goes on in a free one; worker threads take the chunks:
 *
 *   formatter --chunk--> [ slots ] --worker: deflate--> in order: CRC, write
 *
 * A plain file has one worker, which writes the chunks in order. A gzip
 * file has up to OUT_PIPE_WORKERS, each compressing its chunks on its own
 * (ISA-L's stateless deflate, level 1, a full flush ending each chunk on a
 * byte so that the next chunk's blocks follow it), and the worker that
 * finishes the oldest chunk writes every finished chunk in order: the
 * deflate blocks of all chunks form one deflate stream, with our own gzip
 * header before it and the CRC-32 and size of the whole after it, so the
 * file is one gzip member like the one the formatter would have written.
 * A chunk starts with no history (the first 32 KiB of each megabyte
 * compress a little less than they would in one stream).
 *
 * Nothing here runs unless the formatting thread allowed it
 * (out_pipe_allow()): the drain thread and the mxprof command do; a
 * dump made on a program's thread, maybe in a signal handler, stays on
 * that thread. Workers block every signal and record nothing. A worker
 * that cannot be started leaves the file to the formatter (out.c), as
 * before. Errors of write() are kept and come back from out_commit().
 */
#include <errno.h>
#include <isa-l/crc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "output.h"

#define OUT_PIPE_WORKERS 4

enum slot_state { SLOT_FREE, SLOT_FILLED, SLOT_BUSY, SLOT_DONE };

struct slot {
	unsigned char *in; /* OUT_BUF_BYTES */
	size_t n;
	unsigned char *z; /* gzip: the chunk's deflate blocks */
	size_t zn, zcap;
	int last;
	enum slot_state state;
};

struct out_pipe {
	struct coll_lock mu;  /* LOCK_PIPE, a leaf */
	pthread_cond_t work;  /* a chunk was filled, or stop */
	pthread_cond_t freed; /* a chunk was written */
	int fd, gz;
	int err; /* first error, negative errno */
	int stop;
	int writing; /* a worker holds the in-order write */
	unsigned nslots, nworkers, started;
	uint64_t next_fill;  /* the chunk the formatter fills */
	uint64_t next_take;  /* the next filled chunk a worker takes */
	uint64_t next_write; /* the next chunk written, in order */
	uint32_t crc;
	struct slot slot[2 * OUT_PIPE_WORKERS + 2];
	pthread_t thread[OUT_PIPE_WORKERS];
	unsigned char *level_buf[OUT_PIPE_WORKERS];
};

static __thread int allowed;

/* See output.h. */
void out_pipe_allow(int on)
{
	allowed = on;
}

/* The CPUs this process may run on. */
static unsigned cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		int n = CPU_COUNT(&set);
		return n > 0 ? (unsigned)n : 1;
	}
	return 1;
}

/*
 * Deflates slot s (raw deflate, level 1): a chunk that is not the last
 * ends on a byte with a full flush; the last one ends the stream. Returns
 * 0 or -EIO.
 */
static int deflate_chunk(struct slot *s, unsigned char *level_buf)
{
	struct isal_zstream zs;

	isal_deflate_stateless_init(&zs);
	zs.level = 1;
	zs.level_buf = level_buf;
	zs.level_buf_size = ISAL_DEF_LVL1_DEFAULT;
	zs.gzip_flag = IGZIP_DEFLATE;
	zs.flush = s->last ? NO_FLUSH : FULL_FLUSH;
	zs.end_of_stream = (uint16_t)(s->last != 0);
	zs.next_in = s->in;
	zs.avail_in = (uint32_t)s->n;
	zs.next_out = s->z;
	zs.avail_out = (uint32_t)s->zcap;
	if (isal_deflate_stateless(&zs) != COMP_OK) {
		return -EIO;
	}
	s->zn = s->zcap - zs.avail_out;
	return 0;
}

/*
 * Writes every finished chunk that is next in order, unless another
 * worker is doing it. Called and returns with p->mu held; writes without
 * it.
 */
static void write_in_order(struct out_pipe *p)
{
	while (!p->writing &&
	       p->slot[p->next_write % p->nslots].state == SLOT_DONE) {
		struct slot *s = &p->slot[p->next_write % p->nslots];
		int rc = 0, failed = p->err != 0;

		p->writing = 1;
		coll_unlock(&p->mu);
		if (failed) {
			/* The file is removed: write nothing more. */
		} else if (p->gz) {
			p->crc = crc32_gzip_refl(p->crc, s->in, s->n);
			rc = out_fd_write(p->fd, s->z, s->zn);
		} else {
			rc = out_fd_write(p->fd, s->in, s->n);
		}
		coll_lock(&p->mu);
		if (rc < 0 && p->err == 0) {
			p->err = rc;
		}
		p->writing = 0;
		s->state = SLOT_FREE;
		p->next_write++;
		pthread_cond_broadcast(&p->freed);
	}
}

struct worker_arg {
	struct out_pipe *p;
	unsigned idx;
};

static void *worker_main(void *arg)
{
	struct out_pipe *p = ((struct worker_arg *)arg)->p;
	unsigned idx = ((struct worker_arg *)arg)->idx;

	free(arg);
	coll_lock(&p->mu);
	for (;;) {
		while (p->next_take == p->next_fill && !p->stop) {
			pthread_cond_wait(&p->work, &p->mu.m);
		}
		if (p->next_take == p->next_fill) {
			break; /* stop, and nothing left */
		}
		struct slot *s = &p->slot[p->next_take % p->nslots];
		p->next_take++;
		s->state = SLOT_BUSY;
		coll_unlock(&p->mu);
		int rc = p->gz ? deflate_chunk(s, p->level_buf[idx]) : 0;
		coll_lock(&p->mu);
		if (rc < 0 && p->err == 0) {
			p->err = rc;
		}
		s->state = SLOT_DONE;
		write_in_order(p);
	}
	coll_unlock(&p->mu);
	return NULL;
}

/* Stops the workers once every filled chunk is written, and joins them. */
static void stop_workers(struct out_pipe *p)
{
	coll_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->work);
	coll_unlock(&p->mu);
	for (unsigned i = 0; i < p->started; i++) {
		pthread_join(p->thread[i], NULL);
	}
	p->started = 0;
}

static void pipe_free(struct out_pipe *p)
{
	for (unsigned i = 0; i < p->nslots; i++) {
		free(p->slot[i].in);
		free(p->slot[i].z);
	}
	for (unsigned i = 0; i < OUT_PIPE_WORKERS; i++) {
		free(p->level_buf[i]);
	}
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->freed);
	pthread_mutex_destroy(&p->mu.m);
	free(p);
}

/* Starts the workers with every signal blocked. Returns how many. */
static unsigned start_workers(struct out_pipe *p)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (unsigned i = 0; i < p->nworkers; i++) {
		struct worker_arg *a = malloc(sizeof(*a));

		if (!a) {
			break;
		}
		a->p = p;
		a->idx = i;
		if (pthread_create(&p->thread[i], NULL, worker_main, a) != 0) {
			free(a);
			break;
		}
		/* Named here, so that the name is there when this returns. */
		pthread_setname_np(p->thread[i], "mxprof-out");
		p->started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return p->started;
}

/* A new pipe for o's file, its buffers allocated, no worker started. */
static struct out_pipe *pipe_new(const struct out *o)
{
	struct out_pipe *p = calloc(1, sizeof(*p));
	unsigned n = cpus();

	if (!p) {
		return NULL;
	}
	pthread_mutex_init(&p->mu.m, NULL);
	p->mu.rank = LOCK_PIPE;
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->freed, NULL);
	p->fd = o->fd;
	p->gz = o->gz;
	/* One writes a plain file; a gzip file gets a CPU each, one left
	 * to the formatter. */
	p->nworkers = 1;
	if (o->gz && n > 2) {
		p->nworkers =
			n - 1 < OUT_PIPE_WORKERS ? n - 1 : OUT_PIPE_WORKERS;
	}
	p->nslots = 2 * p->nworkers + 2;
	for (unsigned i = 0; i < p->nslots; i++) {
		struct slot *s = &p->slot[i];

		s->in = malloc(OUT_BUF_BYTES);
		/* Stored blocks at worst: 5 bytes a 64 KiB, and the
		 * flush's empty block. */
		s->zcap = OUT_BUF_BYTES + OUT_BUF_BYTES / 64 + 1024;
		s->z = o->gz ? malloc(s->zcap) : NULL;
		if (!s->in || (o->gz && !s->z)) {
			p->nslots = i + 1;
			pipe_free(p);
			return NULL;
		}
	}
	for (unsigned i = 0; o->gz && i < p->nworkers; i++) {
		p->level_buf[i] = malloc(ISAL_DEF_LVL1_DEFAULT);
		if (!p->level_buf[i]) {
			pipe_free(p);
			return NULL;
		}
	}
	return p;
}

/* See internal.h. */
int out_pipe_start(struct out *o)
{
	static const unsigned char gzip_head[10] = {0x1f, 0x8b, 8, 0, 0,
						    0,	  0,	0, 0, 3};
	struct out_pipe *p;

	if (!allowed || o->pipe) {
		return -EPERM;
	}
	p = pipe_new(o);
	if (!p) {
		return -ENOMEM;
	}
	if (start_workers(p) == 0) {
		pipe_free(p);
		return -EAGAIN;
	}
	/* The workers wait for a chunk, and the first is handed over under
	 * the lock: they see the header's error, if any. */
	if (o->gz) {
		p->err = out_fd_write(p->fd, gzip_head, sizeof(gzip_head));
	}
	/* The formatter goes on in the first slot; what the inline buffer
	 * holds is handed over as the first chunk by the caller's submit. */
	memcpy(p->slot[0].in, o->buf, o->n);
	o->buf = p->slot[0].in;
	o->pipe = p;
	return 0;
}

/* See internal.h. */
void out_pipe_submit(struct out *o, int last)
{
	struct out_pipe *p = o->pipe;

	coll_lock(&p->mu);
	struct slot *s = &p->slot[p->next_fill % p->nslots];
	s->n = o->n;
	s->last = last;
	s->state = SLOT_FILLED;
	p->next_fill++;
	pthread_cond_signal(&p->work);
	struct slot *next = &p->slot[p->next_fill % p->nslots];
	while (next->state != SLOT_FREE) {
		pthread_cond_wait(&p->freed, &p->mu.m);
	}
	coll_unlock(&p->mu);
	o->buf = next->in;
	o->n = 0;
}

/* See internal.h. */
int out_pipe_finish(struct out *o)
{
	struct out_pipe *p = o->pipe;
	int err;

	coll_lock(&p->mu);
	while (p->next_write != p->next_fill) {
		pthread_cond_wait(&p->freed, &p->mu.m);
	}
	coll_unlock(&p->mu);
	stop_workers(p);
	if (p->gz) {
		unsigned char tail[8];
		uint32_t size = (uint32_t)o->flushed;

		for (int i = 0; i < 4; i++) {
			tail[i] = (unsigned char)(p->crc >> (8 * i));
			tail[4 + i] = (unsigned char)(size >> (8 * i));
		}
		if (p->err == 0) {
			p->err = out_fd_write(p->fd, tail, sizeof(tail));
		}
	}
	err = p->err;
	o->buf = o->mem;
	o->pipe = NULL;
	pipe_free(p);
	return err;
}

/* See internal.h. */
void out_pipe_abort(struct out *o)
{
	struct out_pipe *p = o->pipe;

	/* What is filled still goes through the workers; the file is
	 * removed after. */
	stop_workers(p);
	o->buf = o->mem;
	o->pipe = NULL;
	pipe_free(p);
}
