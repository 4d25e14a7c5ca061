/*
 * report_sites.c - the call-site rows of mxprof report's tables, the rows
 * the library adds when it records call stacks (MXPROF_STACKS):
 *
 *   section "Call Sites: <S>", row "<name> @ <site>": every host slice of
 *       section S with a stack ("sf"), once more, with the same time and
 *       self time (the collector's agg_add_site());
 *   section "GPU Time by Call Site", row "<gpu name> @ <site>": every GPU
 *       event (kernel, gpu_memcpy, gpu_memset) whose launch, the host
 *       slice with the same args.correlation, has a stack; its duration.
 *
 * The site of a stack is frames_site(): the innermost frame of the user's
 * own code, else the innermost frame.
 *
 * A file with stackFrames before traceEvents has every frame known when
 * the events come. One with stackFrames after its events (the library
 * writes it there, for HTA's streaming reader: docs/trace-format.md)
 * gets its call-site rows from a second pass (cmd_report.c), which
 * report_sites_finish() asks for; the events with a stack met before any
 * frame are "late", and the second pass adds the rows of those only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct report_sites {
	struct frames *fr;
	struct launches *ln;
	uint64_t events;     /* X events of this pass */
	uint64_t late;	     /* with a stack, met before any frame */
	uint64_t late_until; /* the X event after the last late one */
	uint64_t unknown;    /* naming a frame stackFrames lacks */
	uint64_t unkept;     /* GPU events whose launch was not kept */
	int full;	     /* a launch was not kept (launches.c) */
	int second;	     /* the second pass */
	char group[TRACE_SHORT_MAX + 16];
	char name[2 * TRACE_NAME_MAX + 8];
};

/* Returns a new set, or NULL (ENOMEM). */
struct report_sites *report_sites_create(void)
{
	struct report_sites *rs = calloc(1, sizeof(*rs));

	if (rs) {
		rs->fr = frames_create();
		rs->ln = launches_create();
	}
	if (rs && (!rs->fr || !rs->ln)) {
		report_sites_destroy(rs);
		rs = NULL;
	}
	return rs;
}

/* Frees rs (NULL accepted). This function can't fail. */
void report_sites_destroy(struct report_sites *rs)
{
	if (rs) {
		frames_destroy(rs->fr);
		launches_destroy(rs->ln);
		free(rs);
	}
}

/* Keeps frame f of the file being read. Returns 0 or -ENOMEM. */
int report_sites_frame(struct report_sites *rs, const struct trace_frame *f)
{
	return frames_add(rs->fr, f);
}

/*
 * Works out the call-site row of event ev of section group: site->name
 * and site->group are NULL when it has none, else strings valid until the
 * next call; site->gpu tells a GPU row (a plain sample of ev's duration)
 * from a host one (ev's sample again, agg_add_site()). Call it for every
 * event of the file, in order. Returns 0, or -ENOMEM.
 */
int report_sites_event(struct report_sites *rs, const struct trace_event *ev,
		       const char *group, struct report_site *site)
{
	const struct launch *l;
	const char *at;
	uint64_t k, sf;
	int gpu, rc;

	memset(site, 0, sizeof(*site));
	if (ev->ph != 'X') {
		return 0;
	}
	k = rs->events++;
	gpu = launches_is_gpu(ev->cat);
	if (!gpu && ev->has_sf && ev->has_corr) {
		struct launch x = {.corr = ev->corr, .sf = ev->sf};

		rc = launches_put(rs->ln, &x);
		if (rc == -ENOSPC) {
			rs->full = 1;
		} else if (rc < 0) {
			return rc;
		}
	}
	if (gpu) {
		l = ev->has_corr ? launches_get(rs->ln, ev->corr) : NULL;
		if (!l) {
			rs->unkept += rs->full && ev->has_corr;
			return 0;
		}
		sf = l->sf;
	} else if (ev->has_sf) {
		sf = ev->sf;
	} else {
		return 0;
	}
	if (rs->second && k >= rs->late_until) {
		return 0;
	}
	if (frames_count(rs->fr) == 0) {
		rs->late++;
		rs->late_until = k + 1;
		return 0;
	}
	at = frames_site(rs->fr, sf);
	if (!at) {
		rs->unknown++;
		return 0;
	}
	if (gpu) {
		snprintf(rs->group, sizeof(rs->group), "GPU Time by Call Site");
	} else {
		snprintf(rs->group, sizeof(rs->group), "Call Sites: %s", group);
	}
	snprintf(rs->name, sizeof(rs->name), "%s @ %s", ev->name, at);
	site->group = rs->group;
	site->name = rs->name;
	site->gpu = gpu;
	return 0;
}

/* Starts the second pass over the same file: its frames stay. This
 * function can't fail. */
void report_sites_rewind(struct report_sites *rs)
{
	launches_clear(rs->ln);
	rs->events = 0;
	rs->full = 0;
	rs->unknown = rs->unkept = 0;
	rs->second = 1;
}

/*
 * Ends a pass over the file at path. Returns 1 when its call-site rows
 * need a second pass (its stackFrames came after events with a stack),
 * else 0, after one line on stderr for each kind of event left without a
 * row, and readies rs for the next file. This function can't fail.
 */
int report_sites_finish(struct report_sites *rs, const char *path)
{
	if (!rs->second && rs->late && frames_count(rs->fr)) {
		return 1;
	}
	if (rs->late && !frames_count(rs->fr)) {
		util_err("%s: %llu events carry a call stack (sf) but the file "
			 "has no stackFrames; no Call Sites rows for them",
			 path, (unsigned long long)rs->late);
	}
	if (rs->unknown) {
		util_err("%s: %llu events name frames that stackFrames lacks; "
			 "no Call Sites rows for them",
			 path, (unsigned long long)rs->unknown);
	}
	if (rs->unkept) {
		util_err("%s: %llu GPU events not charged to a call site "
			 "(too many launches with a stack)",
			 path, (unsigned long long)rs->unkept);
	}
	frames_clear(rs->fr);
	launches_clear(rs->ln);
	rs->events = rs->late = rs->late_until = 0;
	rs->unknown = rs->unkept = 0;
	rs->full = rs->second = 0;
	return 0;
}
