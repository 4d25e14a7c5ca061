/*
 * threads.c - the names of the threads in the trace.
 *
 * A thread is named when its first records are drained: by the name the
 * program gave it through NVTX when there is one, else by its OS name
 * (/proc/self/task/TID/comm), else "thread TID". Names are written to the
 * journal, so a trace rebuilt from it has them too, and are read again at
 * every dump, because programs name their threads after starting them.
 *
 * The table of names is the drain thread's (LOCK_OWNER); only the names
 * given through coll_thread_name(), from any thread, sit under a lock of
 * their own.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct tid_name {
	int tid;
	char name[32];
};

/* Names given to threads by the program (NVTX), over their OS names. */
static struct {
	struct coll_lock lock;
	struct tid_name v[64];
	int n;
} given = {.lock = COLL_LOCK_INIT(LOCK_NAMES)};

/* Threads named in the journal so far (owner). */
static struct tid_name *tids;
static size_t ntids, cap_tids;

void threads_read_comm(int tid, char *buf, size_t len)
{
	char path[64];

	if (tid) {
		snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	} else {
		snprintf(path, sizeof(path), "/proc/self/comm");
	}
	buf[0] = 0;
	int fd = out_fd_open_beyond(path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0) {
		return;
	}
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		buf[0] = 0;
		return;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

void coll_thread_name(int tid, const char *name)
{
	int quiet = ring_set_quiet(1);

	coll_lock(&given.lock);
	int i = 0;
	while (i < given.n && given.v[i].tid != tid) {
		i++;
	}
	if (i < 64 && name) {
		given.v[i].tid = tid;
		snprintf(given.v[i].name, sizeof(given.v[i].name), "%s", name);
		if (i == given.n) {
			given.n++;
		}
	}
	coll_unlock(&given.lock);
	ring_set_quiet(quiet);
}

/* The OS names threads had when their rings attached (the owner's). */
struct tid_comm {
	int tid;
	char comm[16];
};
static struct tid_comm *comms;
static size_t ncomms, cap_comms;

void threads_note_comm(int tid, const char *comm)
{
	size_t i = 0;

	while (i < ncomms && comms[i].tid != tid) {
		i++;
	}
	if (i == ncomms) {
		if (ncomms == cap_comms) {
			size_t n = cap_comms ? cap_comms * 2 : 64;
			struct tid_comm *v = realloc(comms, n * sizeof(*v));
			if (!v) {
				return;
			}
			comms = v;
			cap_comms = n;
		}
		ncomms++;
	}
	/* Every pass that finds records calls this: a copy, not snprintf
	 * (whose format parsing showed in the drain thread's profile). */
	size_t n = strnlen(comm, sizeof(comms[i].comm) - 1);
	comms[i].tid = tid;
	memcpy(comms[i].comm, comm, n);
	comms[i].comm[n] = 0;
}

/* The name thread tid goes by now, into name: its OS name, or the one it
 * had when it began recording when it has ended since. */
static void current_name(int tid, char *name, size_t len)
{
	threads_read_comm(tid, name, len);
	for (size_t i = 0; !name[0] && i < ncomms; i++) {
		if (comms[i].tid == tid) {
			snprintf(name, len, "%s", comms[i].comm);
		}
	}
	coll_lock(&given.lock);
	for (int i = 0; i < given.n; i++) {
		if (given.v[i].tid == tid) {
			snprintf(name, len, "%s", given.v[i].name);
		}
	}
	coll_unlock(&given.lock);
}

void threads_name(struct journal *j, int tid, int refresh)
{
	struct tid_name *t = NULL;
	char name[32];

	for (size_t i = 0; i < ntids; i++) {
		if (tids[i].tid == tid) {
			t = &tids[i];
			break;
		}
	}
	if (t && !refresh) {
		return;
	}
	current_name(tid, name, sizeof(name));
	if (!t) {
		if (ntids == cap_tids) {
			size_t n = cap_tids ? cap_tids * 2 : 64;
			struct tid_name *nt = realloc(tids, n * sizeof(*nt));
			if (!nt) {
				return;
			}
			tids = nt;
			cap_tids = n;
		}
		t = &tids[ntids++];
		t->tid = tid;
		t->name[0] = 0;
		if (!name[0]) {
			snprintf(name, sizeof(name), "thread %d", tid);
		}
	} else if (!name[0] || strcmp(name, t->name) == 0) {
		return;
	}
	snprintf(t->name, sizeof(t->name), "%s", name);
	journal_thread(j, tid, t->name);
}

void threads_write_all(struct journal *j)
{
	for (size_t i = 0; i < ntids; i++) {
		journal_thread(j, tids[i].tid, tids[i].name);
	}
}

void threads_forget(void)
{
	ntids = 0;
	ncomms = 0;
}

/* fork(): the given names are held across it (coll_fork_prepare). */
void threads_fork_prepare(void)
{
	coll_lock(&given.lock);
}

void threads_fork_parent(void)
{
	coll_unlock(&given.lock);
}
