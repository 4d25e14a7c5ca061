/*
 * store.c - GPU records kept in memory until a dump writes them, the
 * devices' properties and the device memory in use.
 *
 * The store is append-only, in fixed-size chunks, so that a record never
 * moves once stored. It is the drain thread's: records are parsed from
 * CUPTI's buffers there (activity.c) and read there by linking, the trace
 * and the tables; only the device labels, which NVTX sets from the
 * program's threads, take a lock. GPU work arrives seconds after it ran,
 * so whether to keep it is decided by when it started, against the
 * collector's recording windows.
 *
 * Device labels, which NVTX sets from the program's threads, are
 * published as whole strings with a release store, so that no lock is
 * needed there either (a replaced label is leaked: devices are named once
 * or twice in a run).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti.h"
#include "files.h"
#include "gpu.h"

#define CHUNK_RECS 4096u
#define MAX_CHUNKS 256u /* 1M records, about 100 MB at most */

static struct {
	struct gpu_rec *chunks[MAX_CHUNKS];
	size_t count;
	uint64_t dropped; /* atomic */
	size_t drained;	  /* records already seen by store_drain() */
	int64_t in_use[GPU_MAX_DEVICES];
	struct gpu_device dev[GPU_MAX_DEVICES];
	int have_dev[GPU_MAX_DEVICES];
	uint32_t memory_ids[GPU_MAX_DEVICES];
	uint32_t storage_group; /* "Device Storage" */
} G;

/* Names given to devices through NVTX (atomic pointers). */
static char *labels[GPU_MAX_DEVICES];

struct gpu_rec *store_at(size_t i)
{
	return &G.chunks[i / CHUNK_RECS][i % CHUNK_RECS];
}

size_t store_count(void)
{
	return G.count;
}

/* The first record of the tables; 0 until a reset. */
static size_t tables_from;

size_t store_tables_from(void)
{
	return tables_from < G.count ? tables_from : G.count;
}

void store_tables_reset(void)
{
	tables_from = G.count;
}

uint32_t store_memory_name(uint32_t device)
{
	char name[64];

	if (device >= GPU_MAX_DEVICES) {
		return 0;
	}
	if (!G.memory_ids[device]) {
		snprintf(name, sizeof(name), "Memory: cuda/%u", device);
		G.memory_ids[device] = strtab_intern(name);
	}
	return G.memory_ids[device];
}

int store_push(const struct gpu_rec *r, size_t n)
{
	size_t c = G.count;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		/* Memory and CUDA event records are kept whenever they come:
		 * Device Storage needs every allocation, and a sync while
		 * recording may wait on an event recorded before. */
		if (r[i].kind != GPU_MEMORY && r[i].kind != GPU_EVENT &&
		    !coll_recording_at(r[i].start)) {
			continue;
		}
		/* set_config(profile_memory=0) at the allocation's time. */
		if (r[i].kind == GPU_MEMORY && !memswitch_on_at(r[i].start)) {
			continue;
		}
		size_t k = c / CHUNK_RECS;
		if (k >= MAX_CHUNKS) {
			store_note_dropped(n - i);
			rc = -ENOSPC;
			break;
		}
		if (!G.chunks[k]) {
			G.chunks[k] = malloc(CHUNK_RECS * sizeof(**G.chunks));
			if (!G.chunks[k]) {
				store_note_dropped(n - i);
				rc = -ENOSPC;
				break;
			}
		}
		struct gpu_rec *d = store_at(c);
		*d = r[i];
		d->ext = 0;
		d->absorbed = 0;
		if (d->kind == GPU_MEMORY) {
			d->name = store_memory_name(d->device);
		}
		c++;
	}
	G.count = c;
	return rc;
}

void store_note_dropped(uint64_t n)
{
	__atomic_add_fetch(&G.dropped, n, __ATOMIC_RELAXED);
}

uint64_t store_dropped(void)
{
	return __atomic_load_n(&G.dropped, __ATOMIC_RELAXED);
}

void store_set_device(const struct gpu_device *d)
{
	if (d->id >= 0 && d->id < GPU_MAX_DEVICES) {
		G.dev[d->id] = *d;
		G.have_dev[d->id] = 1;
	}
}

const struct gpu_device *store_device(int id)
{
	return id >= 0 && id < GPU_MAX_DEVICES && G.have_dev[id] ? &G.dev[id]
								 : NULL;
}

void store_label_device(int device, const char *name)
{
	if (device < 0 || device >= GPU_MAX_DEVICES || !name) {
		return;
	}
	char *copy = strndup(name, 63);
	if (copy) {
		__atomic_store_n(&labels[device], copy, __ATOMIC_RELEASE);
	}
}

void store_device_label(int device, char *buf, size_t len)
{
	buf[0] = 0;
	if (device < 0 || device >= GPU_MAX_DEVICES) {
		return;
	}
	const char *l = __atomic_load_n(&labels[device], __ATOMIC_ACQUIRE);
	if (l) {
		snprintf(buf, len, "%s", l);
	}
}

/*
 * Feeds the memory records that arrived since the last call into a as
 * "Device Storage" counters ("Memory: cuda/N", bytes in use), and names
 * the host thread of each CUDA API record, so that a thread the trace
 * shows only through CUPTI gets named too. This function can't fail (a
 * lost sample is lost).
 */
void store_drain(struct agg *a)
{
	int have_tid = 0;
	uint32_t tid = 0;

	if (!G.storage_group) {
		G.storage_group = strtab_intern("Device Storage");
		table_bytes_group(G.storage_group);
	}
	for (; G.drained < G.count; G.drained++) {
		const struct gpu_rec *r = store_at(G.drained);
		/* Runs of API records come from one thread: name it once. */
		if (gpu_is_api(r) && (!have_tid || r->tid != tid)) {
			have_tid = 1;
			tid = r->tid;
			coll_thread_seen((int)tid);
		}
		if (r->kind != GPU_MEMORY || r->device >= GPU_MAX_DEVICES) {
			continue;
		}
		int64_t *use = &G.in_use[r->device];
		*use += (r->flags & GPU_FREE) ? -(int64_t)r->bytes
					      : (int64_t)r->bytes;
		if (*use < 0) {
			*use = 0;
		}
		struct agg_sample s = {.group = G.storage_group,
				       .name = r->name,
				       .kind = COLL_COUNTER,
				       .value = *use};
		agg_add(a, &s);
	}
}

void store_reset(void)
{
	G.count = 0;
	G.drained = 0;
	tables_from = 0;
	__atomic_store_n(&G.dropped, 0, __ATOMIC_RELAXED);
	memset(G.in_use, 0, sizeof(G.in_use));
}

void cupti_name_device(int device, const char *name)
{
	store_label_device(device, name);
}
