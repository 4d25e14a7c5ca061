/*
 * trace_fast.c - one event of a trace read in one step (trace_fast.h).
 *
 * The fast path reads an event written as mxprof writes it (one line, no
 * blanks, keys and strings without escapes, numbers and strings as values,
 * args an object of the same kind) straight into a struct tf_event,
 * instead of handing each of its 20-odd tokens to a handler, which was
 * most of mxprof report's time. Anything else (a blank, an escape, a
 * literal, an array, an object under another key, the end of the piece,
 * bytes that are not JSON) makes it give the event back to the tokenizer,
 * whose handlers keep the members through the same tf_number() and
 * tf_string(): so an event is read the same either way
 * (tests/integration/cli_report_parse.sh compares the two on the same
 * traces).
 */
#include <errno.h>
#include <string.h>

#include "jscan.h"
#include "trace_fast.h"

/* The key k[0..n) stands for (trace_fast.h). */
enum rd_key tf_classify(const unsigned char *k, size_t n)
{
#define RD_IS(s) (n == sizeof(s) - 1 && memcmp(k, s, n) == 0)
	switch (n) {
	case 1:
		return k[0] == 's' ? K_S : K_OTHER;
	case 2:
		if (RD_IS("ph")) {
			return K_PH;
		}
		if (RD_IS("ts")) {
			return K_TS;
		}
		if (RD_IS("sf")) {
			return K_SF;
		}
		return K_OTHER;
	case 3:
		if (RD_IS("pid")) {
			return K_PID;
		}
		if (RD_IS("tid")) {
			return K_TID;
		}
		if (RD_IS("cat")) {
			return K_CAT;
		}
		if (RD_IS("dur")) {
			return K_DUR;
		}
		return K_OTHER;
	case 4:
		if (RD_IS("name")) {
			return K_NAME;
		}
		if (RD_IS("args")) {
			return K_ARGS;
		}
		if (RD_IS("rank")) {
			return K_RANK;
		}
		if (RD_IS("host")) {
			return K_HOST;
		}
		if (RD_IS("user")) {
			return K_USER;
		}
		return K_OTHER;
	case 5:
		if (RD_IS("group")) {
			return K_GROUP;
		}
		if (RD_IS("frame")) {
			return K_FRAME;
		}
		if (RD_IS("value")) {
			return K_VALUE;
		}
		if (RD_IS("error")) {
			return K_ERROR;
		}
		return K_OTHER;
	case 6:
		if (RD_IS("parent")) {
			return K_PARENT;
		}
		return RD_IS("mxprof") ? K_MXPROF : K_OTHER;
	case 8:
		return RD_IS("category") ? K_CATEGORY : K_OTHER;
	case 11:
		if (RD_IS("correlation")) {
			return K_CORRELATION;
		}
		if (RD_IS("stackFrames")) {
			return K_STACK_FRAMES;
		}
		return RD_IS("traceEvents") ? K_TRACE_EVENTS : K_OTHER;
	case 14:
		return RD_IS("droppedRecords") ? K_DROPPED : K_OTHER;
	case 15:
		return RD_IS("distributedInfo") ? K_DIST : K_OTHER;
	case 17:
		return RD_IS("timelineTruncated") ? K_TRUNCATED : K_OTHER;
	case 19:
		return RD_IS("baseTimeNanoseconds") ? K_BASE : K_OTHER;
	default:
		return K_OTHER;
	}
#undef RD_IS
}

/* Copies s[0..n) into dst as a string, cut to fit cap. A cut never ends
 * inside a UTF-8 sequence: the sequence it would split is left out. */
void tf_copy(char *dst, size_t cap, const unsigned char *s, size_t n)
{
	if (n >= cap) {
		size_t cut = cap - 1;

		/* When s[cut], the first byte left out, continues a sequence,
		 * the sequence's lead byte is at most three bytes back. */
		n = cut;
		for (size_t k = 1;
		     k <= 3 && k <= cut && (s[cut] & 0xc0) == 0x80; k++) {
			if ((s[cut - k] & 0xc0) == 0xc0) {
				n = cut - k;
				break;
			}
			if ((s[cut - k] & 0xc0) != 0x80) {
				break;
			}
		}
	}
	/* Names are short: a few word copies, which may overlap, instead of
	 * the string instruction GCC makes of a memcpy of a bounded size. */
	if (n >= 16) {
		size_t i = 0;
		for (; i + 16 < n; i += 16) {
			memcpy(dst + i, s + i, 16);
		}
		memcpy(dst + n - 16, s + n - 16, 16);
	} else if (n >= 8) {
		memcpy(dst, s, 8);
		memcpy(dst + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(dst, s, 4);
		memcpy(dst + n - 4, s + n - 4, 4);
	} else {
		for (size_t i = 0; i < n; i++) {
			dst[i] = (char)s[i];
		}
	}
	dst[n] = 0;
}

/* Parses a frame id, a JSON number or string of decimal digits. Returns 0,
 * or -EINVAL (negative, a fraction, not a number). */
int tf_frame_id(const char *s, size_t n, uint64_t *id)
{
	uint64_t v = 0;

	if (n == 0 || n > 19) {
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9') {
			return -EINVAL;
		}
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*id = v;
	return 0;
}

/* Empties e (trace_fast.h). */
void tf_reset(struct tf_event *e)
{
	/* Field by field: a memset of the whole (rep stos) was a sixth of
	 * the fast path's time. */
	e->pid = e->tid = e->ts_ns = e->dur_ns = 0;
	e->value = e->error = e->corr = 0;
	e->sf = 0;
	for (int i = 0; i < TF_NSTR; i++) {
		e->str[i] = NULL;
		e->len[i] = 0;
	}
	e->ph = e->scope = 0;
	e->has_ts = e->has_dur = e->has_frame = e->has_value = 0;
	e->has_error = e->has_pid = e->has_sf = e->has_corr = 0;
	e->dur_out_of_range = e->value_out_of_range = 0;
}

/* A number member of an event or of its args, under key (trace_fast.h). */
void tf_number(struct tf_event *e, enum tf_role role, enum rd_key key,
	       const char *s, size_t n)
{
	if (role == TF_EVENT) {
		switch (key) {
		case K_TS:
			e->has_ts = util_us_to_ns(s, n, &e->ts_ns) == 0;
			break;
		case K_DUR:
			e->has_dur = util_us_to_ns(s, n, &e->dur_ns) == 0;
			e->dur_out_of_range = !e->has_dur;
			break;
		case K_PID:
			e->has_pid = util_parse_i64(s, n, &e->pid) == 0;
			break;
		case K_TID:
			util_parse_i64(s, n, &e->tid);
			break;
		case K_SF:
			e->has_sf = tf_frame_id(s, n, &e->sf) == 0;
			break;
		default:
			break;
		}
	} else if (key == K_CORRELATION) {
		e->has_corr = util_parse_i64(s, n, &e->corr) == 0;
	} else if (key == K_VALUE) {
		e->has_value = util_parse_i64(s, n, &e->value) == 0;
		e->value_out_of_range = !e->has_value;
	} else if (key == K_FRAME) {
		e->has_frame = 1;
	} else if (key == K_ERROR) {
		e->has_error = util_parse_i64(s, n, &e->error) == 0;
	}
}

/* A string member of an event or of its args, under key (trace_fast.h).
 * Returns the slot it was kept in, or -1. */
int tf_string(struct tf_event *e, enum tf_role role, enum rd_key key,
	      const unsigned char *s, size_t n)
{
	int slot = -1;

	if (role == TF_EVENT) {
		switch (key) {
		case K_PH:
			e->ph = n ? (char)s[0] : 0;
			break;
		case K_NAME:
			slot = TF_NAME;
			break;
		case K_CAT:
			slot = TF_CAT;
			break;
		case K_GROUP:
			slot = TF_GROUP;
			break;
		case K_S:
			e->scope = n ? (char)s[0] : 0;
			break;
		case K_TS:
			/* Some writers quote numbers; accept them. */
			e->has_ts = util_us_to_ns((const char *)s, n,
						  &e->ts_ns) == 0;
			break;
		case K_SF:
			/* Chrome's format allows string ids. */
			e->has_sf =
				tf_frame_id((const char *)s, n, &e->sf) == 0;
			break;
		default:
			break;
		}
	} else if (key == K_GROUP) {
		slot = TF_ARGS_GROUP;
	} else if (key == K_NAME) {
		slot = TF_ARGS_NAME;
	} else if (key == K_FRAME) {
		e->has_frame = 1;
	}
	if (slot >= 0) {
		e->str[slot] = s;
		e->len[slot] = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
	}
	return slot;
}

/* The end of the plain string whose first byte is at q: its closing
 * quote, or NULL when an escape, a control character or end comes
 * first. */
static const unsigned char *fast_string(const unsigned char *q,
					const unsigned char *end)
{
	q = jscan_plain_run(q, end);
	return q < end && *q == '"' ? q : NULL;
}

/* The keys every event of the library has, in the order it writes them,
 * each with its closing quote as the bytes of a little-endian word. */
#define FK_B(c, i) ((uint64_t)(unsigned char)(c) << (8 * (i)))
static const struct fast_key {
	uint64_t word, mask;
	enum rd_key key;
	unsigned len;
} fast_keys[] = {
	{FK_B('p', 0) | FK_B('h', 1) | FK_B('"', 2), 0xffffff, K_PH, 2},
	{FK_B('c', 0) | FK_B('a', 1) | FK_B('t', 2) | FK_B('"', 3), 0xffffffff,
	 K_CAT, 3},
	{FK_B('n', 0) | FK_B('a', 1) | FK_B('m', 2) | FK_B('e', 3) |
		 FK_B('"', 4),
	 0xffffffffff, K_NAME, 4},
	{FK_B('p', 0) | FK_B('i', 1) | FK_B('d', 2) | FK_B('"', 3), 0xffffffff,
	 K_PID, 3},
	{FK_B('t', 0) | FK_B('i', 1) | FK_B('d', 2) | FK_B('"', 3), 0xffffffff,
	 K_TID, 3},
	{FK_B('t', 0) | FK_B('s', 1) | FK_B('"', 2), 0xffffff, K_TS, 2},
	{FK_B('d', 0) | FK_B('u', 1) | FK_B('r', 2) | FK_B('"', 3), 0xffffffff,
	 K_DUR, 3},
	{FK_B('a', 0) | FK_B('r', 1) | FK_B('g', 2) | FK_B('s', 3) |
		 FK_B('"', 4),
	 0xffffffffff, K_ARGS, 4},
	{FK_B('g', 0) | FK_B('r', 1) | FK_B('o', 2) | FK_B('u', 3) |
		 FK_B('p', 4) | FK_B('"', 5),
	 0xffffffffffff, K_GROUP, 5},
};
#undef FK_B
#define FAST_NKEYS (sizeof(fast_keys) / sizeof(fast_keys[0]))

/* The closing quote of the key at k when it is one of fast_keys, with
 * *key set; NULL for any other. *hint is where the search starts, the
 * key after the last one found: in the library's order the first guess
 * is right, one compare of a word that the branch predictor learns. */
static const unsigned char *fast_known_key(const unsigned char *k,
					   const unsigned char *end,
					   enum rd_key *key, unsigned *hint)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t w;

	if (end - k < 8) {
		return NULL;
	}
	memcpy(&w, k, 8);
	for (unsigned n = 0, i = *hint; n < FAST_NKEYS; n++, i++) {
		const struct fast_key *f;

		if (i == FAST_NKEYS) {
			i = 0;
		}
		f = &fast_keys[i];
		if ((w & f->mask) == f->word) {
			*key = f->key;
			*hint = i + 1 == FAST_NKEYS ? 0 : i + 1;
			return k + f->len;
		}
	}
#else
	(void)k;
	(void)end;
	(void)key;
	(void)hint;
#endif
	return NULL;
}

/*
 * The number at p in its plainest form, -?(0|[1-9][0-9]*)(.[0-9]+)?, at
 * most 13 digits before the point, followed in the piece by ',' or '}',
 * as the library writes ts, dur, pid and tid: read in the same pass that
 * finds its end, with the result tf_number() gives (util_us_to_ns() keeps
 * four decimals and rounds to the nanosecond; an integer is itself).
 * Returns its length, or 0 (nothing noted) for any other form or key,
 * which the general path reads.
 */
static long fast_number(struct tf_event *e, enum tf_role role, enum rd_key key,
			const unsigned char *p, const unsigned char *end)
{
	const unsigned char *q = p, *w;
	int64_t whole = 0, frac = 0, ns;
	int neg = 0, fd = 0;

	if (role != TF_EVENT ||
	    (key != K_TS && key != K_DUR && key != K_PID && key != K_TID)) {
		return 0;
	}
	if (*q == '-') {
		neg = 1;
		q++;
	}
	w = q;
	while (q < end && *q >= '0' && *q <= '9') {
		whole = whole * 10 + (*q++ - '0');
		if (q - w > 13) {
			return 0;
		}
	}
	if (q == w || (*w == '0' && q - w > 1) || q >= end) {
		return 0;
	}
	if (*q == '.') {
		if (key == K_PID || key == K_TID) {
			return 0;
		}
		w = ++q;
		while (q < end && *q >= '0' && *q <= '9') {
			if (fd < 4) {
				frac = frac * 10 + (*q - '0');
				fd++;
			}
			q++;
		}
		if (q == w || q >= end) {
			return 0;
		}
	}
	if (*q != ',' && *q != '}') {
		return 0;
	}
	switch (key) {
	case K_TS:
	case K_DUR:
		for (; fd < 4; fd++) {
			frac *= 10;
		}
		ns = (whole * 10000 + frac + 5) / 10;
		ns = neg ? -ns : ns;
		if (key == K_TS) {
			e->ts_ns = ns;
			e->has_ts = 1;
		} else {
			e->dur_ns = ns;
			e->has_dur = 1;
			e->dur_out_of_range = 0;
		}
		break;
	case K_PID:
		e->pid = neg ? -whole : whole;
		e->has_pid = 1;
		break;
	default:
		e->tid = neg ? -whole : whole;
		break;
	}
	return (long)(q - p);
}

/* Reads the event at p0 in one step (trace_fast.h). Returns its length,
 * or 0. */
long tf_parse(struct tf_event *e, const unsigned char *p0,
	      const unsigned char *end)
{
	const unsigned char *p = p0 + 1, *q;
	const char *err;
	long len;
	enum tf_role role = TF_EVENT;
	unsigned hint = 0;

	tf_reset(e);
	if (p < end && *p == '}') {
		return 2;
	}
	for (;;) {
		/* A member: "key":value. */
		enum rd_key key;
		if (p >= end || *p != '"') {
			return 0;
		}
		if (!(q = fast_known_key(p + 1, end, &key, &hint))) {
			if (!(q = fast_string(p + 1, end))) {
				return 0;
			}
			key = tf_classify(p + 1, (size_t)(q - p - 1));
		}
		p = q + 1;
		if (p + 1 >= end || *p != ':') {
			return 0;
		}
		p++;
		if (*p == '"') {
			if (!(q = fast_string(p + 1, end))) {
				return 0;
			}
			tf_string(e, role, key, p + 1, (size_t)(q - p - 1));
			p = q + 1;
		} else if (*p == '{' && role == TF_EVENT && key == K_ARGS) {
			role = TF_ARGS;
			p++;
			if (p < end && *p == '}') {
				role = TF_EVENT;
				p++;
			} else {
				continue;
			}
		} else if ((*p == '-' || (*p >= '0' && *p <= '9')) &&
			   (len = fast_number(e, role, key, p, end)) > 0) {
			p += len;
		} else if ((*p == '-' || (*p >= '0' && *p <= '9')) &&
			   (len = jscan_number(p, end, 0, &err, &q)) > 0) {
			/* Not last: a number is whole only when a byte
			 * follows it in the piece. */
			tf_number(e, role, key, (const char *)p, (size_t)len);
			p += len;
		} else {
			return 0;
		}
		/* After a value: the next member, or the end of args, or of
		 * the event. */
		for (;;) {
			if (p >= end) {
				return 0;
			}
			if (*p == ',') {
				p++;
				break;
			}
			if (*p != '}') {
				return 0;
			}
			p++;
			if (role == TF_EVENT) {
				return (long)(p - p0);
			}
			role = TF_EVENT;
		}
	}
}

/* The field of ev that keeps string s (trace_fast.h). */
char *tf_field(struct trace_event *ev, enum tf_str s, size_t *cap)
{
	switch (s) {
	case TF_NAME:
		*cap = sizeof(ev->name);
		return ev->name;
	case TF_CAT:
		*cap = sizeof(ev->cat);
		return ev->cat;
	case TF_GROUP:
		*cap = sizeof(ev->group);
		return ev->group;
	case TF_ARGS_GROUP:
		*cap = sizeof(ev->args_group);
		return ev->args_group;
	default:
		*cap = sizeof(ev->args_name);
		return ev->args_name;
	}
}

/* The numbers and flags of e into ev (trace_fast.h). */
void tf_numbers_to_event(const struct tf_event *e, struct trace_event *ev)
{
	ev->ph = e->ph;
	ev->scope = e->scope;
	ev->has_group = e->str[TF_GROUP] != NULL;
	ev->has_args_group = e->str[TF_ARGS_GROUP] != NULL;
	ev->has_ts = e->has_ts;
	ev->has_dur = e->has_dur;
	ev->has_frame = e->has_frame;
	ev->has_value = e->has_value;
	ev->has_error = e->has_error;
	ev->has_pid = e->has_pid;
	ev->pid = e->pid;
	ev->tid = e->tid;
	ev->ts_ns = e->ts_ns;
	ev->dur_ns = e->dur_ns;
	ev->value = e->value;
	ev->error = e->error;
	ev->dur_out_of_range = e->dur_out_of_range;
	ev->value_out_of_range = e->value_out_of_range;
	ev->has_sf = e->has_sf;
	ev->has_corr = e->has_corr;
	ev->sf = e->sf;
	ev->corr = e->corr;
}

/* ev from e, strings included (trace_fast.h). */
void tf_to_event(const struct tf_event *e, struct trace_event *ev)
{
	for (int s = 0; s < TF_NSTR; s++) {
		size_t cap;
		char *f = tf_field(ev, (enum tf_str)s, &cap);

		if (e->str[s]) {
			tf_copy(f, cap, e->str[s], e->len[s]);
		} else {
			f[0] = 0;
		}
	}
	tf_numbers_to_event(e, ev);
}
