/*
 * trace_fast.h - one event of a trace read in one step (trace_fast.c),
 * shared by the two places that read events: the tokenizer's handlers and
 * the fast path in trace_read.c, and the threads that read ahead in
 * trace_par.c.
 *
 * struct tf_event holds what struct trace_event (cli.h) holds, with the
 * strings as pointers into the text they were read from, so that a thread
 * can read events into an array and another hand them on later
 * (tf_to_event()). Numbers and flags follow the same rules wherever an
 * event is read (tf_number(), tf_string()).
 */
#ifndef MXPROF_TRACE_FAST_H
#define MXPROF_TRACE_FAST_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* The keys the reader knows. */
enum rd_key {
	K_OTHER = 0,
	K_TRACE_EVENTS,
	K_BASE,
	K_MXPROF,
	K_DIST,
	K_PH,
	K_NAME,
	K_CAT,
	K_GROUP,
	K_S,
	K_PID,
	K_TID,
	K_TS,
	K_DUR,
	K_ARGS,
	K_FRAME,
	K_VALUE,
	K_ERROR,
	K_DROPPED,
	K_HOST,
	K_TRUNCATED,
	K_RANK,
	K_SF,
	K_CORRELATION,
	K_STACK_FRAMES,
	K_CATEGORY,
	K_PARENT,
	K_USER,
};

/* The string members of an event. */
enum tf_str {
	TF_NAME,
	TF_CAT,
	TF_GROUP,      /* the top-level "group" */
	TF_ARGS_GROUP, /* args.group */
	TF_ARGS_NAME,  /* args.name */
	TF_NSTR,
};

/* Where a member sits: in the event itself or in its args. */
enum tf_role { TF_EVENT, TF_ARGS };

/* An event read, its strings where they were read (see above). */
struct tf_event {
	int64_t pid, tid, ts_ns, dur_ns, value, error, corr;
	uint64_t sf;
	const unsigned char *str[TF_NSTR]; /* NULL: absent */
	uint32_t len[TF_NSTR];
	char ph, scope;
	unsigned char has_ts, has_dur, has_frame, has_value, has_error, has_pid,
		has_sf, has_corr, dur_out_of_range, value_out_of_range;
};

/* Returns the key k[0..n) stands for, K_OTHER for any other. This
 * function can't fail. */
enum rd_key tf_classify(const unsigned char *k, size_t n);

/* Copies s[0..n) into dst as a string, cut to fit cap, never inside a
 * UTF-8 sequence. This function can't fail. */
void tf_copy(char *dst, size_t cap, const unsigned char *s, size_t n);

/* Parses a frame id, a JSON number or string of decimal digits. Returns
 * 0, or -EINVAL (negative, a fraction, not a number). */
int tf_frame_id(const char *s, size_t n, uint64_t *id);

/* Empties e (no member seen). This function can't fail. */
void tf_reset(struct tf_event *e);

/* Notes the number s[0..n) of member key (in role). This function can't
 * fail. */
void tf_number(struct tf_event *e, enum tf_role role, enum rd_key key,
	       const char *s, size_t n);

/* Notes the string s[0..n) of member key (in role), which must stay valid
 * while e is used. Returns the enum tf_str it was kept as, or -1 when it
 * was not kept as a string. This function can't fail. */
int tf_string(struct tf_event *e, enum tf_role role, enum rd_key key,
	      const unsigned char *s, size_t n);

/*
 * Reads the event whose '{' is at p0, up to end, when it is written as
 * the library writes it: one line, no blanks, keys and strings without
 * escapes, numbers and strings as values, args an object of the same
 * kind. Returns its length with e filled, or 0 when it is in any other
 * form or end cuts it short (e is then undefined). Safe in any thread.
 */
long tf_parse(struct tf_event *e, const unsigned char *p0,
	      const unsigned char *end);

/* Returns the field of ev that string s of an event is kept in, and its
 * size in *cap. This function can't fail. */
char *tf_field(struct trace_event *ev, enum tf_str s, size_t *cap);

/* Fills ev from e: its numbers, flags and strings (each cut to fit).
 * This function can't fail. */
void tf_to_event(const struct tf_event *e, struct trace_event *ev);

/* Fills the numbers and flags of ev from e, and its has_group and
 * has_args_group; the strings are left alone. This function can't
 * fail. */
void tf_numbers_to_event(const struct tf_event *e, struct trace_event *ev);

#endif /* MXPROF_TRACE_FAST_H */
